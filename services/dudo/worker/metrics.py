"""A partition loop's Prometheus metrics: workers, directors and the ratings keeper.

One registry per process (a director runs its tournament loop and the ratings loop
side by side: one ``/metrics``, the ``role`` label tells them apart), served with
``/healthz`` and ``/readyz`` on the health port (:class:`dudo.infra.service.Health`).
deploy/prometheus/alerts.yaml and deploy/grafana/dudo.json are written against
these names; tests/test_deploy.py checks every name they use is exported.

- ``dudo_entries_total{role}``: inbox entries applied (committed), so actions/s;
- ``dudo_dead_letters_total{role}``: entries dead-lettered (malformed, refused, or
  failing our code);
- ``dudo_quota_dropped_total{role}``: entries of admitted gateways dropped over their
  quota; ``dudo_gateway_backlog_dropped_total{role}``: entries a gateway's own inbox
  lost past its backlog cap;
- ``dudo_gateway_memory_bytes{gateway}``: what each admitted gateway's own keys take of
  Redis's memory, exported by the warden alone (the worker holding partition 0), beside
  ``dudo_gateway_memory_budget_bytes{limit}`` (soft, hard) and
  ``dudo_gateway_revocations_total`` (dudo.worker.warden);
- ``dudo_commit_seconds{role}``: a commit round trip;
- ``dudo_partitions_owned{role}``: partitions this process holds, and
  ``dudo_partitions{role}`` the deployment's count (the sum of the first over every
  process falls short of it while a partition has no owner);
- ``dudo_lease_changes_total{role,change}``: leases ``taken``, ``released``, ``lost``;
- ``dudo_inbox_lag{role,partition}`` and ``dudo_inbox_pending{role,partition}``: of the
  partitions it holds, entries not yet read by the consumer group (Redis 7's lag)
  and read but not yet committed, sampled every few seconds;
- ``process_*``: CPU, memory, start time (restarts show as a new start time).
"""

from __future__ import annotations

import contextlib

from prometheus_client import Counter, Gauge, Histogram

from ..infra import metrics_registry

REGISTRY = metrics_registry()
LAG_EVERY_S = 5.0  # how often a loop samples its inboxes' lag and pending entries

_ENTRIES = Counter(
    "dudo_entries_total", "inbox entries applied (committed)", ["role"], registry=REGISTRY
)
_DEAD = Counter("dudo_dead_letters_total", "entries dead-lettered", ["role"], registry=REGISTRY)
_QUOTA = Counter(
    "dudo_quota_dropped_total",
    "entries of admitted gateways dropped over their quota (dudo.worker.quota)",
    ["role"],
    registry=REGISTRY,
)
_BACKLOG = Counter(
    "dudo_gateway_backlog_dropped_total",
    "entries of a gateway's own inbox dropped past its backlog cap (its oldest)",
    ["role"],
    registry=REGISTRY,
)
_GATEWAY_MEMORY = Gauge(
    "dudo_gateway_memory_bytes",
    "what an admitted gateway's own keys take of Redis's memory (measured by the warden)",
    ["gateway"],
    registry=REGISTRY,
)
_GATEWAY_BUDGET = Gauge(
    "dudo_gateway_memory_budget_bytes",
    "an admitted gateway's memory budget: soft (alert) and hard (revoked past it)",
    ["limit"],
    registry=REGISTRY,
)
_REVOCATIONS = Counter(
    "dudo_gateway_revocations_total",
    "admitted gateways revoked by the warden, past their memory budget",
    registry=REGISTRY,
)
_COMMIT = Histogram(
    "dudo_commit_seconds",
    "a commit's round trip (the fenced commit script of a cycle)",
    ["role"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
    registry=REGISTRY,
)
_OWNED = Gauge("dudo_partitions_owned", "partitions held", ["role"], registry=REGISTRY)
_TOTAL = Gauge(
    "dudo_partitions", "the deployment's partition count (of this role)", ["role"],
    registry=REGISTRY,
)  # fmt: skip
_LEASES = Counter(
    "dudo_lease_changes_total", "leases taken, released, lost", ["role", "change"],
    registry=REGISTRY,
)  # fmt: skip
_LAG = Gauge(
    "dudo_inbox_lag",
    "entries of a held partition's inbox not yet read by the consumer group",
    ["role", "partition"],
    registry=REGISTRY,
)
_PENDING = Gauge(
    "dudo_inbox_pending",
    "entries of a held partition's inbox read but not yet committed",
    ["role", "partition"],
    registry=REGISTRY,
)


class LoopMetrics:
    """One loop's children of the process's metrics (label children made once)."""

    def __init__(self, role: str, partitions: int) -> None:
        self.role = role
        _TOTAL.labels(role).set(partitions)
        self.entries = _ENTRIES.labels(role)
        self.dead = _DEAD.labels(role)
        self.quota_dropped = _QUOTA.labels(role)
        self.backlog_dropped = _BACKLOG.labels(role)
        self.commit = _COMMIT.labels(role)
        self.owned = _OWNED.labels(role)
        self.taken = _LEASES.labels(role, "taken")
        self.released = _LEASES.labels(role, "released")
        self.lost = _LEASES.labels(role, "lost")
        self._sampled: set[int] = set()
        self.revocations = _REVOCATIONS

    @staticmethod
    def budget(soft: int, hard: int) -> None:
        _GATEWAY_BUDGET.labels("soft").set(soft)
        _GATEWAY_BUDGET.labels("hard").set(hard)

    def gateway_memory(self, totals: dict[str, int]) -> None:
        """Each admitted gateway's memory, as the warden measured it now; gateways no
        longer measured (revoked, or measured by another process now) are dropped."""
        _GATEWAY_MEMORY.clear()  # a process has one warden at a time: its figures alone
        for gateway, used in totals.items():
            _GATEWAY_MEMORY.labels(gateway).set(used)

    def inbox(self, partition: int, lag: int | None, pending: int) -> None:
        """A held partition's inbox, as XINFO GROUPS said (lag is None before Redis 7)."""
        label = str(partition)
        if lag is not None:
            _LAG.labels(self.role, label).set(lag)
        _PENDING.labels(self.role, label).set(pending)
        self._sampled.add(partition)

    def held(self, partitions: set[int]) -> None:
        """The partitions held now: the others' samples are dropped (another process
        reports them), so a sum over every process counts each partition once."""
        self.owned.set(len(partitions))
        for gone in self._sampled - partitions:
            for family in (_LAG, _PENDING):
                with contextlib.suppress(KeyError):  # never sampled
                    family.remove(self.role, str(gone))
        self._sampled &= partitions
