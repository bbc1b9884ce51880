"""Scripted players for a chaos run: every seat of every table is a WebSocket client.

Each table has four seats, each played by its own client through whichever
gateway is up (any gateway serves any seat: tokens are shared). The clients
play closed-loop, like people: the seat in turn decides from its own view
(the baseline policy, seeded by table and game version, so a decision is made
once per version) and sends it with the id ``v<version>``; with no progress
for a while it sends the very same message again (a duplicate is refused by
id, never applied twice). A dropped connection reconnects to a random gateway
and says hello again.

Everything needed for the audit is recorded here: the decision taken at each
game version, the highest version any client saw, and every view's seat and
holder name (a socket shown another player's seat is a leak).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from ..bots import POLICIES, my_turn

RESEND_AFTER = 3.0  # seconds without progress before an action is sent again
RULES = {"preset": "classic", "start_dice": 3}
SEATS = 4


@dataclass
class Seat:
    """One player: its token, and the socket it plays through now."""

    table: TableRun
    name: str
    token: str = ""
    index: int | None = None
    ws: aiohttp.ClientWebSocketResponse | None = None
    welcomed: bool = False  # the current connection's hello was taken
    task: asyncio.Task[None] | None = None


@dataclass
class TableRun:
    id: str
    seats: list[Seat] = field(default_factory=list)
    decisions: dict[int, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    max_seen: int = -1  # highest game version any of its clients saw
    pending: tuple[int, float] | None = None  # version decided, when last sent
    decided_at: float = 0.0  # when the pending decision was first sent
    finished: bool = False
    last_progress: float = field(default_factory=time.monotonic)
    max_stall: float = 0.0

    def progressed(self, now: float) -> None:
        self.max_stall = max(self.max_stall, now - self.last_progress)
        self.last_progress = now


class Players:
    def __init__(self, bases: list[str], rng: random.Random, policy: str = "baseline") -> None:
        self.bases = bases
        self.rng = rng
        self.policy = POLICIES[policy]
        self.tables: dict[str, TableRun] = {}
        self.serial = 0
        self.sent = 0  # act messages written, resends included
        self.resent = 0
        self.errors: Counter[str] = Counter()  # what players were refused, by code
        self.leaks: list[str] = []
        self.views = 0
        self.reconnects = 0
        # (when a move was first sent, seconds until a view showed the table past it)
        self.latencies: list[tuple[float, float]] = []
        self.session: aiohttp.ClientSession | None = None
        self.closing = False

    # -- tables ----------------------------------------------------------------------------

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST to any gateway until one answers 200/201, the same request (its key)
        every time: a retry of what was applied is answered like the first time. A
        table that cannot be filled within a minute is a failure of the run."""
        assert self.session is not None
        body = {**body, "request": f"r{self.rng.getrandbits(64):016x}"}
        delay, give_up = 0.1, time.monotonic() + 60
        while time.monotonic() < give_up:
            base = self.rng.choice(self.bases)
            try:
                async with self.session.post(f"{base}{path}", json=body, timeout=10) as r:
                    answer = await r.json()
                if r.status in (200, 201):
                    return answer
                self.errors[f"http_{answer.get('code', r.status)}"] += 1
            except (aiohttp.ClientError, TimeoutError, json.JSONDecodeError, ValueError):
                pass
            await asyncio.sleep(delay)
            delay = min(2.0, delay * 2)
        raise RuntimeError(f"POST {path} found no gateway to take it for a minute")

    async def new_table(self) -> TableRun | None:
        """Create a table and take its four seats; a failure to do so is counted (and a
        half-seated table stays unfinished: the audit says so)."""
        self.serial += 1
        names = [f"T{self.serial}-{i}" for i in range(SEATS)]
        try:
            created = await self._post(
                "/api/tables", {"rules": RULES, "seats": SEATS, "name": names[0]}
            )
        except RuntimeError:
            self.errors["create_failed"] += 1
            return None
        run = self.tables[created["table"]] = TableRun(created["table"])
        run.seats.append(Seat(run, names[0], created["token"]))
        for name in names[1:]:
            try:
                joined = await self._post(f"/api/tables/{run.id}/join", {"name": name})
            except RuntimeError:
                self.errors["join_failed"] += 1
                break
            run.seats.append(Seat(run, name, joined["token"]))
        for seat in run.seats:
            seat.task = asyncio.create_task(self._play(seat))
        return run

    # -- one seat's connection ----------------------------------------------------------------

    async def _play(self, seat: Seat) -> None:
        """Stay connected (to any gateway) until the game is over."""
        assert self.session is not None
        delay = 0.05
        while not seat.table.finished and not self.closing:
            base = self.rng.choice(self.bases)
            try:
                async with self.session.ws_connect(
                    base.replace("http", "ws") + "/ws", heartbeat=10
                ) as ws:
                    seat.ws, seat.welcomed = ws, False
                    await ws.send_str(json.dumps({"v": 1, "type": "hello", "token": seat.token}))
                    delay = 0.05
                    async for frame in ws:
                        if frame.type == aiohttp.WSMsgType.TEXT:
                            await self._on_message(seat, json.loads(frame.data))
                        if seat.table.finished:
                            break
            except (aiohttp.ClientError, TimeoutError, OSError):
                pass
            finally:
                seat.ws = None
            if seat.table.finished or self.closing:
                return
            self.reconnects += 1
            await asyncio.sleep(delay)
            delay = min(1.0, delay * 2)

    async def _on_message(self, seat: Seat, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        if kind == "welcome":
            seat.welcomed = True
        if kind == "error":
            if msg["code"] != "duplicate":  # a resend of what took effect: fine
                self.errors[msg["code"]] += 1
            if msg["code"] in ("unavailable", "timeout") and not seat.welcomed:
                # Our hello was not taken (Redis away, no worker in time): again,
                # as every client must, or the socket stays open without its seat.
                await asyncio.sleep(0.5 if msg["code"] == "unavailable" else 3.0)
                if not seat.welcomed and seat.ws is not None:
                    await seat.ws.send_str(
                        json.dumps({"v": 1, "type": "hello", "token": seat.token})
                    )
            return
        if kind != "view":
            return
        self.views += 1
        index = msg["seat"]
        holder = (msg["players"][index] or {}).get("name") if index is not None else None
        if holder != seat.name:
            self.leaks.append(f"{seat.name}'s socket got {holder}'s seat {index} v{msg['version']}")
            return
        seat.index = index
        run, game = seat.table, msg["game"]
        if game is None:
            return
        now = time.monotonic()
        if game["version"] > run.max_seen:
            run.max_seen = game["version"]
            run.progressed(now)
            if run.pending is not None and game["version"] > run.pending[0]:
                self.latencies.append((run.decided_at, now - run.decided_at))
                run.pending = None
        if msg["status"] == "over":
            run.finished = True
            return
        version = game["version"]
        if version < run.max_seen or version in run.decisions or not my_turn(msg):
            return
        rng = random.Random(f"{run.id}:{version}")
        action = self.policy(msg, rng)
        run.decisions[version] = (index, action)
        run.pending = (version, now)
        run.decided_at = now
        await self._act(seat, version, action)

    async def _act(self, seat: Seat, version: int, action: dict[str, Any]) -> None:
        if seat.ws is None:
            return  # sent again once it is back
        self.sent += 1
        with contextlib.suppress(Exception):
            await seat.ws.send_str(
                json.dumps({"v": 1, "type": "act", "id": f"v{version}", "action": action})
            )

    async def resend_stalled(self) -> None:
        """Send again every decision that has shown no effect for a while."""
        now = time.monotonic()
        for run in self.tables.values():
            if run.finished or run.pending is None or now - run.pending[1] < RESEND_AFTER:
                continue
            version, _ = run.pending
            index, action = run.decisions[version]
            seat = next((s for s in run.seats if s.index == index), None)
            if seat is not None and seat.ws is not None:
                run.pending = (version, now)
                self.resent += 1
                await self._act(seat, version, action)

    def drop_connections(self, share: float) -> int:
        """Cut a share of the client connections without a goodbye."""
        live = [s for r in self.tables.values() for s in r.seats if s.ws is not None]
        victims = self.rng.sample(live, int(len(live) * share))
        for seat in victims:
            assert seat.ws is not None
            transport = seat.ws._response.connection
            if transport is not None and transport.transport is not None:
                transport.transport.abort()
        return len(victims)

    async def close(self) -> None:
        self.closing = True
        tasks = [s.task for r in self.tables.values() for s in r.seats if s.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
