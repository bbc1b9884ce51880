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

:func:`serve` runs an aiohttp application behind it until SIGTERM or SIGINT, then
shuts it down as ``web.run_app`` would (the app's shutdown hooks close WebSockets).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from .limits import Counts

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ConnectionGuard:
    """Per-address connection counts and the request deadline of one gateway."""

    def __init__(self, *, per_address: int | None, request_timeout: float) -> None:
        self.per_address = per_address  # None: not counted (behind a trusted proxy)
        self.request_timeout = request_timeout
        self.counts = Counts()
        self.dropped = 0  # connections refused for their address's count
        self.expired = 0  # connections closed for a request not sent in time
        self._timers: dict[Any, asyncio.TimerHandle] = {}

    def protocol(self, make: Callable[[], Any]) -> Callable[[], Any]:
        """aiohttp's protocol factory, each connection watched."""
        return lambda: _Watched(self, make())

    def opened(self, proto: Any, transport: asyncio.BaseTransport) -> str | None:
        """A connection opened: counted against its address (None: dropped, over it)."""
        self.arm(proto)
        if self.per_address is None:
            return ""
        peer = transport.get_extra_info("peername")
        key = str(peer[0]) if isinstance(peer, tuple) else str(peer)
        self.counts.add(key)
        if self.counts.get(key) > self.per_address:
            self.dropped += 1
            transport.abort()  # type: ignore[attr-defined]
        return key

    def closed(self, proto: Any, key: str | None) -> None:
        self.disarm(proto)
        if key:
            self.counts.remove(key)

    def arm(self, proto: Any) -> None:
        """From now, ``proto``'s connection has ``request_timeout`` to bring a request."""
        self.disarm(proto)
        loop = asyncio.get_running_loop()
        self._timers[proto] = loop.call_later(self.request_timeout, self._expire, proto)

    def disarm(self, proto: Any) -> None:
        timer = self._timers.pop(proto, None)
        if timer is not None:
            timer.cancel()

    def _expire(self, proto: Any) -> None:
        self._timers.pop(proto, None)
        transport = getattr(proto, "transport", None)
        if transport is not None and not transport.is_closing():
            self.expired += 1
            transport.abort()

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """A whole request reached its handler: no deadline while it is handled (a
        WebSocket is handled until it closes); the next request's starts after."""
        proto = request.protocol
        self.disarm(proto)
        try:
            return await handler(request)
        finally:
            transport = request.transport
            if transport is not None and not transport.is_closing():
                self.arm(proto)


class _Watched(asyncio.Protocol):
    """aiohttp's protocol for one connection, told to the guard when it opens and
    closes (aiohttp's own has slots: it is wrapped, not patched)."""

    def __init__(self, guard: ConnectionGuard, inner: Any) -> None:
        self.guard, self.inner = guard, inner
        self.key: str | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.inner.connection_made(transport)
        self.key = self.guard.opened(self.inner, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.closed(self.inner, self.key)
        self.inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()  # type: ignore[no-any-return]

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
) -> None:
    """Serve ``app`` behind ``guard`` until SIGTERM or SIGINT, then shut it down (its
    shutdown hooks first: the gateway closes every WebSocket with 1001)."""

    async def main() -> None:
        runner = web.AppRunner(app, shutdown_timeout=shutdown_timeout)
        await runner.setup()
        assert runner.server is not None
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            guard.protocol(runner.server), host, port, reuse_address=True
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

    asyncio.run(main())
