"""What one admitted gateway may cost a worker: entries and bytes per second.

Each admitted gateway writes its own inbox stream on each partition (docs/security.md,
"One inbox per gateway"), so the worker knows who wrote an entry before it reads a byte
of it. Each worker keeps, per gateway, a token bucket of entries and one of bytes: a
read takes from a gateway's inbox no more entries than its bucket holds
(:meth:`Quota.allowance`; past it they wait in its own inbox), and every entry read is
counted, whatever it holds (a flood of badly signed entries once went uncounted and held
another app's moves 5 s back). An entry past the bytes is dropped before any table sees
it: acked and deleted (never a dead letter, which a flood would fill), counted, and
answered to its gateway at most once a second (``rate_limited``), so an honest gateway
over its quota learns why. A faulty gateway once had 27,000 refused acts processed,
each at a table's full cost, in 40 s. The deployment's own entries are not counted.

The quota is per worker: a gateway writing to the partitions of N workers may write
N times as much in all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .. import wire
from ..infra import PerKey

TELL_EVERY_S = 1.0  # a gateway over its quota is told at most this often


@dataclass
class Quota:
    entries_per_s: float  # 0: no quota
    bytes_per_s: float
    entries: PerKey = field(init=False)
    bytes: PerKey = field(init=False)
    refused: int = 0
    _told: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Bursts of two seconds' worth; at most 10,000 gateways remembered.
        self.entries = PerKey(self.entries_per_s, 2 * self.entries_per_s, keep=10_000)
        self.bytes = PerKey(self.bytes_per_s, 2 * self.bytes_per_s, keep=10_000)

    def allowance(self, gateway: str, most: int) -> int:
        """How many entries of ``gateway`` a read may take now (at most ``most``): the
        whole tokens of its bucket, or ``most`` without a quota."""
        if self.entries_per_s <= 0:
            return most
        bucket = self.entries.bucket(gateway)
        bucket.allow(0)  # refilled to now, nothing taken
        return max(0, min(most, int(bucket.tokens + 1e-9)))

    def refusal(self, gateway: str, size: int) -> wire.WireError | None:
        """None if this entry of ``gateway`` (``size`` bytes) is within its quota; else
        why not (and whether to tell it: :attr:`QuotaExceeded.tell`)."""
        if self.entries_per_s <= 0:
            return None
        entries, volume = self.entries.bucket(gateway), self.bytes.bucket(gateway)
        if entries.allow() and volume.allow(min(size, volume.burst)):
            return None
        self.refused += 1
        now = time.monotonic()
        tell = now - self._told.get(gateway, -TELL_EVERY_S) >= TELL_EVERY_S
        if tell:
            self._told[gateway] = now
            if len(self._told) > 10_000:
                self._told.clear()
        return QuotaExceeded(
            f"gateway {gateway} is over its quota ({self.entries_per_s:g} entries, "
            f"{self.bytes_per_s:g} bytes a second per worker): entries dropped",
            tell,
        )


class QuotaExceeded(wire.WireError):
    """An entry dropped for its gateway's quota: acked, not dead-lettered."""

    def __init__(self, message: str, tell: bool) -> None:
        super().__init__(wire.RATE_LIMITED, message)
        self.tell = tell


@dataclass
class AppQuotas:
    """What one admitted app may make a director do (:class:`dudo.director.quotas.Quotas`):
    tournaments created and new registrations, token buckets per app (a minute's worth at
    once, then the rate; 0: no quota).

    A gateway's own limits (per client address) bind the clients of an honest gateway;
    an app that runs its own gateways can switch those off, so the director counts too.
    The deployment's own gateways (not admitted: app None) and processes are not
    counted: their operator sets the gateways' limits. Per director process, over the
    partitions it holds: with N directors an app may make up to N times as much, as a
    gateway's quota per worker above. A director that restarts starts its buckets full.
    """

    creates_per_min: float = 60.0
    registers_per_min: float = 6000.0
    _creates: PerKey = field(init=False, repr=False)
    _registers: PerKey = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._creates = PerKey(self.creates_per_min / 60, self.creates_per_min, keep=10_000)
        self._registers = PerKey(self.registers_per_min / 60, self.registers_per_min, keep=10_000)

    def create(self, app: str | None) -> None:
        self._take(self._creates, self.creates_per_min, app, "tournaments created")

    def register(self, app: str | None) -> None:
        self._take(self._registers, self.registers_per_min, app, "registrations")

    @staticmethod
    def _take(buckets: PerKey, per_min: float, app: str | None, what: str) -> None:
        if app is None or per_min <= 0 or buckets.allow(app):
            return
        raise wire.Refusal(
            wire.RATE_LIMITED,
            f"app {app} is over its quota of {what} ({per_min:g} a minute per director): "
            "try again later",
        )
