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
from ..infra import Batch
from ..wire import keys
from .common import PartitionBatch, Unsent
from .delivery import fan_out, outbox_entries
from .scripts import commit_call, commit_groups, commit_section
from .state import WorkerState

REFUSED_MAX = 1000  # a gateway's refused stream: about this many notes, the newest
REFUSED_TTL_MS = 24 * 3600 * 1000  # gone a day after its last note


def _text(value: Any) -> str:
    """A field of a note: what could be read, as text ("" where nothing could)."""
    return value if isinstance(value, str) else ""


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
            if b.content is None:
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
                        b,
                        space=self.space,
                        sends=not self._slot_per_call,
                        signer=self.signer,
                    )
                    for b in group
                ],
                self.settings.outbox_maxlen,
                self.settings.outbox_ttl_ms,
                space=self.space,
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
        delivered: list[Unsent] = []
        refused: list[tuple[str, str, dict[str, Any], str, str]] = []
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
            self.metrics.entries.inc(sum(len(ids) for ids in b.acks.values()))
            if b.dead:
                self.metrics.dead.inc(len(b.dead))
                refused.extend(b.refused)
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
        if refused:
            self._tell_refused(refused)

    def _trimmed(self, part: Any, gateway: str | None, dropped: int) -> None:
        """A gateway's own inbox on ``part`` was over its backlog cap: its ``dropped``
        oldest entries are gone (the read script cut it). Its loss alone: logged,
        counted, and noted on its refused stream (:meth:`_tell_refused`)."""
        if gateway is None:
            return
        self.log.warning("gateway_backlog_cut", gateway=gateway, partition=part.number,
                         dropped=dropped)  # fmt: skip
        self.metrics.backlog_dropped.inc(dropped)
        reason = (
            f"your inbox on partition {part.number} held more than "
            f"{self.settings.gateway_backlog} unread entries: the oldest {dropped} were dropped"
        )
        self._tell_refused([(gateway, "", {}, wire.RATE_LIMITED, reason)])

    def _present_now(self, gateways: set[str]) -> set[str]:
        """Which of ``gateways`` are running now, though they were not at the last
        heartbeat: a gateway that registered since then (its first entries, the likeliest
        to be signed wrong) was told nothing until the next one. Running as the heartbeat
        (Membership.heartbeat) counts it: registered within ``gateway_dead_after_ms``, or
        a presence key that says something. Asked only when such a gateway had an entry
        refused."""
        if not gateways:
            return set()
        names = sorted(gateways)
        batch = Batch(self.redis)
        for name in names:
            batch.add(keys.GATEWAYS, "ZSCORE", keys.GATEWAYS, name)
            batch.add(keys.presence(name), "GETRANGE", keys.presence(name), 0, 0)
        try:
            found = self._execute(batch)
        except Exception as exc:  # best effort, as the notes themselves
            self.log.warning("refused_presence_failed", error=str(exc))
            return set()
        alive_since = self.now() - self.settings.gateway_dead_after_ms
        return {
            name
            for name, score, presence in zip(names, found[::2], found[1::2], strict=True)
            if (score is not None and not isinstance(score, Exception)
                and float(score) >= alive_since)
            or (presence and not isinstance(presence, Exception))
        }  # fmt: skip

    def _tell_refused(self, refused: list[tuple[str, str, dict[str, Any], str, str]]) -> None:
        """Each entry refused of a present gateway's own inbox, on that gateway's refused
        stream (keys.refused), which its user may read: the dead letters are the
        admin's. After the commit, best effort: on a Cluster the gateway's key is in
        another slot than the partition's, so it cannot be written by the commit's
        script; a note lost to a crash here leaves the dead letter."""
        now = str(int(time.time() * 1000))
        live = set(self.live_gateways)
        present = live | self._present_now({g for g, *_ in refused if g and g not in live})
        batch = Batch(self.redis)
        for gateway, entry, msg, code, reason in refused:
            if not gateway or gateway not in present:
                continue  # nobody to tell (no such gateway is running)
            key = keys.refused(gateway)
            fields = {"entry": entry, "id": _text(msg.get("id")), "type": _text(msg.get("type")),
                      "code": code, "reason": reason[:500], "at": now}  # fmt: skip
            flat = [x for pair in fields.items() for x in pair]
            batch.add(key, "XADD", key, "MAXLEN", "~", REFUSED_MAX, "*", *flat)
            batch.add(key, "PEXPIRE", key, REFUSED_TTL_MS)
        if not batch:
            return
        try:
            for result in self._execute(batch):
                if isinstance(result, Exception):
                    raise result
        except Exception as exc:  # the dead letters hold them; the admin can read them
            self.log.warning("refused_note_failed", error=str(exc))
