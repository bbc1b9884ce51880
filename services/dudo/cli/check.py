"""Checking against the published contracts: ``dudo conformance rules|client|gateway``
(the kits other implementations are checked with), ``dudo sandbox`` (a deployment to
develop a gateway against), ``dudo verify`` (a finished game's dice against its seeds)
and ``dudo schemas write|check`` (the generated JSON Schemas, the protocol reference and
the client packages' types)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .environment import Environment

KITS = ("rules", "client", "gateway")


def add(sub: Any, env: Environment) -> None:
    """These commands' parsers, under ``dudo``'s subcommands ``sub``."""
    conf = sub.add_parser(
        "conformance",
        help="check an implementation against the published contracts: rules vectors, a "
        "client, a gateway (`dudo conformance PATH...` replays rules vectors)",
        description="The conformance kits. `dudo conformance PATH...` is `dudo conformance "
        "rules PATH...`.",
    )
    kits = conf.add_subparsers(dest="kit", required=True, metavar="{rules,client,gateway}")
    rules = kits.add_parser(
        "rules", help="replay rules conformance vectors (files or folders)"
    )
    rules.add_argument("paths", nargs="+", metavar="PATH")
    rules.set_defaults(func=_rules)
    client = kits.add_parser(
        "client",
        help="check a client's handling of reconnects, renumbering, refusals and rate "
        "limits: dudo conformance client -- CMD ... {url} {token}",
        description="Runs CMD once per scenario against a server of its own, with {url} "
        "and {token} replaced by the server's address and a seat token.",
    )
    client.add_argument(
        "--ports",
        type=port_range,
        help="LOW-HIGH: the ports its Redis, server and proxy may listen on (3 needed; "
        "default: any free ones)",
    )
    client.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD ...")
    client.set_defaults(func=_client)
    gateway = kits.add_parser(
        "gateway",
        help="watch a gateway's stream handling while it plays (run beside it)",
        description="watch a gateway's stream handling while it plays (run beside it)",
    )
    gateway.add_argument("--redis", default=env.redis_url, help="an admin's Redis URL")
    gateway.add_argument("--gateway", required=True, help="the gateway id under test")
    gateway.add_argument("--seconds", type=float, default=20.0, help="how long to watch it")
    gateway.set_defaults(func=_gateway)

    sandbox = sub.add_parser(
        "sandbox",
        help="for gateway authors: Redis, a worker, a director, the bot service and a web "
        "gateway, with your gateway admitted; prints its URL and environment",
        description="Starts a deployment on this machine (a redis-server of its own, with "
        "users) and admits GATEWAY as an app's gateway; prints the Redis URL and gateway id "
        "to run your gateway with, then keeps everything running until Ctrl-C.",
    )
    sandbox.add_argument("--gateway", default="mine", help="your gateway's id (default: mine)")
    sandbox.add_argument("--app", default="sandbox", help="the app it is admitted for")
    sandbox.add_argument(
        "--ports", type=port_range,
        help="LOW-HIGH: the ports its Redis and web gateway may listen on (default: any free)",
    )  # fmt: skip
    sandbox.add_argument(
        "--folder", help="where the Redis data and the logs go (default: a new temporary one)"
    )
    sandbox.set_defaults(func=_sandbox)

    verify = sub.add_parser(
        "verify",
        help="check a finished game's dice: each round's against its seed and "
        "commitment, the seeds against theirs (a file, a replay link, a table id)",
    )
    verify.add_argument(
        "path",
        metavar="WHAT",
        help="a JSON file (- for stdin: the log, or a finished game's view), a replay "
        "link (https://host/#/replay/TABLE), or a table id with --gateway",
    )
    verify.add_argument(
        "--gateway", help="the gateway's URL a table id is asked of (http://host:port)"
    )
    verify.set_defaults(func=_verify)

    schemas = sub.add_parser("schemas", help="write or check the generated JSON Schemas")
    schemas.add_argument("action", choices=["write", "check"])
    schemas.add_argument("folder", nargs="?", default="protocol/schemas")
    schemas.add_argument(
        "--guide", help="the guide whose reference part is generated too (docs/protocol.md)"
    )
    schemas.set_defaults(func=_schemas)

    reference = sub.add_parser(
        "api-reference",
        help="the client packages' API reference as HTML, from their code (pdoc, TypeDoc)",
    )
    reference.add_argument("out", help="the folder to write (python/, js/, index.html)")
    reference.add_argument("--protocol", default="protocol", help="the protocol folder")
    reference.set_defaults(func=_api_reference)


def normalized(argv: list[str]) -> list[str]:
    """``dudo conformance PATH...`` as it always worked: the rules kit."""
    if argv[:1] == ["conformance"] and len(argv) > 1:
        first = argv[1]
        if first not in KITS and not first.startswith("-"):
            return ["conformance", "rules", *argv[1:]]
    return argv


def _rules(args: argparse.Namespace) -> int:
    from ..conformance import run_paths

    report = run_paths(args.paths)
    for line in report.failures:
        print(line)
    if report.passed + report.failed == 0:
        print(f"no vector files under {' '.join(args.paths)}", file=sys.stderr)
    print(report.summary())
    return 0 if report.ok else 1


def port_range(text: str) -> range:
    """``LOW-HIGH`` (both included) as a range of at least 3 ports."""
    low, _, high = text.partition("-")
    if not (low.isdigit() and high.isdigit()) or not 0 < int(low) <= int(high) - 2 < 65534:
        raise argparse.ArgumentTypeError(f"LOW-HIGH with at least 3 ports, not {text!r}")
    return range(int(low), int(high) + 1)


def _client(args: argparse.Namespace) -> int:
    from ..conformance import run as check_client

    command = args.command
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        print("usage: dudo conformance client -- CMD ... {url} {token}", file=sys.stderr)
        return 2
    try:
        verdict = check_client(command, ports=args.ports)
    except OSError as exc:  # no free port in the range given
        print(f"dudo conformance client: {exc}", file=sys.stderr)
        return 2
    print(verdict.text())
    return 0 if verdict.ok else 1


def _verify(args: argparse.Namespace) -> int:
    """Exit 0 when every check holds, 1 with each problem and where, 2 when the file is
    not a log."""
    import json
    from pathlib import Path

    from ..engine import verify
    from .finished import finished_view, target_of

    try:
        where = target_of(args.path, args.gateway) if args.path != "-" else None
        if where is not None and not Path(args.path).exists():
            log = _as_log(finished_view(*where))
        else:
            text = sys.stdin.read() if args.path == "-" else Path(args.path).read_text()
            log = _as_log(json.loads(text))
    except (OSError, ValueError) as exc:
        print(f"dudo verify: {exc}", file=sys.stderr)
        return 2
    try:
        verdict = verify(log)
    except (TypeError, AttributeError, ValueError) as exc:  # a round that is not one
        print(f"dudo verify: not a game's log: {exc!r}", file=sys.stderr)
        return 2
    for problem in verdict.problems:
        print(f"NOT FAIR: {problem}")
    for note in verdict.notes:
        print(f"note: {note}")
    seeds = (
        "the server seed and every seat's seed match the commitments shown, and make "
        "every round's seed"
        if verdict.seeded
        else "no seeds in this log (a game from before them): each round is checked "
        "against its own seed, which does not prove who chose it"
    )  # fmt: skip
    if verdict.ok:
        print(f"{verdict.rounds} rounds: every die matches its round's seed and commitment; "
              f"{seeds}")  # fmt: skip
    return 0 if verdict.ok else 1


def _as_log(data: object) -> dict[str, Any]:
    """A log from what a file may hold: the log itself, its rounds alone, or a finished
    game's view (its ``game.log`` and ``seeds``, read as the client package reads them:
    one mapping of the published view, docs/rules.md, "Seeds from everyone")."""
    from dudo_client import log_of_view

    if isinstance(data, dict) and isinstance(data.get("game"), dict):
        data = log_of_view(data)
    if isinstance(data, list):
        data = {"rounds": data}
    if not isinstance(data, dict) or not isinstance(data.get("rounds"), list):
        raise ValueError("not a game's log (no rounds)")
    return data


def _sandbox(args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from ..ops import run

    folder = Path(args.folder or tempfile.mkdtemp(prefix="dudo-sandbox-"))
    folder.mkdir(parents=True, exist_ok=True)
    return run(folder, args.gateway, args.app, args.ports, sys.stdout)


def _gateway(args: argparse.Namespace) -> int:
    from ..conformance import check
    from ..infra import connect

    verdict = check(connect(args.redis), args.gateway, args.seconds)
    print(verdict.text())
    return 0 if verdict.ok else 1


def _schemas(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .. import wire
    from ..wire import CLIENT_MESSAGES, http_schemas, sync, sync_typings

    schemas = {
        **wire.json_schemas(), **wire.json_schemas(CLIENT_MESSAGES), **http_schemas(),
        **wire.rules_schemas(),
    }
    folder = Path(args.folder)
    write = args.action == "write"
    stale = [str(folder / name) for name in wire.sync_schema_files(schemas, folder, write=write)]
    stale += sync_typings(folder, write=write)  # the client packages' types, from the files
    guide = Path(args.guide) if args.guide else folder.parent.parent / "docs" / "protocol.md"
    if sync(guide, folder.parent, write=write):
        stale.append(f"{guide} (its reference part)")
    for name in stale:
        print(f"{'written' if write else 'stale'}: {name}", file=sys.stderr)
    return 1 if stale and not write else 0


def _api_reference(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .reference import ApiReferenceError, build

    try:
        build(Path(args.out), Path(args.protocol))
    except ApiReferenceError as exc:
        print(f"dudo api-reference: {exc}", file=sys.stderr)
        return 1
    print(f"written: {args.out}/index.html")
    return 0
