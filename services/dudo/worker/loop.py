"""The partition loop: owns partitions, applies their inbox entries, commits, delivers.

It hosts any :class:`~dudo.entity.Entity` it is given: tables in a table worker
(:func:`dudo.run.table_worker`), tournaments and the ratings in a director
(:mod:`dudo.run.director`); it imports none of them.

One cycle of :meth:`Worker.run_once`:

1. **read**: for every owned partition, a fenced read script returns up to
   ``batch`` inbox entries (the read refuses if the lease moved on);
2. **process**: decode each entry, load the entities not yet in memory, and let
   each entity (a :class:`~dudo.table.Table`, say) handle its messages, in inbox order;
3. **commit**: one Lua script per partition checks the lease generation and
   every record's version, writes the records, updates the timers,
   dead-letters what could not be processed, XACKs + deletes the entries and,
   on a standalone Redis, appends each gateway's messages to its outbox, all
   at once: a cycle costs two round trips, and what a commit says leaves with it;
4. **deliver** (Redis Cluster only, where outboxes live in other hash slots than
   the partition): the commit stores a delivery record instead, fanned out to
   the gateways' outboxes in the next cycle's first round trip, with its reads,
   and deleted once delivered.

Every ``heartbeat`` seconds the worker refreshes its registration, renews its
leases, and rebalances: it releases partitions no longer assigned to it and
takes free ones that are. A partition it takes is recovered first: messages
committed but not delivered are delivered again (at least once), and entries
pending on a dead consumer are claimed and processed before anything new.
Every ``timer_interval`` it moves expired turn clocks into the inbox.

This module holds the loop (lifecycle, reading); its state is declared once in
:mod:`~dudo.worker.state`, and the other parts are :mod:`~dudo.worker.membership`
(registration, leases, rebalancing, Redis's clock), :mod:`~dudo.worker.process`
(entries to batches), :mod:`~dudo.worker.commit` (batches to one fenced Lua commit),
:mod:`~dudo.worker.delivery` (outboxes, timers) and :mod:`~dudo.worker.common`
(settings, what it knows of a partition).
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections import Counter
from typing import Any

import structlog

from .. import wire
from ..infra import (
    COUNT_EVERY_S,
    Batch,
    create_groups,
    ensure_partitions,
    ensure_secrets,
    quiet_collector,
    retry_until_ready,
    run_until_stopped,
    settle_heap,
    xread,
)
from ..wire import keys
from .commit import Committing
from .common import (
    Entry,
    Partition,
    WorkerSettings,
    default_worker_id,
    newer_id,
    now_ms,
)
from .delivery import Delivery
from .membership import Membership
from .process import Processing
from .scripts import Stream, read_call, read_groups

__all__ = ["Worker", "WorkerSettings", "default_worker_id", "now_ms"]

SETTLE_EVERY_S = 5.0
WAKE_AFTER_S = 0.1  # on a cluster: idle this long (polling), wait for the masters' word

log = structlog.get_logger("dudo.worker")


class Worker(Membership, Processing, Delivery, Committing):
    """The partition loop (its state: :class:`~dudo.worker.state.WorkerState`)."""

    # -- lifecycle ------------------------------------------------------------------

    def setup(self) -> None:
        ensure_partitions(self.redis, self.settings.partitions, self.space)
        if self.settings.table_partitions is not None:
            ensure_partitions(self.redis, self.settings.table_partitions)
        create_groups(self.redis, self.settings.partitions, space=self.space)
        self.authority.load(ensure_secrets(self.redis))
        self.scripts.load()
        self.log.info(f"{self.space.role}_started", partitions=self.settings.partitions)
        if self.settings.seed is not None:
            self.log.warning(
                "insecure_seed",
                hint="every die is computable from the seed and the table id: "
                "tests and benchmarks only",
            )

    def run(self, health_port: int | None = None) -> None:
        """Run until SIGTERM/SIGINT (or :meth:`stop`), then hand everything back.

        A worker started while Redis is down waits for it; ``health_port`` serves
        ``/healthz`` and ``/readyz``."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stop())
        if health_port is not None:
            self.health.serve(health_port)
        if retry_until_ready(self.setup, stopping=lambda: self.stopping, log=self.log):
            self.run_forever()

    def run_forever(self) -> None:
        """The loop, for a worker already set up (in a thread: no signal handling).

        No failure ends it: a cycle that fails (Redis gone, a dropped connection,
        our own bug) is retried with backoff after :meth:`recover`."""
        quiet_collector()
        try:
            run_until_stopped(
                self.run_once,
                stopping=lambda: self.stopping,
                health=self.health,
                recover=self.recover,
                log=self.log,
            )
        finally:
            self.shutdown()

    def recover(self) -> None:
        """After a failed cycle nothing in memory is trusted: tables are loaded again,
        pending entries replayed, delivery records read back and delivered (a commit
        may have happened without its reply), and leases checked at the next cycle."""
        for part in self.partitions.values():
            self._forget(part)
            part.redeliver = True
        self._next_heartbeat = 0.0
        self._woken = None
        self._wait_first = False

    def stop(self) -> None:
        self.stopping = True

    def shutdown(self) -> None:
        """Deliver what is committed, release every lease and deregister, so others
        take over at once (best effort: with Redis down, the leases expire instead)."""
        with contextlib.suppress(Exception):  # undelivered records stay for the next owner
            self.flush_deliveries()
        for number in list(self.partitions):
            with contextlib.suppress(Exception):
                self._release(number)
        with contextlib.suppress(Exception):
            self.redis.zrem(self.space.registry, self.id)
        if self._wake is not None:
            self._wake.close()
        self.health.set_ready(False, "stopped")
        self.log.info(f"{self.space.role}_stopped")

    def run_once(self) -> int:
        """One cycle; returns how many inbox entries it processed.

        A cycle that follows an idle or caught-up one starts by waiting (one blocking
        XREAD, which returns at once if entries came meanwhile) and then reads only
        the partitions it saw new entries in; every other cycle reads them all."""
        if self._wait_first:
            self._wait_for_entries()
        woken, self._woken = self._woken, None
        started = clock = time.monotonic()  # work only: idle waiting is not slowness
        phases: dict[str, float] = {}
        if clock >= self._next_heartbeat:
            self._next_heartbeat = clock + self.settings.heartbeat
            woken = None  # now and then every partition is read, woken or not
            self.heartbeat()
            if clock >= self._next_settle:
                # Every few seconds a freeze (a splice); every 30 s, in the whole process,
                # a count of the frozen set, which walks it (docs/benchmarks.md,
                # "Measurements behind the code"): a loop makes little cyclic garbage.
                self._next_settle = clock + SETTLE_EVERY_S
                settle_heap(COUNT_EVERY_S)
            phases["heartbeat"] = time.monotonic() - clock
        if clock >= self._next_timers and self.partitions:
            self._next_timers = clock + self.settings.timer_interval
            mark = time.monotonic()
            fired = self.fire_timers()
            if woken is not None:
                woken |= fired  # their inboxes just got entries
            phases["timers"] = time.monotonic() - mark
        mark = time.monotonic()
        entries = self._read(woken)
        phases["read"] = time.monotonic() - mark
        count = sum(len(e) for e in entries.values())
        if count:
            self._idle = self._idle_for = 0.0
            self._handle(entries, phases)
        elapsed = time.monotonic() - started
        if elapsed * 1000 > self.settings.slow_cycle_ms:
            self.log.warning(
                "slow_cycle",
                ms=round(elapsed * 1000, 1),
                entries=count,
                **{k: round(v * 1000, 1) for k, v in phases.items()},
            )
        self._wait_first = not count or self._caught_up(entries)
        if count and self.settings.pace_ms:
            rest = self.settings.pace_ms / 1000 - (time.monotonic() - started)
            if rest > 0:
                time.sleep(rest)
                # Entries came while it rested, surely: read them at once (one round
                # trip), not after a wait that would return at once (two).
                self._wait_first = False
        return count

    def _caught_up(self, entries: dict[int, list[Entry]]) -> bool:
        """After a busy cycle, may the next one start with the cheap blocking XREAD
        (which returns at once if entries came meanwhile) rather than the read script
        over every partition, which would come back empty at light load?

        Only on a standalone Redis, with nothing left to deliver, no partition
        replaying pending entries and no inbox stream that filled its batch."""
        if not (
            self._can_block
            and not self._unsent
            and all(part.mode == "new" and not part.redeliver for part in self.partitions.values())
        ):
            return False
        batch = self.settings.batch
        for got in entries.values():
            if len(got) >= batch and max(Counter(e.writer for e in got).values()) >= batch:
                return False
        return True

    def _wait_for_entries(self) -> None:
        """Idle: wait until an owned inbox gets an entry (or a timer or heartbeat is due).

        On a standalone Redis one blocking XREAD over every owned inbox stream (the
        deployment's and each admitted gateway's), from the newest entry id seen on
        each, returns the moment something arrives. A gateway over its quota is not
        waited for (its entries wait until it has quota again, read by the next
        cycle). A cluster refuses multi-slot XREAD: there the worker polls, sleeping
        0.5 ms, doubling up to ``idle_sleep_max``, and idle past that, the masters'
        keyspace notifications wake it (:mod:`~dudo.worker.wake`; fakeredis, and a
        cluster that will not publish them, is polled on).
        """
        if not self.partitions:
            time.sleep(self.settings.heartbeat / 5)
            return
        due = min(self._next_heartbeat, self._next_timers) - time.monotonic()
        block = int(min(self.settings.idle_block_ms, max(due * 1000, 1)))
        if not self._can_block:
            # Polled first: a busy loop's gaps are short, and the masters' notifications
            # cost a busy loop more than its polls (docs/benchmarks.md, "An idle worker on
            # a cluster"). Idle for WAKE_AFTER_S, it waits for their word instead, up to
            # the next heartbeat or timer.
            if self._wake is not None and self._idle_for >= WAKE_AFTER_S:
                self._wake.watch(self.partitions)
                woken = self._wake.wait(block / 1000)
                if woken is not None:
                    self._woken = woken
                    return
            self._idle = min(max(self._idle * 2, 0.0005), self.settings.idle_sleep_max)
            self._idle_for += self._idle
            time.sleep(self._idle)
            return
        writers: list[str | None] = [None, *self._gateway_writers()]
        waiting = [w for w in writers if w is None or self.quota.allowance(w, 1)]
        streams = {
            self.space.inbox(n, w): p.newest.get(w, "0-0")
            for n, p in self.partitions.items()
            for w in waiting
        }
        woken: set[int] = set()
        for stream, entries in xread(self.redis, streams, count=1, block=block) or []:
            key = keys.as_text(stream)
            number = self.space.partition_of_inbox(key)
            part = self.partitions.get(number)
            if part is not None and entries:
                part.newest[self.space.writer_of_inbox(key)] = keys.as_text(entries[-1][0])
                woken.add(number)
        # The next read needs only these: any other inbox got nothing newer than what
        # was read, and what arrives meanwhile wakes the next wait at once.
        self._woken = woken

    # -- reading ----------------------------------------------------------------------

    def _streams(self) -> list[Stream]:
        """What a read takes of each inbox stream of a partition this cycle: up to a
        batch of the deployment's; of each gateway's own, its fair share: up to a batch,
        within what its quota allows now, messages over the size cap cut, and its
        backlog capped."""
        batch, quota = self.settings.batch, self.quota
        return [
            Stream(None, batch),
            *(
                Stream(g, quota.allowance(g, batch), wire.MAX_INBOUND_BYTES,
                       self.settings.gateway_backlog)
                for g in self._gateway_writers()
            ),
        ]  # fmt: skip

    def _read(self, woken: set[int] | None = None) -> dict[int, list[Entry]]:
        """One round trip: deliver what the last cycle committed, delete what was
        delivered before, and read every owned partition's inbox streams, or only those
        of the partitions in ``woken`` (the ones a blocking wait just saw new entries in)
        and any still replaying pending entries.

        The reads are one script call for all partitions on a standalone Redis
        (the per-cycle cost then does not grow with the partition count), one
        call per partition on a Cluster (a script may touch one hash slot only).
        """
        for part in list(self.partitions.values()):
            if part.redeliver:
                self._redeliver(part.number)
                part.redeliver = False
        owned = [
            part
            for part in self.partitions.values()
            if woken is None or part.number in woken or part.mode != "new"
        ]
        batch = Batch(self.redis)
        sending = self._queue_deliveries(batch)
        for part in self.partitions.values():
            if part.delivered:
                n, ids, part.delivered = part.number, part.delivered, []
                stream = self.space.deliveries(n)
                batch.add(stream, "XDEL", stream, *ids)
        deletions = len(batch) - sending[1]
        groups = read_groups(len(owned), cluster=self._slot_per_call)
        calls = [[owned[i] for i in group] for group in groups]
        streams = self._streams()
        for group in calls:
            script_keys, args = read_call(
                self.id,
                self.id,
                [(part.number, part.generation, part.mode, streams) for part in group],
                self.settings.max_deliveries,
                space=self.space,
            )
            batch.add(script_keys[0], *self._call("read", script_keys, args))
        if not batch:
            return {}
        results = self._execute(batch)
        self._settle_deliveries(sending, results[: sending[1]])
        replies = iter(results[sending[1] + deletions :])
        entries: dict[int, list[Entry]] = {}
        for group in calls:
            reply = next(replies)
            for i, part in enumerate(group):
                flat = reply if isinstance(reply, Exception) else reply[i]
                got = self._entries_read(part, flat, streams)
                if got:
                    entries[part.number] = got
        return entries

    def _entries_read(self, part: Partition, flat: Any, streams: list[Stream]) -> list[Entry]:
        """One partition's share of a read reply, as :class:`Entry` values."""
        if isinstance(flat, Exception):
            self.log.warning("read_failed", partition=part.number, error=str(flat))
            return []
        if flat is None:
            self._lost(part.number, "fenced read")
            return []
        if isinstance(flat, (bytes, str)):  # the inbox or its group is gone: remake it
            self.log.error("inbox_broken", partition=part.number, error=keys.as_text(flat))
            self._repair_inbox(part)
            return []
        more = int(flat[0])  # pending entries may remain after these
        trims = flat[1]
        for i in range(0, len(trims), 2):
            self._trimmed(part, streams[int(trims[i]) - 1].writer, int(trims[i + 1]))
        got = [
            Entry(
                streams[int(flat[i]) - 1].writer,
                keys.as_text(flat[i + 1]),
                flat[i + 2] if isinstance(flat[i + 2], bytes) else b"",
                flat[i + 3] if isinstance(flat[i + 3], bytes) else b"",
                int(flat[i + 4]),
            )
            for i in range(2, len(flat), 5)
        ]
        newest = part.newest
        for entry in got:
            seen = newest.get(entry.writer)
            if seen is None or newer_id(entry.id, seen):
                newest[entry.writer] = entry.id
        if part.mode == "pending" and not more:
            part.mode = "new"  # every pending entry has been handed out
        return got

    def _repair_inbox(self, part: Partition) -> None:
        """Recreate a partition's consumer group (the inbox was deleted or evicted, or an
        XADD recreated it without the group). It starts at 0: every entry still in
        the stream is read; the pending ones of the lost group cannot be known, and
        entries applied before are refused by their ids (tables remember them)."""
        create_groups(self.redis, [part.number], space=self.space)
        self._forget(part)
        part.redeliver = True
        part.newest.pop(None, None)

    def _forget(self, part: Partition) -> None:
        """Our memory of this partition may be ahead of Redis: drop it and replay."""
        part.entities.clear()
        part.stored.clear()
        part.mode = "pending"
