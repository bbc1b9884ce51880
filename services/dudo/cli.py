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
    elif args.target == "workers":
        from .bench import workers

        result = workers.run(
            args.redis,
            tables=args.tables,
            seconds=args.seconds,
            workers=args.workers,
            partitions=args.partitions,
            flush=args.flush,
            log_dir=args.log_dir,
        )
    else:  # pragma: no cover - argparse restricts the choices
        raise SystemExit(f"unknown bench target {args.target}")
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>20}: {value}")
    return 0


def _worker(args: argparse.Namespace) -> int:
    from .connection import ConfigMismatch
    from .log import configure
    from .worker import Worker, WorkerSettings

    configure(args.log_level)
    settings = WorkerSettings(
        redis_url=args.redis,
        partitions=args.partitions,
        batch=args.batch,
        lease_ms=args.lease_ms,
        heartbeat=args.heartbeat,
        dead_after_ms=args.dead_after_ms,
        seed=args.seed,
        slow_cycle_ms=args.slow_ms,
    )
    if args.id:
        settings.worker_id = args.id
    try:
        Worker(settings).run()
    except ConfigMismatch as exc:
        print(f"dudo worker: {exc}", file=sys.stderr)
        return 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dudo", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    conf = sub.add_parser("conformance", help="replay rules conformance vectors (files or folders)")
    conf.add_argument("paths", nargs="+", metavar="PATH")
    conf.set_defaults(func=_conformance)

    worker = sub.add_parser("worker", help="run a table worker")
    worker.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="Redis URL")
    worker.add_argument("--partitions", type=int, default=16)
    worker.add_argument("--batch", type=int, default=256, help="entries per partition per read")
    worker.add_argument("--id", help="worker id (default: host-pid-random)")
    worker.add_argument("--lease-ms", type=int, default=5000, help="lease time to live")
    worker.add_argument("--heartbeat", type=float, default=0.5, help="seconds between renewals")
    worker.add_argument(
        "--dead-after-ms", type=int, default=3000, help="silence after which a worker is gone"
    )
    worker.add_argument(
        "--slow-ms", type=float, default=100.0, help="log cycles slower than this (ms)"
    )
    worker.add_argument(
        "--seed", type=int, help="reproducible table randomness (tests and benchmarks only)"
    )
    worker.add_argument("--log-level", default="info")
    worker.set_defaults(func=_worker)

    bench = sub.add_parser("bench", help="measure throughput")
    bench.add_argument("target", choices=["engine", "workers"])
    bench.add_argument("--seconds", type=float, default=5.0, help="length of each measured phase")
    bench.add_argument("--preset", default="classic", help="engine: rules preset")
    bench.add_argument("--seats", type=int, default=4, help="engine: seats per table")
    bench.add_argument("--seed", type=int, default=1, help="engine: RNG seed")
    bench.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="workers: Redis URL")
    bench.add_argument("--tables", type=int, default=1000, help="workers: live tables")
    bench.add_argument("--workers", type=int, default=1, help="workers: worker processes")
    bench.add_argument("--partitions", type=int, default=16, help="workers: partitions")
    bench.add_argument("--flush", action="store_true", help="workers: erase the Redis first")
    bench.add_argument("--log-dir", help="workers: keep worker logs here")
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.set_defaults(func=_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
