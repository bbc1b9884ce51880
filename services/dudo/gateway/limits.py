"""Rate limits and quotas of a gateway: what one client (an address, a token, a
connection) may cost us.

Without them one anonymous client created 1,000 tables in 1.4 s, one watch
token opened any number of sockets, and a resync flood cost the workers real
CPU. Every limit is a token bucket (a burst, then a steady rate: :mod:`dudo.infra.buckets`,
shared with the workers' quotas) or a count (here), configured in
:class:`~dudo.gateway.app.GatewaySettings` and listed in docs/operations.md. Nothing
here touches Redis: limits are per gateway instance (a deployment with N gateways
allows N times as much at most).
"""

from __future__ import annotations


class Counts:
    """How many open things (connections) each key holds, for caps."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def get(self, key: str) -> int:
        return self.counts.get(key, 0)

    def add(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    def remove(self, key: str) -> None:
        left = self.counts.get(key, 0) - 1
        if left > 0:
            self.counts[key] = left
        else:
            self.counts.pop(key, None)
