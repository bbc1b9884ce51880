"""The ``dudo`` command: one entry point, one subcommand per job.

Each subcommand imports what it needs when it runs, so ``dudo conformance``
starts without loading Redis clients or web servers.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence


def _conformance(args: argparse.Namespace) -> int:
    from .conformance import run_paths

    report = run_paths(args.paths)
    for line in report.failures:
        print(line)
    if report.passed + report.failed == 0:
        print(f"no vector files under {' '.join(args.paths)}", file=sys.stderr)
    print(report.summary())
    return 0 if report.ok else 1


def _bench(args: argparse.Namespace) -> int:
    if args.target == "engine":
        from .bench.engine import run

        result = run(seconds=args.seconds, preset=args.preset, seats=args.seats, seed=args.seed)
    else:  # pragma: no cover - argparse restricts the choices
        raise SystemExit(f"unknown bench target {args.target}")
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>20}: {value}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dudo", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    conf = sub.add_parser("conformance", help="replay rules conformance vectors (files or folders)")
    conf.add_argument("paths", nargs="+", metavar="PATH")
    conf.set_defaults(func=_conformance)

    bench = sub.add_parser("bench", help="measure throughput")
    bench.add_argument("target", choices=["engine"])
    bench.add_argument("--seconds", type=float, default=5.0)
    bench.add_argument("--preset", default="classic")
    bench.add_argument("--seats", type=int, default=4)
    bench.add_argument("--seed", type=int, default=1)
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.set_defaults(func=_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
