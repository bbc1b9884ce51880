"""``dudo bench gateway``: WebSocket clients playing through a gateway, as people do.

It starts a worker and a gateway process on the given (empty) Redis, then, in
this process, ``clients`` WebSocket clients in groups of four: each group takes
the four seats of a table through the HTTP API, says hello with its tokens and
plays with the baseline policy, waiting ``think_ms`` (±50%) before each move, as
a quick human would. A finished table is replaced by a new one, so the number
of connected clients and the load stay constant. Latency is measured at the
client: from sending an action to receiving the view that shows it.
"""

from __future__ import annotations

import asyncio
import os
import platform
import secrets
import statistics
import subprocess
import sys
from typing import Any

from ..infra import free_port
from ..ops import ONE_ADDRESS, fresh_redis, stop, wait_ready
from ..wire import DEFAULT_PARTITIONS
from .common import percentile
from .players import Players, measure

SEATS = 4


async def _measure(base: str, clients: int, seconds: float, think_ms: float) -> dict[str, Any]:
    players = Players([base], clients // SEATS, think_ms=think_ms, policy="baseline")
    measured = await measure(players, seconds)
    rates, connected = measured.rates, measured.connected
    ms = [x * 1000 for x in players.latencies]
    return {
        "clients": connected,
        "think_ms": think_ms,
        "actions_per_s": round(statistics.median(rates)) if rates else 0,
        "p50_ms": round(percentile(ms, 50), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "max_ms": round(max(ms), 2) if ms else None,
        "actions": len(ms),
        "errors": dict(players.errors),
    }


def run(
    redis_url: str,
    *,
    clients: int = 500,
    seconds: float = 10.0,
    think_ms: float = 300.0,
    flush: bool = False,
    partitions: int = DEFAULT_PARTITIONS,
) -> dict[str, Any]:
    fresh_redis(redis_url, partitions, flush=flush, bench="gateway")
    port = free_port()
    env = {**os.environ, "DUDO_GATEWAY_SECRET": secrets.token_hex(16)}
    common = ["--redis", redis_url, "--partitions", str(partitions), "--log-level", "warning"]
    procs = [
        subprocess.Popen([sys.executable, "-m", "dudo", "worker", *common], env=env),
        subprocess.Popen(
            [sys.executable, "-m", "dudo", "gateway", *common, "--port", str(port), *ONE_ADDRESS],
            env=env,
        ),
    ]
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base)
        result = asyncio.run(_measure(base, clients, seconds, think_ms))
    finally:
        stop(procs)
    return {
        "bench": "gateway",
        **result,
        "seconds": seconds,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
