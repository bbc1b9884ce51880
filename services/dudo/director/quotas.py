"""What one admitted app may make a director do: the tournament's side of the quotas.

A tournament asks its :class:`Quotas` before it takes a create or a new registration
from a gateway's entry, with the app that gateway belongs to (``Authority.app_of``: None
for the deployment's own); the quotas raise :class:`~dudo.wire.Refusal`
``rate_limited`` past what that app may do, and the message changes nothing. The
counting itself (token buckets per app, a process's own) is the worker layer's
(:class:`dudo.worker.quota.AppQuotas`), given to the director's loop by
:mod:`dudo.run.director`; a tournament alone (tests, tools) counts nothing.
"""

from __future__ import annotations

from typing import Protocol


class Quotas(Protocol):
    def create(self, app: str | None) -> None:
        """A tournament the gateways of ``app`` create; Refusal past the quota."""

    def register(self, app: str | None) -> None:
        """A new entrant the gateways of ``app`` register; Refusal past the quota."""


class NoQuotas:
    """Nothing is counted."""

    def create(self, app: str | None) -> None:
        return None

    def register(self, app: str | None) -> None:
        return None
