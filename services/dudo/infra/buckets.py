"""Token buckets: a burst, then a steady rate; one per key, the keys bounded.

What a client may cost a gateway (dudo.gateway.limits) and what a gateway may cost a
worker (its quota, dudo.worker.quota) are both counted this way. Pure: the clock is
``time.monotonic``, nothing else.
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
