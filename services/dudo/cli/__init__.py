"""The ``dudo`` command: one entry point, one subcommand per job, one module per group.

- :mod:`.services`: the processes of a deployment (worker, director, gateway, irc, bots,
  healthcheck);
- :mod:`.play`: programs for people (serve, play, bot, identity);
- :mod:`.check`: the conformance kits, a game's dice verified, the generated schemas;
- :mod:`.measure`: bench, arena, chaos;
- :mod:`.admin`: operating a running deployment.

This package reads arguments and the environment (:mod:`.environment`, once) and hands
plain values to the layers below; each command imports what it needs when it runs, so
``dudo conformance`` starts without loading Redis clients or web servers.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import admin, check, measure, play, services
from .environment import Environment

__all__ = ["Environment", "build_parser", "main"]

PROG = "dudo"
DESCRIPTION = "Dudo (Perudo, Liar's Dice): the server, its tools, and clients to play with."


def build_parser(env: Environment | None = None) -> argparse.ArgumentParser:
    """Every command, with defaults from ``env`` (read from this process's environment
    when not given)."""
    env = Environment.read() if env is None else env
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION)
    parser.set_defaults(env=env)
    sub = parser.add_subparsers(dest="command", required=True)
    check.add(sub, env)
    play.add(sub, env)
    services.add(sub, env)
    admin.add(sub, env)
    measure.add(sub, env)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        env = Environment.read()
    except ValueError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    arguments = check.normalized(list(sys.argv[1:] if argv is None else argv))
    args = build_parser(env).parse_args(arguments)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
