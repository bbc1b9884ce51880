"""The worker in process, cycle by cycle: on fakeredis (fast) and on a real redis-server."""

from __future__ import annotations

import time
from typing import Any

import msgpack
import pytest

from dudo import wire
from dudo.bench.driver import TableDriver
from dudo.infra.connection import ConfigMismatch, ensure_partitions
from dudo.infra.log import configure
from dudo.link import GatewayLink
from dudo.run import table_worker
from dudo.table import Table
from dudo.wire import keys
from dudo.worker import Worker, WorkerSettings
from dudo.worker.scripts import COMMIT_TABLES_PER_CALL, commit_groups

P = 4
configure("warning")


def make_worker(client: Any, name: str = "w1", **settings: Any) -> Worker:
    worker = table_worker(WorkerSettings(partitions=P, worker_id=name, **settings), client=client)
    worker.setup()
    worker.heartbeat()
    return worker


def pump(worker: Worker, link: GatewayLink, cycles: int = 5) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _ in range(cycles):
        worker.run_once()
        out.extend(link.read(block_ms=None))
    return out


def play_to_the_end(worker: Worker, link: GatewayLink, tables: list[str], seed: int) -> TableDriver:
    """Three-seat, two-dice games at ``tables``, played by bots through ``worker`` until
    every one is over (within a minute); no error seen on the way."""
    driver = TableDriver(link, seats=3, rules={"preset": "classic", "start_dice": 2}, seed=seed)
    driver.create(tables)
    deadline = time.monotonic() + 60
    while not driver.done:
        assert time.monotonic() < deadline
        worker.run_once()
        driver.pump(block_ms=None)
    assert driver.errors == []
    return driver


def spy_reads(worker: Worker) -> list[int]:
    """The number of keys of each read script call the worker makes from now on: 3 per
    partition it reads."""
    read_keys: list[int] = []
    raw = worker.scripts.raw

    def spy(name: str, script_keys: list[str], args: list[Any]) -> Any:
        if name == "read":
            read_keys.append(len(script_keys))
        return raw(name, script_keys, args)

    worker.scripts.raw = spy  # type: ignore[method-assign]
    return read_keys


def stored(client: Any, table_id: str) -> Table:
    return Table.from_bytes(client.hget(keys.table_of(table_id, P), "s"))


@pytest.mark.parametrize("slot_per_call", [False, True], ids=["shared-calls", "slot-per-call"])
def test_worker_takes_every_partition_and_plays_games_to_the_end(
    client: Any, slot_per_call: bool
) -> None:
    worker = make_worker(client, slot_per_call=slot_per_call)
    assert set(worker.partitions) == set(range(P))
    read_keys = spy_reads(worker)
    link = GatewayLink(client, "gw-1", P)
    driver = play_to_the_end(worker, link, [f"t{i}" for i in range(12)], seed=3)
    if slot_per_call:
        assert set(read_keys) == {3}  # one slot per call
    else:  # all at once, or (after a blocking wait) the partitions it saw entries in
        assert 3 * P in read_keys and all(n % 3 == 0 for n in read_keys)
    for tid in driver.tables:
        table = stored(client, tid)
        assert table.status == "over" and table.game.winner is not None
        assert client.ttl(keys.table_of(tid, P)) > 0  # finished tables expire
    # nothing is left behind in the streams once everything is delivered
    worker.run_once()
    for p in range(P):
        assert client.xlen(keys.inbox(p)) == 0
        assert client.xpending(keys.inbox(p), keys.CONSUMER_GROUP)["pending"] == 0


def test_after_a_blocking_wait_only_the_inboxes_that_got_entries_are_read(
    real_redis: Any,
) -> None:
    """On a standalone Redis an idle worker waits in one blocking XREAD, which names
    the inboxes that got entries; the read that follows touches only those."""
    # A heartbeat far off: its cycle reads every partition, on purpose, and a slow
    # machine must not turn every cycle into one.
    worker = make_worker(real_redis, heartbeat=5.0, lease_ms=20_000)
    read_keys = spy_reads(worker)
    assert worker.run_once() == 0  # the first cycle: the heartbeat's, every partition
    assert read_keys == [3 * P]
    link = GatewayLink(real_redis, "gw-1", P)
    link.send(link.message("create", id="c1", table="t1", rules={}, seats=[{"kind": "open"}] * 2))
    assert worker.run_once() == 1
    assert read_keys == [3 * P, 3]  # t1's partition alone
    assert [m["type"] for m in pump(worker, link, cycles=1)] == ["view"]  # t1 exists


def test_malformed_entries_are_dead_lettered_and_never_block(client: Any) -> None:
    worker = make_worker(client)
    link = GatewayLink(client, "gw-1", P)
    link.send_raw("t1", b"\xc1 not msgpack")
    link.send_raw("t1", msgpack.packb({"v": 1, "type": "fly", "gateway": "gw-1", "id": "x1"}))
    link.send(
        link.message(
            "create", id="c1", table="t1", rules={"preset": "classic"}, seats=[{"kind": "open"}] * 2
        )
    )
    out = pump(worker, link)
    errors = [m for m in out if m["type"] == "error"]
    assert [(e["code"], e["id"]) for e in errors] == [(wire.BAD_MESSAGE, "x1")]
    p = keys.partition_of("t1", P)
    dead = client.xrange(keys.dead_letters(p))
    assert len(dead) == 2
    assert dead[0][1][b"reason"].startswith(b"bad_message")
    assert dead[0][1][b"m"] == b"\xc1 not msgpack"
    assert stored(client, "t1").status == "open"  # the create behind them went through


def test_unknown_table_and_wrong_partition(client: Any) -> None:
    worker = make_worker(client)
    link = GatewayLink(client, "gw-1", P)
    link.send(
        link.message("act", id="a1", table="nope", player="p", seat=0, action={"type": "dudo"})
    )
    wrong = keys.partition_of("t1", P) + 1
    client.xadd(
        keys.inbox(wrong % P),
        {
            "m": wire.encode(
                link.message("create", id="c1", table="t1", rules={}, seats=[{"kind": "open"}] * 2)
            )
        },
    )
    out = pump(worker, link)
    assert sorted(e["code"] for e in out if e["type"] == "error") == [
        wire.BAD_MESSAGE,
        wire.UNKNOWN_TABLE,
    ]
    assert client.hget(keys.table_of("t1", P), "s") is None


def test_a_fenced_worker_cannot_commit_and_its_entries_are_taken_over(client: Any) -> None:
    a = make_worker(client, "wa", lease_ms=300)
    link = GatewayLink(client, "gw-1", P)
    link.send(link.message("create", id="c1", table="t1", rules={}, seats=[{"kind": "open"}] * 2))
    entries = a._read()  # a reads the entry, then stalls before committing
    assert sum(len(v) for v in entries.values()) == 1
    time.sleep(0.4)  # a's leases expire
    b = make_worker(client, "wb", dead_after_ms=200)  # a has gone quiet
    assert set(b.partitions) == set(range(P))
    p = keys.partition_of("t1", P)
    assert b.partitions[p].generation == a.partitions[p].generation + 1
    a._handle(entries)  # a wakes up and commits: refused, nothing written
    assert client.hget(keys.table_of("t1", P), "s") is None
    assert p not in a.partitions
    assert a._read() == {}  # nor can it read more
    out = pump(b, link)  # b claims the entry pending on a and applies it once
    assert stored(client, "t1").status == "open"
    assert [m["type"] for m in out] == ["view"]
    assert client.xpending(keys.inbox(p), keys.CONSUMER_GROUP)["pending"] == 0


def two_partitions_with_a_table_each(
    client: Any,
) -> tuple[Worker, tuple[int, str], tuple[int, str]]:
    """A worker owning every partition, and a create waiting in two different inboxes."""
    a = make_worker(client, "wa")
    link = GatewayLink(client, "gw-1", P)
    tables = {keys.partition_of(f"t{i}", P): f"t{i}" for i in range(20)}
    first, second = list(tables.items())[:2]
    for _, tid in (first, second):
        link.send(
            link.message("create", id=f"c-{tid}", table=tid, rules={}, seats=[{"kind": "open"}] * 2)
        )
    return a, first, second


def take_lease(client: Any, worker: Worker, partition: int) -> None:
    """Another worker takes the partition (a newer generation), as after an expiry."""
    generation = worker.partitions[partition].generation
    client.set(keys.lease(partition), f"{generation + 1}|wb|{int(time.time() * 1000) + 60_000}")


def test_one_commit_call_fences_each_partition_on_its_own(client: Any) -> None:
    """A standalone Redis gets one read and one commit call for several partitions:
    losing one partition's lease must refuse that partition alone."""
    a, (p1, t1), (p2, t2) = two_partitions_with_a_table_each(client)
    entries = a._read()
    assert set(entries) == {p1, p2}
    take_lease(client, a, p1)
    a._handle(entries)  # p1 is refused, p2 commits
    assert client.hget(keys.table_of(t1, P), "s") is None
    assert stored(client, t2).id == t2
    assert p1 not in a.partitions and p2 in a.partitions


def test_one_read_call_fences_each_partition_on_its_own(client: Any) -> None:
    a, (p1, _), (p2, _) = two_partitions_with_a_table_each(client)
    take_lease(client, a, p1)
    entries = a._read()  # p1's read is refused; p2's entry comes back
    assert set(entries) == {p2}
    assert p1 not in a.partitions and p2 in a.partitions
    assert client.xlen(keys.inbox(p1)) == 1  # left for p1's owner


def test_commit_groups_keep_order_and_bound_each_call() -> None:
    sizes = [0, 3, 30, 1, 40, 0, 2, 2]  # 0: a partition with acks or errors only
    groups = commit_groups(sizes, cluster=False)
    assert [i for group in groups for i in group] == list(range(len(sizes)))
    for group in groups:  # a call stays within the bound unless one section alone exceeds it
        assert len(group) == 1 or sum(sizes[i] for i in group) <= COMMIT_TABLES_PER_CALL
    assert commit_groups([1, 1, 1], cluster=False) == [[0, 1, 2]]  # a quiet cycle: one call
    assert commit_groups([1, 1], cluster=True) == [[0], [1]]  # a Cluster: one slot per call
    assert commit_groups([], cluster=False) == []


def test_committed_but_undelivered_messages_are_delivered_by_the_next_owner(client: Any) -> None:
    """Delivery records (a Cluster's way; on a standalone Redis the commit delivers)."""
    a = make_worker(client, "wa", lease_ms=300, slot_per_call=True)
    link = GatewayLink(client, "gw-1", P)
    link.send(link.message("create", id="c1", table="t1", rules={}, seats=[{"kind": "open"}] * 2))
    a.run_once()  # reads and commits; delivery would ride on its next cycle...
    a._unsent.clear()  # ...but it dies first
    assert link.read(block_ms=None) == []
    p = keys.partition_of("t1", P)
    assert client.xlen(keys.deliveries(p)) == 1
    time.sleep(0.4)
    b = make_worker(client, "wb", dead_after_ms=200)  # either way of delivering
    b.run_once()
    views = link.read(block_ms=None)
    assert [m["type"] for m in views] == ["view"] and views[0]["table"] == "t1"
    b.run_once()
    assert client.xlen(keys.deliveries(p)) == 0


def test_graceful_release_hands_partitions_over_at_once(client: Any) -> None:
    a = make_worker(client, "wa")
    a.shutdown()
    assert client.zscore(keys.WORKERS, "wa") is None
    b = make_worker(client, "wb")
    assert set(b.partitions) == set(range(P))


def test_two_workers_share_the_partitions(client: Any) -> None:
    a = make_worker(client, "wa")
    b = make_worker(client, "wb")
    a.heartbeat()  # a sees b and releases b's share
    b.heartbeat()  # b takes it
    assert len(a.partitions) == len(b.partitions) == P // 2
    assert not set(a.partitions) & set(b.partitions)


def test_turn_clock_expires_and_the_house_bot_plays(client: Any) -> None:
    worker = make_worker(client, timer_interval=0.01)
    link = GatewayLink(client, "gw-1", P)
    link.send(
        link.message(
            "create",
            id="c1",
            table="t1",
            rules={"preset": "classic", "turn_seconds": 1},
            seats=[{"kind": "open"}] * 2,
        )
    )
    for i in range(2):
        link.send(link.message("join", id=f"j{i}", table="t1", player=f"p{i}", name=f"P{i}"))
    pump(worker, link)
    assert stored(client, "t1").game.version == 0
    deadline = time.monotonic() + 5
    events: list[dict[str, Any]] = []
    while not events:
        assert time.monotonic() < deadline, "the clock never fired"
        events = [
            e
            for m in pump(worker, link, 1)
            if m["type"] == "view"
            for e in m["events"]
            if e["type"] == "house_bot"
        ]
    assert stored(client, "t1").game.version == 1


def test_partition_count_mismatch_refuses_to_start(client: Any) -> None:
    ensure_partitions(client, 16)
    with pytest.raises(ConfigMismatch, match="16 partitions"):
        table_worker(WorkerSettings(partitions=8, worker_id="w"), client=client).setup()


def test_a_gateway_only_compares_the_partition_count_and_never_stores_it(client: Any) -> None:
    """Under its own Redis user a gateway may not write the configuration: it checks
    what the workers stored (before any did, there is nothing to compare with)."""
    assert ensure_partitions(client, 8, set_up=False) is None  # nothing to compare with
    assert client.hgetall(keys.CONFIG) == {}
    ensure_partitions(client, 16)
    assert ensure_partitions(client, 16, set_up=False) == 16
    with pytest.raises(ConfigMismatch, match="16 partitions"):
        ensure_partitions(client, 8, set_up=False)


def test_lobby_is_kept_and_announced_to_live_gateways(client: Any) -> None:
    link = GatewayLink(client, "gw-1", P)
    link.register()
    worker = make_worker(client)
    link.send(link.message("create", id="c1", table="t1", rules={}, seats=[{"kind": "open"}] * 2))
    out = pump(worker, link)
    lobby = [m for m in out if m["type"] == "lobby"]
    assert lobby and lobby[-1]["entry"]["seats"] == 2
    assert link.open_tables()["t1"]["taken"] == 0
    for i in range(2):
        link.send(link.message("join", id=f"j{i}", table="t1", player=f"p{i}", name=f"P{i}"))
    out = pump(worker, link)
    assert [m["entry"] for m in out if m["type"] == "lobby"][-1]["status"] == "playing"
    assert link.open_tables()["t1"]["status"] == "playing"  # listed to watch, not to join


def test_a_gateway_registered_for_frames_gets_frames_and_others_views(client: Any) -> None:
    """`HSET dudo:gateway_views <id> frames`: the worker learns it at its heartbeat and
    delivers that gateway its views as `frames`; a gateway that never set it, or unset
    it, gets `view` messages."""
    framed, plain = GatewayLink(client, "gw-f", P), GatewayLink(client, "gw-v", P)
    for link in (framed, plain):
        link.register()
    client.hset(keys.GATEWAY_VIEWS, "gw-f", "frames")
    worker = make_worker(client)
    assert worker.frame_gateways == {"gw-f"}
    framed.send(
        framed.message("create", id="c1", table="t1", rules={}, seats=[{"kind": "open"}] * 2)
    )
    framed.send(framed.message("join", id="j0", table="t1", player="p0", name="Ana"))
    plain.send(plain.message("join", id="j1", table="t1", player="p1", name="Ben"))
    got_f, got_v = pump(worker, framed), plain.read(block_ms=None)
    frames = [m for m in got_f if m["type"] == "frames"]
    views = [m for m in got_v if m["type"] == "view"]
    assert frames and not any(m["type"] == "view" for m in got_f)
    assert views and not any(m["type"] == "frames" for m in got_v)
    assert all(m["holders"] in ([], [wire.public_id("p0")]) for m in frames)  # its own seat
    assert all(m["holders"] in ([], [wire.public_id("p1")]) for m in views)
    client.hdel(keys.GATEWAY_VIEWS, "gw-f")
    worker.heartbeat()
    assert worker.frame_gateways == frozenset()
    framed.send(
        framed.message("resync", id="r1", table="t1", seat=0, player=wire.public_id("p0"))
    )
    assert any(m["type"] == "view" for m in pump(worker, framed))


def test_the_heartbeat_reads_the_redis_clock_and_registry(client: Any) -> None:
    """It registers the worker and sees the live gateways; its TIME sets the clock
    offset, so the worker keeps Redis's clock even when the machine's is an hour off."""
    GatewayLink(client, "gw-a", P).register()
    worker = make_worker(client)
    worker.heartbeat()
    assert client.zscore(keys.WORKERS, "w1") is not None
    assert worker.live_gateways == ["gw-a"]
    real = time.time
    try:
        time.time = lambda: real() + 3600  # type: ignore[assignment]  # this machine is off
        worker.heartbeat()
        seconds, micros = client.time()
        assert abs(worker.now() - (seconds * 1000 + micros // 1000)) < 1000
    finally:
        time.time = real  # type: ignore[assignment]
