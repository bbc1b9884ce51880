"""A gateway process's life on the streams, whatever its clients speak (web, chat).

Every gateway of ours does the same things on the Redis side, and they are
here once: wait for Redis at the start, check the partition count the workers
stored, write to inboxes through a :class:`~dudo.link.AsyncGatewayLink` that
signs its entries (with the key of its own Redis user, or the deployment's
once an app was admitted: :mod:`dudo.wire.signing`), register with a heartbeat,
count the live workers (for readiness), and read its own outbox forever,
surviving outages with backoff, handing each message to the gateway.

A gateway holds one (``self.streams``), as the bot service holds its
:class:`~dudo.link.GatewayLink`: it gives it its ``settings`` (with ``redis_url``,
``gateway_id``, ``partitions``, ``director_partitions``, ``heartbeat`` and ``frames``),
its ``log`` and what to do with what comes (:class:`OutboxHandlers`), and uses its
``link`` to write. The streams call the gateway only through those handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..infra import (
    REDIS_DOWN,
    Backoff,
    ConfigMismatch,
    connect,
    connect_async,
    ensure_partitions,
    fast,
    quiet_collector,
    settle_heap,
)
from ..wire import key_of_url, keys, signing
from .link import AsyncGatewayLink

WORKER_SILENCE_MS = 3000  # a worker whose heartbeat is older does not count as live
READER_STALE_S = 5.0  # an outbox reader silent for longer is not reading (readiness)
READ_DEADLINE_S = 15.0  # an outbox read (a 1 s block) not back by then is abandoned


async def _nothing() -> None:
    return None


@dataclass(frozen=True)
class OutboxHandlers:
    """What a gateway does with what the streams bring: each message of its outbox;
    after each batch of them (a gateway that remembers how far it read stores it then);
    at each heartbeat (a gateway that takes settings from Redis reads them then)."""

    dispatch: Callable[[dict[str, Any]], Awaitable[None]]
    after_read: Callable[[], Awaitable[None]] = _nothing
    on_heartbeat: Callable[[], Awaitable[None]] = _nothing


class StreamSide:
    """The Redis side of a gateway: links, signing, heartbeat, the outbox reader."""

    def __init__(
        self, settings: Any, log: Any, handlers: OutboxHandlers, redis_client: Any = None
    ) -> None:
        self.settings, self.log, self.handlers = settings, log, handlers
        self.redis = redis_client
        self.link: AsyncGatewayLink | None = None  # writes to inboxes
        self.reader: AsyncGatewayLink | None = None  # reads this gateway's outbox
        self.reader_redis: Any = None
        self.tasks: list[asyncio.Task[None]] = []  # the outbox reader first
        self.ready = False
        # The workers store the partition count; a gateway under its own Redis user
        # may only read it. Until it has seen the stored count (a gateway started
        # before any worker), it checks again at every heartbeat; a count that differs
        # from its own makes it not ready (it would send moves to the wrong inboxes).
        self.config_seen = False
        self.own_key = False  # signs with a key of its own (its Redis user's), not ours
        self.config_error: str | None = None
        self.reader_ok_at = 0.0  # when the outbox reader last read (or waited) successfully
        self.live_workers = 0

    async def open(self, read_from: str | None = None) -> None:
        """Connect (waiting for Redis), make the links, register, and start the outbox
        reader and the heartbeat. ``read_from``: the outbox entry id to read after
        (None: where the outbox is now; anything older was for a previous life)."""
        backoff, waited = Backoff(cap=5.0), False
        while True:  # a gateway started while Redis is down waits for it
            try:
                self.config_seen = await asyncio.to_thread(self._check_config)
                break
            except REDIS_DOWN as exc:
                if not waited:
                    self.log.warning("waiting_for_redis", error=str(exc))
                    waited = True
                await asyncio.sleep(backoff.next())
        s = self.settings
        if self.redis is None:
            self.redis = connect_async(s.redis_url)
        # The outbox reader blocks on XREAD: it gets a connection of its own.
        self.reader_redis = connect_async(s.redis_url, max_connections=2)
        self.link = AsyncGatewayLink(
            self.redis,
            s.gateway_id,
            s.partitions,
            s.director_partitions,
            # Under a Redis user of its own it signs every entry (dudo.wire.signing).
            signer=key_of_url(s.redis_url, keys.USER_PREFIX),
        )
        self.own_key = self.link.signer is not None
        self.link.confined = self.own_key  # a gateway user: it registers by its presence
        await self._refresh_signer()
        self.link.views = "frames" if s.frames else None
        self.reader = AsyncGatewayLink(self.reader_redis, s.gateway_id, s.partitions)
        if read_from is None and await self.redis.exists(self.link.outbox):
            info = await self.redis.xinfo_stream(self.link.outbox)
            last = info.get("last-generated-id") or info.get(b"last-generated-id")
            read_from = last.decode() if isinstance(last, bytes) else last
        if read_from is not None:
            self.reader.last_id = read_from
        await self.link.register()
        self.live_workers = await self._count_workers()
        quiet_collector()
        self.tasks += [
            asyncio.create_task(self._read_outbox()),
            asyncio.create_task(self._heartbeat()),
        ]

    def _check_config(self) -> bool:
        """Compare our partition count with the stored one (ConfigMismatch if they
        differ); False if none is stored yet."""
        sync = connect(self.settings.redis_url)
        try:
            return ensure_partitions(sync, self.settings.partitions, set_up=False) is not None
        finally:
            sync.close()

    async def _count_workers(self) -> int:
        now = time.time() * 1000
        return int(await self.redis.zcount(keys.WORKERS, now - WORKER_SILENCE_MS, "+inf"))

    async def _refresh_signer(self) -> None:
        """A gateway without a Redis user of its own runs as the deployment's: it signs
        with the deployment's key once there is one (an app was admitted, entries are
        checked from then on), or not at all before."""
        if self.own_key or self.link is None:
            return
        found = await self.redis.hget(keys.GATEWAY_KEYS, signing.INTERNAL)
        self.link.signer = signing.key_from_hex(found)

    async def _heartbeat(self) -> None:
        """Register every few seconds, and count the live workers (for readiness)."""
        assert self.link is not None
        while True:
            await asyncio.sleep(self.settings.heartbeat)
            settle_heap()
            try:
                await self._refresh_signer()
            except Exception as exc:
                self.log.warning("signer_refresh_failed", error=str(exc))
            try:
                if not self.config_seen:
                    self.config_seen = await asyncio.to_thread(self._check_config)
            except ConfigMismatch as exc:
                if self.config_error is None:
                    self.log.error("config_mismatch", error=str(exc))
                self.config_error = str(exc)
            except Exception as exc:
                self.log.warning("config_check_failed", error=str(exc))
            try:
                await self.link.register()
                self.live_workers = await self._count_workers()
                await self.handlers.on_heartbeat()
            except Exception as exc:
                self.log.warning("heartbeat_failed", error=str(exc))

    async def _read_outbox(self) -> None:
        """Read this gateway's outbox for ever; an outage is waited out with backoff."""
        assert self.reader is not None
        backoff = Backoff()
        down_since: float | None = None
        while True:
            try:
                # A read that never returns (a call stuck on a connection Redis dropped
                # mid-outage) must not stall the reader for good: abandoned, tried again.
                messages = await asyncio.wait_for(
                    self.reader.read(block_ms=1000, count=200), READ_DEADLINE_S
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if down_since is None:
                    down_since = time.monotonic()
                    self.log.warning("outbox_read_failed", error=str(exc))
                await asyncio.sleep(backoff.next())
                continue
            self.reader_ok_at = time.monotonic()
            if down_since is not None:
                self.log.info(
                    "outbox_read_recovered", down_s=round(self.reader_ok_at - down_since, 3)
                )
                down_since = None
                backoff.reset()
            for msg in messages:
                try:
                    await self.handlers.dispatch(msg)
                except Exception:
                    self.log.exception("dispatch_failed", type=msg.get("type"))
            if messages:
                try:
                    await self.handlers.after_read()
                except Exception as exc:
                    self.log.warning("after_read_failed", error=str(exc))

    def status(self) -> dict[str, Any]:
        """What readiness needs from the Redis side: is the outbox reader reading, how
        many workers are live, and a configuration error if there is one."""
        reader_alive = (
            bool(self.tasks)
            and not self.tasks[0].done()
            and time.monotonic() - self.reader_ok_at < READER_STALE_S
        )
        ready = self.ready and reader_alive and self.live_workers > 0 and not self.config_error
        status: dict[str, Any] = {
            "ready": ready,
            "reader": reader_alive,
            "workers": self.live_workers,
        }
        if self.config_error:
            status["config"] = self.config_error
        return status

    async def close(self) -> None:
        """Stop the background tasks and close Redis, without waiting on a server reply:
        a cancelled blocking XREAD waits for its answer (redis-py keeps the connection
        in step), and a server that never sends it must not hold the shutdown. Closing
        the connections ends such a read."""
        for task in self.tasks:
            task.cancel()
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=1.0)
        for client in (self.redis, self.reader_redis):
            if client is not None:
                lean = fast(client)  # the hot path's own connection, if it made one
                if lean is not None:
                    lean.close()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.aclose(), 2.0)
