"""No socket ever receives dice of a player other than its own.

Two real gateway processes (one taking its views as `frames`, the client JSON
the worker encodes, the other as `view` messages it encodes itself) and a
worker on a real redis-server; players join,
leave before the start with their pages left open, come back through the other
gateway while the old socket stays open, the host starts early (seats are
renumbered), spectators watch, and everyone plays. Every message every socket
ever receives is kept and checked at the end:

- a seat's view goes only to a socket of the player who holds that seat in that
  very snapshot (players have unique names, and ``players[seat]`` of the snapshot
  names the holder);
- a spectator's view never carries dice.

Issue 10, defect 1: the gateway routed views by seat number and never unregistered
a socket, so a player who left before the start got the dice of whoever took the
seat next.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest

from dudo.bots.levels import POLICIES
from dudo.bots.policies import my_turn

from ..integration.procs import Workers
from ..servers import RedisServer

PARTITIONS = 4


@dataclass
class Sock:
    """One WebSocket of a player (or a spectator: ``owner`` None), read in the background."""

    owner: str | None
    ws: aiohttp.ClientWebSocketResponse
    seen: list[dict[str, Any]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None

    async def read(self) -> None:
        async for frame in self.ws:
            if frame.type == aiohttp.WSMsgType.TEXT:
                self.seen.append(json.loads(frame.data))

    async def send(self, **message: Any) -> None:
        with contextlib.suppress(Exception):
            await self.ws.send_str(json.dumps({"v": 1, **message}))

    def last_view(self) -> dict[str, Any] | None:
        return next((m for m in reversed(self.seen) if m["type"] == "view"), None)


@dataclass
class Scene:
    session: aiohttp.ClientSession
    bases: list[str]
    rng: random.Random
    table: str = ""
    tokens: dict[str, str] = field(default_factory=dict)  # player name -> seat token
    socks: list[Sock] = field(default_factory=list)
    serial: int = 0

    async def open(self, owner: str | None, token: str, base: str | None = None) -> Sock:
        base = base or self.rng.choice(self.bases)
        ws = await self.session.ws_connect(f"{base.replace('http', 'ws')}/ws")
        sock = Sock(owner, ws)
        sock.task = asyncio.create_task(sock.read())
        self.socks.append(sock)
        await sock.send(type="hello", token=token)
        return sock

    async def create(self, host: str, seats: int, base: str | None = None) -> None:
        base = base or self.rng.choice(self.bases)
        body = {"rules": {"preset": "classic", "start_dice": 2}, "seats": seats, "name": host}
        async with self.session.post(f"{base}/api/tables", json=body) as response:
            assert response.status == 201, await response.text()
            created = await response.json()
        self.table = created["table"]
        self.tokens[host] = created["token"]
        await self.open(host, created["token"], base)

    async def join(self, name: str, base: str | None = None) -> Sock | None:
        base = base or self.rng.choice(self.bases)
        url = f"{base}/api/tables/{self.table}/join"
        async with self.session.post(url, json={"name": name}) as response:
            if response.status != 200:
                return None  # full or started: fine
            joined = await response.json()
        self.tokens[name] = joined["token"]
        return await self.open(name, joined["token"], base)

    async def watch(self) -> None:
        base = self.rng.choice(self.bases)
        async with self.session.post(f"{base}/api/tables/{self.table}/watch") as response:
            token = (await response.json())["token"]
        await self.open(None, token, base)

    def of(self, name: str) -> list[Sock]:
        return [s for s in self.socks if s.owner == name]

    async def play(self) -> None:
        """Every socket whose last view says it is its turn makes a baseline move."""
        for sock in self.socks:
            view = sock.last_view()
            if sock.owner is not None and view is not None and my_turn(view):
                self.serial += 1
                action = POLICIES["baseline"](view, self.rng)
                await sock.send(type="act", id=f"a{self.serial}", action=action)

    async def settle(self, seconds: float = 0.6) -> None:
        await asyncio.sleep(seconds)

    async def close(self) -> None:
        for sock in self.socks:
            with contextlib.suppress(Exception):
                await sock.ws.close()
            if sock.task is not None:
                sock.task.cancel()


def leaks(scene: Scene) -> list[str]:
    """Every message that showed a socket something that is not its own."""
    found = []
    for sock in scene.socks:
        for msg in sock.seen:
            if msg["type"] != "view":
                continue
            game, seat = msg["game"], msg["seat"]
            if sock.owner is None:
                if seat is not None or (game is not None and "dice" in game):
                    found.append(f"spectator got seat {seat}'s view v{msg['version']}")
            elif seat is None or (msg["players"][seat] or {}).get("name") != sock.owner:
                holder = (msg["players"][seat] or {}).get("name") if seat is not None else None
                found.append(f"{sock.owner}'s socket got {holder}'s seat {seat} v{msg['version']}")
    return found


@pytest.fixture(scope="module")
def two_gateways(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One worker and two gateways for every scenario (each plays its own table): one
    takes its views as `frames` (the default), the other as `view` messages."""
    redis_server.client().flushall()
    group = Workers(redis_server.url, tmp_path_factory.mktemp("isolation"), partitions=PARTITIONS)
    group.start("w1")
    bases = [group.gateway("gw-one"), group.gateway("gw-two", "--no-frames")]
    yield bases
    group.stop_all()


def test_reported_cases_leak_nothing(two_gateways: list[str]) -> None:
    """The three ways a stale socket used to get someone else's dice, one after another."""
    one, two = two_gateways

    async def scenario() -> list[str]:
        async with aiohttp.ClientSession() as session:
            scene = Scene(session, two_gateways, random.Random(1))
            # 1. Leaving before the start, page left open; someone else takes the seat.
            await scene.create("Ana", 3, one)
            ben = await scene.join("Ben", one)
            assert ben is not None
            await scene.settle()
            await ben.send(type="leave")
            await scene.settle()
            await scene.join("Cai", one)  # takes Ben's seat, through Ben's gateway
            # 2. Re-attaching through the other gateway, old socket still open; then
            # leaving from there, and the seat goes to a newcomer on the first gateway.
            await scene.open("Cai", scene.tokens["Cai"], two)
            await scene.settle()
            await scene.of("Cai")[-1].send(type="leave")
            await scene.settle()
            await scene.join("Dan", one)
            # 3. The host starts early: seats are renumbered.
            await scene.settle()
            await scene.of("Ana")[0].send(type="start")
            for _ in range(20):
                await scene.settle(0.2)
                await scene.play()
            await scene.settle()
            await scene.close()
            played = [s for s in scene.socks if s.owner in ("Ana", "Dan")]
            assert all(any(m["type"] == "view" and m["game"] for m in s.seen) for s in played)
            return leaks(scene)

    assert asyncio.run(scenario()) == []


@pytest.mark.parametrize("seed", range(4))
def test_random_joins_leaves_reattaches_and_starts_leak_nothing(
    two_gateways: list[str], seed: int
) -> None:
    async def scenario() -> list[str]:
        async with aiohttp.ClientSession() as session:
            rng = random.Random(seed)
            scene = Scene(session, two_gateways, rng)
            await scene.create(f"H{seed}", rng.choice([4, 5, 6]))
            names = iter(f"P{seed}-{i}" for i in range(100))
            for step in range(40):
                ops = ["join", "join", "leave", "leave", "reattach", "watch", "play"]
                op = rng.choice([*ops, "start"] if step > 20 else ops)
                if op == "join":
                    await scene.join(next(names))
                elif op == "leave" and scene.tokens:
                    socks = scene.of(rng.choice(list(scene.tokens)))
                    if socks:
                        await rng.choice(socks).send(type="leave")
                elif op == "reattach" and scene.tokens:
                    name = rng.choice(list(scene.tokens))
                    await scene.open(name, scene.tokens[name])
                elif op == "watch":
                    await scene.watch()
                elif op == "start":
                    await scene.of(f"H{seed}")[0].send(type="start")
                await scene.play()
                await asyncio.sleep(rng.uniform(0.02, 0.15))
            for _ in range(10):
                await scene.settle(0.2)
                await scene.play()
            await scene.close()
            return leaks(scene)

    assert asyncio.run(scenario()) == []
