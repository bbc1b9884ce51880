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
import json
import os
import platform
import random
import secrets
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from ..bots.policies import baseline
from ..keys import DEFAULT_PARTITIONS
from ..runtime import quiet_collector, settle_heap
from .common import free_port, fresh_redis, percentile, stop, wait_ready

SEATS = 4


@dataclass
class Seat:
    token: str
    ws: aiohttp.ClientWebSocketResponse | None = None
    version: int = 0
    pending: tuple[float, int] | None = None  # (sent at, table version then)


@dataclass
class Group:
    """Four clients at one table."""

    table: str
    seats: list[Seat]
    rng: random.Random = field(default_factory=random.Random)
    over: bool = False


class Bench:
    def __init__(self, base: str, clients: int, think_ms: float) -> None:
        self.base = base
        self.groups_wanted = max(1, clients // SEATS)
        self.think = think_ms / 1000
        self.latencies: list[float] = []
        self.applied = 0
        self.errors: dict[str, int] = {}
        self.measuring = False
        self.connected = 0
        self.acting: set[asyncio.Task[None]] = set()

    async def new_group(self, session: aiohttp.ClientSession) -> Group:
        body = {"rules": {"preset": "classic"}, "seats": SEATS, "bots": [], "name": "B0"}
        async with session.post(f"{self.base}/api/tables", json=body) as r:
            made = await r.json()
        tokens = [made["token"]]
        for i in range(1, SEATS):
            async with session.post(
                f"{self.base}/api/tables/{made['table']}/join", json={"name": f"B{i}"}
            ) as r:
                tokens.append((await r.json())["token"])
        return Group(made["table"], [Seat(t) for t in tokens], random.Random(made["table"]))

    async def play(self, session: aiohttp.ClientSession, stop: asyncio.Event) -> None:
        """One table after another, until stopped."""
        while not stop.is_set():
            group = await self.new_group(session)
            url = self.base.replace("http", "ws", 1) + "/ws"
            for seat in group.seats:
                seat.ws = await session.ws_connect(url, max_msg_size=1 << 20)
                await seat.ws.send_str(json.dumps({"v": 1, "type": "hello", "token": seat.token}))
                self.connected += 1
            tasks = [asyncio.create_task(self.seat_loop(group, seat, stop)) for seat in group.seats]
            await asyncio.gather(*tasks)
            for seat in group.seats:
                if seat.ws is not None:
                    await seat.ws.close()
                    self.connected -= 1

    async def seat_loop(self, group: Group, seat: Seat, stop: asyncio.Event) -> None:
        assert seat.ws is not None
        while not stop.is_set() and not group.over:
            try:
                frame = await asyncio.wait_for(seat.ws.receive(), 1.0)
            except TimeoutError:
                continue
            if frame.type != aiohttp.WSMsgType.TEXT:
                return
            msg = json.loads(frame.data)
            now = time.perf_counter()
            if msg["type"] == "error":
                self.errors[msg["code"]] = self.errors.get(msg["code"], 0) + 1
                seat.pending = None
                continue
            if msg["type"] != "view" or msg["version"] < seat.version:
                continue
            seat.version = msg["version"]
            if seat.pending and msg["version"] > seat.pending[1]:
                if self.measuring:
                    self.latencies.append(now - seat.pending[0])
                    self.applied += 1
                seat.pending = None
            if msg["status"] == "over":
                group.over = True
                return
            game = msg["game"]
            if game and game["turn"] == msg["seat"] and seat.pending is None:
                seat.pending = (float("inf"), msg["version"])  # decided; sending soon
                self.acting.add(asyncio.create_task(self.act_later(group, seat, msg)))

    async def act_later(self, group: Group, seat: Seat, view: dict[str, Any]) -> None:
        await asyncio.sleep(self.think * group.rng.uniform(0.5, 1.5))
        action = baseline(view, group.rng)
        message = {"v": 1, "type": "act", "id": secrets.token_hex(6), "action": action}
        seat.pending = (time.perf_counter(), view["version"])
        if seat.ws is not None and not seat.ws.closed:
            await seat.ws.send_str(json.dumps(message))
        self.acting.discard(asyncio.current_task())  # type: ignore[arg-type]


async def _measure(base: str, clients: int, seconds: float, think_ms: float) -> dict[str, Any]:
    quiet_collector()
    bench = Bench(base, clients, think_ms)
    stop = asyncio.Event()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        players = [
            asyncio.create_task(bench.play(session, stop)) for _ in range(bench.groups_wanted)
        ]
        deadline = time.monotonic() + 60
        while bench.connected < bench.groups_wanted * SEATS:
            if time.monotonic() > deadline:
                raise SystemExit(f"only {bench.connected} clients connected")
            await asyncio.sleep(0.1)
        await asyncio.sleep(2.0)  # warm up
        bench.measuring = True
        started, rates = time.monotonic(), []
        while time.monotonic() - started < seconds:
            before, t0 = bench.applied, time.monotonic()
            settle_heap()  # the measuring clients tune GC like the services they measure
            await asyncio.sleep(1.0)
            rates.append((bench.applied - before) / (time.monotonic() - t0))
        bench.measuring = False
        connected = bench.connected
        stop.set()
        await asyncio.gather(*players, return_exceptions=True)
    ms = [x * 1000 for x in bench.latencies]
    return {
        "clients": connected,
        "think_ms": think_ms,
        "actions_per_s": round(statistics.median(rates)) if rates else 0,
        "p50_ms": round(percentile(ms, 50), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "max_ms": round(max(ms), 2) if ms else None,
        "actions": len(ms),
        "errors": bench.errors,
    }


# Every client of the benchmark comes from one address: per-address limits off.
UNLIMITED = ["--creates-per-min", "1e9", "--joins-per-min", "1e9", "--conns-per-address", "1000000"]


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
            [sys.executable, "-m", "dudo", "gateway", *common, "--port", str(port), *UNLIMITED],
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
