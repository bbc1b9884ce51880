"""Scripted players for the full-path benchmarks: WebSocket clients speaking the client protocol.

Each :class:`Players` group takes the four (or ``seats``) seats of a table
through the HTTP API, says hello with its tokens and plays until the game is
over; then it takes a new table, so the number of connected clients stays
constant. A seat acts as soon as a view says it is its turn (closed loop), or
after a think time. Latency is what a player feels: from sending ``act`` to
receiving its own view that shows the move applied.

Two policies:

- ``peer``: the policy of the peer harnesses in ``../shared/peers`` (Colyseus,
  boardgame.io), so the three systems play the same game: Dudo if the standing
  bid exceeds the other players' dice / 3 (ones: / 6) plus its own matching
  dice, else the minimal raise (an opening bid is one die of its most common
  face, 2–6);
- ``baseline``: our normal bot (:func:`dudo.bots.policies.baseline`).

Clients speak JSON (as the browser does) or msgpack (binary frames).
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import msgpack
import msgspec

from ..bots import baseline, ones_wild
from ..infra import quiet_collector, settle_heap


def peer_policy(view: dict[str, Any], _rng: random.Random) -> dict[str, Any]:
    """The peer harnesses' policy (``../shared/peers/*/load.js``), on our view."""
    game = view["game"]
    legal = game["legal"]
    if legal.get("direction"):
        return {"type": "direction", "value": 1}
    dice = game["dice"]
    wild = ones_wild(game)
    others = game["dice_in_play"] - len(dice)

    def mine(face: int) -> int:
        return sum(1 for d in dice if d == face or (wild and face != 1 and d == 1))

    if game["bids"]:
        _, quantity, face = game["bids"][-1]
        if legal["dudo"] and quantity > others / (6 if face == 1 else 3) + mine(face):
            return {"type": "dudo"}
        if face == 1:
            want = (quantity + 1, 1)
        else:
            want = (quantity, face + 1) if face < 6 else (quantity + 1, 2)
    else:
        want = (1, max(range(2, 7), key=lambda f: (mine(f), -f)))
    lowest = legal["bid"]
    quantity, face = want
    if lowest[face - 1] is not None and lowest[face - 1] <= quantity <= legal["max_quantity"]:
        return {"type": "bid", "quantity": quantity, "face": face}
    # The peers' rule does not know palifico or these rules' raising: the nearest legal bid.
    options = [(q, f) for f, q in enumerate(lowest, 1) if q is not None and q >= quantity]
    options = [(q, f) for q, f in options if q <= legal["max_quantity"]]
    if options:
        q, f = min(options)
        return {"type": "bid", "quantity": q, "face": f}
    return {"type": "dudo"}


POLICIES = {"peer": peer_policy, "baseline": baseline}
_json_decode = msgspec.json.Decoder().decode
_json_encode = msgspec.json.Encoder().encode


def _decode(data: str | bytes) -> dict[str, Any]:
    return _json_decode(data) if isinstance(data, str) else msgpack.unpackb(data)


async def _close_when(stop: asyncio.Event, ws: aiohttp.ClientWebSocketResponse) -> None:
    await stop.wait()
    await ws.close()


@dataclass
class Seat:
    token: str
    ws: aiohttp.ClientWebSocketResponse | None = None
    version: int = 0
    pending: tuple[float, int] | None = None  # (sent at, table version then)


@dataclass
class Group:
    """The clients at one table."""

    table: str
    seats: list[Seat]
    rng: random.Random = field(default_factory=random.Random)
    over: bool = False


class Players:
    """Groups of scripted clients, each at its own table, one table after another."""

    def __init__(
        self,
        bases: list[str],
        tables: int,
        *,
        seats: int = 4,
        think_ms: float = 0.0,
        policy: str = "peer",
        codec: str = "json",
    ) -> None:
        self.bases = bases
        self.tables = max(1, tables)
        self.seats = seats
        self.think = think_ms / 1000
        self.policy = POLICIES[policy]
        self.binary = codec == "msgpack"
        self.latencies: list[float] = []
        self.applied = 0
        self.games = 0
        self.errors: Counter[str] = Counter()  # errors the clients received, by code
        self.measuring = False
        self.connected = 0
        self.acting: set[asyncio.Task[None]] = set()

    async def run(self, stop: asyncio.Event) -> None:
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            groups = [
                self.play(session, self.bases[i % len(self.bases)], stop)
                for i in range(self.tables)
            ]
            await asyncio.gather(*groups)

    async def new_group(self, session: aiohttp.ClientSession, base: str) -> Group:
        body = {"rules": {"preset": "classic"}, "seats": self.seats, "bots": [], "name": "P0"}
        async with session.post(f"{base}/api/tables", json=body) as r:
            made = await r.json()
            if r.status != 201 and "token" not in made:
                raise RuntimeError(f"create refused: {made}")
        tokens = [made["token"]]
        for i in range(1, self.seats):
            async with session.post(
                f"{base}/api/tables/{made['table']}/join", json={"name": f"P{i}"}
            ) as r:
                joined = await r.json()
                if "token" not in joined:
                    raise RuntimeError(f"join refused: {joined}")
                tokens.append(joined["token"])
        return Group(made["table"], [Seat(t) for t in tokens], random.Random(made["table"]))

    async def play(self, session: aiohttp.ClientSession, base: str, stop: asyncio.Event) -> None:
        """One table after another, until stopped."""
        url = base.replace("http", "ws", 1) + "/ws"
        while not stop.is_set():
            try:
                group = await self.new_group(session, base)
            except (aiohttp.ClientError, RuntimeError) as exc:
                self.errors[type(exc).__name__] += 1
                await asyncio.sleep(0.2)
                continue
            for seat in group.seats:
                seat.ws = await session.ws_connect(url, max_msg_size=1 << 20)
                await self._send(seat.ws, {"v": 1, "type": "hello", "token": seat.token})
                self.connected += 1
            tasks = [asyncio.create_task(self.seat_loop(group, seat, stop)) for seat in group.seats]
            await asyncio.gather(*tasks)
            for seat in group.seats:
                if seat.ws is not None:
                    await seat.ws.close()
                    self.connected -= 1

    async def _send(self, ws: aiohttp.ClientWebSocketResponse, message: dict[str, Any]) -> None:
        if self.binary:
            await ws.send_bytes(msgpack.packb(message))
        else:
            await ws.send_str(_json_encode(message).decode())

    async def seat_loop(self, group: Group, seat: Seat, stop: asyncio.Event) -> None:
        """Read this seat's messages until the game is over or the run stops (the socket
        is closed then: no timer per message, which cost the load generator dearly)."""
        ws = seat.ws
        assert ws is not None
        closer = asyncio.create_task(_close_when(stop, ws))
        try:
            await self._read_seat(group, seat, ws)
        finally:
            closer.cancel()

    async def _read_seat(
        self, group: Group, seat: Seat, ws: aiohttp.ClientWebSocketResponse
    ) -> None:
        while not group.over:
            frame = await ws.receive()
            if frame.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                msg = _decode(frame.data)
            else:
                return
            now = time.perf_counter()
            kind = msg["type"]
            if kind == "error":
                self.errors[msg["code"]] += 1
                seat.pending = None
                continue
            if kind != "view" or msg["version"] < seat.version:
                continue
            seat.version = msg["version"]
            if seat.pending and msg["version"] > seat.pending[1]:
                if self.measuring:
                    self.latencies.append(now - seat.pending[0])
                    self.applied += 1
                seat.pending = None
            if msg["status"] == "over":
                if self.measuring:
                    self.games += 1
                group.over = True
                return
            game = msg["game"]
            if game and game["turn"] == msg["seat"] and seat.pending is None:
                if self.think:
                    seat.pending = (float("inf"), msg["version"])  # decided; sending soon
                    task = asyncio.create_task(self.act_later(group, seat, msg))
                    self.acting.add(task)
                    task.add_done_callback(self.acting.discard)
                else:
                    await self.act(group, seat, msg)

    async def act_later(self, group: Group, seat: Seat, view: dict[str, Any]) -> None:
        await asyncio.sleep(self.think * group.rng.uniform(0.5, 1.5))
        await self.act(group, seat, view)

    async def act(self, group: Group, seat: Seat, view: dict[str, Any]) -> None:
        action = self.policy(view, group.rng)
        message = {"v": 1, "type": "act", "id": secrets.token_hex(6), "action": action}
        seat.pending = (time.perf_counter(), view["version"])
        if seat.ws is not None and not seat.ws.closed:
            await self._send(seat.ws, message)


@dataclass
class Measured:
    """What :func:`measure` saw: how long, the moves per second of each second, and
    ``sample()`` taken as the measured phase began and as it ended."""

    elapsed: float
    rates: list[float]
    connected: int  # clients connected as the phase ended
    before: Any
    after: Any


async def measure(
    players: Players, seconds: float, sample: Callable[[], Any] = lambda: None
) -> Measured:
    """Connect every client, warm up, measure for ``seconds``, stop the clients."""
    quiet_collector()
    stop = asyncio.Event()
    running = asyncio.create_task(players.run(stop))
    deadline = time.monotonic() + 60
    while players.connected < players.tables * players.seats:
        if time.monotonic() > deadline or running.done():
            stop.set()
            raise SystemExit(f"only {players.connected} clients connected: {players.errors}")
        await asyncio.sleep(0.1)
    await asyncio.sleep(2.0)  # warm up: first games under way, caches filled
    players.measuring = True
    before, t0 = sample(), time.monotonic()
    rates = []
    while time.monotonic() - t0 < seconds:
        applied, started = players.applied, time.monotonic()
        settle_heap()  # the measuring clients tune GC like the services they measure
        await asyncio.sleep(1.0)
        rates.append((players.applied - applied) / (time.monotonic() - started))
    elapsed, after = time.monotonic() - t0, sample()
    players.measuring = False
    connected = players.connected
    stop.set()
    await asyncio.wait_for(running, 30)
    return Measured(elapsed, rates, connected, before, after)
