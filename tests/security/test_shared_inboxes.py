"""Issue 50, items 2-6 and 9: what one app's gateway did to the inboxes every app shared.

Each admitted gateway now writes its own inbox on each partition and no other
(docs/security.md, "One inbox per gateway"); the worker reads each gateway's fairly,
judges an entry by its size before copying any of it, and counts everything read from
a gateway against that gateway's quota. Each test is an attack of the audit, run by the
club (its gateway's own Redis user and key) against web (honest) on a real redis-server;
each failed on the code before."""

from __future__ import annotations

import time

import pytest
from redis.exceptions import NoPermissionError, ResponseError

from dudo import wire
from dudo.wire import keys

from .conftest import Deployment, P

MAX_ID = "18446744073709551615-18446744073709551615"


def _open_table(d: Deployment, table: str = "t1") -> None:
    """web's table with Ana and Ben seated: a game under way."""
    d.web.send("create", id="c1", table=table, rules={}, seats=[{"kind": "open"}] * 2)
    d.web.send("join", id="j1", table=table, name="Ana", request="ana-secret-key-1")
    d.web.send("join", id="j2", table=table, name="Ben", request="ben-secret-key-1")
    d.pump()
    assert d.table(table).status == "playing"


def test_an_exhausted_id_in_its_own_inbox_stops_only_the_club(d: Deployment) -> None:
    """Item 2: `XADD <inbox> 18446744073709551615-18446744073709551615` made every later
    `XADD *` to that partition fail, the other apps', the timers' and the directors'.
    The club may write that id in its own inbox only; everyone else's appends go on."""
    p = keys.partition_of("t1", P)
    for shared in (keys.inbox(p), keys.inbox(p, d.web.gateway), keys.TOURNAMENTS.inbox(0)):
        with pytest.raises(NoPermissionError):
            d.club.client.xadd(shared, {"m": b"x"}, id=MAX_ID)
    d.club.client.xadd(keys.inbox(p, d.club.gateway), {"m": b"x"}, id=MAX_ID)
    with pytest.raises(ResponseError):  # its own inbox is exhausted: its own loss
        d.club.client.xadd(keys.inbox(p, d.club.gateway), {"m": b"y"})
    _open_table(d)
    d.admin.xadd(keys.inbox(p), {"m": b"the deployment's own entries still go in"})
    version = d.table("t1").version
    _move(d, "t1")  # web's move through its own inbox: applied
    assert d.table("t1").version > version


def test_trimming_its_own_inbox_deletes_nobody_elses_entries(d: Deployment) -> None:
    """Item 3: `XADD <inbox> MAXLEN 0 * ...` in a loop deleted 14-17 of 30 moves of the
    other app's player. Now it trims the club's own inbox: every move of web's is
    applied, whatever the club trims meanwhile."""
    _open_table(d)
    p = keys.partition_of("t1", P)
    for i in range(30):  # web's player says hello again and again, each answered
        d.web.send("resync", id=f"r{i}", table="t1", seat=0, player=_handle(d, "t1", 0))
        for shared in (keys.inbox(p), keys.inbox(p, d.web.gateway)):
            with pytest.raises(NoPermissionError):
                d.club.client.xadd(shared, {"m": b"x"}, maxlen=0, approximate=False)
        d.club.client.xadd(keys.inbox(p, d.club.gateway), {"m": b"x"}, maxlen=0,
                           approximate=False)  # fmt: skip
    d.pump()
    answered = {i for m in d.web.seen if m["type"] == "view" for i in m.get("applied", [])}
    assert {f"r{i}" for i in range(30)} <= answered


def test_an_entry_over_the_cap_is_judged_by_its_size_and_kept_cut(d: Deployment) -> None:
    """Item 4: 1 MB entries with a bad signature were dead-lettered whole, with no time to
    live (+31 MB for 30). Now an entry over 16 KiB is refused by its size, its dead
    letter keeps its first bytes only and says its size, and the dead letters expire."""
    p = keys.partition_of("t1", P)
    before = _used_memory(d)
    for _ in range(12):
        d.club.client.xadd(keys.inbox(p, d.club.gateway), {"m": b"\x81" + b"x" * 1_000_000,
                                                           "s": b"not a signature"})  # fmt: skip
    d.pump()
    letters = d.admin.xrange(keys.dead_letters(p))
    dropped = d.worker.metrics.quota_dropped._value.get()  # past its bytes a second
    assert letters and len(letters) + dropped >= 12
    for _, fields in letters:
        assert fields[b"reason"].startswith(b"too_large")
        assert len(fields[b"m"]) <= 256 and fields[b"bytes"] == b"1000001"
        assert fields[b"from"] == d.club.gateway.encode()
    assert 0 < d.admin.pttl(keys.dead_letters(p)) <= 7 * 24 * 3600 * 1000
    assert d.admin.xlen(keys.inbox(p, d.club.gateway)) == 0  # read, refused, deleted
    assert _used_memory(d) - before < 1_000_000  # not 12 MB
    notes = d.admin.xrange(keys.refused(d.club.gateway))
    assert notes and all(f[b"code"] == b"too_large" for _, f in notes)


def test_a_gateway_cannot_leave_the_deployments_database(d: Deployment) -> None:
    """Item 5: `SELECT 7` was allowed: keys shaped like the deployment's, written in
    another database, were never read nor expired (32 MB kept)."""
    for db in ("7", "1", "0"):
        with pytest.raises(NoPermissionError):
            d.club.client.execute_command("SELECT", db)


def test_a_huge_presence_value_costs_the_heartbeats_nothing(d: Deployment) -> None:
    """Item 6: a 128 MB value in the club's own presence key was read by every worker
    and director at every heartbeat (their CPU from 0.03 to ~4 s per 5 s). They read its
    first bytes only now: a heartbeat sends back kilobytes, whatever the value."""
    d.club.client.set(keys.presence(d.club.gateway), b"v" * 16_000_000, px=60_000)
    sent = _sent_bytes(d)
    for loop in (d.worker, d.director, d.ratings):
        loop.heartbeat()
    assert _sent_bytes(d) - sent < 200_000
    assert d.club.gateway in d.worker.live_gateways  # present, and told in views
    assert d.club.gateway not in d.worker.frame_gateways


def test_a_flood_of_badly_signed_entries_does_not_hold_another_apps_moves(
    d: Deployment,
) -> None:
    """Item 9: 4 KB entries with a wrong signature, into the inbox of web's table's
    partition, were refused before the quota counted them: never dropped, they held the
    other app's moves 1.2-5 s back, tens of thousands queued ahead of them. Now they wait
    in the club's own inbox, read within its quota (50 a second here) and counted there,
    while web's move is read in the very next cycle."""
    _open_table(d)
    p = keys.partition_of("t1", P)
    junk = {"m": b"\x81" + b"x" * 4000, "s": b"0123456789abcdef"}
    pipe = d.club.client.pipeline(transaction=False)
    for _ in range(2000):
        pipe.xadd(keys.inbox(p, d.club.gateway), junk)
    pipe.execute()
    flooded = time.monotonic()
    d.pump(1)  # the club's burst (100) read and refused; the rest waits in its inbox
    version = d.table("t1").version
    _move(d, "t1", pump=False)
    started = time.monotonic()
    d.worker.run_once()
    assert d.table("t1").version > version, "web's move waited behind the flood"
    assert time.monotonic() - started < 1.0
    read = 2000 - d.admin.xlen(keys.inbox(p, d.club.gateway))  # the rest waits, its own
    assert 100 <= read <= 100 + 50 * (time.monotonic() - flooded) + 5  # within its quota
    notes = d.admin.xrange(keys.refused(d.club.gateway))  # every one read was judged
    assert notes and all(f[b"code"] in (b"bad_message", b"unauthorized") for _, f in notes)


def _move(d: Deployment, table: str, *, pump: bool = True) -> None:
    """The seat in turn at web's ``table`` bids the least it may (then the loops run)."""
    view = max((m for m in d.web.seen if m["type"] == "view" and m["table"] == table),
               key=lambda m: m["version"])  # fmt: skip
    turn = view["game"]["turn"]
    holder = view["holders"][[s["seat"] for s in view["seats"]].index(turn)]
    action = {"type": "bid", "quantity": 1, "face": 2}
    d.web.send("act", id=f"a{view['version']}", table=table, player=holder, seat=turn,
               action=action)  # fmt: skip
    if pump:
        d.pump()


def _handle(d: Deployment, table: str, seat: int) -> str:
    return wire.public_id(d.table(table).seats[seat].player)


def _used_memory(d: Deployment) -> int:
    return int(d.admin.info("memory")["used_memory"])


def _sent_bytes(d: Deployment) -> int:
    return int(d.admin.info("stats")["total_net_output_bytes"])


def test_a_gateways_own_backlog_is_capped_and_it_is_told(d: Deployment) -> None:
    """What waits in a gateway's own inbox past its quota is bounded too: past the
    backlog cap its oldest entries go (its own loss), counted, and it is told why."""
    d.worker.settings.gateway_backlog = 300
    p = keys.partition_of("t1", P)
    pipe = d.club.client.pipeline(transaction=False)
    for _ in range(1500):
        pipe.xadd(keys.inbox(p, d.club.gateway), {"m": b"\x81", "s": b"x"})
    pipe.execute()
    dropped = d.worker.metrics.backlog_dropped._value.get()
    d.pump(1)
    assert d.admin.xlen(keys.inbox(p, d.club.gateway)) <= 300 + 100  # whole nodes at a time
    assert d.worker.metrics.backlog_dropped._value.get() - dropped >= 1000
    notes = [f for _, f in d.admin.xrange(keys.refused(d.club.gateway))]
    assert any(n[b"code"] == b"rate_limited" and b"unread entries" in n[b"reason"]
               for n in notes), notes  # fmt: skip
