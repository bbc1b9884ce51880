"""``dudo admin``: operating a running deployment. Gateways' Redis users and apps' keys
(the work is :mod:`dudo.ops.admin`); partitions, tables, dead letters, draining and the
gateways' limits (:mod:`dudo.ops.inspect`). This module reads arguments and prints.

Every command takes ``--redis`` (an admin's URL; default ``$DUDO_REDIS_URL``); those that
look into the deployment print a table for people, or with ``--json`` one JSON document
for scripts.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..wire import keys
from .environment import Environment


def add(sub: Any, env: Environment) -> None:
    """``dudo admin`` and its subcommands, under ``dudo``'s subcommands ``sub``."""
    adm = sub.add_parser("admin", help="operate a running deployment")
    adm_sub = adm.add_subparsers(dest="what", required=True)
    gw = adm_sub.add_parser(
        "gateway", help="give a gateway its own Redis user, revoke it, or list them"
    )
    gw.add_argument("action", choices=("add", "revoke", "list"))
    gw.add_argument("name", nargs="?", help="the gateway's id (its --id)")
    gw.add_argument(
        "--password-env",
        metavar="VAR",
        help="add: the password from this environment variable (default: a new random one); "
        "adding again with the same one changes nothing for a running gateway",
    )
    gw.add_argument(
        "--derive-from-env",
        metavar="VAR",
        help="add: derive the password from the secret in this environment variable and the "
        "name (instances that set $DUDO_REDIS_USER_SECRET derive theirs the same way)",
    )
    gw.add_argument(
        "--app",
        help="add: the app it belongs to, whose users' identities it may present (default: "
        "its own name); the instances of one app share it",
    )
    gw.add_argument("--redis", default=env.redis_url, help="an admin's Redis URL")
    gw.set_defaults(func=_admin_gateway)
    app = adm_sub.add_parser(
        "app", help="register an app's public keys (its users' identities), remove, list"
    )
    app.add_argument("action", choices=("add", "remove", "list"))
    app.add_argument("name", nargs="?", help="the app's name (the `iss` of its identities)")
    app.add_argument("--jwks", metavar="FILE", help="add: its public keys, a JWK set (JSON)")
    app.add_argument(
        "--generate",
        metavar="KEYFILE",
        help="add: make a new key pair, write the private key here (for the app's backend; "
        "the deployment keeps only the public key)",
    )
    app.add_argument("--redis", default=env.redis_url, help="an admin's Redis URL")
    app.set_defaults(func=_admin_app)
    _add_inspection(adm_sub, env.redis_url)


def _admin_app(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..auth import identity
    from ..infra import connect
    from ..ops import admin

    client = connect(args.redis)
    if args.action == "list":
        for name, kids in admin.apps(client).items():
            print(f"{name}: keys {', '.join(kids)}")
        return 0
    if args.name is None:
        print(f"dudo admin app {args.action}: which app? (NAME)", file=sys.stderr)
        return 2
    if args.action == "remove":
        if not admin.remove_app(client, args.name):
            print(f"no app {args.name}", file=sys.stderr)
            return 1
        print(f"removed {args.name}: its identities are refused from now on")
        return 0
    try:
        if (args.jwks is None) == (args.generate is None):
            raise ValueError("give --jwks FILE (its public keys) or --generate KEYFILE")
        if args.generate is not None:
            private = identity.new_key()
            target = Path(args.generate)
            target.touch(mode=0o600, exist_ok=False)
            target.write_text(private)
            jwks = identity.public_jwks(private)
        else:
            jwks = identity.read_jwks(Path(args.jwks).read_text())
        admin.add_app(client, args.name, jwks)
    except (OSError, ValueError) as exc:
        print(f"dudo admin app add: {exc}", file=sys.stderr)
        return 2
    print(f"app {args.name}: {len(jwks['keys'])} public key(s) registered")
    if args.generate:
        print(f"its private key is in {args.generate}: give it to the app's backend only")
    return 0


def _admin_gateway(args: argparse.Namespace) -> int:
    from ..infra import connect
    from ..ops import admin

    client = connect(args.redis)  # a Cluster node: users go to every node
    if args.action == "list":
        for name in admin.gateways(client):
            print(name)
        for name, why in admin.revoked(client).items():  # past its memory budget
            print(f"{name}  revoked: {why.get('reason', '?')}")
        return 0
    if args.name is None:
        print(f"dudo admin gateway {args.action}: which gateway? (NAME)", file=sys.stderr)
        return 2
    if args.action == "revoke":
        if not admin.revoke_gateway(client, args.name):
            print(f"no gateway user {admin.user_of(args.name)}", file=sys.stderr)
            return 1
        print(f"revoked {args.name}: its connections are closed")
        return 0
    password = None
    variables = args.env.variables
    for var in filter(None, (args.password_env, args.derive_from_env)):
        if not variables.get(var):
            print(f"dudo admin gateway add: ${var} is empty", file=sys.stderr)
            return 2
    if args.password_env:
        password = variables[args.password_env]
    elif args.derive_from_env:
        password = admin.derived_password(variables[args.derive_from_env], args.name)
    try:
        password = admin.add_gateway(client, args.name, password, app=args.app)
    except ValueError as exc:
        print(f"dudo admin gateway add: {exc}", file=sys.stderr)
        return 2
    print(f"gateway {args.name}: Redis user {admin.user_of(args.name)}; run it with")
    print(f"  DUDO_REDIS_URL=URL dudo gateway --id {args.name}   (or dudo irc ...)")
    print("where URL is (keep it out of arguments: `ps` shows those to everyone)")
    if args.password_env or args.derive_from_env:  # the password stays out of the logs
        print(admin.url_for(args.redis, args.name, "PASSWORD"))
        print(f"with PASSWORD from ${args.password_env or args.derive_from_env}")
    else:
        print(admin.url_for(args.redis, args.name, password))
    if not admin.acl_file(client):
        print("note: this Redis keeps no ACL file: the user is gone after a restart "
              "(docs/operations.md, 'Admitting an app')", file=sys.stderr)  # fmt: skip
    return 0



def _add_inspection(sub: Any, default_redis: str) -> None:
    """The subcommands of ``dudo admin`` that look into a running deployment."""

    def command(name: str, helptext: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=helptext)
        p.add_argument("--redis", default=default_redis, help="an admin's Redis URL")
        p.add_argument("--json", action="store_true", help="one JSON document")
        return p

    p = command("partitions", "each partition: owner, inbox, lag, pending, dead letters")
    p.add_argument("--tournaments", action="store_true", help="the directors' partitions")
    p.set_defaults(func=_partitions)

    p = command("table", "one table: seats, the public game (its dice with --reveal)")
    p.add_argument("table", help="the table's id")
    p.add_argument("--reveal", action="store_true", help="every hand too (logged)")
    p.set_defaults(func=_table)

    p = command("dead", "the dead letters: list, show one, replay one")
    p.add_argument("action", choices=("list", "show", "replay"))
    p.add_argument("entry", nargs="?", help="show, replay: the dead letter's id")
    p.add_argument("--partition", type=int, help="its partition (list: only this one)")
    p.add_argument("--count", type=int, default=50, help="list: at most this many")
    p.add_argument("--tournaments", action="store_true", help="the directors' partitions")
    p.set_defaults(func=_dead)

    p = command("drain", "a worker (or director) gives its partitions back and takes none")
    p.add_argument("process", nargs="?", help="its id; none: list the drained")
    p.add_argument("--undo", action="store_true", help="let it take partitions again")
    p.add_argument("--director", action="store_true", help="a director, not a worker")
    p.set_defaults(func=_drain)

    p = command("limits", "the gateways' limits, for every gateway at once, while they run")
    p.add_argument("action", nargs="?", choices=("show", "set", "unset"), default="show")
    p.add_argument("values", nargs="*", help="set: NAME=VALUE ...; unset: NAME ...")
    p.set_defaults(func=_limits)


def _client(args: argparse.Namespace) -> Any:
    from ..infra import configure, connect

    configure("info")  # what an operator did is logged, on stderr (stdout: the answer)
    return connect(args.redis)


def _space(args: argparse.Namespace) -> keys.Space:
    return keys.TOURNAMENTS if getattr(args, "tournaments", False) else keys.TABLES


def _say(args: argparse.Namespace, found: Any, lines: list[str]) -> int:
    print(json.dumps(found, indent=2, default=str) if args.json else "\n".join(lines))
    return 0


def _partitions(args: argparse.Namespace) -> int:
    from ..ops import inspect as ops  # (what it needs, loaded only for this command)

    rows = ops.partitions(_client(args), _space(args))
    lines = [f"{'#':>3} {'owner':<24} {'gen':>5} {'lease':>6} {'inbox':>6} {'lag':>6} "
             f"{'pending':>7} {'dead':>6} {'listed':>6}"]  # fmt: skip
    for r in rows:
        lease = f"{r['lease_ms_left'] / 1000:.1f}s" if r["owner"] else "-"
        lines.append(
            f"{r['partition']:>3} {r['owner'] or '(none)':<24} {r['generation']:>5} {lease:>6} "
            f"{_n(r['inbox']):>6} {_n(r['lag']):>6} {_n(r['pending']):>7} "
            f"{_n(r['dead_letters']):>6} {_n(r['listed']):>6}"
        )
    unowned = [r["partition"] for r in rows if not r["owner"]]
    lines.append(f"{len(rows)} partitions; without an owner: {unowned or 'none'}")
    return _say(args, rows, lines)


def _n(value: Any) -> str:
    return "-" if value is None else str(value)


def _table(args: argparse.Namespace) -> int:
    from ..ops import inspect as ops  # (what it needs, loaded only for this command)

    try:
        found = ops.inspect_table(_client(args), args.table, reveal=args.reveal)
    except (LookupError, ValueError) as exc:
        print(f"dudo admin table: {exc}", file=sys.stderr)
        return 1
    lines = [
        f"table {found['table']} (partition {found['partition']}): {found['status']}, "
        f"version {found['version']}, {found['rules']}"
        + (f", tournament {found['tournament']}" if found["tournament"] else ""),
    ]
    for seat in found["seats"]:
        who = seat["name"] or "(open)"
        extra = ", ".join(
            x for x in (f"bot {seat['bot']}" if seat["bot"] else "",
                        f"via {seat['gateway']}" if seat["gateway"] else "",
                        "away" if seat["away"] else "") if x
        )  # fmt: skip
        lines.append(f"  {seat['seat']}. {who}" + (f" ({extra})" if extra else ""))
    game = found["game"]
    if game:
        lines.append(
            f"  round {game['round']}, {game['phase']}, turn {game['turn']}, "
            f"dice {game['dice_counts']}, bids {game['bids']}"
        )
    if "hands" in found:
        lines.append(f"  hands (revealed): {found['hands']}")
    return _say(args, found, lines)


def _dead(args: argparse.Namespace) -> int:
    from ..ops import inspect as ops  # (what it needs, loaded only for this command)

    client, space = _client(args), _space(args)
    if args.action == "list":
        found = ops.dead_letters(client, space, args.partition, args.count)
        lines = [
            f"{d['id']:<18} p{d['partition']:<3} {d['at']}  {d['type'] or '?':<8} "
            f"{d['table'] or '-':<14} {d['reason']}"
            for d in found
        ] or ["no dead letters"]
        return _say(args, found, lines)
    if args.entry is None or args.partition is None:
        print(f"dudo admin dead {args.action}: give the entry id and --partition", file=sys.stderr)
        return 2
    try:
        if args.action == "show":
            letter = ops.dead_letter(client, args.partition, args.entry, space)
            lines = [f"{k}: {v}" for k, v in letter.items()]
            return _say(args, letter, lines)
        new_id = ops.replay(client, args.partition, args.entry, space)
    except (LookupError, ValueError) as exc:
        print(f"dudo admin dead {args.action}: {exc}", file=sys.stderr)
        return 1
    return _say(args, {"replayed": args.entry, "entry": new_id},
                [f"replayed {args.entry} as inbox entry {new_id}"])  # fmt: skip


def _drain(args: argparse.Namespace) -> int:
    from ..ops import inspect as ops  # (what it needs, loaded only for this command)

    client = _client(args)
    space = keys.TOURNAMENTS if args.director else keys.TABLES
    if args.process:
        ops.drain(client, args.process, on=not args.undo, space=space)
    drained = ops.draining(client, space)
    return _say(args, drained, [f"drained: {', '.join(drained) or 'none'}"])


def _limits(args: argparse.Namespace) -> int:
    from ..ops import inspect as ops  # (what it needs, loaded only for this command)

    client = _client(args)
    try:
        if args.action == "set":
            pairs = [v.split("=", 1) for v in args.values]
            if not pairs or any(len(p) != 2 for p in pairs):
                raise ValueError("set NAME=VALUE ...")
            found = ops.set_limits(client, dict(pairs))
        elif args.action == "unset":
            found = ops.set_limits(client, dict.fromkeys(args.values))
        else:
            found = ops.limits(client)
    except ValueError as exc:
        print(f"dudo admin limits: {exc}", file=sys.stderr)
        return 2
    lines = [f"{k} = {v:g}" for k, v in sorted(found.items())] or [
        "no limits set here: each gateway's own flags apply"
    ]
    return _say(args, found, lines)
