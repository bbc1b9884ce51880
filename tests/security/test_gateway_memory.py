"""Issue 29, item 10: what a gateway remembers of a request ends with its answer. Acts
refused after a game's end (no view will ever come) stayed in the latency map for good,
one entry per act, after the sockets closed."""

from __future__ import annotations

import asyncio
from typing import Any

from dudo import wire
from dudo.gateway.app import Gateway, GatewaySettings


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
    assert gateway.timing == {} and gateway.acts == {}
    assert [m["id"] for m in conn.sent] == [f"c{i}" for i in range(100)]  # each told
    # Requests still in flight when the socket closes are forgotten with it.
    gateway._remember_request(conn, "t2", "b1", "c1", timed=False)  # type: ignore[arg-type]
    gateway._detach = _nothing  # type: ignore[method-assign]  (its seats: the audience's)
    asyncio.run(gateway._disconnect(conn))  # type: ignore[arg-type]
    assert gateway.acts == {}


async def _nothing(conn: object) -> None:
    return None
