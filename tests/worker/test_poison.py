"""Entries that must never stop a partition: malformed values, and entries that are
read again and again without ever being committed (as when they kill their reader)."""

from __future__ import annotations

from typing import Any

import msgpack
import redis

from dudo import wire
from dudo.link import GatewayLink
from dudo.wire import keys

from .test_worker import P, make_worker, pump, stored

CREATE = {"v": 1, "type": "create", "gateway": "gw-1", "seats": [{"kind": "open"}] * 2}


def test_malformed_rules_values_get_typed_errors_and_the_partition_moves_on(client: Any) -> None:
    worker = make_worker(client)
    link = GatewayLink(client, "gw-1", P)
    bad = [[], {}, ["classic"], 7, None, {"nested": [1]}]
    for i, preset in enumerate(bad):
        link.send_raw(
            "t1",
            msgpack.packb({**CREATE, "id": f"c{i}", "table": "t1", "rules": {"preset": preset}}),
        )
    link.send_raw(  # a rules object keyed by numbers, and one that is a list
        "t1", msgpack.packb({**CREATE, "id": "k1", "table": "t1", "rules": {1: 2}})
    )
    link.send_raw("t1", msgpack.packb({**CREATE, "id": "k2", "table": "t1", "rules": [1]}))
    link.send(link.message("create", id="ok", table="t1", rules={}, seats=[{"kind": "open"}] * 2))
    out = pump(worker, link)
    errors = {e["id"]: e["code"] for e in out if e["type"] == "error"}
    assert errors == {
        **{f"c{i}": wire.BAD_RULES for i in range(len(bad))},
        "k1": wire.BAD_RULES,
        "k2": wire.BAD_RULES,
    }
    assert stored(client, "t1").status == "open"  # the good create behind them went through
    p = keys.partition_of("t1", P)
    assert client.xlen(keys.dead_letters(p)) == len(bad) + 2
    assert client.xlen(keys.inbox(p)) == 0


def test_an_entry_read_many_times_without_a_commit_is_dead_lettered(client: Any) -> None:
    """Each read of a pending entry counts as a delivery. An entry whose every reader
    died before committing (simulated here: read, then memory dropped as after a
    crash) stops being handed out after ``max_deliveries`` and goes to the dead
    letters; the entries behind it are applied."""
    worker = make_worker(client, max_deliveries=3)
    link = GatewayLink(client, "gw-1", P)
    link.send(link.message("create", id="c1", table="t1", rules={}, seats=[{"kind": "open"}] * 2))
    p = keys.partition_of("t1", P)
    part = worker.partitions[p]
    for delivery in range(1, 4):  # delivered 3 times: still handed out
        got = worker._read().get(p, [])
        assert [e.id for e in got] and len(got) == 1, f"delivery {delivery}"
        worker._forget(part)  # the reader "died": replay from the pending list
    assert worker._read().get(p, []) == []  # the 4th delivery: dead-lettered instead
    dead = client.xrange(keys.dead_letters(p))
    assert len(dead) == 1
    assert dead[0][1][b"reason"].startswith(b"internal: read 4 times")
    assert wire.decode(dead[0][1][b"m"])["id"] == "c1"  # the raw entry is kept for inspection
    assert client.xpending(keys.inbox(p), keys.CONSUMER_GROUP)["pending"] == 0
    assert client.hget(keys.table_of("t1", P), "s") is None
    link.send(link.message("create", id="c2", table="t1", rules={}, seats=[{"kind": "open"}] * 2))
    pump(worker, link)  # the partition goes on with what comes after
    assert stored(client, "t1").status == "open"
    assert client.xlen(keys.inbox(p)) == 0


def handle_with_lost_reply(worker: Any, entries: Any) -> None:
    """Process ``entries``; the commit goes through but its reply is lost (a dropped
    connection)."""
    execute = worker._execute

    def lost_reply(batch: Any) -> Any:
        worker._execute = execute  # once
        execute(batch)
        raise redis.ConnectionError("connection reset (the commit went through)")

    worker._execute = lost_reply
    worker._handle(entries)


def test_a_commit_whose_reply_is_lost_is_delivered_all_the_same(client: Any) -> None:
    """Issue 10, defect 6: the commit ran but its reply never came (a dropped
    connection). The delivery record it wrote used to wait for the next owner of
    the partition; the living worker now reads it back and delivers it. (Delivery
    records are the Cluster's way, forced here with slot_per_call; on a standalone
    Redis the commit delivers itself: the next test.)"""
    worker = make_worker(client, slot_per_call=True)
    link = GatewayLink(client, "gw-1", P)
    link.send(link.message("create", id="c1", table="t1", rules={}, seats=[{"kind": "open"}] * 2))
    handle_with_lost_reply(worker, worker._read())
    assert stored(client, "t1").status == "open"  # it was committed
    assert link.read(block_ms=None) == []  # but not delivered
    out = pump(worker, link, cycles=3)
    views = [m for m in out if m["type"] == "view" and m["table"] == "t1"]
    assert views, "the committed view was delivered without a new owner"
    p = keys.partition_of("t1", P)
    assert client.xlen(keys.deliveries(p)) == 0  # and its record cleaned up


def test_a_standalone_commit_delivers_with_itself_even_if_its_reply_is_lost(
    client: Any,
) -> None:
    """On a standalone Redis the commit script appends the gateways' messages itself:
    a lost reply loses nothing, no delivery record is written, nothing is sent twice."""
    worker = make_worker(client)
    link = GatewayLink(client, "gw-1", P)
    link.send(link.message("create", id="c1", table="t1", rules={}, seats=[{"kind": "open"}] * 2))
    handle_with_lost_reply(worker, worker._read())
    views = [m for m in link.read(block_ms=None) if m["type"] == "view"]
    assert [v["table"] for v in views] == ["t1"]  # delivered by the commit itself
    p = keys.partition_of("t1", P)
    assert not client.exists(keys.deliveries(p))  # no record
    again = [m for m in pump(worker, link, cycles=3) if m["type"] == "view"]
    assert again == []  # the entry was acked by the commit: not applied twice
    assert stored(client, "t1").version == views[0]["version"]


def test_a_deleted_inbox_stalls_no_other_partition_and_is_remade(client: Any) -> None:
    """Issue 10, defect 7: one read script serves every partition; a NOGROUP on one
    (its inbox deleted or evicted) failed the whole call, left the healthy
    partitions' entries pending, and the group was never recreated."""
    worker = make_worker(client)
    link = GatewayLink(client, "gw-1", P)
    by_partition: dict[int, str] = {}
    for i in range(40):
        by_partition.setdefault(keys.partition_of(f"t{i}", P), f"t{i}")
    (broken, lost_table), (healthy, good_table) = list(by_partition.items())[:2]
    pump(worker, link, cycles=1)
    client.delete(keys.inbox(broken))  # gone, group and all
    for tid in (good_table, lost_table):  # the XADD remakes the stream, without a group
        link.send(
            link.message("create", id=f"c-{tid}", table=tid, rules={}, seats=[{"kind": "open"}] * 2)
        )
    pump(worker, link, cycles=1)
    assert stored(client, good_table).status == "open"  # the healthy partition went on
    assert client.xpending(keys.inbox(healthy), keys.CONSUMER_GROUP)["pending"] == 0
    pump(worker, link, cycles=3)
    assert stored(client, lost_table).status == "open"  # the group was remade, entry read
    assert client.xlen(keys.inbox(broken)) == 0
    assert set(worker.partitions) == set(range(P))  # no lease given up over it


def test_an_entry_that_kills_its_reader_takes_no_other_entry_with_it(client: Any) -> None:
    """A poison entry read in one batch with innocent ones: every crash counts a
    delivery for the whole batch. An entry read more than twice is then handed out
    alone, so the innocent ones are applied and only the poison is dead-lettered."""
    worker = make_worker(client, max_deliveries=4)
    link = GatewayLink(client, "gw-1", P)
    tables = [t for t in (f"t{i}" for i in range(60)) if keys.partition_of(t, P) == 0][:5]
    poison_table = tables[2]
    for tid in tables:
        link.send(link.message("create", id=f"c-{tid}", table=tid, rules={},
                               seats=[{"kind": "open"}] * 2))  # fmt: skip
    part = worker.partitions[0]
    crashes = 0
    for _ in range(30):
        entries = worker._read().get(0, [])
        if not entries:
            break
        ids = {wire.decode(e.payload)["table"] for e in entries}
        if poison_table in ids:  # the worker "dies" on this batch: nothing committed
            crashes += 1
            worker._forget(part)
            continue
        worker._handle({0: entries})
    for tid in tables:
        record = client.hget(keys.table_of(tid, P), "s")
        assert (record is None) == (tid == poison_table), tid
    dead = client.xrange(keys.dead_letters(0))
    assert [wire.decode(d[1][b"m"])["table"] for d in dead] == [poison_table]
    assert 3 <= crashes <= 6
    assert client.xpending(keys.inbox(0), keys.CONSUMER_GROUP)["pending"] == 0


def test_an_entry_we_signed_that_breaks_a_handler_is_dead_lettered_and_changes_nothing(
    client: Any,
) -> None:
    """Entries signed with the internal key are checked for their shape only (our own
    code wrote them): one that is wrong deeper down (a bug of ours, an older version's
    entry) breaks its handler, and is dead-lettered like any entry that breaks our code;
    the table is as before and the entries behind it are applied."""
    from dudo.infra.keyring import internal_key, start_signing
    from dudo.wire import signing

    start_signing(client, wait_s=0)
    worker = make_worker(client)
    key = internal_key(client)
    assert worker.verifier.active and key is not None
    link = GatewayLink(client, "gw-1", P)
    p = keys.partition_of("t1", P)
    create = link.message("create", id="c1", table="t1", rules={}, seats=[{"kind": "open"}] * 2)
    client.xadd(keys.inbox(p), signing.entry_fields(key, wire.encode(create)))
    pump(worker, link)
    before = client.hget(keys.table_of("t1", P), "s")
    assert before is not None
    bad = wire.encode({"v": 1, "type": "join", "id": "j1", "table": "t1", "gateway": "gw-1",
                       "player": "p1", "name": "Al", "seat": "zero"})  # fmt: skip
    client.xadd(keys.inbox(p), signing.entry_fields(key, bad))
    good = link.message("join", id="j2", table="t1", player="p2", name="Bea", seat=1)
    client.xadd(keys.inbox(p), signing.entry_fields(key, wire.encode(good)))
    pump(worker, link)
    dead = client.xrange(keys.dead_letters(p))
    assert [entry[b"m"] for _, entry in dead] == [bad]
    assert dead[0][1][b"reason"].startswith(b"internal:")
    table = stored(client, "t1")
    assert [s.player for s in table.seats] == [None, "p2"]  # the bad join changed nothing
    assert client.hget(keys.table_of("t1", P), "s") != before
    assert client.xlen(keys.inbox(p)) == 0
