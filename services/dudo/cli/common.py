"""What several commands share: the options of a partition loop and of every long-running
process, the gateways' limits, rule options, and printing a result."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .environment import Environment

# Seconds a round's reveal holds the table where people play (Limits.reveal_hold_ms):
# time to read the dice before the next turn's clock runs.
REVEAL_HOLD_S = 3.0


def loop_arguments(p: argparse.ArgumentParser, partitions: int, env: Environment) -> None:
    """The options of a partition loop: ``dudo worker`` and ``dudo director``."""
    p.add_argument("--redis", default=env.redis_url, help="Redis URL")
    p.add_argument("--partitions", type=int, default=partitions)
    p.add_argument("--batch", type=int, default=256, help="entries per partition per read")
    p.add_argument("--lease-ms", type=int, default=5000, help="lease time to live")
    p.add_argument("--heartbeat", type=float, default=0.5, help="seconds between renewals")
    p.add_argument(
        "--dead-after-ms", type=int, default=3000, help="silence after which a worker is gone"
    )
    p.add_argument("--slow-ms", type=float, default=100.0, help="log cycles slower than this (ms)")
    p.add_argument(
        "--seed",
        type=int,
        help="reproducible table randomness: INSECURE, tests and benchmarks only "
        "(needs DUDO_INSECURE_SEED=1)",
    )
    p.add_argument(
        "--slot-per-call",
        action="store_true",
        help="one partition per script call (for proxies that refuse multi-slot scripts; "
        "automatic on a Redis Cluster)",
    )
    p.add_argument(
        "--open-ttl", type=float, default=3600, help="seconds an unchanged open table lives"
    )
    p.add_argument(
        "--idle-ttl",
        type=float,
        default=7200,
        help="seconds a game without a turn clock waits for a move before it is abandoned",
    )
    p.add_argument(
        "--bot-grace",
        type=float,
        default=15,
        help="seconds a bot seat may stay silent before the house bot plays it",
    )
    p.add_argument(
        "--reveal-hold",
        type=float,
        default=REVEAL_HOLD_S,
        help="seconds a round's reveal holds the next turn's clock and the bots, where "
        "people play (0: no hold)",
    )
    p.add_argument(
        "--seed-wait",
        type=float,
        default=5,
        help="seconds a table whose seats committed to seeds of their own waits for them "
        "before the deal (the rest are dealt public seeds); a tournament's table just made "
        "waits as long for its entrants' commitments first",
    )
    p.add_argument(
        "--vacate-after",
        type=int,
        default=3,
        help="a person whose turns the house played this many times in a row is out at "
        "the round's end (0: never; not at tournament tables)",
    )
    p.add_argument(
        "--max-deliveries",
        type=int,
        default=5,
        help="an inbox entry read this many times without a commit is dead-lettered",
    )
    p.add_argument(
        "--gateway-entries-per-s",
        type=float,
        default=5000.0,
        help="entries one admitted gateway may write to this worker's partitions a second "
        "(bursts of twice that; past it they are dropped; 0: no quota)",
    )
    p.add_argument(
        "--gateway-bytes-per-s",
        type=float,
        default=8_000_000.0,
        help="bytes of entries one admitted gateway may write a second (likewise)",
    )
    p.add_argument(
        "--gateway-backlog",
        type=int,
        default=10_000,
        help="unread entries a gateway's own inbox may hold on a partition (its oldest past "
        "it are dropped)",
    )
    p.add_argument(
        "--gateway-memory-mb",
        type=float,
        default=128.0,
        help="the memory an admitted gateway's own keys may take of Redis (MB): past it the "
        "worker holding partition 0 revokes it (0: not measured)",
    )
    p.add_argument(
        "--gateway-memory-alert-mb",
        type=float,
        default=32.0,
        help="... and past this its metric's alert fires (MB)",
    )
    process_arguments(p, env, "worker id", "host-pid-random")


def process_arguments(
    p: argparse.ArgumentParser, env: Environment, what: str, otherwise: str, *, health: bool = True
) -> None:
    """What every long-running process is given: its id (kept across restarts),
    where it answers health checks (a web gateway answers on its own port), and how
    much it logs."""
    p.add_argument(
        "--id",
        default=env.process_id,
        help=f"{what} (default: $DUDO_ID, else {otherwise})",
    )
    if health:
        p.add_argument(
            "--health-port",
            type=int,
            default=env.health_port,
            help="serve /healthz and /readyz on this port (default: $DUDO_HEALTH_PORT)",
        )
    p.add_argument("--log-level", default="info")


LIMITS = (
    "creates_per_min",
    "joins_per_min",
    "hello_timeout",
    "conns_per_token",
    "conns_per_address",
    "http_conns_per_address",
    "request_timeout",
    "costly_every",
    "lobby_max",
    "trust_proxy",
    "rate_per_s",
    "burst",
)


def endgame_argument(parser: argparse.ArgumentParser) -> None:
    """``--no-endgame-solves``, for the programs that play bots (`dudo bots`, `dudo serve`)."""
    parser.add_argument(
        "--no-endgame-solves",
        action="store_true",
        help="do not solve the presets' heads-up endgames at start (one die each: seconds; "
        "two against one, two each: minutes and ~1 GB of a child process, each): the hard "
        "bot then plays its heuristic in such a round until its solve, started when first "
        "asked for, is done. For tests and benchmarks",
    )


def limits_of(args: argparse.Namespace) -> dict[str, Any]:
    """The gateway limits given on the command line, as GatewaySettings fields."""
    return {name: getattr(args, name) for name in LIMITS}


def add_ws_layer(parser: argparse.ArgumentParser) -> None:
    """What serves a gateway's /ws, on which event loop (``dudo gateway``, ``dudo serve``)."""
    parser.add_argument(
        "--ws-layer",
        choices=("picows", "aiohttp"),
        default="picows",
        help="what serves /ws: picows (frames parsed in C) or aiohttp (a task per "
        "connection); compressed connections are aiohttp's either way",
    )
    parser.add_argument(
        "--event-loop",
        choices=("uvloop", "asyncio"),
        default="uvloop",
        help="the gateway's event loop: uvloop (libuv) or the standard library's",
    )


def add_limits(parser: argparse.ArgumentParser) -> None:
    """What one client may cost a gateway (``dudo gateway`` and ``dudo serve``)."""
    limits = parser.add_argument_group("limits (per gateway instance; docs/operations.md)")
    limits.add_argument("--creates-per-min", type=float, default=30.0, help="per address")
    limits.add_argument(
        "--joins-per-min", type=float, default=120.0, help="joins and watch tokens per address"
    )
    limits.add_argument("--hello-timeout", type=float, default=10.0, help="seconds to say hello")
    limits.add_argument("--conns-per-token", type=int, default=4, help="open sockets per token")
    limits.add_argument(
        "--conns-per-address", type=int, default=256, help="open sockets per address"
    )
    limits.add_argument(
        "--http-conns-per-address",
        type=int,
        default=512,
        help="TCP connections (HTTP and WebSocket) per address (not with --trust-proxy)",
    )
    limits.add_argument(
        "--request-timeout",
        type=float,
        default=10.0,
        help="seconds a connection has to send a whole request",
    )
    limits.add_argument(
        "--costly-every", type=float, default=1.0, help="seconds between resyncs/lobby lists"
    )
    limits.add_argument(
        "--lobby-max", type=int, default=500, help="tables, and tournaments, listed at most"
    )
    limits.add_argument(
        "--trust-proxy",
        action="store_true",
        help="take the client address from X-Forwarded-For's last address, the one your "
        "proxy added (only behind your own proxy, one hop)",
    )
    limits.add_argument(
        "--rate-per-s", type=float, default=20.0, help="client messages per second per socket"
    )
    limits.add_argument("--burst", type=int, default=40, help="messages a socket may send at once")


def rule_options(items: list[str] | None) -> dict[str, Any]:
    """``--rule key=value`` options (numbers, true/false and lists as JSON)."""
    rules = {}
    for item in items or []:
        key, _, value = item.partition("=")
        rules[key] = json.loads(value) if value[:1] in "0123456789-[{tfn" else value
    return rules



def print_result(result: dict[str, Any], as_json: bool, width: int = 20) -> None:
    """A measurement's figures: one JSON object (--json), or one per line for people."""
    if as_json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>{width}}: {value}")
