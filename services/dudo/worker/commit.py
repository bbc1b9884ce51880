"""The commit: a cycle's batches, one per partition, written in one round trip.

What a partition's batch holds is built by :mod:`.process` (:class:`~.common.PartitionBatch`);
here it becomes the arguments of the ``commit`` script (:func:`~.scripts.commit_section`,
:func:`~.scripts.commit_call`), whose Lua is :data:`~.lua.COMMIT`: it checks the lease's
generation (fencing) and every record's version, then writes, acks, dead-letters,
appends to outboxes (or, on a Cluster, stores a delivery record) all at once. Its reply
codes: ``-1`` the lease moved on (the partition is dropped), ``-2`` a record's version
differs from ours (our memory is forgotten and the entries replayed).
"""

from __future__ import annotations

import time
from typing import Any

from .. import wire
from ..infra.connection import Batch
from ..wire import keys
from .common import PartitionBatch
from .delivery import fan_out, outbox_entries
from .scripts import commit_call, commit_groups, commit_section
from .state import WorkerState


class Committing(WorkerState):
    def _commit(
        self, batches: list[PartitionBatch], phases: dict[str, float] | None = None
    ) -> None:
        """Commit every partition's batch in one round trip: a few partitions per
        script call on a standalone Redis, one per call on a Cluster (see
        :func:`~dudo.worker.scripts.commit_groups`)."""
        mark = time.monotonic()
        pipe = Batch(self.redis)
        groups = commit_groups([len(b.writes) for b in batches], cluster=self._slot_per_call)
        calls = [[batches[i] for i in group] for group in groups]
        # Standalone: the commit delivers; Cluster: it stores a record, delivered later.
        for b in batches:
            if not b.content:
                continue
            if self._slot_per_call:
                b.record = wire.encode(b.content)
            else:
                b.outboxes = outbox_entries(fan_out([b.content], self.live_gateways))
        for group in calls:
            script_keys, args = commit_call(
                self.id,
                [
                    commit_section(
                        b.partition.number,
                        b.partition.generation,
                        b.acks,
                        b.writes,
                        b.record,
                        b.timers_rm,
                        b.timers_add,
                        b.dead,
                        b.lobby,
                        b.outboxes,
                        self.space,
                        [] if self._slot_per_call else b.sends,
                        self.signer,
                    )
                    for b in group
                ],
                self.settings.outbox_maxlen,
                self.settings.outbox_ttl_ms,
            )
            pipe.add(script_keys[0], *self._call("commit", script_keys, args))
        try:
            with self.metrics.commit.time():
                replies = self._execute(pipe)
        except Exception as exc:  # no reply: the commit may or may not have happened
            self.log.warning("commit_failed", error=str(exc))
            for b in batches:
                self._forget(b.partition)
                b.partition.redeliver = True
            return
        results = [
            reply if isinstance(reply, Exception) else reply[i]
            for group, reply in zip(calls, replies, strict=True)
            for i in range(len(group))
        ]
        delivered: list[tuple[int, str, bytes, Any]] = []
        for b, result in zip(batches, results, strict=True):
            part = b.partition
            if isinstance(result, Exception):
                self.log.warning("commit_failed", partition=part.number, error=str(result))
                self._forget(part)
                part.redeliver = True
                continue
            status = int(result[0])
            if status == -1:
                self._lost(part.number, "fenced commit")
                continue
            if status == -2:
                eid = b.writes[int(result[1])][0]
                self.log.error("version_conflict", partition=part.number, id=eid)
                self._forget(part)
                continue
            self.metrics.entries.inc(len(b.acks))
            if b.dead:
                self.metrics.dead.inc(len(b.dead))
            for write in b.writes:
                part.stored[write.entity] = write.version
            for eid in b.finished:
                part.entities.pop(eid, None)
                part.stored.pop(eid, None)
            if b.record:
                delivered.append((part.number, keys.as_text(result[1]), b.record, b.content))
        if phases is not None:
            phases["commit"] = time.monotonic() - mark
        # Delivered at the start of the next cycle, in the same round trip as its read.
        self._unsent.extend(delivered)
