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
