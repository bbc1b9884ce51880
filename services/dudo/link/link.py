"""The gateway's side of the stream protocol: write to partition inboxes, read one outbox.

A gateway instance (ours, a third party's, a bot service, the benchmark) is a
link: it registers with a heartbeat so workers send it lobby news, writes each
client message as one inbox entry (field ``m``) on the partition that owns the
table, and reads its own outbox, whose entries each carry an array of messages.
The gateway owns its outbox: it trims what it has read.

:class:`GatewayLink` is for blocking code (bots, benchmarks, tests);
:class:`AsyncGatewayLink` for asyncio (the web gateway). They share everything
but the I/O.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import time
from dataclasses import dataclass
from typing import Any

from .. import wire
from ..infra import AsyncResp, Client, fast, xread
from ..wire import entry_fields, keys


def default_gateway_id() -> str:
    """A gateway's id where none is given: unique per process (host, pid, random)."""
    return f"gw-{socket.gethostname()[:20]}-{os.getpid()}-{secrets.token_hex(2)}".replace(".", "-")


class _LinkBase:
    def __init__(
        self,
        client: Any,
        gateway_id: str,
        partitions: int,
        director_partitions: int = keys.DEFAULT_DIRECTOR_PARTITIONS,
        signer: bytes | None = None,
        *,
        confined: bool = False,
    ) -> None:
        if not keys.ID_PATTERN.fullmatch(gateway_id):
            raise ValueError(f"gateway id {gateway_id!r} must match {keys.ID_PATTERN.pattern}")
        self.redis = client
        self.id = gateway_id
        self.partitions = partitions
        self.director_partitions = director_partitions
        self.outbox = keys.outbox(gateway_id)
        self.last_id = "0-0"
        self.bytes_read = 0  # outbox payload bytes received, for benchmarks
        # The key every entry is signed with (dudo.wire.signing), where entries are checked.
        self.signer = signer
        # Under a Redis user of its own (an admitted gateway): it writes its own inbox on
        # each partition (keys.Space.inbox), the one its user may append to, and registers
        # by its own presence key, the one registry it may write (keys.presence).
        self.confined = confined

    def entry(self, payload: bytes) -> list[Any]:
        """An inbox entry's fields and values, as XADD takes them: the message, and its
        signature when this link signs."""
        return [item for pair in entry_fields(self.signer, payload).items() for item in pair]

    def message(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A message from this gateway (``gateway`` filled in)."""
        return wire.message(kind, gateway=self.id, **fields)

    @property
    def _writer(self) -> str | None:
        """Whose inbox this link appends to: its own, for an admitted gateway; the
        deployment's, for the deployment's own gateways and bots."""
        return self.id if self.confined else None

    def inbox_of(self, table_id: str) -> str:
        return keys.inbox(keys.partition_of(table_id, self.partitions), self._writer)

    def inbox_for(self, msg: dict[str, Any]) -> str:
        """The inbox a message goes to: its table's, or its tournament's director's."""
        if msg["type"] in wire.DIRECTOR_TYPES:
            partition = keys.partition_of(msg["tournament"], self.director_partitions)
            return keys.TOURNAMENTS.inbox(partition, self._writer)
        return self.inbox_of(msg["table"])

    def _listing_keys(self, what: str) -> list[str]:
        """The lobby hashes of every partition: of tables, or of tournaments."""
        if what == "tournaments":
            return keys.TOURNAMENTS.lobbies(self.director_partitions)
        return keys.lobbies(self.partitions)

    @staticmethod
    def _listing(replies: list[Any]) -> dict[str, dict[str, Any]]:
        """Entity id -> summary, from lobby hashes (listed tables, or tournaments)."""
        found: dict[str, dict[str, Any]] = {}
        for raw in replies:
            for entity, blob in (raw or {}).items():
                name = entity.decode() if isinstance(entity, bytes) else entity
                found[name] = wire.unpack(blob)
        return found

    def _read_args(self, block_ms: int | None, count: int) -> dict[str, Any]:
        if block_ms is not None and block_ms <= 0:
            raise ValueError("block_ms must be positive, or None for no wait")
        return {"streams": {self.outbox: self.last_id}, "count": count, "block": block_ms}

    def _unpack(self, reply: Any) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        for _stream, entries in reply or []:
            for entry_id, fields in entries:
                self.last_id = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
                data = fields.get(wire.ENTRY_FIELD) or fields.get(wire.ENTRY_FIELD.decode())
                self.bytes_read += len(data)
                messages.extend(wire.unpack_batch(data))
        return messages

    @staticmethod
    def _now_ms() -> int:
        return int(time.time() * 1000)


class GatewayLink(_LinkBase):
    redis: Client

    def register(self) -> None:
        """Announce (or refresh) this gateway; call at least every few seconds."""
        self.redis.zadd(keys.GATEWAYS, {self.id: self._now_ms()})

    def deregister(self) -> None:
        self.redis.zrem(keys.GATEWAYS, self.id)

    def open_tables(self) -> dict[str, dict[str, Any]]:
        """The lobby: every listed table's summary (open, or a game being played),
        from every partition's lobby hash."""
        pipe = self.redis.pipeline(transaction=False)
        for key in self._listing_keys("tables"):
            pipe.hgetall(key)
        return self._listing(pipe.execute())

    def send(self, *messages: dict[str, Any]) -> list[str]:
        """Write messages to their tables' inboxes (pipelined); returns the entry ids."""
        pipe = self.redis.pipeline(transaction=False)
        for msg in messages:
            pipe.execute_command("XADD", self.inbox_for(msg), "*", *self.entry(wire.encode(msg)))
        return [i.decode() if isinstance(i, bytes) else i for i in pipe.execute()]

    def send_raw(self, table_id: str, payload: bytes) -> str:
        """Write bytes as they are (for tests of what workers do with garbage)."""
        entry = self.redis.execute_command(
            "XADD", self.inbox_of(table_id), "*", *self.entry(payload)
        )
        return entry.decode() if isinstance(entry, bytes) else entry

    def read(self, block_ms: int | None = 100, count: int = 100) -> list[dict[str, Any]]:
        """The next messages for this gateway, oldest first.

        Waits up to ``block_ms`` for something to arrive; ``None`` does not wait
        (Redis reads ``BLOCK 0`` as "forever", so 0 is refused). Entries already
        read are trimmed from the outbox on the next call.
        """
        args = self._read_args(block_ms, count)
        if self.last_id != "0-0":
            self.redis.xtrim(self.outbox, minid=self.last_id, approximate=False)
        return self._unpack(xread(self.redis, **args))


class AsyncGatewayLink(_LinkBase):
    """The same, for a ``redis.asyncio`` client.

    :meth:`send` coalesces: the messages of every caller during one turn of the
    event loop go to Redis in one pipeline (a busy gateway receives many client
    messages per turn; one round trip each cost more than the rest of its path).
    :meth:`read` trims what was read only now and then, not before every read.
    """

    TRIM_EVERY = 256  # entries read between two trims of the outbox (or TRIM_AFTER_S)
    TRIM_AFTER_S = 1.0

    def __init__(
        self,
        client: Any,
        gateway_id: str,
        partitions: int,
        director_partitions: int = keys.DEFAULT_DIRECTOR_PARTITIONS,
        signer: bytes | None = None,
        *,
        confined: bool = False,
    ) -> None:
        super().__init__(
            client, gateway_id, partitions, director_partitions, signer, confined=confined
        )
        self.views: str | None = None  # "frames": workers send this gateway `frames`
        self._outgoing: _Outgoing | None = None
        self._read_since_trim = 0
        self._trimmed_at = 0.0

    async def register(self) -> None:
        """Announce (or refresh) this gateway, and how it takes its views: an admitted
        gateway by its presence key, the deployment's own in the registries."""
        if self.confined:
            await self.redis.set(
                keys.presence(self.id), self.views or "view", px=keys.PRESENCE_TTL_MS
            )
            return
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(keys.GATEWAYS, {self.id: self._now_ms()})
        if self.views is not None:
            pipe.hset(keys.GATEWAY_VIEWS, self.id, self.views)
        else:
            pipe.hdel(keys.GATEWAY_VIEWS, self.id)
        await pipe.execute()

    async def deregister(self) -> None:
        if self.confined:
            await self.redis.delete(keys.presence(self.id))
            return
        pipe = self.redis.pipeline(transaction=False)
        pipe.zrem(keys.GATEWAYS, self.id)
        pipe.hdel(keys.GATEWAY_VIEWS, self.id)
        await pipe.execute()

    async def open_tables(self) -> dict[str, dict[str, Any]]:
        """The lobby: every listed table's summary (open, or a game being played),
        from every partition's lobby hash."""
        return await self._read_listing("tables")

    async def tournaments(self) -> dict[str, dict[str, Any]]:
        """Every tournament registering or running, from the director partitions' listings."""
        return await self._read_listing("tournaments")

    async def _read_listing(self, what: str) -> dict[str, dict[str, Any]]:
        pipe = self.redis.pipeline(transaction=False)
        for key in self._listing_keys(what):
            pipe.hgetall(key)
        return self._listing(await pipe.execute())

    async def send(self, *messages: dict[str, Any]) -> None:
        """Write messages to their tables' inboxes; returns once Redis has them (raises
        what Redis raised: the messages of that round trip may or may not be written)."""
        await asyncio.shield(self.send_soon(*messages))

    def send_soon(self, *messages: dict[str, Any]) -> asyncio.Future[None]:
        """Queue messages for this turn's round trip; the future says how it went
        (shared by every message of that round trip: do not cancel it)."""
        outgoing = self._outgoing
        if outgoing is None:
            loop = asyncio.get_running_loop()
            outgoing = self._outgoing = _Outgoing([], loop.create_future())
            loop.call_soon(self._flush)
        for msg in messages:
            outgoing.entries.append((self.inbox_for(msg), wire.encode(msg)))
        return outgoing.done

    def _flush(self) -> None:
        outgoing, self._outgoing = self._outgoing, None
        if outgoing is not None:
            task = asyncio.get_running_loop().create_task(self._write(outgoing))
            _pending_writes.add(task)
            task.add_done_callback(_pending_writes.discard)

    async def _write(self, outgoing: _Outgoing) -> None:
        done = outgoing.done
        try:
            lean = fast(self.redis)
            if isinstance(lean, AsyncResp):
                await lean.execute(
                    [
                        ("XADD", inbox, "*", *self.entry(payload))
                        for inbox, payload in outgoing.entries
                    ]
                )
            elif len(outgoing.entries) == 1:
                inbox, payload = outgoing.entries[0]
                await self.redis.execute_command("XADD", inbox, "*", *self.entry(payload))
            else:
                pipe = self.redis.pipeline(transaction=False)
                for inbox, payload in outgoing.entries:
                    pipe.execute_command("XADD", inbox, "*", *self.entry(payload))
                await pipe.execute()
        except asyncio.CancelledError:  # shutting down: every sender is cancelled too
            done.cancel()
            raise
        except Exception as exc:
            if not done.done():
                done.set_exception(exc)
                done.add_done_callback(_retrieve)  # nobody may be waiting any more
        else:
            if not done.done():
                done.set_result(None)

    async def read(self, block_ms: int | None = 100, count: int = 100) -> list[dict[str, Any]]:
        args = self._read_args(block_ms, count)
        now = time.monotonic()
        if self.last_id != "0-0" and (
            self._read_since_trim >= self.TRIM_EVERY or now - self._trimmed_at > self.TRIM_AFTER_S
        ):
            await self.redis.xtrim(self.outbox, minid=self.last_id, approximate=False)
            self._read_since_trim, self._trimmed_at = 0, now
        messages = self._unpack(await xread(self.redis, **args))
        self._read_since_trim += len(messages)
        return messages


@dataclass
class _Outgoing:
    """Inbox entries waiting for the next round trip, and its outcome."""

    entries: list[tuple[str, bytes]]
    done: asyncio.Future[None]


_pending_writes: set[asyncio.Task[None]] = set()  # strong references to running writes


def _retrieve(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()
