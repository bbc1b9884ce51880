"""What a client address may hold open, and how long it may take to send a request.

aiohttp has no deadline for receiving a request: a client that sends its headers a
byte at a time holds a connection for the whole keep-alive time (75 s), and 1,100
such connections from one address made most real requests time out. So the gateway
serves through this guard, at the TCP level, below HTTP and WebSocket alike:

- an address may hold ``http_conns_per_address`` connections at once (every TCP
  connection counts; over it, the new one is dropped at once): behind a proxy of
  yours (``--trust-proxy``) the proxy is every client's address, and the proxy caps;
- a connection has ``request_timeout`` seconds to get a whole request to its handler,
  from when it opens and again after each answer (a keep-alive connection idle that
  long is closed as well); a WebSocket, once its handler runs, is the WebSocket's
  own business (its hello timeout, its heartbeat).

It is also the front door of the port: a connection's first request head is read
here (under that deadline) and routed, a plain WebSocket upgrade of ``/ws`` to
picows (:mod:`dudo.gateway.fastws`), anything else to aiohttp.

:func:`serve` runs an aiohttp application behind it until SIGTERM or SIGINT, then
shuts it down as ``web.run_app`` would (the app's shutdown hooks close WebSockets).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiohttp import web

from .limits import Counts

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


Upgrade = Callable[[bytes], "asyncio.BufferedProtocol | None"]
MAX_HEAD = 16 * 1024  # bytes of a request's head read before it is routed (aiohttp's limit)


class ConnectionGuard:
    """Per-address connection counts and the request deadline of one gateway."""

    def __init__(self, *, per_address: int | None, request_timeout: float) -> None:
        self.per_address = per_address  # None: not counted (behind a trusted proxy)
        self.request_timeout = request_timeout
        self.counts = Counts()
        self.dropped = 0  # connections refused for their address's count
        self.expired = 0  # connections closed for a request not sent in time
        self._timers: dict[Any, asyncio.TimerHandle] = {}

    def protocol(
        self, make: Callable[[], Any], upgrade: Upgrade | None = None
    ) -> Callable[[], Any]:
        """aiohttp's protocol factory, each connection watched; with ``upgrade``, a
        connection whose first request it takes (it returns a protocol for that
        request's head) leaves aiohttp for that protocol (:mod:`dudo.gateway.fastws`)."""
        return lambda: _Front(self, make, upgrade)

    def opened(self, transport: asyncio.BaseTransport) -> str | None:
        """A connection opened: counted against its address (None: dropped, over it)."""
        self.arm(transport)
        if self.per_address is None:
            return ""
        peer = transport.get_extra_info("peername")
        key = str(peer[0]) if isinstance(peer, tuple) else str(peer)
        self.counts.add(key)
        if self.counts.get(key) > self.per_address:
            self.dropped += 1
            transport.abort()  # type: ignore[attr-defined]
        return key

    def closed(self, transport: asyncio.BaseTransport, key: str | None) -> None:
        self.disarm(transport)
        if key:
            self.counts.remove(key)

    def arm(self, transport: asyncio.BaseTransport) -> None:
        """From now, the connection has ``request_timeout`` to bring a request."""
        self.disarm(transport)
        loop = asyncio.get_running_loop()
        self._timers[transport] = loop.call_later(self.request_timeout, self._expire, transport)

    def disarm(self, transport: asyncio.BaseTransport | None) -> None:
        timer = self._timers.pop(transport, None)
        if timer is not None:
            timer.cancel()

    def _expire(self, transport: Any) -> None:
        self._timers.pop(transport, None)
        if not transport.is_closing():
            self.expired += 1
            transport.abort()

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """A whole request reached its handler: no deadline while it is handled (a
        WebSocket is handled until it closes); the next request's starts after."""
        self.disarm(request.transport)
        try:
            return await handler(request)
        finally:
            transport = request.transport
            if transport is not None and not transport.is_closing():
                self.arm(transport)


class _Front(asyncio.Protocol):
    """One connection, told to the guard when it opens and closes, and routed by its
    first request's head: to aiohttp's protocol (wrapped, not patched: it has slots),
    or, for a request ``upgrade`` takes, to the protocol it returns."""

    def __init__(self, guard: ConnectionGuard, make: Callable[[], Any], upgrade: Upgrade | None):
        self.guard, self.make, self.upgrade = guard, make, upgrade
        self.inner: Any = None  # aiohttp's protocol, once the connection is routed to it
        self.transport: Any = None
        self.head = b""  # the first request's head so far, while it is not routed
        self.key: str | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        if self.upgrade is None:
            self._to_http(b"")
        self.key = self.guard.opened(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.closed(self.transport, self.key)
        if self.inner is not None:
            self.inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.data_received(data)
            return
        head = self.head + data
        if not head.startswith(b"GET /ws"[: len(head)]):  # not ours: HTTP at once
            self._to_http(head)
            return
        end = head.find(b"\r\n\r\n")
        if end < 0:
            if len(head) > MAX_HEAD:
                self._to_http(head)  # aiohttp answers a head too long
            else:
                self.head = head
            return
        assert self.upgrade is not None
        routed = self.upgrade(head[:end])
        if routed is None:
            self._to_http(head)
        else:
            self._to_upgrade(routed, head)

    def eof_received(self) -> bool | None:
        if self.inner is None:
            return None  # nothing asked: close
        return self.inner.eof_received()  # type: ignore[no-any-return]

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def _to_http(self, head: bytes) -> None:
        self.head = b""
        self.inner = self.make()
        self.inner.connection_made(self.transport)
        if head:
            self.inner.data_received(head)

    def _to_upgrade(self, proto: asyncio.BufferedProtocol, head: bytes) -> None:
        """Hand the connection, and what it sent so far, to ``proto``: from now the
        transport reads into ``proto``'s buffer (through :class:`_Upgraded`, which
        still tells the guard when it closes). The request came whole: no deadline."""
        self.head = b""
        self.guard.disarm(self.transport)
        self.transport.set_protocol(_Upgraded(self.guard, proto, self.transport, self.key))
        proto.connection_made(self.transport)
        view = memoryview(head)
        while view:
            buffer = proto.get_buffer(len(view))
            n = min(len(buffer), len(view))
            buffer[:n] = view[:n]
            proto.buffer_updated(n)
            view = view[n:]


class _Upgraded(asyncio.BufferedProtocol):
    """A connection handed to another protocol, still counted by the guard."""

    def __init__(
        self,
        guard: ConnectionGuard,
        inner: asyncio.BufferedProtocol,
        transport: Any,
        key: str | None,
    ) -> None:
        self.guard, self.inner, self.transport, self.key = guard, inner, transport, key
        self.get_buffer = inner.get_buffer  # type: ignore[method-assign]
        self.buffer_updated = inner.buffer_updated  # type: ignore[method-assign]

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.closed(self.transport, self.key)
        self.inner.connection_lost(exc)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


def serve(
    app: web.Application,
    guard: ConnectionGuard,
    *,
    host: str,
    port: int,
    shutdown_timeout: float = 5.0,
    ready: Callable[[], None] | None = None,
    upgrade: Upgrade | None = None,
    event_loop: str = "asyncio",
) -> None:
    """Serve ``app`` behind ``guard`` until SIGTERM or SIGINT, then shut it down (its
    shutdown hooks first: the gateway closes every WebSocket with 1001). ``upgrade``:
    see :meth:`ConnectionGuard.protocol`; ``event_loop``: ``asyncio`` or ``uvloop``."""

    async def main() -> None:
        runner = web.AppRunner(app, shutdown_timeout=shutdown_timeout)
        await runner.setup()
        assert runner.server is not None
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            guard.protocol(runner.server, upgrade), host, port, reuse_address=True
        )
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        if ready is not None:
            ready()
        try:
            await stop.wait()
        finally:
            server.close()
            await runner.cleanup()

    if event_loop == "uvloop":
        try:
            import uvloop
        except ImportError:  # no wheel for this platform (Windows): said, not hidden
            structlog.get_logger("dudo.gateway").warning(
                "uvloop_missing", using="asyncio", fix="pip install uvloop, or --event-loop asyncio"
            )
        else:
            uvloop.run(main())
            return
    asyncio.run(main())
