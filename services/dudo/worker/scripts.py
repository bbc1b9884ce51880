"""The worker's Lua scripts. Each works on partitions ({pN}) and their keys only.

``read`` and ``commit`` take one partition per call on a Redis Cluster (a
script may touch one hash slot) and several on a standalone Redis, where a
cycle then costs one call instead of one per partition; every partition in a
call is fenced and committed on its own.

The lease is a string ``<generation>|<owner>|<expires ms>``. The generation
only ever grows: it rises whenever a different worker (or the same one after
expiry) takes the partition, and every other script refuses to run unless the
caller names the current owner and generation. That is the fencing: a worker
that was paused past its lease can neither read new entries nor commit.

All times come from the Redis server (``TIME``), so workers on machines with
skewed clocks still agree on when a lease expires.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from hashlib import sha1
from typing import Any, ClassVar, NamedTuple

from redis.exceptions import NoScriptError

from ..wire import keys, signature
from .lua import ACQUIRE, COMMIT, DEAD_KEEP, FIRE, READ, RELEASE, RENEW


class Write(NamedTuple):
    """One record a commit stores: ``entity`` (a table or tournament id) at ``expected``
    (0: must not exist yet) becomes ``version`` with ``record``; ``ttl`` ms (0: keep);
    ``rows``: other fields of the record's hash set with it (value ``b""``: deleted),
    for an entity whose parts change one at a time (a tournament's entrants)."""

    entity: str
    expected: int
    version: int
    record: bytes
    ttl: int = 0
    rows: Sequence[tuple[str, bytes]] = ()


class Stream(NamedTuple):
    """One inbox stream of a partition as a read takes it: whose it is (None: the
    deployment's own inbox; else the gateway's), how many entries at most (0: none this
    time), the size cap of a message and its backlog cap (0: none)."""

    writer: str | None
    count: int
    cap: int = 0
    backlog: int = 0


def read_call(
    owner: str,
    consumer: str,
    parts: list[tuple[int, int, str, Sequence[Stream]]],
    max_deliveries: int = 5,
    *,
    space: keys.Space,
) -> tuple[list[str], list[Any]]:
    """Keys and arguments of one ``read`` call over ``parts`` = (partition, generation,
    mode, its streams: the deployment's inbox first)."""
    script_keys: list[str] = []
    args: list[Any] = [owner, space.group, consumer, max_deliveries]
    for n, generation, mode, streams in parts:
        script_keys += [space.lease(n), space.dead_letters(n)]
        script_keys += [space.inbox(n, stream.writer) for stream in streams]
        args += [generation, mode, len(streams)]
        for stream in streams:
            args += [stream.count, stream.cap, stream.backlog]
    return script_keys, args


class DeadLetter(NamedTuple):
    """An entry that could not be applied, as the commit stores it: its id, why, its
    message (cut past :data:`DEAD_KEEP` bytes where a gateway wrote it), its signature,
    who wrote it (None: the deployment's inbox) and its size."""

    entry: str
    reason: str
    raw: bytes
    signature: bytes
    writer: str | None = None
    size: int = 0




@dataclass(kw_only=True)
class Section:
    """What one partition's commit writes: its part of a ``commit`` call's arguments.

    ``acks``: the entry ids to ack and delete, per inbox stream (by writer: None for
    the deployment's inbox, else a gateway's own);
    ``writes``: one :class:`Write` per table (or tournament) stored;
    ``record``: a delivery record to store (a Cluster: delivered after the commit);
    ``timers_rm`` / ``timers_add``: clocks cancelled / set (member, due ms);
    ``dead``: entries dead-lettered;
    ``lobby``: (table, encoded entry, or b"" when it is no longer open);
    ``outboxes``: (outbox key, entry) appended if the partition commits, and
    ``sends``: (stream key, entry) appended untrimmed (both standalone Redis only:
    those streams are in other hash slots).
    """

    acks: dict[str | None, list[str]] = field(default_factory=dict)
    writes: list[Write] = field(default_factory=list)
    record: bytes = b""
    timers_rm: list[str] = field(default_factory=list)
    timers_add: list[tuple[str, int]] = field(default_factory=list)
    dead: list[DeadLetter] = field(default_factory=list)
    lobby: list[tuple[str, bytes]] = field(default_factory=list)
    outboxes: list[tuple[str, bytes]] = field(default_factory=list)
    sends: list[tuple[str, bytes]] = field(default_factory=list)


def commit_section(
    number: int,
    generation: int,
    section: Section,
    *,
    space: keys.Space,
    sends: bool = True,
    signer: bytes | None = None,
) -> tuple[list[str], list[Any]]:
    """Partition ``number``'s keys and arguments in a ``commit`` call, fenced by its
    lease's ``generation``, in ``space`` (whose consumer group acknowledges: no default,
    since a wrong one would leave every entry pending). ``sends=False`` (a Cluster: the
    streams are in other slots) leaves the section's sends out; they are signed with
    ``signer`` if given."""
    acks, writes, timers_rm, timers_add = (
        section.acks, section.writes, section.timers_rm, section.timers_add
    )  # fmt: skip
    dead, lobby, outboxes = section.dead, section.lobby, section.outboxes
    record = section.record
    sent = section.sends if sends else []
    acked = list(acks.items())
    script_keys = [
        space.lease(number),
        space.deliveries(number),
        space.timers(number),
        space.dead_letters(number),
        space.lobby(number),
        *[space.inbox(number, writer) for writer, _ in acked],
        *[space.record(number, w.entity) for w in writes],
        *[outbox for outbox, _ in outboxes],
        *[stream for stream, _ in sent],
    ]
    args: list[Any] = [generation, len(acked)]
    for _, ids in acked:
        args += [len(ids), *ids]
    args.append(len(writes))
    for w in writes:
        args += [w.expected, w.version, w.record, w.ttl, len(w.rows)]
        for name, value in w.rows:
            args += [name, value]
    args += [record, len(timers_rm), *timers_rm, len(timers_add)]
    for member, deadline in timers_add:
        args += [member, deadline]
    args.append(len(dead))
    for letter in dead:
        raw = letter.raw if letter.writer is None else letter.raw[:DEAD_KEEP]
        size = letter.size or len(letter.raw)
        args += [letter.entry, letter.reason, raw, letter.signature[:64],
                 letter.writer or "", size]  # fmt: skip
    args.append(len(lobby))
    for tid, entry in lobby:
        args += [tid, entry]
    args.append(len(outboxes))
    args += [entry for _, entry in outboxes]
    args.append(len(sent))
    for _, entry in sent:
        args += [entry, signature(signer, entry)]
    return script_keys, args


COMMIT_TABLES_PER_CALL = 32


def read_groups(count: int, *, cluster: bool) -> list[list[int]]:
    """Which of ``count`` partitions go into which ``read`` call: all in one on a
    standalone Redis, one per call on a Cluster (a script may touch one slot)."""
    if cluster:
        return [[i] for i in range(count)]
    return [list(range(count))] if count else []


def commit_groups(sizes: list[int], *, cluster: bool) -> list[list[int]]:
    """Which partition sections go into which ``commit`` call (indexes into ``sizes``,
    each section's number of tables written).

    On a Cluster: one call per partition. On a standalone Redis: consecutive
    sections share a call up to about ``COMMIT_TABLES_PER_CALL`` tables. A quiet
    cycle then costs one call, while a busy one is still split into calls that
    Redis starts executing while the rest of the batch is on its way (one giant
    call would have to arrive whole first).
    """
    if cluster:
        return [[i] for i in range(len(sizes))]
    groups: list[list[int]] = []
    load = 0
    for i, size in enumerate(sizes):
        if not groups or (load > 0 and load + size > COMMIT_TABLES_PER_CALL):
            groups.append([])
            load = 0
        groups[-1].append(i)
        load += size
    return groups


def commit_call(
    owner: str,
    sections: list[tuple[list[str], list[Any]]],
    outbox_maxlen: int = 5000,
    outbox_ttl_ms: int = 3_600_000,
    *,
    space: keys.Space,
) -> tuple[list[str], list[Any]]:
    """Keys and arguments of one ``commit`` call over partition sections (each of
    :func:`commit_section`, in the same ``space``: its group acknowledges them all)."""
    script_keys: list[str] = []
    args: list[Any] = [owner, space.group, outbox_maxlen, outbox_ttl_ms]
    for section_keys, section_args in sections:
        script_keys += section_keys
        args += section_args
    return script_keys, args


class Scripts:
    """The scripts, loaded once into Redis (every primary on a cluster) and called by SHA.

    Queuing ``EVALSHA`` directly on a pipeline avoids redis-py's script objects,
    which check ``SCRIPT EXISTS`` before every pipeline execution: one hidden
    round trip per cycle. If Redis lost the scripts (a restart), a call fails
    with NOSCRIPT; the worker then calls :meth:`load` and replays the cycle.
    """

    SOURCES: ClassVar[dict[str, str]] = {
        "acquire": ACQUIRE,
        "renew": RENEW,
        "release": RELEASE,
        "read": READ,
        "commit": COMMIT,
        "fire": FIRE,
    }

    def __init__(self, client: Any) -> None:
        self.client = client
        self.sha = {
            name: sha1(source.encode()).hexdigest() for name, source in self.SOURCES.items()
        }
        self.loaded = False

    def load(self) -> None:
        for source in self.SOURCES.values():
            self.client.script_load(source)
        self.loaded = True

    def queue(self, pipe: Any, name: str, script_keys: list[str], args: list[Any]) -> Any:
        """Queue one script call on ``pipe`` (or run it, if ``pipe`` is a client)."""
        return pipe.evalsha(self.sha[name], len(script_keys), *script_keys, *args)

    def raw(self, name: str, script_keys: list[str], args: list[Any]) -> tuple[Any, ...]:
        """One script call as plain command arguments (for the lean client)."""
        return ("EVALSHA", self.sha[name], len(script_keys), *script_keys, *args)

    def run(self, name: str, script_keys: list[str], args: list[Any]) -> Any:
        """Call one script now, loading the scripts first if need be."""
        if not self.loaded:
            self.load()
        try:
            return self.queue(self.client, name, script_keys, args)
        except NoScriptError:
            self.load()
            return self.queue(self.client, name, script_keys, args)
