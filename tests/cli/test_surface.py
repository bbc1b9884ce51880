"""The command line is a contract: operators' scripts, deploy/ and the docs call it.

Every command and subcommand of ``dudo``, with each argument's names, arity, choices
and default, is compared with ``tests/data/cli_surface.txt``. A change of any of them
fails here; a change of help text does not. Where a change is meant, regenerate the
file (``python -m tests.cli.test_surface --write``) and say so in the commit. And every
command's ``--help`` prints and exits 0, as a person would first try it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dudo.cli import Environment, build_parser

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "cli_surface.txt"


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``parser`` (itself first), with its command path."""
    yield path, parser
    for action in parser._actions:  # argparse keeps its subparsers nowhere public
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from commands(child, (*path, name))


def surface(parser: argparse.ArgumentParser) -> list[str]:
    """One line per argument: what a caller may type, and what it means by default."""
    lines = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        names = ",".join(action.option_strings) or f"<{action.dest}>"
        kind = type(action).__name__.lstrip("_")
        choices = sorted(map(str, action.choices)) if action.choices else None
        lines.append(
            f"  {names} {kind} nargs={action.nargs!r} default={action.default!r} "
            f"choices={choices} required={action.required} metavar={action.metavar!r}"
        )
    return lines


def snapshot() -> str:
    out = []
    for path, parser in commands(build_parser()):
        out.append("dudo " + " ".join(path))
        out.extend(surface(parser))
    return "\n".join(out) + "\n"


def clean_snapshot() -> str:
    """:func:`snapshot` in a process whose environment names no ``DUDO_*`` setting
    (some defaults come from it: ``$DUDO_REDIS_URL``, ``$DUDO_ID``...)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUDO_")}
    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, "-m", "tests.cli.test_surface", "--print"],
        cwd=root, env=env, capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip


def test_the_command_line_is_unchanged() -> None:
    assert clean_snapshot() == SNAPSHOT.read_text(encoding="utf-8"), (
        "the command line changed: if meant, run `python -m tests.cli.test_surface --write`"
    )


@pytest.mark.parametrize(
    "path", [path for path, _ in commands(build_parser())], ids=lambda p: " ".join(p) or "dudo"
)
def test_every_commands_help_prints(path: tuple[str, ...]) -> None:
    from dudo.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    assert done.value.code == 0
    assert out.getvalue().startswith("usage: dudo")


def parsed(*argv: str, env: Environment | None = None) -> argparse.Namespace:
    from dudo.cli.check import normalized

    return build_parser(env or Environment()).parse_args(normalized(list(argv)))


def test_conformance_paths_still_replay_rules_vectors() -> None:
    """`dudo conformance PATH...` keeps working beside the kits' real subcommands."""
    args = parsed("conformance", "protocol/vectors", "more.json")
    assert args.kit == "rules" and args.paths == ["protocol/vectors", "more.json"]
    assert parsed("conformance", "rules", "x.json").paths == ["x.json"]
    client = parsed("conformance", "client", "--", "node", "bot.js", "{url}", "{token}")
    assert client.kit == "client" and client.command[-3:] == ["bot.js", "{url}", "{token}"]
    gateway = parsed("conformance", "gateway", "--gateway", "gw1", "--seconds", "3")
    assert (gateway.kit, gateway.gateway, gateway.seconds) == ("gateway", "gw1", 3.0)


def test_bench_targets_read_their_own_options_with_their_own_defaults() -> None:
    tournament = parsed("bench", "tournament")
    assert (tournament.seats, tournament.workers, tournament.preset) == (6, 2, "classic")
    # Before the targets had parsers of their own, `--seats 4` meant the default 6 here.
    assert parsed("bench", "tournament", "--seats", "4", "--workers", "1").seats == 4
    assert parsed("bench", "path").tables == 10 and parsed("bench", "workers").tables == 1000
    assert parsed("bench", "exploitability").preset == "liars-dice"
    assert parsed("bench", "engine").preset == "classic"
    with pytest.raises(SystemExit):  # a flag another target reads is refused, not ignored
        parsed("bench", "engine", "--clients", "5")


def test_a_director_keeps_finished_tournaments_for_its_retention() -> None:
    from dudo.cli.services import loop_settings

    day = 24 * 3600 * 1000
    assert loop_settings(parsed("director")).finished_ttl_ms == 30 * day
    assert loop_settings(parsed("director", "--keep-finished-days", "2")).finished_ttl_ms == 2 * day
    assert loop_settings(parsed("director", "--keep-finished-days", "0")).finished_ttl_ms == 0
    # A finished table: a day (its replay's link), or as long as its operator says.
    assert loop_settings(parsed("worker")).finished_ttl_ms == day
    hours = parsed("worker", "--keep-finished-hours", "2")
    assert loop_settings(hours).finished_ttl_ms == 7_200_000


def test_defaults_come_from_the_environment_read_once() -> None:
    env = Environment.read(
        {"DUDO_REDIS_URL": "redis://r:1/0", "DUDO_ID": "w7", "DUDO_HEALTH_PORT": "9001",
         "DUDO_IRC_TLS": "yes", "DUDO_GATEWAY_SECRET": "s" * 20}
    )  # fmt: skip
    worker = parsed("worker", env=env)
    assert (worker.redis, worker.id, worker.health_port) == ("redis://r:1/0", "w7", 9001)
    assert parsed("irc", env=env).tls is True
    assert parsed("admin", "partitions", env=env).redis == "redis://r:1/0"
    assert env.gateway_secret == b"s" * 20
    with pytest.raises(ValueError, match="DUDO_HEALTH_PORT"):
        Environment.read({"DUDO_HEALTH_PORT": "eighty"})


def test_a_malformed_environment_is_a_clear_exit_not_a_traceback() -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "dudo", "healthcheck"],
        cwd=root, env={**os.environ, "DUDO_HEALTH_PORT": "eighty"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == "dudo: $DUDO_HEALTH_PORT must be a port number, not 'eighty'"


def test_only_the_command_line_reads_the_environment() -> None:
    """Settings are read once, at the edge (dudo.cli.environment): below the command line,
    os.environ appears only where a process we start is handed a copy of it."""
    import ast

    services = Path(__file__).resolve().parents[2] / "services" / "dudo"
    found = set()
    for path in services.rglob("*.py"):
        where = path.relative_to(services)
        if where.parts[0] in ("cli", "client"):  # the edge; the client is its own package
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
                found.add(str(where))
    children = {"ops/fleet.py", "conformance/client.py", "bench/gateway.py"}
    assert found == children, sorted(found ^ children)


if __name__ == "__main__":
    if sys.argv[1:] == ["--print"]:
        sys.stdout.write(snapshot())
    elif sys.argv[1:] == ["--write"]:
        SNAPSHOT.write_text(clean_snapshot(), encoding="utf-8")
        print(f"wrote {SNAPSHOT}", file=sys.stderr)
    else:
        sys.exit("usage: python -m tests.cli.test_surface --print | --write")
