"""The requests a gateway sent tables for its clients, until each is settled.

A client's act, leave, start or resync goes to its table's inbox under a stream message
id of the gateway's. Its answer comes back on the outbox under that id (an `error`, a
`left`), or as a view of the table that lists it as applied, or only as a later version
of the table. Until then the gateway keeps two things, which end at different times:

- **the route**: the connection that asked and the client's own id for the request, to
  ack or refuse it there; dropped once answered, or when that connection closes;
- **the timing**: the table's version when the request was sent and when (for an
  action), dropped once a view of a later version came (an action's time to it is the
  gateway's latency metric), or when it is refused, or when the table's game is over.

:class:`PendingRequests` owns both, by message id, by table and by connection, so a
closing connection finds its own routes without looking at anyone else's.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

Conn = TypeVar("Conn", bound=Hashable)  # a client connection


class PendingRequests(Generic[Conn]):
    """Requests sent and not yet settled (see the module's docstring)."""

    def __init__(self) -> None:
        self._routes: dict[str, tuple[Conn, str | None]] = {}
        self._by_conn: dict[Conn, set[str]] = {}
        # table -> [(sent: perf_counter seconds, or -1 when untimed), version before, id]
        self._timing: dict[str, list[tuple[float, int, str]]] = {}

    def add(
        self, conn: Conn, table: str, message_id: str, client_id: str | None, before: int,
        sent: float,
    ) -> None:  # fmt: skip
        """A request sent to ``table`` at its version ``before``, at ``sent`` (-1: not
        an action, not timed)."""
        self._routes[message_id] = (conn, client_id)
        self._by_conn.setdefault(conn, set()).add(message_id)
        self._timing.setdefault(table, []).append((sent, before, message_id))

    def route(self, message_id: str) -> tuple[Conn, str | None] | None:
        """Who asked ``message_id``, forgotten (its answer goes to them now); None when
        nobody waits for it (answered already, or its connection closed)."""
        route = self._routes.pop(message_id, None)
        if route is not None:
            mine = self._by_conn[route[0]]
            mine.discard(message_id)
            if not mine:
                del self._by_conn[route[0]]
        return route

    def refused(self, table: str | None, message_id: str) -> tuple[Conn, str | None] | None:
        """A refusal of ``message_id``: who asked (None: nobody waits for it); no view
        will show it, so it is not timed either."""
        route = self.route(message_id)
        if route is not None:
            pending = self._timing.get(table or "")
            if pending is not None:
                self._keep(table or "", [item for item in pending if item[2] != message_id])
        return route

    def handled(self, table: str, version: int, now: float) -> list[float]:
        """A view of ``table`` at ``version``: every request sent before it was applied
        or refused; forgotten, and the seconds each action took to it."""
        pending = self._timing.get(table)
        if not pending:
            return []
        took, keep = [], []
        for sent, before, message_id in pending:
            if version > before:
                if sent >= 0:
                    took.append(now - sent)
                self.route(message_id)
            else:
                keep.append((sent, before, message_id))
        self._keep(table, keep)
        return took

    def table_over(self, table: str) -> None:
        """The table's game is over: nothing will be applied there any more, so nothing
        there is timed (a request still routed is refused there, and its refusal finds
        who asked)."""
        self._timing.pop(table, None)

    def forget(self, conn: Conn) -> None:
        """``conn`` closed: its requests' answers have nobody to go to (their timing
        stays: the table's next view still settles them)."""
        for message_id in self._by_conn.pop(conn, ()):
            del self._routes[message_id]

    def counts(self) -> tuple[int, int]:
        """(requests routed, requests timed): what the gateway holds."""
        return len(self._routes), sum(len(items) for items in self._timing.values())

    def _keep(self, table: str, items: list[tuple[float, int, str]]) -> None:
        if items:
            self._timing[table] = items
        else:
            del self._timing[table]
