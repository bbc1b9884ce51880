"""What the benchmarks share: an empty Redis to measure on, readiness, percentiles."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.request
from typing import Any

from ..connection import connect, create_groups, ensure_partitions
from ..redis_server import free_port

__all__ = ["ONE_ADDRESS", "free_port", "fresh_redis", "percentile", "stop", "wait_ready"]

# Gateway flags for scripted clients (benchmarks, chaos runs): they all come from this
# machine, so the per-address limits are off.
ONE_ADDRESS = [
    "--creates-per-min",
    "1e9",
    "--joins-per-min",
    "1e9",
    "--conns-per-address",
    "1000000",
]


def fresh_redis(url: str, partitions: int, *, flush: bool, bench: str) -> Any:
    """A client for an empty Redis set up for ``partitions``; refuses a Redis with data
    unless ``flush`` (benchmarks write the deployment's real key names)."""
    client = connect(url)
    if flush:
        client.flushall()
    elif client.dbsize():
        raise SystemExit(f"dudo bench {bench} needs an empty Redis (or --flush, which erases it)")
    ensure_partitions(client, partitions)
    create_groups(client, partitions)
    return client


def wait_ready(base: str, proc: subprocess.Popen[Any] | None = None, timeout: float = 20) -> None:
    """Wait until a gateway at ``base`` answers ``/readyz`` with ready."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{base}/readyz", timeout=2) as response:
                if json.load(response)["ready"]:
                    return
        except OSError:
            pass
        if (proc is not None and proc.poll() is not None) or time.monotonic() > deadline:
            raise RuntimeError(f"the gateway at {base} did not become ready")
        time.sleep(0.1)


def stop(procs: list[subprocess.Popen[Any]]) -> None:
    """SIGTERM every process, wait for them (up to 15 s each), kill what remains."""
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


def percentile(values: list[float], pct: float) -> float:
    """Linear-interpolated percentile (nan for no values)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * pct / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)
