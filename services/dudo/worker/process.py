"""Processing a batch: decode each entry, load its entity, let the entity handle it.

The entity is a :class:`~dudo.table.Table` in a worker, a tournament in a director
(:class:`~dudo.entity.Entity`: the loop only calls what that protocol lists).

A mixin of :class:`~dudo.worker.loop.Worker`. An entry never takes the worker
down: anything malformed is a typed error (dead-lettered, answered to its
sender); an entry that makes our own code raise is quarantined alone and the
rest of its batch replayed (:meth:`Processing._quarantine`).
"""

from __future__ import annotations

import contextlib
import random
import time
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from .. import wire
from ..entity import Report, report_sends
from ..infra import Batch, hash_reply
from ..wire import DudoError, Verifier, WireError, keys
from .common import Entry, Outgoing, Partition, PartitionBatch
from .lua import CUT_BYTES
from .quota import Quota, QuotaExceeded
from .scripts import DeadLetter, Write
from .state import WorkerState

if TYPE_CHECKING:
    from ..entity import Entity


class _Poison(Exception):
    """An entry that made our own code fail: it goes to the dead letters alone."""

    def __init__(self, entry: Entry, reason: str) -> None:
        super().__init__(reason)
        self.entry, self.reason = entry, reason


# An entry as judged: the entry, and its message or why it was refused.
Judged = tuple[Entry, "dict[str, Any] | WireError"]


class Processing(WorkerState):
    """Turns read entries into per-partition batches ready to commit."""

    def _handle(
        self, entries: dict[int, list[Entry]], phases: dict[str, float] | None = None
    ) -> None:
        phases = {} if phases is None else phases
        mark = time.monotonic()
        direction = self.entity.DIRECTION
        decoded = {
            n: [(e, _judge(e, direction, self.verifier, self.quota)) for e in got]
            for n, got in entries.items()
        }
        self._load(decoded)
        batches: list[PartitionBatch] = []
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

    def _load(self, decoded: dict[int, list[Judged]]) -> None:
        """Fetch, in one round trip, every entity these entries name that is not in memory."""
        wanted: list[tuple[Partition, str]] = []
        for number, items in decoded.items():
            part = self.partitions.get(number)
            if part is None:
                continue
            seen: set[str] = set()
            for _, msg in items:
                if isinstance(msg, dict):
                    eid = msg[self.entity.KEY]
                    if eid not in part.entities and eid not in seen and self._owns(part, eid):
                        seen.add(eid)
                        wanted.append((part, eid))
        if not wanted:
            return
        batch = Batch(self.redis)
        for part, eid in wanted:
            key = self.space.record(part.number, eid)
            batch.add(key, "HGETALL", key)
        for (part, eid), reply in zip(wanted, batch.execute(), strict=True):
            if isinstance(reply, Exception):
                raise reply
            result = hash_reply(reply)
            version, blob = result.pop(b"v", None), result.pop(b"s", None)
            if blob is None:
                continue
            try:
                held = part.entities[eid] = self.entity.from_bytes(blob, result)
                held.limits = self.limits
            except Exception as exc:  # a record our code cannot read: never block the partition
                self.log.error("record_unreadable", partition=part.number, id=eid, error=str(exc))
                continue
            part.stored[eid] = int(version)

    def _rng(self, eid: str, version: int) -> random.Random:
        if self.settings.seed is None:
            return self.rng
        return random.Random(f"{self.settings.seed}:{eid}:{version}")

    def _owns(self, part: Partition, table_id: str) -> bool:
        return keys.partition_of(table_id, self.settings.partitions) == part.number

    def _process(self, part: Partition, items: list[Judged]) -> PartitionBatch:
        """A partition's entries, each applied to its entity in the order read; then
        what every entity touched has to say, as one batch for the commit."""
        batch = PartitionBatch(partition=part)
        touched: dict[str, Entity] = {}
        now, key = self.now(), self.entity.KEY
        for entry, msg in items:
            batch.acks.setdefault(entry.writer, []).append(entry.id)
            held = self._apply(part, batch, entry, msg, now)
            if held is not None:  # (then msg is a message, read: its entity's id is there)
                touched[msg[key]] = held
        reports: list[Report] = []
        for eid, held in touched.items():
            reports.extend(self._flush(part, batch, eid, held))
        batch.sends.extend(report_sends(reports))
        if batch.outputs or batch.notes or batch.sends:
            by_gateway: dict[str, list[bytes]] = defaultdict(list)
            for gateway, data in batch.outputs:
                by_gateway[gateway].append(data)
            batch.content = Outgoing(list(by_gateway.items()), batch.notes, batch.sends)
        return batch

    def _apply(
        self, part: Partition, batch: PartitionBatch, entry: Entry, msg: Any, now: int
    ) -> Entity | None:
        """One entry: applied to its entity (made by a create), or refused (an error to
        whoever sent it, a dead letter for what cannot be read). The entity it changed,
        else None; an entry that breaks our code is poison (:class:`_Poison`)."""
        entity = self.entity
        error_for = entity.error_for
        if isinstance(msg, QuotaExceeded):  # dropped: never a dead letter (a flood)
            self.metrics.quota_dropped.inc()
            _reply(batch, error_for(msg.known, msg.code, msg.message) if msg.tell else None)
            return None
        if isinstance(msg, WireError):
            self._dead(batch, entry, msg.code, msg.message, msg.known or msg.named)
            _reply(batch, error_for(msg.known, msg.code, msg.message))
            return None
        eid = msg[entity.KEY]
        held = part.entities.get(eid)  # in memory: an entity this partition owns
        if held is None and not self._owns(part, eid):
            reason = f"{entity.KEY} {eid} belongs to another partition"
            self._dead(batch, entry, wire.BAD_MESSAGE, reason, msg)
            _reply(batch, error_for(msg, wire.BAD_MESSAGE, reason))
            return None
        try:
            rng = self._rng(eid, held.version if held else 0)
            if held is not None:
                held.handle(msg, now, rng)
            elif msg["type"] in entity.CREATES:
                held = part.entities[eid] = entity.create(msg, now, self.limits, rng)
                part.stored[eid] = 0
                self.log.info(f"{entity.KEY}_created", **_where(part, msg, entity.KEY))
            else:
                # Answered if it came from a gateway (a timer's entry did not).
                _reply(batch, error_for(msg, entity.UNKNOWN, f"no {entity.KEY} {eid}"))
                return None
        except DudoError as exc:  # a create refused (an entity's handle answers its own)
            _reply(batch, error_for(msg, exc.code, exc.message))
            return None
        except Exception as exc:
            self.log.exception("entry_failed", entry=entry.id, **_where(part, msg, entity.KEY))
            raise _Poison(entry, f"{wire.INTERNAL}: {exc!r}") from exc
        if self.debug:
            self.log.debug(
                "applied", type=msg["type"], version=held.version,
                **_where(part, msg, entity.KEY),
            )  # fmt: skip
        return held

    def _flush(
        self, part: Partition, batch: PartitionBatch, eid: str, held: Entity
    ) -> list[Report]:
        """What one entity changed by this batch has to say and store, into ``batch``:
        its messages, its record, its lobby entry, its clock; its reports returned."""
        flush = held.flush(self.frame_gateways)
        batch.outputs.extend(flush.outputs)
        batch.sends.extend(flush.sends)
        if flush.record is not None:
            ttl = self.settings.finished_ttl_ms if flush.finished else 0
            batch.writes.append(
                Write(eid, part.stored[eid], flush.version, flush.record, ttl, flush.rows)
            )
        if flush.lobby is not False:
            entry = flush.lobby
            # The lobby hash is written by the commit (fenced); the news carries
            # the entity's version, so a late copy from a paused owner is dropped.
            batch.lobby.append((eid, wire.encode(entry) if entry is not None else b""))
            note = self.entity.lobby_note(eid, entry, flush.version)
            if note:  # news for every gateway's lobby (none for a public board)
                batch.notes.append(note)
        batch.lobby.extend((name, wire.encode(entry)) for name, entry in flush.listing)
        if flush.timer_remove:
            batch.timers_rm.append(flush.timer_remove)
        if flush.timer_add:
            batch.timers_add.append(flush.timer_add)
        if flush.finished:
            batch.finished.append(eid)
            self.log.info(f"{self.entity.KEY}_finished", partition=part.number, id=eid)
        return flush.reports

    @staticmethod
    def _dead(
        batch: PartitionBatch, entry: Entry, code: str, reason: str, known: dict[str, Any]
    ) -> None:
        """``entry`` to the dead letters, and a note on its writer's refused stream (a
        gateway's: the deployment's own inbox has nobody to tell). A gateway's entry
        refused for who wrote it or its size keeps its first bytes only: a flood of them
        would otherwise be stored whole, and nobody may replay it anyway."""
        raw = entry.payload
        if entry.writer is not None and code in (wire.UNAUTHORIZED, wire.TOO_LARGE):
            raw = raw[:CUT_BYTES]
        batch.dead.append(
            DeadLetter(entry.id, f"{code}: {reason}", raw, entry.signature, entry.writer,
                       entry.size)
        )  # fmt: skip
        if entry.writer is not None:
            batch.refused.append((entry.writer, entry.id, known, code, reason))

    def _quarantine(self, part: Partition, poison: _Poison) -> None:
        """Dead-letter one entry that broke our code; replay the rest from Redis."""
        part.entities.clear()
        part.stored.clear()
        part.mode = "pending"
        entry = poison.entry
        letter = DeadLetter(
            entry.id, poison.reason, entry.payload, entry.signature, entry.writer, entry.size
        )
        batch = PartitionBatch(partition=part, acks={entry.writer: [entry.id]}, dead=[letter])
        self._commit([batch])


def _reply(batch: PartitionBatch, reply: tuple[str, bytes] | None) -> None:
    """An error for whoever sent an entry, where there is someone to tell."""
    if reply:
        batch.outputs.append(reply)


def _where(part: Partition, msg: dict[str, Any], key: str) -> dict[str, Any]:
    """The log fields that place an entry: partition, table (or tournament), message id."""
    return {"partition": part.number, key: msg.get(key), "id": msg.get("id")}


def _judge(
    entry: Entry, direction: str, verifier: Verifier, quota: Quota | None = None
) -> dict[str, Any] | WireError:
    """An entry's message, or why it is refused.

    An entry of a gateway's own inbox is counted against that gateway's quota first,
    whatever it holds (past the bytes it is dropped), then judged by its size, decoded
    field by field and held to its writer (dudo.wire.signing). An entry of the
    deployment's inbox that our own processes signed is checked for its shape only
    (wire.decode_own); any other is decoded field by field, and refused where entries
    are checked."""
    raw, signature, writer = entry.payload, entry.signature, entry.writer
    if writer is not None:
        if quota is not None:
            over = quota.refusal(writer, entry.size)
            if over is not None:
                if over.tell:  # who to tell about what, as far as the bytes say
                    over.known = {"gateway": writer, **_named(raw, ("id", "table"))}
                return over
        if entry.size > wire.MAX_INBOUND_BYTES:
            return WireError(
                wire.TOO_LARGE,
                f"{entry.size} bytes: a message may be at most {wire.MAX_INBOUND_BYTES}",
                named={"gateway": writer},
            )
        ours = False
    else:
        ours = verifier.ours(raw, signature)
    try:
        if ours:
            return wire.decode_own(raw, direction=direction)
        msg = wire.decode(raw, direction=direction)
    except WireError as exc:
        return exc
    except Exception as exc:  # the codec promises typed errors; never die on an entry anyway
        return WireError(wire.BAD_MESSAGE, f"undecodable entry ({exc.__class__.__name__})")
    refused = verifier.refusal(msg, raw, signature, ours=False, writer=writer)
    if refused is not None:
        # Dead-lettered, and answered to nobody: the gateway it names may not have sent
        # it (its writer's refused stream says why: a gateway whose signing is wrong
        # learns why).
        named = {k: msg.get(k) for k in ("gateway", "id", "type")}
        return WireError(wire.UNAUTHORIZED, refused, named=named)
    return msg


def _named(raw: bytes, fields: tuple[str, ...]) -> dict[str, Any]:
    """Those of ``fields`` that the bytes hold as strings, where they decode at all."""
    with contextlib.suppress(Exception):
        msg = wire.unpack(raw)
        if isinstance(msg, dict):
            return {k: msg[k] for k in fields if isinstance(msg.get(k), str)}
    return {}
