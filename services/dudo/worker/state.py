"""A partition loop's state, declared once: what every part of :class:`~dudo.worker.Worker`
(membership, processing, committing, delivery, the loop itself) reads and writes, as
:class:`~dudo.table.TableState` is for a table. The parts subclass it and re-declare
nothing; what one calls of another is listed at the end (for type checkers).
"""

from __future__ import annotations

import dataclasses
import logging
import random
from typing import TYPE_CHECKING, Any

import structlog
from redis.exceptions import NoScriptError

from ..auth import Authority
from ..entity import Entity
from ..infra import Batch, Client, Health, connect, is_cluster
from ..wire import Verifier, keys
from .common import Partition, PartitionBatch, Unsent, WorkerSettings, now_ms
from .metrics import REGISTRY, LoopMetrics
from .quota import Quota
from .scripts import Scripts
from .wake import KeyspaceWake
from .warden import Budget, Warden

log = structlog.get_logger("dudo.worker")


class WorkerState:
    """Everything a partition loop holds: settings, Redis, its partitions, what it knows
    of gateways and keys, its clocks and metrics."""

    def __init__(
        self,
        settings: WorkerSettings,
        client: Client | None = None,
        *,
        entity: type[Entity],
        limits: Any = None,
    ) -> None:
        """A loop over ``settings.partitions`` partitions of ``settings.space`` hosting
        ``entity`` (a table, a tournament, the ratings: composed by dudo.run and
        dudo.run.director); ``limits``: what it hands every entity it loads (a
        dataclass whose ``authority`` the loop fills with the deployment's), or None."""
        self.settings = settings
        self.entity = entity
        self.id = settings.worker_id
        self.redis = client if client is not None else connect(settings.redis_url)
        self.space = settings.space
        self.scripts = Scripts(self.redis)
        self.partitions: dict[int, Partition] = {}
        self.live_gateways: list[str] = []
        self.frame_gateways: frozenset[str] = frozenset()
        self.verifier = Verifier()  # loaded with the first heartbeat, before any read
        # The admitted gateways (those with a key), whose own inboxes are read beside the
        # deployment's, in a fixed order (the verifier's, at every heartbeat).
        self.gateway_writers: list[str] = []
        self.quota = Quota(settings.gateway_entries_per_s, settings.gateway_bytes_per_s)
        # The deployment's credentials (seat tokens, player ids, apps' identities), loaded
        # at setup and every heartbeat; the entities reach it through their limits.
        self.authority = Authority()
        self.rng = random.SystemRandom()
        self.stopping = False
        self._next_heartbeat = 0.0
        self._next_settle = 0.0
        self._next_timers = 0.0
        self._idle = 0.0
        self._idle_for = 0.0  # seconds of polling since the last entry (cluster)
        # Blocking waits need one connection that may hold several keys: not a cluster.
        self._can_block = (
            not is_cluster(self.redis) and "fakeredis" not in type(self.redis).__module__
        )
        # On a cluster, the masters' keyspace notifications wake an idle loop instead.
        self._wake = KeyspaceWake(self.redis, self.space) if is_cluster(self.redis) else None
        self._unsent: list[Unsent] = []  # committed, not yet delivered
        # The partitions the last blocking wait saw new entries in (None: read them all).
        self._woken: set[int] | None = None
        self._wait_first = False  # the last cycle was idle or caught up: wait, then read
        # Read and commit calls carry one partition each (one hash slot), or several.
        self._slot_per_call = settings.slot_per_call or is_cluster(self.redis)
        self.log = log.bind(**{self.space.role: self.id})
        self.debug = self.log.is_enabled_for(logging.DEBUG)
        self.limits = (
            dataclasses.replace(limits, authority=self.authority) if limits is not None else None
        )
        self.clock_offset = 0  # Redis server time minus ours (ms), measured every heartbeat
        self.metrics = LoopMetrics(self.space.role, settings.partitions)
        self._next_lag = 0.0  # when to sample the held inboxes' lag next (heartbeat)
        # The gateways' memory budget, kept by the table worker that holds partition 0.
        self.warden = (
            Warden(self.redis, Budget(settings.gateway_memory_soft, settings.gateway_memory_hard),
                   self.metrics)
            if self.space is keys.TABLES and settings.gateway_memory_hard > 0
            else None
        )  # fmt: skip
        self.health = Health(self.space.role, registry=REGISTRY)
        self.health.details[self.space.role] = self.id

    def now(self) -> int:
        """Milliseconds by the Redis server's clock (ours plus the offset measured at
        each heartbeat): turn clocks and limits must not depend on which worker's
        clock happens to run them, nor jump when a table moves between machines."""
        return now_ms() + self.clock_offset

    @property
    def signer(self) -> bytes | None:
        """The key the entries this process writes are signed with: the deployment's,
        once there is one (loaded with the others at every heartbeat)."""
        return self.verifier.internal

    def _gateway_writers(self) -> list[str]:
        """The admitted gateways, whose own inboxes this loop reads beside the
        deployment's (none for a space no gateway writes to: the ratings)."""
        return self.gateway_writers if self.space.gateways_write else []

    def _call(self, name: str, script_keys: list[str], args: list[Any]) -> tuple[Any, ...]:
        """Script ``name`` as a :class:`Batch` command (``EVALSHA`` by its SHA)."""
        return self.scripts.raw(name, script_keys, args)

    def _execute(self, batch: Batch) -> list[Any]:
        """Run a batch; if Redis lost our scripts (a restart), load them again.

        The calls that failed with NOSCRIPT come back as errors: the caller
        treats them as failed (a lease not renewed is kept; a read or commit
        is replayed), so nothing is lost, only one cycle."""
        results = batch.execute()
        if any(isinstance(r, NoScriptError) for r in results):
            self.log.warning("scripts_reloaded")
            self.scripts.load()
        return results

    if TYPE_CHECKING:  # what the parts call of each other, defined in theirs
        # membership.py
        def _lost(self, number: int, why: str) -> None: ...

        # commit.py
        def _commit(
            self, batches: list[PartitionBatch], phases: dict[str, float] | None = None
        ) -> None: ...

        # loop.py
        def _forget(self, part: Partition) -> None: ...
