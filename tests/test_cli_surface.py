"""The command line is a contract: operators' scripts, deploy/ and the docs call it.

Every command and subcommand of ``dudo``, with each argument's names, arity, choices
and default, is compared with ``tests/data/cli_surface.txt``. A change of any of them
fails here; a change of help text does not. Where a change is meant, regenerate the
file (``python -m tests.test_cli_surface --write``) and say so in the commit. And every
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

from dudo.cli import build_parser

SNAPSHOT = Path(__file__).resolve().parent / "data" / "cli_surface.txt"


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
    root = Path(__file__).resolve().parents[1]
    return subprocess.run(
        [sys.executable, "-m", "tests.test_cli_surface", "--print"],
        cwd=root, env=env, capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip


def test_the_command_line_is_unchanged() -> None:
    assert clean_snapshot() == SNAPSHOT.read_text(encoding="utf-8"), (
        "the command line changed: if meant, run `python -m tests.test_cli_surface --write`"
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


if __name__ == "__main__":
    if sys.argv[1:] == ["--print"]:
        sys.stdout.write(snapshot())
    elif sys.argv[1:] == ["--write"]:
        SNAPSHOT.write_text(clean_snapshot(), encoding="utf-8")
        print(f"wrote {SNAPSHOT}", file=sys.stderr)
    else:
        sys.exit("usage: python -m tests.test_cli_surface --print | --write")
