"""Late deliveries from a worker that lost its partitions (issue 10, defect 8).

A worker paused between its commit and its delivery (GC, SIGSTOP, a slow
network) delivers, once it wakes, what it committed before the new owner moved
the table on. Such late copies must never undo anything: the lobby is written
by the fenced commit itself, and every view and lobby news carries the table
version, so gateways drop what is older than what they have.
"""

from __future__ import annotations

import time
from typing import Any

from dudo.gateway.audience import Audience
from dudo.gateway.clients import Metrics
from dudo.link import GatewayLink
from dudo.wire import keys

from .test_worker import P, make_worker, pump, stored


def test_a_paused_owners_late_delivery_cannot_reopen_a_started_table(client: Any) -> None:
    """Delivery records (the Cluster's way, forced with slot_per_call): a late delivery
    is possible, and every reader can tell it is old."""
    link = GatewayLink(client, "gw-1", P)
    link.register()
    a = make_worker(client, "wa", lease_ms=300, slot_per_call=True)
    link.send(link.message("create", id="c1", table="t1", rules={}, seats=[{"kind": "open"}] * 2))
    a.run_once()  # committed: the table is open and listed; its news waits in a's memory
    assert link.open_tables()["t1"]["taken"] == 0
    stale = list(a._unsent)
    a._unsent.clear()  # a is frozen before delivering
    time.sleep(0.4)
    b = make_worker(client, "wb", dead_after_ms=200, slot_per_call=True)
    b.live_gateways = ["gw-1"]
    for i in range(2):
        link.send(link.message("join", id=f"j{i}", table="t1", player=f"p{i}", name=f"P{i}"))
    news = [m for m in pump(b, link) if m["type"] == "lobby"]
    assert stored(client, "t1").status == "playing"
    assert link.open_tables()["t1"]["status"] == "playing"
    assert news[-1]["entry"]["status"] == "playing"
    a._unsent = stale  # a wakes up and delivers what it committed long ago
    a.live_gateways = ["gw-1"]
    a.flush_deliveries()
    late = [m for m in link.read(block_ms=None) if m["type"] == "lobby"]
    assert late and late[0]["entry"]["status"] == "open"  # the stale news did arrive...
    assert link.open_tables()["t1"]["status"] == "playing"  # ...but the lobby is not fooled
    assert late[0]["version"] < news[-1]["version"]  # and every reader can tell it is old


class _Conn:
    """Stands in for a WebSocket connection: records what it is sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.seat = None
        self.grant = None
        self.lobby_held = None

    def send(self, message: dict[str, Any], text: str | None = None) -> None:
        self.sent.append(message)


def test_gateways_drop_lobby_news_and_views_older_than_what_they_relayed() -> None:
    audience = Audience(Metrics())
    conn = _Conn()
    audience.watch_lobby(conn)  # type: ignore[arg-type]
    audience.relay_lobby({"table": "t1", "version": 5, "entry": None})
    audience.relay_lobby({"table": "t1", "version": 3, "entry": {"taken": 1}})  # late
    audience.relay_lobby({"table": "t2", "version": 1, "entry": {"taken": 0}})
    assert [(m["table"], m["entry"]) for m in conn.sent] == [("t1", None), ("t2", {"taken": 0})]
    view = {
        "table": "t1",
        "status": "playing",
        "seats": [],
        "holders": [],
        "game": None,
        "players": [],
        "host": None,
        "deadline": None,
        "events": [],
        "v": 1,
        "type": "view",
    }
    assert audience.relay_view({**view, "version": 7})
    assert not audience.relay_view({**view, "version": 6})  # late: dropped
    assert audience.relay_view({**view, "version": 7})  # a resync's answer: same version passes


def test_a_dead_gateways_outbox_and_registration_go(client: Any) -> None:
    """Issue 10, defect 11: a dead gateway's outbox (1.4 MB seen) and its registry
    entry stayed forever."""
    link = GatewayLink(client, "gw-dead", P)
    link.register()
    worker = make_worker(client, gateway_gc_ms=60_000, outbox_ttl_ms=120_000)
    link.send(link.message("create", id="c1", table="t1", rules={}, seats=[{"kind": "open"}] * 2))
    pump(worker, link)
    worker.run_once()
    outbox = keys.outbox("gw-dead")
    assert client.exists(outbox) and 0 < client.pttl(outbox) <= 120_000  # delivered: a TTL
    # The gateway dies: its heartbeat stops. Ten minutes later...
    client.zadd(keys.GATEWAYS, {"gw-dead": worker.now() - 61_000, "gw-live": worker.now()})
    client.xadd(outbox, {"m": b"\x90"})
    worker.heartbeat()
    assert not client.exists(outbox)
    assert client.zscore(keys.GATEWAYS, "gw-dead") is None
    assert client.zscore(keys.GATEWAYS, "gw-live") is not None


def test_clocks_follow_redis_time_not_the_workers(client: Any, monkeypatch: Any) -> None:
    """Issue 10, defect 12: turn clocks followed the worker's wall clock. A worker whose
    clock is an hour fast still sets deadlines by the Redis server's time."""
    import dudo.worker.membership as membership
    import dudo.worker.state as state

    real = membership.now_ms
    for part in (membership, state):  # every reading of this machine's clock, an hour fast
        monkeypatch.setattr(part, "now_ms", lambda: real() + 3_600_000)
    worker = make_worker(client, timer_interval=0.01)
    seconds, micros = client.time()
    assert abs(worker.now() - (seconds * 1000 + micros // 1000)) < 1000
    link = GatewayLink(client, "gw-1", P)
    link.send(
        link.message(
            "create",
            id="c1",
            table="t1",
            rules={"preset": "classic", "turn_seconds": 30},
            seats=[{"kind": "open"}] * 2,
        )
    )
    for i in range(2):
        link.send(link.message("join", id=f"j{i}", table="t1", player=f"p{i}", name=f"P{i}"))
    pump(worker, link)
    deadline = stored(client, "t1").deadline
    seconds, _ = client.time()
    assert 25_000 < deadline - seconds * 1000 < 35_000  # thirty seconds from Redis's now


def test_a_table_id_of_64_characters_still_gets_its_clock(client: Any) -> None:
    """Issue 10, defect 12: the timeout's id held the table id and grew past 64
    characters for long table ids: the clock never fired."""
    worker = make_worker(client, timer_interval=0.01)
    link = GatewayLink(client, "gw-1", P)
    tid = "x" * 64
    link.send(
        link.message(
            "create",
            id="c1",
            table=tid,
            rules={"preset": "classic", "turn_seconds": 1},
            seats=[{"kind": "open"}] * 2,
        )
    )
    for i in range(2):
        link.send(link.message("join", id=f"j{i}", table=tid, player=f"p{i}", name=f"P{i}"))
    pump(worker, link)
    deadline = time.monotonic() + 5
    while stored(client, tid).game.version == 0:
        assert time.monotonic() < deadline, "the clock never fired"
        pump(worker, link, 1)
        time.sleep(0.05)
    p = keys.partition_of(tid, P)
    assert client.xlen(keys.dead_letters(p)) == 0
