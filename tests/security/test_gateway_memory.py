"""Issue 29, item 10: what a gateway remembers of a request ends with its answer. Acts
refused after a game's end (no view will ever come) stayed in the latency map for good,
one entry per act, after the sockets closed."""

from __future__ import annotations

import asyncio
from typing import Any

from dudo import wire
from dudo.gateway.app import Gateway, GatewaySettings
from dudo.gateway.pending import PendingRequests


class _Conn:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


def test_refused_requests_leave_nothing_behind() -> None:
    gateway = Gateway(GatewaySettings(secret=b"s" * 16, gateway_id="gw-m"))
    conn = _Conn()
    over = {"type": "view", "table": "t1", "version": 9, "status": "over", "players": [],
            "host": None, "deadline": None, "game": None, "seats": [], "holders": [],
            "events": []}  # fmt: skip
    gateway._relay_view(over)
    for i in range(100):  # a client keeps acting after the end: each refused
        gateway._remember_request(conn, "t1", f"a{i}", f"c{i}", timed=True)  # type: ignore[arg-type]
        refused = wire.message("error", table="t1", seat=0, player=None, id=f"a{i}",
                               code="game_over", message="over")  # fmt: skip
        gateway._relay_error(refused)
    assert gateway.pending.counts() == (0, 0)
    assert [m["id"] for m in conn.sent] == [f"c{i}" for i in range(100)]  # each told
    # Requests still in flight when the socket closes are forgotten with it.
    gateway._remember_request(conn, "t2", "b1", "c1", timed=False)  # type: ignore[arg-type]
    gateway._detach = _nothing  # type: ignore[method-assign]  (its seats: the audience's)
    asyncio.run(gateway._disconnect(conn))  # type: ignore[arg-type]
    assert gateway.pending.counts() == (0, 1)  # (its timing: the table's next view ends it)


async def _nothing(conn: object) -> None:
    return None


def test_a_request_is_routed_once_and_timed_until_its_tables_next_view() -> None:
    """Issue 56, item 2: the routes and the timings of the requests a gateway sent, in
    one place, each ended by what settles it (an answer, a later view, a refusal, the
    game's end, the connection's close); a closing connection's routes are found by the
    connection, not by looking through every request."""
    pending: PendingRequests[str] = PendingRequests()
    pending.add("c1", "t1", "a1", "x1", before=3, sent=10.0)
    pending.add("c1", "t1", "a2", None, before=5, sent=-1.0)  # a resync: not timed
    pending.add("c2", "t2", "a3", "x3", before=1, sent=11.0)
    assert pending.route("a1") == ("c1", "x1") and pending.route("a1") is None  # acked once
    assert pending.handled("t1", 4, now=10.5) == [0.5]  # the view of version 4 times a1
    assert pending.counts() == (2, 2)
    pending.forget("c2")  # closed: nobody to answer; the table's next view ends its timing
    assert pending.refused("t2", "a3") is None and pending.counts() == (1, 2)
    pending.table_over("t2")
    assert pending.counts() == (1, 1)
    assert pending.refused("t1", "a2") == ("c1", None) and pending.counts() == (0, 0)
