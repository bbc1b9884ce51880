"""What every part of the worker shares: its settings, what it knows of a partition, time."""

from __future__ import annotations

import os
import random
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..entity import Entity
from ..wire import keys
from .scripts import Section


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
    finished_ttl_ms: int = 86_400_000  # finished tables are kept this long (their replay)
    idle_sleep_max: float = 0.005  # polling (Redis Cluster, fakeredis): longest sleep when idle
    idle_block_ms: int = 50  # standalone Redis: longest blocking wait for new entries
    # Reproducible randomness (dice secrets, first opener, house bot) derived
    # from (seed, table, version): for tests and benchmarks only. None = OS entropy.
    seed: int | None = None
    slow_cycle_ms: float = 100.0  # log a warning with phase timings for cycles slower than this
    # One partition per script call even on a standalone Redis, for proxies that,
    # like a Cluster, refuse scripts over several hash slots (a Cluster always is).
    slot_per_call: bool = False
    # What one admitted gateway's entries may cost this worker (dudo.worker.quota):
    # entries and bytes a second (bursts of twice that); past it they are dropped. 0: none.
    gateway_entries_per_s: float = 5000.0
    gateway_bytes_per_s: float = 8_000_000.0
    # A gateway's own inbox on a partition holding more unread entries than this loses
    # its oldest (its own players' loss alone; it is told on its refused stream).
    gateway_backlog: int = 10_000
    # What one admitted gateway's own keys may take of Redis's memory (dudo.worker.warden,
    # run by the table worker that holds partition 0): past the soft limit an alert,
    # past the hard one it is revoked (0: not measured).
    gateway_memory_soft: int = 32 * 1024 * 1024
    gateway_memory_hard: int = 128 * 1024 * 1024
    # An inbox entry read this many times without being committed (each read
    # followed by a crash, a lost lease or a failed commit) is dead-lettered.
    max_deliveries: int = 5
    # Which partitions this loop serves: tables (a worker) or tournaments (a director).
    space: keys.Space = keys.TABLES
    # After a cycle that did work, wait until this many ms have passed since it began:
    # bigger batches for less CPU, for loops whose entries need no quick answer (a
    # director's reports: its decisions take effect at rounds' ends anyway). 0: none.
    pace_ms: float = 0.0
    # A director addresses tables: their partition count, checked at setup against
    # the deployment's (None for a worker).
    table_partitions: int | None = None


@dataclass
class Partition:
    """What the worker knows about a partition while it holds the lease."""

    number: int
    generation: int
    mode: str = "pending"  # "pending": claim and replay pending entries first; then "new"
    entities: dict[str, Entity] = field(default_factory=dict)  # by id: tables, tournaments...
    stored: dict[str, int] = field(default_factory=dict)  # entity id -> version in Redis
    delivered: list[str] = field(default_factory=list)  # delivery records to delete
    # The newest entry id seen per inbox stream (None: the deployment's inbox; else a
    # gateway's own): idle waits block for anything later.
    newest: dict[str | None, str] = field(default_factory=dict)
    # A commit's outcome is unknown (its reply was lost): what it may have written to
    # the delivery record is read back and delivered (again) before the next read.
    redeliver: bool = False


class Entry(NamedTuple):
    """An inbox entry as read: who wrote it (the gateway whose own inbox it came from;
    None: the deployment's inbox), its id, its message (field m; cut to its first bytes
    past the size cap), its signature (field s, or b"") and the message's real size."""

    writer: str | None
    id: str
    payload: bytes
    signature: bytes
    size: int


def now_ms() -> int:
    return int(time.time() * 1000)


def newer_id(a: str, b: str) -> bool:
    """Is stream id ``a`` after ``b``?"""
    ma, _, sa = a.partition("-")
    mb, _, sb = b.partition("-")
    return (int(ma), int(sa or 0)) > (int(mb), int(sb or 0))


class Outgoing(NamedTuple):
    """What leaves with a partition's commit: each gateway's messages, the lobby notes
    (for every live gateway) and entries for other partitions' inboxes. Stored as is (a
    msgpack array) in a Cluster's delivery record; one of two items in a record written
    before the sends were added."""

    messages: list[tuple[str, list[bytes]]]
    notes: list[bytes]
    sends: Sequence[tuple[str, bytes]] = ()


# A committed delivery record not yet delivered: (partition, record id, the record, what it
# holds if this worker committed it, else None: read back from the record)
Unsent = tuple[int, str, bytes, "Outgoing | None"]


@dataclass(kw_only=True)
class PartitionBatch(Section):
    """One partition's share of a cycle, ready to commit: the commit's :class:`Section`
    (what is written), and what the worker does with it around the commit."""

    partition: Partition
    # A dead letter keeps who wrote it, so a replay is the writer's entry again, never the
    # deployment's (ops.replay). The same dead letters as the gateway that wrote them may
    # read them (keys.refused): (the gateway, entry id, what could be read, code, reason)
    refused: list[tuple[str, str, dict[str, Any], str, str]] = field(default_factory=list)
    outputs: list[tuple[str, bytes]] = field(default_factory=list)
    notes: list[bytes] = field(default_factory=list)  # `lobby` news for every gateway
    finished: list[str] = field(default_factory=list)
    # What leaves with the commit, as the outbox entries the commit appends (standalone
    # Redis) or as a delivery record it stores (Cluster): Committing._commit fills in one
    # of the two.
    content: Outgoing | None = None
