"""A request of :class:`~dudo_client.DudoConnection` waiting for its answer, and the
error each waiter raises."""

from __future__ import annotations

import asyncio
from typing import Any

from ._http import DudoError


def again(error: DudoError) -> DudoError:
    """A fresh copy of ``error`` for each raise (one exception object raised in many
    places grows one traceback)."""
    return DudoError(error.code, error.message, status=error.status, facts=error.facts)


class Pending:
    """A request waiting for its answer (``until``: the version its ``ack`` named)."""

    __slots__ = ("future", "kind", "message", "until")

    def __init__(
        self, message: dict[str, Any], kind: str, future: asyncio.Future[dict[str, Any]]
    ) -> None:
        self.message, self.kind, self.future = message, kind, future
        self.until: int | None = None

    def answered_by(self, view: dict[str, Any]) -> bool:
        """Does this view answer the request? A resync by any view, a start once the
        table is no longer open, a rematch by the view that names its new table, an act
        by a view of the version its ``ack`` named, or later."""
        if self.kind in ("view", "started", "rematch"):
            return self.kind == "view" or (
                view["status"] != "open" if self.kind == "started"
                else (view.get("rematch") or {}).get("table") == self.message.get("table")
            )  # fmt: skip
        return self.kind == "act" and self.until is not None and view["version"] >= self.until
