"""Rate limits and quotas of a gateway: what one client (an address, a token, a
connection) may cost us.

Without them one anonymous client created 1,000 tables in 1.4 s, one watch
token opened any number of sockets, and a resync flood cost the workers real
CPU. Every limit here is a token bucket (a burst, then a steady rate) or a
count, configured in :class:`~dudo.gateway.app.GatewaySettings` and listed in
docs/operations.md. Nothing here touches Redis: limits are per gateway
instance (a deployment with N gateways allows N times as much at most).
"""

from __future__ import annotations

import time
from collections import OrderedDict


class Bucket:
    """A token bucket: ``burst`` at once, then ``rate`` per second."""

    __slots__ = ("burst", "rate", "refilled", "tokens")

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.refilled = time.monotonic()

    def allow(self, cost: float = 1.0) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.refilled) * self.rate)
        self.refilled = now
        if self.tokens < cost - 1e-9:  # not refused for a rounding error after a wait
            return False
        self.tokens -= cost
        return True

    def wait(self, cost: float = 1.0) -> float:
        """Seconds until ``cost`` would be allowed."""
        return max(0.0, (cost - self.tokens) / self.rate) if self.rate > 0 else 3600.0


class PerKey:
    """One bucket per key (a client address, say), the least recently used forgotten
    past ``keep`` keys: memory stays bounded whoever knocks."""

    def __init__(self, rate: float, burst: float, keep: int = 100_000) -> None:
        self.rate, self.burst, self.keep = rate, burst, keep
        self.buckets: OrderedDict[str, Bucket] = OrderedDict()

    def allow(self, key: str) -> bool:
        return self.bucket(key).allow()

    def bucket(self, key: str) -> Bucket:
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = Bucket(self.rate, self.burst)
            if len(self.buckets) > self.keep:
                self.buckets.popitem(last=False)
        else:
            self.buckets.move_to_end(key)
        return bucket


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
