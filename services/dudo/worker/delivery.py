"""What leaves the partitions besides commits: outbox deliveries and due timers.

A mixin of :class:`~dudo.worker.loop.Worker`. On a standalone Redis the commit
script itself appends each gateway's messages to its outbox (atomically with
the commit, fenced by it: nothing to record, nothing to deliver later). On a
Cluster a script may touch one hash slot, and outboxes live in their own
slots: there a commit stores a delivery record in its partition, the records
are fanned out to gateways' outboxes with the next cycle's reads (one entry
per gateway), deleted once delivered, and read back and delivered again
whenever their delivery or their commit's reply is in doubt (at least once:
views carry versions). Due timers become ordinary inbox entries (fenced,
ordered with everything else).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from .. import wire
from ..infra import Batch
from ..wire import entry_fields, keys, signature
from .common import Outgoing, Unsent
from .state import WorkerState


def fan_out(contents: list[Outgoing], live_gateways: list[str]) -> dict[str, list[bytes]]:
    """What each gateway gets of committed contents: its own messages, and the lobby
    notes, which go to every live gateway."""
    by_gateway: dict[str, list[bytes]] = defaultdict(list)
    for outputs, notes, *_ in contents:
        for gateway, messages in outputs:
            by_gateway[gateway].extend(messages)
        for note in notes:
            for gateway in live_gateways:
                by_gateway[gateway].append(note)
    return by_gateway


def outbox_entries(by_gateway: dict[str, list[bytes]]) -> list[tuple[str, bytes]]:
    """One outbox entry per gateway: (outbox key, packed messages)."""
    return [(keys.outbox(g), wire.pack_batch(messages)) for g, messages in by_gateway.items()]


class Delivery(WorkerState):
    def _queue_deliveries(self, batch: Batch) -> tuple[list[Unsent], int]:
        """Queue the fan-out of every committed, undelivered record: one outbox entry
        per gateway, lobby news to every live gateway. Returns the records and how
        many commands."""
        records, self._unsent = self._unsent, []
        if not records:
            return [], 0
        contents = [content or Outgoing(*wire.unpack(record)) for _, _, record, content in records]
        by_gateway = fan_out(contents, self.live_gateways)
        before = len(batch)
        for content in contents:
            for stream, entry in content.sends:
                fields = entry_fields(self.signer, entry)  # another inbox's: signed
                flat = [x for pair in fields.items() for x in pair]
                batch.add(stream, "XADD", stream, "*", *flat)
        maxlen, ttl = self.settings.outbox_maxlen, self.settings.outbox_ttl_ms
        for stream, packed in outbox_entries(by_gateway):
            batch.add(stream, "XADD", stream, "MAXLEN", "~", maxlen, "*", wire.ENTRY_FIELD, packed)
            # An outbox lives while it is delivered to: a dead gateway's goes.
            batch.add(stream, "PEXPIRE", stream, ttl)
        return records, len(batch) - before

    def _settle_deliveries(self, sending: tuple[list[Unsent], int], results: list[Any]) -> None:
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
        stream = self.space.deliveries(number)
        start = "-"
        while True:
            rows = self.redis.xrange(stream, min=start, max="+", count=500)
            if not rows:
                return
            self.log.info("redelivering", partition=number, records=len(rows))
            self._unsent.extend(
                (number, keys.as_text(rid), fields[b"d"], None) for rid, fields in rows
            )
            start = "(" + keys.as_text(rows[-1][0])

    def fire_timers(self) -> set[int]:
        """Turn every expired turn clock of an owned partition into an inbox entry;
        returns the partitions that may have got one."""
        owned = list(self.partitions.values())
        now = self.now()
        scan = Batch(self.redis)
        for part in owned:
            key = self.space.timers(part.number)
            scan.add(key, "ZRANGEBYSCORE", key, "-inf", now, "LIMIT", 0, 256)
        due = [
            (part, members)
            for part, members in zip(owned, scan.execute(), strict=True)
            if members and not isinstance(members, Exception)
        ]
        if not due:
            return set()
        fire = Batch(self.redis)
        for part, members in due:
            n = part.number
            args: list[Any] = [self.id, part.generation]
            for member in members:
                name = keys.as_text(member)
                eid, _, version = name.rpartition("|")
                entry = wire.encode(self.entity.timeout(eid, int(version)))
                args += [name, entry, signature(self.signer, entry)]
            script_keys = [self.space.lease(n), self.space.timers(n), self.space.inbox(n)]
            fire.add(self.space.lease(n), *self._call("fire", script_keys, args))
        self._execute(fire)
        return {part.number for part, _ in due}
