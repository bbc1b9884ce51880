"""Hostile input and failing infrastructure, against real worker processes on a real Redis.

Each test here reproduces a defect of issue 10 as an operator or a hostile client
would meet it, and checks the behaviour that must hold instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import msgpack
import redis

from dudo import wire
from dudo.bench.driver import TableDriver
from dudo.engine import to_bytes
from dudo.infra.connection import connect
from dudo.infra.service import REDIS_DOWN
from dudo.link import GatewayLink
from dudo.table import Table
from dudo.wire import keys

from ..servers import RedisServer, free_port
from .procs import P, Workers, owners, ready, wait_for


def hello_answer(base: str, token: str) -> dict[str, Any]:
    """Say hello with ``token`` on a new WebSocket; the gateway's answer (welcome or error)."""

    async def hello() -> dict[str, Any]:
        async with aiohttp.ClientSession() as session:
            ws = await session.ws_connect(base.replace("http", "ws") + "/ws")
            await ws.send_str(json.dumps({"v": 1, "type": "hello", "token": token}))
            while True:
                msg = json.loads((await ws.receive(timeout=10)).data)
                if msg["type"] in ("welcome", "error"):
                    await ws.close()
                    return msg

    return asyncio.run(hello())


def test_one_malformed_entry_does_not_stop_any_worker(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """A ``create`` whose ``rules.preset`` is a list used to raise out of decoding: the
    owner died, the next owner replayed it and died too, and the partition stopped."""
    workers.start("p1")
    workers.start("p2")
    wait_for(lambda: len(set(owners(real_redis).values())) == 2, 10, "two workers sharing")
    link = GatewayLink(real_redis, "gw-poison", P)
    base = {"v": 1, "type": "create", "gateway": link.id, "seats": [{"kind": "open"}] * 2}
    for i, preset in enumerate([[], {}, [1, 2], {"x": None}]):
        link.send_raw(
            "pz",
            msgpack.packb({**base, "id": f"bad{i}", "table": "pz", "rules": {"preset": preset}}),
        )
    link.send(link.message("create", id="good", table="pz", rules={}, seats=base["seats"]))
    got: list[dict] = []
    wait_for(
        lambda: got.extend(link.read(block_ms=100)) or any(m["type"] == "view" for m in got),
        15,
        "the good create applied",
    )
    assert {m["id"]: m["code"] for m in got if m["type"] == "error"} == {
        f"bad{i}": wire.BAD_RULES for i in range(4)
    }
    assert all(proc.poll() is None for proc in workers.procs.values()), "a worker died"
    table = Table.from_bytes(real_redis.hget(keys.table_of("pz", P), "s"))
    assert table.status == "open"
    assert real_redis.xlen(keys.dead_letters(keys.partition_of("pz", P))) == 4


def _driven(
    link: GatewayLink, driver: TableDriver, until: Callable[[], bool], limit: float
) -> None:
    """Pump the driver until ``until()``, riding out Redis failures as a gateway must."""
    deadline = time.monotonic() + limit
    while not until():
        assert time.monotonic() < deadline, "games did not finish"
        try:
            driver.pump(block_ms=50)
        except REDIS_DOWN:
            time.sleep(0.1)


def _play_through_faults(
    tmp_path: Path, *, faults: bool
) -> tuple[dict[str, tuple[int, bytes]], list[str], dict[str, Any]]:
    """Twenty driven tables and four bot-service tables on a Redis with an append-only
    file, two workers, a bot service and a gateway. With ``faults``, mid-game: a 0.1 s
    Redis restart, a storm of CLIENT KILLs, and an 8 s outage; nobody is restarted by
    hand. Returns each driven table's final (version, game bytes), the bot tables'
    statuses, and what was observed on the way."""
    server = RedisServer(tmp_path / "redis", "--appendonly", "yes", "--appendfsync", "everysec")
    group = Workers(server.url, tmp_path)
    seen: dict[str, Any] = {"ready_codes": set()}
    try:
        health = free_port()
        group.start("fa", "--seed", "42", "--health-port", str(health))
        group.start("fb", "--seed", "42")
        group.bots("bots", "--id", "bots-1")
        client = connect(server.url)
        wait_for(lambda: len(set(owners(client).values())) == 2, 15, "two workers sharing")
        base = group.gateway("gw-f")
        link = GatewayLink(client, "gw-faults", P)
        driver = TableDriver(link, seats=4, seed=9, resend_after=1.5)
        driver.create([f"f{i}" for i in range(20)])
        bot_tables = [f"b{i}" for i in range(4)]
        link.send(
            *(
                link.message(
                    "create",
                    id=f"{t}-c",
                    table=t,
                    rules={"start_dice": 2},
                    seats=[{"kind": "bot", "level": "normal"}] * 3,
                )
                for t in bot_tables
            )
        )

        def readiness(base: str = base) -> int:
            try:
                with urllib.request.urlopen(f"{base}/readyz", timeout=2) as response:
                    return response.status
            except urllib.error.HTTPError as exc:
                return exc.code
            except OSError:
                return 0

        if faults:
            _driven(link, driver, lambda: driver.applied > 300, 60)
            server.restart(down_for=0.1)
            _driven(link, driver, lambda: driver.applied > 600, 60)
            killer = redis.Redis(port=server.port)
            for _ in range(10):  # a storm: every connection of every process, ten times
                killer.client_kill_filter(_type="normal", skipme=True)
                driver_safe_pump(driver, 0.3)
            _driven(link, driver, lambda: driver.applied > 900, 60)
            server.stop()
            time.sleep(2)
            seen["ready_codes"].add(readiness())  # the gateway says it cannot serve
            seen["worker_ready_codes"] = {readiness(f"http://127.0.0.1:{health}")}
            time.sleep(6)
            server.restart(down_for=0)
        _driven(link, driver, lambda: driver.done, 120)
        ends = redis.Redis(port=server.port)
        wait_for(
            lambda: all(
                (raw := ends.hget(keys.table_of(t, P), "s")) is not None
                and Table.from_bytes(raw).status == "over"
                for t in bot_tables
            ),
            60,
            "the bot tables finished",
        )
        wait_for(lambda: readiness() == 200, 15, "the gateway ready again")
        wait_for(
            lambda: readiness(f"http://127.0.0.1:{health}") == 200, 15, "the worker ready again"
        )
        seen["alive"] = {name: proc.poll() is None for name, proc in group.procs.items()}
        seen["errors"] = {e["code"] for e in driver.errors}
        seen["logs"] = {name: (tmp_path / f"{name}.log").read_text() for name in group.procs}
        finals = {}
        for tid in driver.tables:
            table = Table.from_bytes(ends.hget(keys.table_of(tid, P), "s"))
            finals[tid] = (table.version, to_bytes(table.game))
        statuses = [
            Table.from_bytes(ends.hget(keys.table_of(t, P), "s")).status for t in bot_tables
        ]
        for p in range(P):
            assert ends.xpending(keys.inbox(p), keys.CONSUMER_GROUP)["pending"] == 0
        return finals, statuses, seen
    finally:
        group.stop_all()
        server.stop()


def driver_safe_pump(driver: TableDriver, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            driver.pump(block_ms=20)
        except REDIS_DOWN:
            time.sleep(0.05)


def test_redis_restarts_and_client_kill_storms_lose_and_double_nothing(tmp_path: Path) -> None:
    """Issue 10, defect 3: one CLIENT KILL, a 0.1 s restart or an 8 s outage used to end
    every worker and the bot service. Now every process rides them out, every game
    finishes, and every table ends byte for byte as in a run without faults."""
    calm, calm_bots, _ = _play_through_faults(tmp_path / "calm", faults=False)
    rough, rough_bots, seen = _play_through_faults(tmp_path / "rough", faults=True)
    assert all(seen["alive"].values()), seen["alive"]
    assert seen["errors"] <= {"duplicate"}  # resent actions that had taken effect once
    assert rough == calm, "every driven table ends exactly as without faults"
    assert rough_bots == calm_bots == ["over"] * 4
    assert seen["ready_codes"] == {503}, "the gateway not ready while Redis was down"
    assert seen["worker_ready_codes"] == {503}, "the worker not ready while Redis was down"
    for name in ("fa", "fb", "bots"):
        assert '"event": "redis_unavailable"' in seen["logs"][name], name
        assert '"event": "redis_recovered"' in seen["logs"][name], name


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def test_a_join_answered_with_a_timeout_seats_no_ghost(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """Issue 10, defect 6: the HTTP join answered 504 yet the seat was taken later by a
    player nobody held a token for. Now the 504 carries the token of the player it
    asked a seat for, and hello with it settles the seat either way."""
    workers.start("j1")
    base = workers.gateway("gw-j", "--reply-timeout", "1")
    status, ana = _post(f"{base}/api/tables", {"seats": 3, "name": "Ana"})
    assert status == 201
    workers.procs["j1"].send_signal(signal.SIGSTOP)  # the worker stalls...
    try:
        status, ben = _post(f"{base}/api/tables/{ana['table']}/join", {"name": "Ben"})
    finally:
        workers.procs["j1"].send_signal(signal.SIGCONT)  # ...and then applies the join
    assert status == 504 and ben["code"] == "timeout"
    # A claim on the join: the player is the deployment's to make, known at the hello.
    assert ben["table"] == ana["table"] and ben["token"] and "player" not in ben

    welcome = hello_answer(base, ben["token"])
    assert welcome["type"] == "welcome" and welcome["player"] not in ("", ana["player"])
    assert welcome["seat"] == 1
    assert hello_answer(base, ben["token"])["seat"] == 1  # a claim again: the same seat
    table = Table.from_bytes(real_redis.hget(keys.table_of(ana["table"], P), "s"))
    seated = {wire.public_id(s.player) for s in table.seats if s.player is not None}
    assert seated == {ana["player"], welcome["player"]}  # nobody without a token holds one


def test_what_others_can_read_about_a_player_grants_nothing(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """Issue 10, defect 9: the host's player id was shown in the lobby and in every view,
    and any gateway naming it could attach to the host's seat and read its dice.
    Now others only ever see a one-way handle; naming it gets no seat."""
    workers.start("h1")
    base = workers.gateway("gw-h")
    status, ana = _post(f"{base}/api/tables", {"seats": 3, "name": "Ana"})
    assert status == 201
    hostile = GatewayLink(real_redis, "gw-hostile", P)
    listed = hostile.open_tables()[ana["table"]]["host"]
    assert listed == ana["player"] != "" and listed not in real_redis.hget(
        keys.table_of(ana["table"], P), "s"
    ).decode("latin-1")  # the handle is not the id the table record holds
    tid = ana["table"]
    hostile.send(
        hostile.message("attach", id="x1", table=tid, player=listed, seat=0),
        hostile.message("resync", id="x2", table=tid, player=listed, seat=0),
        hostile.message("join", id="x3", table=tid, player=listed, name="Eve"),
    )
    got: list[dict[str, Any]] = []
    wait_for(
        lambda: got.extend(hostile.read(block_ms=100)) or any(m.get("id") == "x3" for m in got),
        10,
        "answers to the hostile gateway",
    )
    codes = {m["id"]: m.get("code", m["type"]) for m in got if m["type"] in ("error", "joined")}
    # attach names a player id (Ana's is never shown); resync names her handle, public,
    # but her seat is attached to another gateway.
    assert codes["x1"] == wire.NOT_SEATED and codes["x2"] == wire.NOT_ATTACHED
    assert codes["x3"] == "joined"  # a new player, on a free seat: not Ana's
    joined = next(m for m in got if m.get("id") == "x3")
    assert joined["seat"] != ana["seat"]
    for view in (m for m in got if m["type"] == "view"):  # never Ana's private part
        assert all(s["seat"] != ana["seat"] for s in view["seats"])


def test_bot_seats_outlive_their_bot_service(workers: Workers, real_redis: redis.Redis) -> None:
    """Issue 10, defect 10: with no turn clock, a bot-service restart left its seats
    unplayed forever. Now the house bot plays a bot seat silent for the grace
    period, and a service restarted with the same id takes its seats up again."""
    workers.start("g1", "--bot-grace", "0.3")
    think = ("--think-min", "0.05", "--think-max", "0.1")
    workers.bots("bots", "--id", "bots-keep", *think)
    link = GatewayLink(real_redis, "gw-watch", P)
    tables = [f"bs{i}" for i in range(3)]
    link.send(
        *(
            link.message(
                "create",
                id=f"{t}-c",
                table=t,
                rules={"start_dice": 3},
                seats=[{"kind": "bot", "level": "normal"}] * 3,
            )
            for t in tables
        )
    )
    link.send(*(link.message("watch", id=f"{t}-w", table=t, on=True) for t in tables))
    seen: list[dict[str, Any]] = []

    def views() -> list[dict[str, Any]]:
        seen.extend(m for m in link.read(block_ms=50) if m["type"] == "view")
        return seen

    wait_for(lambda: sum(1 for m in views() if m["status"] == "playing") > 10, 20, "play")
    workers.kill("bots")  # kill -9, mid-game
    outage = len(seen)
    wait_for(
        lambda: sum(e["type"] == "house_bot" for m in views()[outage:] for e in m["events"]) >= 3,
        20,
        "the house bot playing the silent bot seats",
    )
    workers.bots("bots", "--id", "bots-keep", *think)  # the same service comes back
    wait_for(
        lambda: all(
            any(m["table"] == t and m["status"] == "over" for m in views()) for t in tables
        ),
        60,
        "every table finished",
    )
    assert '"event": "bot_adopted"' in (workers.folder / "bots.log").read_text()


def test_a_seeded_worker_refuses_to_start_unless_told_it_is_insecure(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """Issue 10, defect 12: `worker --seed` in production makes every die recoverable
    from a spectator view."""
    proc = workers.spawn("seeded", "worker", "--redis", workers.url, "--seed", "1")
    assert proc.wait(20) == 2
    assert "DUDO_INSECURE_SEED" in (workers.folder / "seeded.log").read_text()


def test_a_hello_that_times_out_still_seats_the_connection(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """Issue 10, defect 12: a hello that timed out left the connection with its token but
    no seat, the next act was answered "this token only watches", and the browser
    client then deleted its seat token. Now the late join seats the connection."""
    workers.start("t1")
    base = workers.gateway("gw-t", "--reply-timeout", "0.5")
    status, ana = _post(f"{base}/api/tables", {"seats": 2, "name": "Ana"})
    assert status == 201

    async def scenario() -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = []
        async with aiohttp.ClientSession() as session:
            ws = await session.ws_connect(base.replace("http", "ws") + "/ws")
            workers.procs["t1"].send_signal(signal.SIGSTOP)
            try:
                await ws.send_str(json.dumps({"v": 1, "type": "hello", "token": ana["token"]}))
                got.append(json.loads((await ws.receive(timeout=5)).data))  # timeout
            finally:
                workers.procs["t1"].send_signal(signal.SIGCONT)
            while not any(m["type"] == "welcome" for m in got):
                got.append(json.loads((await ws.receive(timeout=10)).data))
            await ws.send_str('{"v":1,"type":"start"}')  # the host, seated: too few players
            while got[-1]["type"] != "error" or got[-1]["code"] == "timeout":
                got.append(json.loads((await ws.receive(timeout=10)).data))
            await ws.close()
        return got

    got = asyncio.run(scenario())
    assert got[0]["type"] == "error" and got[0]["code"] == "timeout"
    welcome = next(m for m in got if m["type"] == "welcome")
    assert welcome["seat"] == 0 and welcome["player"] == ana["player"]
    assert got[-1]["code"] == "too_few_players"  # the worker answered: it was seated


@contextlib.contextmanager
def _one_table(tmp_path: Path, seats: int) -> Iterator[tuple[RedisServer, str, dict[str, Any]]]:
    """A redis-server of its own (append-only, to restart), a worker, a gateway, and a
    table Ana created with ``seats`` seats: (server, gateway URL, Ana's answer)."""
    server = RedisServer(tmp_path / "redis", "--appendonly", "yes")
    group = Workers(server.url, tmp_path)
    try:
        group.start("o1")
        base = group.gateway("gw-o")
        status, ana = _post(f"{base}/api/tables", {"seats": seats, "name": "Ana"})
        assert status == 201
        yield server, base, ana
    finally:
        group.stop_all()
        server.stop()


def test_a_join_that_meets_a_redis_outage_leaves_no_ghost(tmp_path: Path) -> None:
    """The other half of defect 6: Redis fails while the join is written, so nobody can
    tell whether it was. The 503 carries the token; hello settles the seat."""
    with _one_table(tmp_path, seats=3) as (server, base, ana):
        server.stop()
        status, ben = _post(f"{base}/api/tables/{ana['table']}/join", {"name": "Ben"})
        assert status == 503 and ben["code"] == "unavailable" and ben["token"]
        server.restart(down_for=0)
        wait_for(lambda: ready(base), 20, "the gateway ready again")

        welcome = hello_answer(base, ben["token"])
        assert welcome["type"] == "welcome" and welcome["player"] != ana["player"]
        table = Table.from_bytes(server.client().hget(keys.table_of(ana["table"], P), "s"))
        seated = {wire.public_id(s.player) for s in table.seats if s.player is not None}
        assert seated == {ana["player"], welcome["player"]}


def test_an_act_that_meets_a_redis_outage_is_refused_and_can_be_sent_again(
    tmp_path: Path,
) -> None:
    """The gateway writes an act without waiting for Redis (the connection reads on);
    a write that fails must still reach the player: `unavailable`, quoting the act's
    id, and the connection stays, so the same move goes through once Redis is back."""
    with _one_table(tmp_path, seats=2) as (server, base, ana):
        status, ben = _post(f"{base}/api/tables/{ana['table']}/join", {"name": "Ben"})
        assert status == 200

        async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
            async with aiohttp.ClientSession() as session:
                url = base.replace("http", "ws") + "/ws"
                sockets = [await session.ws_connect(url) for _ in (ana, ben)]
                for ws, who in zip(sockets, (ana, ben), strict=True):
                    await ws.send_str(json.dumps({"v": 1, "type": "hello", "token": who["token"]}))

                async def turn_view() -> tuple[Any, dict[str, Any]]:
                    while True:  # the first view in which someone is to bid
                        for ws in sockets:
                            try:
                                msg = json.loads((await ws.receive(timeout=0.2)).data)
                            except TimeoutError:
                                continue
                            game = msg.get("game") if msg["type"] == "view" else None
                            if game and game["phase"] == "bidding" and game["turn"] == msg["seat"]:
                                return ws, msg

                ws, view = await turn_view()
                server.stop()
                bid = {"type": "bid", "quantity": 1, "face": 2}
                await ws.send_str(json.dumps({"v": 1, "type": "act", "id": "m1", "action": bid}))
                refused = json.loads((await ws.receive(timeout=10)).data)
                server.restart(down_for=0)
                await asyncio.to_thread(wait_for, lambda: ready(base), 20, "ready again")
                await ws.send_str(json.dumps({"v": 1, "type": "act", "id": "m2", "action": bid}))
                while True:
                    msg = json.loads((await ws.receive(timeout=10)).data)
                    if msg["type"] == "view" and msg["version"] > view["version"]:
                        return refused, msg

        refused, after = asyncio.run(scenario())
        assert refused == {
            "v": 1, "type": "error", "id": "m1", "code": "unavailable",
            "message": "the game service is unreachable",
        }  # fmt: skip
        assert after["game"]["bids"][-1][1:] == [1, 2]  # the move sent again went through
