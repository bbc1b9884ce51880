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

import time
from typing import Any

from . import keys, wire
from .connection import Client


class _LinkBase:
    def __init__(self, client: Any, gateway_id: str, partitions: int) -> None:
        if not keys.ID_PATTERN.fullmatch(gateway_id):
            raise ValueError(f"gateway id {gateway_id!r} must match {keys.ID_PATTERN.pattern}")
        self.redis = client
        self.id = gateway_id
        self.partitions = partitions
        self.outbox = keys.outbox(gateway_id)
        self.last_id = "0-0"
        self.bytes_read = 0  # outbox payload bytes received, for benchmarks

    def message(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A message from this gateway (``gateway`` filled in)."""
        return wire.message(kind, gateway=self.id, **fields)

    def inbox_of(self, table_id: str) -> str:
        return keys.inbox(keys.partition_of(table_id, self.partitions))

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

    @staticmethod
    def _open_tables(replies: list[Any]) -> dict[str, dict[str, Any]]:
        tables: dict[str, dict[str, Any]] = {}
        for raw in replies:
            for table, blob in (raw or {}).items():
                tid = table.decode() if isinstance(table, bytes) else table
                tables[tid] = wire.unpack(blob)
        return tables


class GatewayLink(_LinkBase):
    redis: Client

    def register(self) -> None:
        """Announce (or refresh) this gateway; call at least every few seconds."""
        self.redis.zadd(keys.GATEWAYS, {self.id: self._now_ms()})

    def deregister(self) -> None:
        self.redis.zrem(keys.GATEWAYS, self.id)

    def open_tables(self) -> dict[str, dict[str, Any]]:
        """The lobby: every open table's summary, from every partition's lobby hash."""
        pipe = self.redis.pipeline(transaction=False)
        for key in keys.lobbies(self.partitions):
            pipe.hgetall(key)
        return self._open_tables(pipe.execute())

    def send(self, *messages: dict[str, Any]) -> list[str]:
        """Write messages to their tables' inboxes (pipelined); returns the entry ids."""
        pipe = self.redis.pipeline(transaction=False)
        for msg in messages:
            pipe.xadd(self.inbox_of(msg["table"]), {wire.ENTRY_FIELD: wire.encode(msg)})
        return [i.decode() if isinstance(i, bytes) else i for i in pipe.execute()]

    def send_raw(self, table_id: str, payload: bytes) -> str:
        """Write bytes as they are (for tests of what workers do with garbage)."""
        entry = self.redis.xadd(self.inbox_of(table_id), {wire.ENTRY_FIELD: payload})
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
        return self._unpack(self.redis.xread(**args))


class AsyncGatewayLink(_LinkBase):
    """The same, for a ``redis.asyncio`` client."""

    async def register(self) -> None:
        await self.redis.zadd(keys.GATEWAYS, {self.id: self._now_ms()})

    async def deregister(self) -> None:
        await self.redis.zrem(keys.GATEWAYS, self.id)

    async def open_tables(self) -> dict[str, dict[str, Any]]:
        """The lobby: every open table's summary, from every partition's lobby hash."""
        pipe = self.redis.pipeline(transaction=False)
        for key in keys.lobbies(self.partitions):
            pipe.hgetall(key)
        return self._open_tables(await pipe.execute())

    async def send(self, *messages: dict[str, Any]) -> None:
        pipe = self.redis.pipeline(transaction=False)
        for msg in messages:
            pipe.xadd(self.inbox_of(msg["table"]), {wire.ENTRY_FIELD: wire.encode(msg)})
        await pipe.execute()

    async def read(self, block_ms: int | None = 100, count: int = 100) -> list[dict[str, Any]]:
        args = self._read_args(block_ms, count)
        if self.last_id != "0-0":
            await self.redis.xtrim(self.outbox, minid=self.last_id, approximate=False)
        return self._unpack(await self.redis.xread(**args))
