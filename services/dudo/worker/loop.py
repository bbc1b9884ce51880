"""The table worker: one loop that owns partitions, applies their inbox entries, commits, delivers.

One cycle of :meth:`Worker.run_once`:

1. **read**: for every owned partition, a fenced read script returns up to
   ``batch`` inbox entries (the read refuses if the lease moved on);
2. **process**: decode each entry, load the tables not yet in memory, and let
   each :class:`~dudo.table.Table` handle its messages, in inbox order;
3. **commit**: one Lua script per partition checks the lease generation and
   every table's version, writes the tables, appends the delivery record,
   updates the turn clocks, dead-letters what could not be processed and
   XACKs + deletes the entries, all at once;
4. **deliver**: fan the committed messages out to each gateway's outbox (one
   entry per gateway). This rides in the next cycle's first round trip, with
   its reads, so a cycle costs two round trips; the delivery records are
   deleted once delivered.

Every ``heartbeat`` seconds the worker refreshes its registration, renews its
leases, and rebalances: it releases partitions no longer assigned to it and
takes free ones that are. A partition it takes is recovered first: messages
committed but not delivered are delivered again (at least once), and entries
pending on a dead consumer are claimed and processed before anything new.
Every ``timer_interval`` it moves expired turn clocks into the inbox.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import signal
import socket
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import structlog
from redis.exceptions import NoScriptError, ResponseError

from .. import keys, wire
from ..connection import (
    Batch,
    Client,
    connect,
    create_groups,
    ensure_partitions,
    is_cluster,
)
from ..runtime import quiet_collector, settle_heap
from ..service import Health, retry_until_ready, run_until_stopped
from ..table import DEFAULT_LIMITS, Limits, Table, error_for
from ..wire import WireError
from .assign import owned_by
from .scripts import (
    Scripts,
    commit_call,
    commit_groups,
    commit_section,
    read_call,
    read_groups,
)

log = structlog.get_logger("dudo.worker")


def default_worker_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{random.randrange(16**4):04x}"


@dataclass
class WorkerSettings:
    """Everything a worker can be told. Defaults suit a single machine."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    partitions: int = keys.DEFAULT_PARTITIONS
    worker_id: str = field(default_factory=default_worker_id)
    batch: int = 256  # entries read per partition per cycle
    lease_ms: int = 5000  # a lease not renewed for this long may be taken
    heartbeat: float = 0.5  # seconds between registration, renewal and rebalancing
    dead_after_ms: int = 3000  # a worker silent this long is no longer counted as live
    gateway_dead_after_ms: int = 30_000
    timer_interval: float = 0.05  # seconds between scans for expired turn clocks
    outbox_maxlen: int = 5000  # approximate cap per gateway outbox (entries)
    outbox_ttl_ms: int = 3_600_000  # an outbox nobody delivers to for this long disappears
    gateway_gc_ms: int = 600_000  # a gateway silent this long is unregistered, its outbox deleted
    finished_ttl_ms: int = 3_600_000  # finished tables are kept this long
    open_ttl_ms: int = DEFAULT_LIMITS.open_ttl_ms  # an open table unchanged this long closes
    idle_ttl_ms: int = DEFAULT_LIMITS.idle_ttl_ms  # a clockless game with no move is abandoned
    bot_grace_ms: int = DEFAULT_LIMITS.bot_grace_ms  # then the house bot plays a silent bot seat
    idle_sleep_max: float = 0.005  # polling (Redis Cluster, fakeredis): longest sleep when idle
    idle_block_ms: int = 50  # standalone Redis: longest blocking wait for new entries
    # Reproducible randomness (dice secrets, first opener, house bot) derived
    # from (seed, table, version): for tests and benchmarks only. None = OS entropy.
    seed: int | None = None
    slow_cycle_ms: float = 100.0  # log a warning with phase timings for cycles slower than this
    # One partition per script call even on a standalone Redis, for proxies that,
    # like a Cluster, refuse scripts over several hash slots (a Cluster always is).
    slot_per_call: bool = False
    # An inbox entry read this many times without being committed (each read
    # followed by a crash, a lost lease or a failed commit) is dead-lettered.
    max_deliveries: int = 5


@dataclass
class Partition:
    """What the worker knows about a partition while it holds the lease."""

    number: int
    generation: int
    mode: str = "pending"  # "pending": claim and replay pending entries first; then "new"
    tables: dict[str, Table] = field(default_factory=dict)
    stored: dict[str, int] = field(default_factory=dict)  # table -> version in Redis
    delivered: list[str] = field(default_factory=list)  # delivery records to delete
    newest: str = "0-0"  # newest inbox entry id seen: idle waits block for anything later
    # A commit's outcome is unknown (its reply was lost): what it may have written to
    # the delivery record is read back and delivered (again) before the next read.
    redeliver: bool = False


@dataclass
class _Batch:
    """One partition's share of a cycle, ready to commit."""

    partition: Partition
    acks: list[str] = field(default_factory=list)
    dead: list[tuple[str, str, bytes]] = field(default_factory=list)
    outputs: list[tuple[str, bytes]] = field(default_factory=list)
    lobby: list[tuple[str, bytes]] = field(default_factory=list)  # (table, entry or b"")
    notes: list[bytes] = field(default_factory=list)  # `lobby` news for every gateway
    writes: list[tuple[str, int, int, bytes, int]] = field(default_factory=list)
    timers_rm: list[str] = field(default_factory=list)
    timers_add: list[tuple[str, int]] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    record: bytes = b""  # what the commit stores in the delivery record
    content: Any = None  # the same, undecoded, for delivering right after the commit


class _Poison(Exception):
    """An entry that made our own code fail: it goes to the dead letters alone."""

    def __init__(self, entry_id: str, payload: bytes, reason: str) -> None:
        super().__init__(reason)
        self.entry_id, self.payload, self.reason = entry_id, payload, reason


def now_ms() -> int:
    return int(time.time() * 1000)


class Worker:
    def __init__(self, settings: WorkerSettings, client: Client | None = None) -> None:
        self.settings = settings
        self.id = settings.worker_id
        self.redis = client if client is not None else connect(settings.redis_url)
        self.scripts = Scripts(self.redis)
        self.partitions: dict[int, Partition] = {}
        self.live_gateways: list[str] = []
        self.rng = random.SystemRandom()
        self.stopping = False
        self._next_heartbeat = 0.0
        self._next_timers = 0.0
        self._idle = 0.0
        # Blocking waits need one connection that may hold several keys: not a cluster.
        self._can_block = (
            not is_cluster(self.redis) and "fakeredis" not in type(self.redis).__module__
        )
        self._unsent: list[tuple[int, str, bytes, Any]] = []  # committed, not yet delivered
        # Read and commit calls carry one partition each (one hash slot), or several.
        self._slot_per_call = settings.slot_per_call or is_cluster(self.redis)
        self.log = log.bind(worker=self.id)
        self.debug = self.log.is_enabled_for(logging.DEBUG)
        self.limits = Limits(settings.open_ttl_ms, settings.idle_ttl_ms, settings.bot_grace_ms)
        self.clock_offset = 0  # Redis server time minus ours (ms), measured every heartbeat
        self.health = Health("worker")
        self.health.details["worker"] = self.id

    # -- lifecycle ------------------------------------------------------------------

    def setup(self) -> None:
        ensure_partitions(self.redis, self.settings.partitions)
        create_groups(self.redis, self.settings.partitions)
        self.scripts.load()
        self.log.info("worker_started", partitions=self.settings.partitions)
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
            self.redis.zrem(keys.WORKERS, self.id)
        self.health.set_ready(False, "stopped")
        self.log.info("worker_stopped")

    def run_once(self) -> int:
        """One cycle; returns how many inbox entries it processed."""
        started = clock = time.monotonic()
        phases: dict[str, float] = {}
        if clock >= self._next_heartbeat:
            self._next_heartbeat = clock + self.settings.heartbeat
            self.heartbeat()
            settle_heap()
            phases["heartbeat"] = time.monotonic() - clock
        if clock >= self._next_timers and self.partitions:
            self._next_timers = clock + self.settings.timer_interval
            mark = time.monotonic()
            self.fire_timers()
            phases["timers"] = time.monotonic() - mark
        mark = time.monotonic()
        entries = self._read()
        phases["read"] = time.monotonic() - mark
        count = sum(len(e) for e in entries.values())
        if count:
            self._idle = 0.0
            self._handle(entries, phases)
        elapsed = time.monotonic() - started  # work only: idle waiting is not slowness
        if elapsed * 1000 > self.settings.slow_cycle_ms:
            self.log.warning(
                "slow_cycle",
                ms=round(elapsed * 1000, 1),
                entries=count,
                **{k: round(v * 1000, 1) for k, v in phases.items()},
            )
        if not count:
            self._wait_for_entries()
        return count

    def _wait_for_entries(self) -> None:
        """Idle: wait until an owned inbox gets an entry (or a timer or heartbeat is due).

        On a standalone Redis one blocking XREAD over every owned inbox, from
        the newest entry id seen, returns the moment something arrives. A
        cluster refuses multi-slot XREAD, so there (and on fakeredis) the worker
        polls, sleeping 0.5 ms, doubling up to ``idle_sleep_max``.
        """
        if not self.partitions:
            time.sleep(self.settings.heartbeat / 5)
            return
        if not self._can_block:
            self._idle = min(max(self._idle * 2, 0.0005), self.settings.idle_sleep_max)
            time.sleep(self._idle)
            return
        due = min(self._next_heartbeat, self._next_timers) - time.monotonic()
        block = int(min(self.settings.idle_block_ms, max(due * 1000, 1)))
        streams = {keys.inbox(n): p.newest for n, p in self.partitions.items()}
        for stream, entries in self.redis.xread(streams, count=1, block=block) or []:
            number = keys.partition_of_inbox(_text(stream))
            part = self.partitions.get(number)
            if part is not None and entries:
                part.newest = _text(entries[-1][0])

    # -- membership, leases, rebalancing ----------------------------------------------

    def now(self) -> int:
        """Milliseconds by the Redis server's clock (ours plus the offset measured at
        each heartbeat): turn clocks and limits must not depend on which worker's
        clock happens to run them, nor jump when a table moves between machines."""
        return now_ms() + self.clock_offset

    def heartbeat(self) -> None:
        now = self.now()
        s = self.settings
        batch = Batch(self.redis)
        batch.add(keys.WORKERS, lambda p: p.time())
        batch.add(keys.WORKERS, lambda p: p.zadd(keys.WORKERS, {self.id: now}))
        batch.add(
            keys.WORKERS, lambda p: p.zrangebyscore(keys.WORKERS, now - s.dead_after_ms, "+inf")
        )
        batch.add(
            keys.WORKERS,
            lambda p: p.zremrangebyscore(keys.WORKERS, "-inf", now - 20 * s.dead_after_ms),
        )
        batch.add(
            keys.GATEWAYS,
            lambda p: p.zrangebyscore(keys.GATEWAYS, now - s.gateway_dead_after_ms, "+inf"),
        )
        batch.add(
            keys.GATEWAYS,
            lambda p: p.zrangebyscore(keys.GATEWAYS, "-inf", now - s.gateway_gc_ms, 0, 100),
        )
        owned = list(self.partitions.values())
        for part in owned:
            lease = keys.lease(part.number)
            batch.add(
                lease,
                self._call("renew", [lease], [self.id, part.generation, s.lease_ms]),
            )
        sent = now_ms()
        clock, *results = self._execute(batch)
        if not isinstance(clock, Exception):
            seconds, micros = clock
            self.clock_offset = seconds * 1000 + micros // 1000 - (sent + now_ms()) // 2
        live = [w.decode() if isinstance(w, bytes) else w for w in results[1]]
        self.live_gateways = [g.decode() if isinstance(g, bytes) else g for g in results[3]]
        if results[4]:
            self._forget_gateways([_text(g) for g in results[4]], now - s.gateway_gc_ms)
        for part, renewed in zip(owned, results[5:], strict=True):
            if isinstance(renewed, Exception):
                continue  # not an answer about the lease: keep it, retry next heartbeat
            if renewed != 1:
                self._lost(part.number, "lease renewal refused")
        if self.stopping:
            return
        if self.id not in live:
            live.append(self.id)
        target = owned_by(s.partitions, live, self.id)
        for number in sorted(set(self.partitions) - target):
            self._release(number)
        for number in sorted(target - set(self.partitions)):
            self._acquire(number)
        self.health.details["partitions"] = len(self.partitions)

    def _forget_gateways(self, gateways: list[str], before: int) -> None:
        """Unregister gateways silent since ``before`` and delete their outboxes (a dead
        gateway's outbox and registry entry used to stay forever). A gateway that was
        only paused registers again and finds its outbox remade by the next delivery."""
        batch = Batch(self.redis)
        # By score: one that registered again meanwhile stays registered.
        batch.add(keys.GATEWAYS, lambda p: p.zremrangebyscore(keys.GATEWAYS, "-inf", before))
        for gateway in gateways:
            outbox = keys.outbox(gateway)
            batch.add(outbox, lambda p, outbox=outbox: p.delete(outbox))
        self._execute(batch)
        self.log.info("gateways_forgotten", gateways=gateways)

    def _acquire(self, number: int) -> None:
        generation = int(
            self.scripts.run("acquire", [keys.lease(number)], [self.id, self.settings.lease_ms])
        )
        if not generation:
            return  # still held by a live worker; it will release, we retry next heartbeat
        # What a previous owner committed but may not have delivered goes out first
        # (read back by the next cycle, which also survives a failure in between).
        part = self.partitions[number] = Partition(number, generation, redeliver=True)
        self.log.info("lease_acquired", partition=number, generation=generation)
        try:
            info = self.redis.xinfo_stream(keys.inbox(number))
        except ResponseError:  # no inbox: the first read says so, and it is remade
            return
        part.newest = _text(info.get("last-generated-id") or info.get(b"last-generated-id"))

    def _release(self, number: int) -> None:
        part = self.partitions.pop(number, None)
        if part is None:
            return
        if part.delivered:
            self.redis.xdel(keys.deliveries(number), *part.delivered)
        self.scripts.run("release", [keys.lease(number)], [self.id, part.generation])
        self.log.info("lease_released", partition=number, generation=part.generation)

    def _lost(self, number: int, why: str) -> None:
        part = self.partitions.pop(number, None)
        if part is not None:
            self.log.warning("lease_lost", partition=number, generation=part.generation, why=why)

    # -- reading ----------------------------------------------------------------------

    def _read(self) -> dict[int, list[tuple[str, bytes]]]:
        """One round trip: deliver what the last cycle committed, delete what was
        delivered before, and read every owned partition's inbox.

        The reads are one script call for all partitions on a standalone Redis
        (the per-cycle cost then does not grow with the partition count), one
        call per partition on a Cluster (a script may touch one hash slot only).
        """
        for part in list(self.partitions.values()):
            if part.redeliver:
                self._redeliver(part.number)
                part.redeliver = False
        owned = list(self.partitions.values())
        batch = Batch(self.redis)
        sending = self._queue_deliveries(batch)
        for part in owned:
            if part.delivered:
                n, ids, part.delivered = part.number, part.delivered, []
                batch.add(
                    keys.deliveries(n), lambda p, n=n, ids=ids: p.xdel(keys.deliveries(n), *ids)
                )
        deletions = len(batch.items) - sending[1]
        groups = read_groups(len(owned), cluster=self._slot_per_call)
        calls = [[owned[i] for i in group] for group in groups]
        for group in calls:
            script_keys, args = read_call(
                self.id,
                self.id,
                self.settings.batch,
                [(part.number, part.generation, part.mode) for part in group],
                self.settings.max_deliveries,
            )
            batch.add(script_keys[0], self._call("read", script_keys, args))
        if not batch.items:
            return {}
        results = self._execute(batch)
        self._settle_deliveries(sending, results[: sending[1]])
        replies = iter(results[sending[1] + deletions :])
        entries: dict[int, list[tuple[str, bytes]]] = {}
        for group in calls:
            reply = next(replies)
            for i, part in enumerate(group):
                flat = reply if isinstance(reply, Exception) else reply[i]
                got = self._entries_read(part, flat)
                if got:
                    entries[part.number] = got
        return entries

    def _entries_read(self, part: Partition, flat: Any) -> list[tuple[str, bytes]]:
        """One partition's share of a read reply, as (entry id, payload) pairs."""
        if isinstance(flat, Exception):
            self.log.warning("read_failed", partition=part.number, error=str(flat))
            return []
        if flat is None:
            self._lost(part.number, "fenced read")
            return []
        if isinstance(flat, (bytes, str)):  # the inbox or its group is gone: remake it
            self.log.error("inbox_broken", partition=part.number, error=_text(flat))
            self._repair_inbox(part)
            return []
        got = [
            (_text(flat[i]), flat[i + 1] if isinstance(flat[i + 1], bytes) else b"")
            for i in range(0, len(flat), 2)
        ]
        if got and _newer(got[-1][0], part.newest):
            part.newest = got[-1][0]
        if part.mode == "pending" and len(got) < self.settings.batch:
            part.mode = "new"  # every pending entry is in this batch
        return got

    def _repair_inbox(self, part: Partition) -> None:
        """Recreate a partition's consumer group (the inbox was deleted or evicted, or an
        XADD recreated it without the group). It starts at 0: every entry still in
        the stream is read; the pending ones of the lost group cannot be known, and
        entries applied before are refused by their ids (tables remember them)."""
        create_groups(self.redis, [part.number])
        self._forget(part)
        part.redeliver = True
        part.newest = "0-0"

    # -- processing ---------------------------------------------------------------------

    def _handle(
        self, entries: dict[int, list[tuple[str, bytes]]], phases: dict[str, float] | None = None
    ) -> None:
        phases = {} if phases is None else phases
        mark = time.monotonic()
        decoded = {n: [(eid, raw, _decode(raw)) for eid, raw in got] for n, got in entries.items()}
        self._load_tables(decoded)
        batches: list[_Batch] = []
        for number, items in decoded.items():
            part = self.partitions.get(number)
            if part is None:
                continue
            try:
                batches.append(self._process(part, items))
            except _Poison as poison:
                self._quarantine(part, poison)
        phases["process"] = time.monotonic() - mark
        if batches:
            self._commit(batches, phases)

    def _load_tables(self, decoded: dict[int, list[tuple[str, bytes, Any]]]) -> None:
        """Fetch, in one round trip, every table these entries name that is not in memory."""
        wanted: list[tuple[Partition, str]] = []
        for number, items in decoded.items():
            part = self.partitions.get(number)
            if part is None:
                continue
            seen: set[str] = set()
            for _, _, msg in items:
                if isinstance(msg, dict):
                    tid = msg["table"]
                    if tid not in part.tables and tid not in seen and self._owns(part, tid):
                        seen.add(tid)
                        wanted.append((part, tid))
        if not wanted:
            return
        batch = Batch(self.redis)
        for part, tid in wanted:
            key = keys.table(part.number, tid)
            batch.add(key, lambda p, key=key: p.hmget(key, "v", "s"))
        for (part, tid), result in zip(wanted, batch.execute(), strict=True):
            if isinstance(result, Exception):
                raise result
            version, blob = result
            if blob is None:
                continue
            try:
                table = part.tables[tid] = Table.from_bytes(blob)
                table.limits = self.limits
            except Exception as exc:  # a record our code cannot read: never block the partition
                self.log.error("table_unreadable", partition=part.number, table=tid, error=str(exc))
                continue
            part.stored[tid] = int(version)

    def _rng(self, table_id: str, version: int) -> random.Random:
        if self.settings.seed is None:
            return self.rng
        return random.Random(f"{self.settings.seed}:{table_id}:{version}")

    def _owns(self, part: Partition, table_id: str) -> bool:
        return keys.partition_of(table_id, self.settings.partitions) == part.number

    def _process(self, part: Partition, items: list[tuple[str, bytes, Any]]) -> _Batch:
        batch = _Batch(part)
        touched: dict[str, Table] = {}
        now = self.now()
        for entry_id, raw, msg in items:
            batch.acks.append(entry_id)
            if isinstance(msg, WireError):
                batch.dead.append((entry_id, f"{msg.code}: {msg.message}", raw))
                reply = error_for(msg.known, msg.code, msg.message)
                if reply:
                    batch.outputs.append(reply)
                continue
            tid = msg["table"]
            table = part.tables.get(tid)  # a table in memory is one this partition owns
            if table is None and not self._owns(part, tid):
                reason = f"table {tid} belongs to another partition"
                batch.dead.append((entry_id, f"{wire.BAD_MESSAGE}: {reason}", raw))
                reply = error_for(msg, wire.BAD_MESSAGE, reason)
                if reply:
                    batch.outputs.append(reply)
                continue
            try:
                rng = self._rng(tid, table.version if table else 0)
                if table is None:
                    if msg["type"] == "create":
                        table = part.tables[tid] = Table.create(msg, now, self.limits)
                        part.stored[tid] = 0
                        self.log.info(
                            "table_created",
                            preset=table.rules.preset,
                            **_where(part, msg),
                        )
                    else:
                        if msg["type"] != "timeout":
                            reply = error_for(msg, wire.UNKNOWN_TABLE, f"no table {tid}")
                            if reply:
                                batch.outputs.append(reply)
                        continue
                else:
                    table.handle(msg, now, rng)
            except WireError as exc:
                reply = error_for(msg, exc.code, exc.message)
                if reply:
                    batch.outputs.append(reply)
                continue
            except Exception as exc:
                self.log.exception("entry_failed", entry=entry_id, **_where(part, msg))
                raise _Poison(entry_id, raw, f"{wire.INTERNAL}: {exc!r}") from exc
            touched[tid] = table
            if self.debug:
                self.log.debug(
                    "applied", type=msg["type"], version=table.version, **_where(part, msg)
                )

        for tid, table in touched.items():
            flush = table.flush()
            batch.outputs.extend(flush.outputs)
            if flush.record is not None:
                ttl = self.settings.finished_ttl_ms if flush.finished else 0
                batch.writes.append((tid, part.stored[tid], flush.version, flush.record, ttl))
            if flush.lobby is not False:
                entry = flush.lobby
                # The lobby hash is written by the commit (fenced); the news carries
                # the table version, so a late copy from a paused owner is dropped.
                batch.lobby.append((tid, wire.encode(entry) if entry is not None else b""))
                batch.notes.append(
                    wire.encode(
                        wire.message("lobby", table=tid, entry=entry, version=flush.version)
                    )
                )
            if flush.timer_remove:
                batch.timers_rm.append(flush.timer_remove)
            if flush.timer_add:
                batch.timers_add.append(flush.timer_add)
            if flush.finished:
                batch.finished.append(tid)
                self.log.info("table_finished", partition=part.number, table=tid)
        if batch.outputs or batch.notes:
            by_gateway: dict[str, list[bytes]] = defaultdict(list)
            for gateway, data in batch.outputs:
                by_gateway[gateway].append(data)
            batch.content = [list(by_gateway.items()), batch.notes]
            batch.record = wire.encode(batch.content)
        return batch

    def _quarantine(self, part: Partition, poison: _Poison) -> None:
        """Dead-letter one entry that broke our code; replay the rest from Redis."""
        part.tables.clear()
        part.stored.clear()
        part.mode = "pending"
        self._commit(
            [
                _Batch(
                    part,
                    acks=[poison.entry_id],
                    dead=[(poison.entry_id, poison.reason, poison.payload)],
                )
            ]
        )

    # -- committing and delivering --------------------------------------------------------

    def _commit(self, batches: list[_Batch], phases: dict[str, float] | None = None) -> None:
        """Commit every partition's batch in one round trip: a few partitions per
        script call on a standalone Redis, one per call on a Cluster (see
        :func:`~dudo.worker.scripts.commit_groups`)."""
        mark = time.monotonic()
        pipe = Batch(self.redis)
        groups = commit_groups([len(b.writes) for b in batches], cluster=self._slot_per_call)
        calls = [[batches[i] for i in group] for group in groups]
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
                    )
                    for b in group
                ],
            )
            pipe.add(script_keys[0], self._call("commit", script_keys, args))
        try:
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
                tid = b.writes[int(result[1])][0]
                self.log.error("version_conflict", partition=part.number, table=tid)
                self._forget(part)
                continue
            for tid, _, version, _, _ in b.writes:
                part.stored[tid] = version
            for tid in b.finished:
                part.tables.pop(tid, None)
                part.stored.pop(tid, None)
            if b.record:
                delivered.append((part.number, _text(result[1]), b.record, b.content))
        if phases is not None:
            phases["commit"] = time.monotonic() - mark
        # Delivered at the start of the next cycle, in the same round trip as its read.
        self._unsent.extend(delivered)

    def _forget(self, part: Partition) -> None:
        """Our memory of this partition may be ahead of Redis: drop it and replay."""
        part.tables.clear()
        part.stored.clear()
        part.mode = "pending"

    def _queue_deliveries(self, batch: Batch) -> tuple[list[tuple[int, str, bytes, Any]], int]:
        """Queue the fan-out of every committed, undelivered record: one outbox entry
        per gateway, lobby news to every live gateway. Returns the records and how
        many commands."""
        records, self._unsent = self._unsent, []
        if not records:
            return [], 0
        by_gateway: dict[str, list[bytes]] = defaultdict(list)
        for _, _, record, content in records:
            outputs, notes = content or wire.unpack(record)
            for gateway, messages in outputs:
                by_gateway[gateway].extend(messages)
            for note in notes:
                for gateway in self.live_gateways:
                    by_gateway[gateway].append(note)
        before = len(batch.items)
        maxlen, ttl = self.settings.outbox_maxlen, self.settings.outbox_ttl_ms
        for gateway, messages in by_gateway.items():
            stream = keys.outbox(gateway)
            fields = {wire.ENTRY_FIELD: wire.pack_batch(messages)}
            batch.add(
                stream,
                lambda p, stream=stream, fields=fields: p.xadd(
                    stream, fields, maxlen=maxlen, approximate=True
                ),
            )
            # An outbox lives while it is delivered to: a dead gateway's goes.
            batch.add(stream, lambda p, stream=stream: p.pexpire(stream, ttl))
        return records, len(batch.items) - before

    def _settle_deliveries(
        self, sending: tuple[list[tuple[int, str, bytes, Any]], int], results: list[Any]
    ) -> None:
        """Delivered records are deleted in the next round trip; failed ones are retried."""
        records, _ = sending
        failures = [r for r in results if isinstance(r, Exception)]
        if failures:
            self.log.warning("delivery_failed", error=str(failures[0]))
            self._unsent = records + self._unsent
            return
        for number, record_id, _, _ in records:
            part = self.partitions.get(number)
            if part is not None:
                part.delivered.append(record_id)

    def flush_deliveries(self) -> None:
        """Deliver committed records now (on the way out; the loop does it with its reads)."""
        batch = Batch(self.redis)
        sending = self._queue_deliveries(batch)
        if sending[0]:
            self._settle_deliveries(sending, batch.execute())

    def _redeliver(self, number: int) -> None:
        """Queue for delivery what a previous owner committed but may not have delivered."""
        stream = keys.deliveries(number)
        start = "-"
        while True:
            rows = self.redis.xrange(stream, min=start, max="+", count=500)
            if not rows:
                return
            self.log.info("redelivering", partition=number, records=len(rows))
            self._unsent.extend((number, _text(rid), fields[b"d"], None) for rid, fields in rows)
            start = "(" + _text(rows[-1][0])

    # -- turn clocks --------------------------------------------------------------------------

    def fire_timers(self) -> None:
        """Turn every expired turn clock of an owned partition into an inbox entry."""
        owned = list(self.partitions.values())
        now = self.now()
        scan = Batch(self.redis)
        for part in owned:
            key = keys.timers(part.number)
            scan.add(key, lambda p, key=key: p.zrangebyscore(key, "-inf", now, start=0, num=256))
        due = [
            (part, members)
            for part, members in zip(owned, scan.execute(), strict=True)
            if members and not isinstance(members, Exception)
        ]
        if not due:
            return
        fire = Batch(self.redis)
        for part, members in due:
            n = part.number
            args: list[Any] = [self.id, part.generation]
            for member in members:
                name = _text(member)
                tid, _, version = name.rpartition("|")
                # The id only has to be unique within its table (a 64-character
                # table id in it made it too long, and the clock never fired).
                timeout = wire.message(
                    "timeout", id=f"t:{version}", table=tid, version=int(version)
                )
                args += [name, wire.encode(timeout)]
            script_keys = [keys.lease(n), keys.timers(n), keys.inbox(n)]
            fire.add(keys.lease(n), self._call("fire", script_keys, args))
        self._execute(fire)

    def _call(self, name: str, script_keys: list[str], args: list[Any]) -> Any:
        """Queue script ``name`` on whatever pipeline Batch hands over."""
        return lambda pipe: self.scripts.queue(pipe, name, script_keys, args)

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


def _where(part: Partition, msg: dict[str, Any]) -> dict[str, Any]:
    """The log fields that place an entry: partition, table, message id."""
    return {"partition": part.number, "table": msg["table"], "id": msg.get("id")}


def _decode(raw: bytes) -> dict[str, Any] | WireError:
    try:
        return wire.decode(raw)
    except WireError as exc:
        return exc
    except Exception as exc:  # the codec promises typed errors; never die on an entry anyway
        return WireError(wire.BAD_MESSAGE, f"undecodable entry ({exc.__class__.__name__})")


def _newer(a: str, b: str) -> bool:
    """Is stream id ``a`` after ``b``?"""
    ma, _, sa = a.partition("-")
    mb, _, sb = b.partition("-")
    return (int(ma), int(sa or 0)) > (int(mb), int(sb or 0))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
