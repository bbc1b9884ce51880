"""What each admitted gateway's own keys cost Redis: measured, exported, and bounded.

Redis bounds no key's size and an ACL no command's arguments, so a gateway's Redis user
may fill the keys that are its own (its inboxes, its memory hash, its presence) as
far as Redis's memory goes: once 48 × 1 MB in its memory hash, a 128 MB presence value,
1 MB entries by the thousand. The deployment measures instead: the table worker that
holds partition 0 (one at a time, by its lease) is the warden. Every few seconds it
asks Redis the memory of every key of every admitted gateway
(:func:`dudo.wire.keys.gateway_owned`; ``MEMORY USAGE ... SAMPLES 0``, exact), exports
each gateway's total (``dudo_gateway_memory_bytes{gateway}``, beside the budget,
``dudo_gateway_memory_budget_bytes{limit}``), and revokes a gateway past the hard limit:
its user deleted (its connections closed), its keys deleted, the revocation recorded in
``dudo:revoked`` and logged (``gateway_revoked``); deploy/prometheus/alerts.yaml warns
past the soft limit. A memory hash of more than ``max_fields`` fields counts as over
the hard limit without being measured (measuring it exactly would cost Redis time in
proportion to its fields; the chat gateway keeps a handful).

docs/operations.md ("A gateway's memory budget") says what an operator sees and does.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import structlog

from ..infra import Batch, partition_counts, revoke_gateway
from ..wire import keys
from .metrics import LoopMetrics

log = structlog.get_logger("dudo.worker.warden")


@dataclass(frozen=True)
class Budget:
    """What one admitted gateway's own keys may take of Redis's memory."""

    soft: int = 32 * 1024 * 1024  # past it: the alert (DudoGatewayMemoryOverBudget)
    hard: int = 128 * 1024 * 1024  # past it: revoked
    every_s: float = 2.0  # how often the warden measures
    max_fields: int = 1000  # fields of a gateway's memory hash, at most


class Warden:
    """Measures the admitted gateways' keys and revokes those past the hard limit."""

    def __init__(self, client: Any, budget: Budget, metrics: LoopMetrics) -> None:
        self.redis, self.budget, self.metrics = client, budget, metrics
        self._next = 0.0
        self.on_duty = False  # measuring now (this process holds partition 0)
        metrics.budget(budget.soft, budget.hard)

    def due(self) -> bool:
        now = time.monotonic()
        if now < self._next:
            return False
        self._next = now + self.budget.every_s
        return True

    def measure(self, gateways: list[str]) -> tuple[dict[str, int], set[str]]:
        """Each gateway's keys' memory in bytes, and the gateways whose memory hash holds
        more than ``max_fields`` fields (not measured: counted one byte over the hard
        limit)."""
        if not gateways:
            return {}, set()
        tables, directors = partition_counts(self.redis)
        partitions = tables or keys.DEFAULT_PARTITIONS
        director_partitions = directors or keys.DEFAULT_DIRECTOR_PARTITIONS
        counts = Batch(self.redis)
        for gateway in gateways:
            at = keys.gateway_memory(gateway)
            counts.add(at, "HLEN", at)
        crowded = {
            gateway
            for gateway, fields in zip(gateways, counts.execute(), strict=True)
            if isinstance(fields, int) and fields > self.budget.max_fields
        }
        usage = Batch(self.redis)
        owners: list[str] = []
        for gateway in gateways:
            for key in keys.gateway_owned(gateway, partitions, director_partitions):
                if gateway in crowded and key == keys.gateway_memory(gateway):
                    continue
                owners.append(gateway)
                usage.add(key, "MEMORY", "USAGE", key, "SAMPLES", 0)
        totals = dict.fromkeys(gateways, 0)
        for gateway, found in zip(owners, usage.execute(), strict=True):
            if isinstance(found, int):
                totals[gateway] += found
        for gateway in crowded:
            totals[gateway] = max(totals[gateway], self.budget.hard + 1)
        return totals, crowded

    def patrol(self, gateways: list[str]) -> list[str]:
        """Measure, export, and revoke what is past the hard limit; returns the revoked."""
        self.on_duty = True
        totals, crowded = self.measure(gateways)
        self.metrics.gateway_memory(totals)
        revoked = []
        for gateway, used in totals.items():
            if used <= self.budget.hard:
                continue
            reason = (
                f"its memory hash held over {self.budget.max_fields} fields"
                if gateway in crowded
                else f"its keys held {used} bytes, over the hard limit of {self.budget.hard}"
            )
            record = {"at": int(time.time() * 1000), "bytes": used, "reason": reason}
            try:
                revoke_gateway(self.redis, gateway)
            except Exception as exc:  # no ACL rights here: the alert still fires
                log.error("gateway_not_revoked", gateway=gateway, error=str(exc), **record)
                continue
            self.redis.hset(keys.REVOKED, gateway, json.dumps(record))
            self.metrics.revocations.inc()
            log.error("gateway_revoked", gateway=gateway, **record)
            revoked.append(gateway)
        return revoked

    def stand_down(self) -> None:
        """Another process measures now: this one exports no gateway's memory."""
        if self.on_duty:
            self.on_duty = False
            self.metrics.gateway_memory({})
