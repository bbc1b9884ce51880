"""Measurements and fault runs: ``dudo bench TARGET`` (one subcommand per target, each
with the options it reads), ``dudo arena`` (one bot policy against another) and ``dudo
chaos`` (play while everything fails, then audit). Figures go to docs/benchmarks.md."""

from __future__ import annotations

import argparse
from typing import Any

from .common import print_result, rule_options
from .environment import Environment


def add(sub: Any, env: Environment) -> None:
    """These commands' parsers, under ``dudo``'s subcommands ``sub``."""
    _add_bench(sub, env)
    _add_arena(sub)
    _add_chaos(sub)


def _add_bench(sub: Any, env: Environment) -> None:
    bench = sub.add_parser("bench", help="measure throughput")
    targets = bench.add_subparsers(
        dest="target",
        required=True,
        metavar="{engine,workers,gateway,path,tournament,scale,exploitability}",
    )

    def target(name: str, helptext: str) -> argparse.ArgumentParser:
        p = targets.add_parser(name, help=helptext)
        p.add_argument("--json", action="store_true", help="print one JSON object")
        p.set_defaults(func=_bench)
        return p

    def seconds(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--seconds", type=float, default=5.0, help="length of each measured phase"
        )

    def log_dir(p: argparse.ArgumentParser) -> None:
        p.add_argument("--log-dir", help="keep process logs here")

    def flush(p: argparse.ArgumentParser) -> None:
        p.add_argument("--flush", action="store_true", help="erase the Redis first")

    engine = target("engine", "games a second in one process: the rules engine alone")
    seconds(engine)
    engine.add_argument("--preset", default="classic", help="rules preset")
    engine.add_argument("--seats", type=int, default=4, help="seats per table")
    engine.add_argument("--seed", type=int, default=1, help="RNG seed")

    workers = target("workers", "actions a second through workers and Redis, no gateway")
    workers.add_argument("--redis", default=env.redis_url, help="Redis URL")
    workers.add_argument("--tables", type=int, default=1000, help="live tables")
    seconds(workers)
    workers.add_argument("--workers", type=int, default=1, help="worker processes")
    workers.add_argument("--partitions", type=int, default=16)
    flush(workers)
    log_dir(workers)

    gateway = target("gateway", "WebSocket clients through one gateway")
    gateway.add_argument("--redis", default=env.redis_url, help="Redis URL")
    gateway.add_argument("--clients", type=int, default=500, help="WebSocket clients")
    seconds(gateway)
    gateway.add_argument("--think-ms", type=float, default=300.0, help="pause per move")
    gateway.add_argument("--partitions", type=int, default=16)
    flush(gateway)

    path = target("path", "client to client: moves through gateways, workers and Redis")
    path.add_argument("--tables", type=int, default=10, help="tables in play")
    path.add_argument("--seats", type=int, default=4, help="seats per table")
    seconds(path)
    path.add_argument("--workers", type=int, default=1, help="worker processes")
    path.add_argument("--gateways", type=int, default=1, help="gateway processes")
    path.add_argument(
        "--redis", help="use this empty Redis instead of starting a redis-server"
    )
    path.add_argument(
        "--embedded",
        nargs="?",
        const="auto",
        choices=["auto", "redis-server", "fakeredis"],
        help="measure one `dudo serve` (its embedded Redis) instead",
    )
    path.add_argument("--partitions", type=int, default=16)
    path.add_argument(
        "--codec", choices=["json", "msgpack"], default="json", help="what clients speak"
    )
    path.add_argument(
        "--load",
        choices=["node", "python"],
        default="node",
        help="the load generator's clients: Node (as the peers'), or Python in this "
        "process (needed for --codec msgpack)",
    )
    path.add_argument(
        "--servers-from",
        metavar="DIR",
        help="run the servers from another checkout's services/ folder (a git worktree "
        "of another commit), driven by this one's load generator",
    )
    path.add_argument(
        "--skeleton",
        action="store_true",
        help="measure the design's shape with no game in it (dudo.bench.skeleton): "
        "the floor of any server built this way in these libraries",
    )
    path.add_argument(
        "--ws-layer",
        choices=("picows", "aiohttp"),
        help="what serves the gateways' /ws (the skeleton's too); default: picows",
    )
    path.add_argument(
        "--event-loop",
        choices=("uvloop", "asyncio"),
        help="the gateways' event loop (the skeleton's too); default: uvloop",
    )
    path.add_argument(
        "--admitted",
        action="store_true",
        help="the gateways admitted as apps (own Redis users, entries signed and "
        "checked), as deploy/ runs them; with --servers-from, that checkout admits them",
    )
    path.add_argument(
        "--seeds",
        action="store_true",
        help="every seat brings a seed of its own (committed when it sits, revealed "
        "before the deal), as the official libraries do; Node clients only",
    )
    flush(path)
    log_dir(path)

    tournament = target("tournament", "a whole tournament of bots, audited")
    tournament.add_argument("--players", type=int, default=1000, help="entrants (bots)")
    tournament.add_argument("--seats", type=int, default=6, help="seats per table")
    tournament.add_argument("--workers", type=int, default=2, help="worker processes")
    tournament.add_argument("--format", choices=["elimination", "heats"], default="elimination")
    tournament.add_argument("--preset", default="classic", help="rules preset")
    tournament.add_argument(
        "--redis", help="use this empty Redis instead of starting a redis-server"
    )
    tournament.add_argument("--partitions", type=int, default=16)
    tournament.add_argument(
        "--unsigned",
        action="store_true",
        help="entries unsigned (as before any gateway has a user of its own)",
    )
    flush(tournament)
    log_dir(tournament)

    scale = target("scale", "scale-out on a Redis Cluster it starts: shapes, a tournament, faults")
    scale.add_argument("--tables", type=int, default=100, help="tables in play per shape")
    scale.add_argument("--seconds", type=float, default=10.0, help="each shape's measured phase")
    scale.add_argument("--players", type=int, default=10_000, help="tournament entrants (bots)")
    scale.add_argument("--cash-tables", type=int, default=200, help="cash tables beside it")
    scale.add_argument("--masters", type=int, default=3, help="cluster masters (a replica each)")
    scale.add_argument("--partitions", type=int, default=16)
    scale.add_argument(
        "--short", action="store_true", help="two shapes only (1x1, 2x2): CI's form"
    )
    log_dir(scale)

    exploit = target("exploitability", "the bots against the exact heads-up equilibrium")
    exploit.add_argument("--preset", default="liars-dice", help="rules preset")
    exploit.add_argument(
        "--dice", type=_dice, default=(1, 1),
        help="dice per player (1), or each player's (2,1: two against one; 2,2: by search)",
    )  # fmt: skip
    exploit.add_argument(
        "--iterations", type=int, default=None,
        help="CFR+ iterations of the reference equilibrium (1,000; 300 for 2,1)",
    )  # fmt: skip
    exploit.add_argument(
        "--rule", action="append", metavar="KEY=VALUE", help="a rules override"
    )


def _dice(text: str) -> tuple[int, int]:
    """``--dice``: ``1`` (one each) or ``2,1``."""
    try:
        parts = [int(p) for p in text.split(",")]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"dice are numbers: {text!r}") from exc
    if len(parts) == 1:
        parts *= 2
    if len(parts) != 2 or min(parts) < 1:
        raise argparse.ArgumentTypeError(f"dice: N or N,M (got {text!r})")
    return parts[0], parts[1]


def _bench(args: argparse.Namespace) -> int:
    from ..infra import configure

    configure("warning")  # stdout is the figures' (--json): what is logged goes to stderr
    if args.target == "engine":
        from ..bench import engine

        result = engine.run(
            seconds=args.seconds, preset=args.preset, seats=args.seats, seed=args.seed
        )
    elif args.target == "workers":
        from ..bench import workers

        result = workers.run(
            args.redis,
            tables=args.tables,
            seconds=args.seconds,
            workers=args.workers,
            partitions=args.partitions,
            flush=args.flush,
            log_dir=args.log_dir,
        )
    elif args.target == "path":
        from ..bench import path

        result = path.run(
            tables=args.tables,
            seats=args.seats,
            seconds=args.seconds,
            workers=args.workers,
            gateways=args.gateways,
            redis_url=args.redis,
            embedded=args.embedded,
            partitions=args.partitions,
            codec=args.codec,
            folder=args.log_dir,
            flush=args.flush,
            load=args.load,
            servers_from=args.servers_from,
            skeleton=args.skeleton,
            admitted=args.admitted,
            seeds=args.seeds,
            ws_layer=args.ws_layer,
            event_loop=args.event_loop,
        )
    elif args.target == "exploitability":
        from ..bench import exploitability

        result = exploitability.run(
            preset=args.preset,
            dice=args.dice,
            iterations=args.iterations,
            rules=rule_options(args.rule),
        )
    elif args.target == "tournament":
        from ..bench import tournament

        result = tournament.run(
            players=args.players,
            seats=args.seats,
            workers=args.workers,
            fmt=args.format,
            preset=args.preset,
            redis_url=args.redis,
            partitions=args.partitions,
            flush=args.flush,
            folder=args.log_dir,
            signed=not args.unsigned,
        )
    elif args.target == "scale":
        from ..bench import scale

        result = scale.run(
            tables=args.tables,
            seconds=args.seconds,
            players=args.players,
            cash_tables=args.cash_tables,
            masters=args.masters,
            partitions=args.partitions,
            short=args.short,
            folder=args.log_dir,
        )
    else:
        from ..bench import gateway

        result = gateway.run(
            args.redis,
            clients=args.clients,
            seconds=args.seconds,
            think_ms=args.think_ms,
            flush=args.flush,
            partitions=args.partitions,
        )
    print_result(result, args.json)
    return 0


def _add_arena(sub: Any) -> None:
    arena = sub.add_parser("arena", help="measure one bot policy against another")
    arena.add_argument("--a", required=True, help="policy measured: random, baseline, hard")
    arena.add_argument("--b", required=True, help="the policy in every other seat")
    arena.add_argument("--seats", type=int, default=2)
    arena.add_argument("--games", type=int, default=1000)
    arena.add_argument("--preset", default="classic")
    arena.add_argument("--seed", type=int, default=1)
    arena.add_argument(
        "--rule", action="append", help="a rules override, e.g. --rule palifico=false"
    )
    arena.add_argument("--workers", type=int, help="processes (default: 2)")
    arena.add_argument("--json", action="store_true")
    arena.set_defaults(func=_arena)


def _arena(args: argparse.Namespace) -> int:
    import json

    from ..bots import run
    from ..infra import configure

    configure("warning")  # stdout is the result's (--json)
    result = run(
        args.a,
        args.b,
        seats=args.seats,
        games=args.games,
        preset=args.preset,
        seed=args.seed,
        rules=rule_options(args.rule),
        workers=args.workers,
    )
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{args.a} vs {args.b}: {result['win_rate_a']:.1%} of {result['games']} games "
            f"(95% CI {result['ci95_low']:.1%}..{result['ci95_high']:.1%}; chance "
            f"{result['chance']:.1%})"
        )
    return 0


def _add_chaos(sub: Any) -> None:
    chaos = sub.add_parser(
        "chaos", help="play through real gateways while everything fails, then audit"
    )
    chaos.add_argument(
        "--redis", help="use this Redis (never restarted); default: our own redis-server"
    )
    chaos.add_argument("--flush", action="store_true", help="with --redis: erase it first")
    chaos.add_argument("--seconds", type=float, default=60.0, help="how long faults strike")
    chaos.add_argument("--tables", type=int, default=40, help="tables in play at once")
    chaos.add_argument("--workers", type=int, default=2)
    chaos.add_argument("--gateways", type=int, default=2)
    chaos.add_argument("--partitions", type=int, default=16)
    chaos.add_argument("--fault-every", default="2,5", help="MIN,MAX seconds between faults")
    chaos.add_argument("--seed", type=int, help="the faults' and the players' randomness")
    chaos.add_argument("--keep", metavar="DIR", help="write process logs here")
    chaos.add_argument(
        "--no-compare",
        dest="compare",
        action="store_false",
        help="skip the first run, the same without the hostile gateway (whose honest median "
        "move latency the hostile run's must stay within --latency-ratio-max of)",
    )
    chaos.add_argument(
        "--latency-ratio-max",
        type=float,
        help="the most the honest players' median move latency may grow with the hostile "
        "gateway (default 2; a short run beside other work on a small machine: allow more)",
    )
    chaos.add_argument("--json", action="store_true", help="print one JSON object")
    chaos.set_defaults(func=_chaos)


def _chaos(args: argparse.Namespace) -> int:
    from ..chaos import run

    low, _, high = args.fault_every.partition(",")
    result = run(
        args.redis,
        seconds=args.seconds,
        tables=args.tables,
        workers=args.workers,
        gateways=args.gateways,
        partitions=args.partitions,
        fault_every=(float(low), float(high or low)),
        seed=args.seed,
        folder=args.keep,
        flush=args.flush,
        compare=args.compare,
        latency_ratio_max=args.latency_ratio_max,
    )
    print_result(result, args.json, width=24)
    return 0 if result["ok"] else 1
