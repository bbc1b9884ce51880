"""``dudo admin``'s commands beyond gateway users: partitions, tables, dead letters,
draining, limits (the work is :mod:`dudo.ops.inspect`; this module reads arguments and prints).

Every command takes ``--redis`` (an admin's URL; default ``$DUDO_REDIS_URL``) and
prints a table for people, or with ``--json`` one JSON document for scripts.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .wire import keys


def add_commands(sub: Any, default_redis: str) -> None:
    """The subcommands of ``dudo admin`` this module serves."""

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
    from .infra.connection import connect
    from .infra.log import configure

    configure("info")  # what an operator did is logged, on stderr (stdout: the answer)
    return connect(args.redis)


def _space(args: argparse.Namespace) -> keys.Space:
    return keys.TOURNAMENTS if getattr(args, "tournaments", False) else keys.TABLES


def _say(args: argparse.Namespace, found: Any, lines: list[str]) -> int:
    print(json.dumps(found, indent=2, default=str) if args.json else "\n".join(lines))
    return 0


def _partitions(args: argparse.Namespace) -> int:
    from .ops import inspect as ops  # (what it needs, loaded only for this command)

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
    from .ops import inspect as ops  # (what it needs, loaded only for this command)

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
    from .ops import inspect as ops  # (what it needs, loaded only for this command)

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
    from .ops import inspect as ops  # (what it needs, loaded only for this command)

    client = _client(args)
    space = keys.TOURNAMENTS if args.director else keys.TABLES
    if args.process:
        ops.drain(client, args.process, on=not args.undo, space=space)
    drained = ops.draining(client, space)
    return _say(args, drained, [f"drained: {', '.join(drained) or 'none'}"])


def _limits(args: argparse.Namespace) -> int:
    from .ops import inspect as ops  # (what it needs, loaded only for this command)

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
