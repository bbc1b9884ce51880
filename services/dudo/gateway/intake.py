"""A client's WebSocket from open to close, on either layer, and its messages in.

A mixin of :class:`~dudo.gateway.app.Gateway` (under :class:`~dudo.gateway.sockets.
Sockets`, the client protocol). A connection opens on aiohttp (:meth:`Intake.websocket`)
or on picows (:class:`~dudo.gateway.fastws.FastSocket`); either way it is counted,
given a writer and a hello deadline (:meth:`Intake._opened`), its messages are
checked and decoded (:meth:`Intake._take`), an ``act`` is written at once and the
rest handled in the order sent, and at its close everything it held is forgotten
(:meth:`Intake._closed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from typing import TYPE_CHECKING, Any

import msgpack
import msgspec
from aiohttp import WSMsgType, web

from .. import wire
from ..infra import REDIS_DOWN
from ..wire import MAX_CLIENT_BYTES, fast_client, validate_client
from .clients import CLOSE_NO_HELLO, CLOSE_TOO_MANY, Connection
from .state import GatewayState

_json_decode = msgspec.json.Decoder().decode  # C, UTF-8; several times json.loads' speed
CLOSE_TIMEOUT = 2.0  # seconds to wait for a client's reply to our close frame
READ_SIZE = 16384  # bytes a WebSocket's socket is read at a time (client messages: <= 4 KiB)


def small_reads(transport: Any) -> None:
    """Read this socket ``READ_SIZE`` bytes at a time instead of asyncio's 256 KiB.

    asyncio's selector transport allocates a new bytes object of its ``max_size``
    for every read, and at 256 KiB that is past the allocator's mmap threshold: a
    system call or two for every frame a client sends: a relay costs almost twice
    the CPU it does with 8 KiB reads
    (docs/benchmarks.md, "Measurements behind the code"). Other event loops
    (uvloop) have no such attribute and are left alone."""
    if transport is not None and isinstance(getattr(transport, "max_size", None), int):
        transport.max_size = READ_SIZE


class Intake(GatewayState):
    """Connections opened and closed, and their messages taken in."""

    async def websocket(self, request: web.Request) -> web.WebSocketResponse:
        """``/ws`` on aiohttp: a client asking for compression from a gateway that
        compresses, or every client with ``--ws-layer aiohttp`` (the rest come
        through :mod:`dudo.gateway.fastws`)."""
        ws = web.WebSocketResponse(
            heartbeat=20,
            max_msg_size=64 * 1024,
            timeout=CLOSE_TIMEOUT,
            compress=self.settings.ws_compress,
        )
        await ws.prepare(request)
        address = self._address_of(request.headers, request.remote or "")
        conn = self._opened(ws, request.transport, address, direct=not ws.compress)
        token = request.query.get("token")
        try:
            if token:
                await self._receive(conn, _hello(token), text=True)
            async for frame in ws:
                if frame.type == WSMsgType.TEXT:
                    await self._receive(conn, frame.data.encode(), text=True)
                elif frame.type == WSMsgType.BINARY:
                    await self._receive(conn, frame.data, text=False)
        finally:
            await self._closed(conn)
        return ws

    # -- one connection's life, on either layer -----------------------------------------

    def _opened(
        self, ws: Any, transport: Any, address: str, *, direct: bool, token: str | None = None
    ) -> Connection:
        """A WebSocket is open: its connection, counted, with its writer and its hello
        deadline (``token``: the ``?token=`` of its URL, a hello said for it)."""
        conn = Connection(ws, self.settings, self.turn_writes)
        layer = "aiohttp" if isinstance(ws, web.WebSocketResponse) else "picows"
        self.metrics.opened.labels(layer).inc()
        conn.transport = transport
        small_reads(transport)
        conn.direct = direct  # no permessage-deflate negotiated: frames are ours to write
        conn.address = address
        conn.writer = asyncio.create_task(conn.write_loop())
        self.sockets.add(conn)
        self.by_address.add(conn.address)
        if self.by_address.get(conn.address) > self.settings.conns_per_address:
            conn.close_soon(CLOSE_TOO_MANY, "too many connections from your address")
        # A connection that neither says hello nor watches the lobby in time goes.
        conn.idle = asyncio.get_running_loop().call_later(
            self.settings.hello_timeout, self._hello_overdue, conn
        )
        if token:
            self._feed(conn, _hello(token), text=True)
        return conn

    async def _closed(self, conn: Connection) -> None:
        """The WebSocket is gone: forget everything the connection held."""
        if conn.idle is not None:
            conn.idle.cancel()
        await self._disconnect(conn)
        self.sockets.discard(conn)
        self.by_address.remove(conn.address)
        if conn.writer is not None:
            conn.writer.cancel()

    def _feed(self, conn: Connection, data: bytes, *, text: bool) -> None:
        """A message from a picows connection, in the turn its frame was read. An
        ``act`` goes to its inbox at once; a message that must wait for an answer (a
        hello, a lobby listing) is handled by a task, and the connection's next
        messages queue behind it, its socket not read meanwhile: a client's messages
        are handled in the order sent, as aiohttp's reading loop handles them."""
        if conn.backlog is not None:
            conn.backlog.append((data, text))
            return
        step = self._take(conn, data, text=text)
        if step is not None:
            conn.backlog = deque()
            with contextlib.suppress(Exception):
                conn.transport.pause_reading()
            conn.reader = asyncio.create_task(self._in_turn(conn, step))

    async def _in_turn(self, conn: Connection, step: tuple[str, dict[str, Any]]) -> None:
        """Handle ``step``, then what queued behind it, then read the socket again."""
        try:
            while True:
                await self._handle(conn, *step)
                following: tuple[str, dict[str, Any]] | None = None
                while following is None and conn.backlog:
                    data, text = conn.backlog.popleft()
                    following = self._take(conn, data, text=text)
                if following is None:
                    return
                step = following
        finally:
            conn.backlog = None
            with contextlib.suppress(Exception):
                conn.transport.resume_reading()

    def _gone(self, conn: Connection) -> None:
        """A picows connection closed: forgotten once the message being handled for
        it (if any) is done, as aiohttp's loop ends only after it."""

        async def forget() -> None:
            if conn.reader is not None and not conn.reader.done():
                with contextlib.suppress(BaseException):
                    await asyncio.shield(conn.reader)
            await self._closed(conn)

        task = asyncio.create_task(forget())
        self.closing_tasks.add(task)
        task.add_done_callback(self.closing_tasks.discard)

    def _hello_overdue(self, conn: Connection) -> None:
        if conn.grant is None and conn.hello is None and conn not in self.audience.lobby:
            conn.close_soon(CLOSE_NO_HELLO, "say hello (or watch the lobby) first")

    async def _receive(self, conn: Connection, data: bytes, *, text: bool) -> None:
        """A client's message, handled before the next is read (aiohttp's loop)."""
        step = self._take(conn, data, text=text)
        if step is not None:
            await self._handle(conn, *step)

    def _take(
        self, conn: Connection, data: bytes, *, text: bool
    ) -> tuple[str, dict[str, Any]] | None:
        """Check and decode a client's message, and do at once what needs no waiting
        (a refusal; an ``act``, the hot path); else the message, for :meth:`_handle`."""
        conn.binary = not text  # answers and pushes follow the kind of your last frame
        if not conn.allow():
            self._error(
                conn, _peek_id(data, text), wire.RATE_LIMITED, "too many messages; slow down",
                retry_ms=conn.retry_ms(),
            )  # fmt: skip
            return None
        if len(data) > MAX_CLIENT_BYTES:
            self._error(conn, None, wire.TOO_LARGE, f"at most {MAX_CLIENT_BYTES} bytes")
            return None
        try:
            if text:  # the usual case: decoded and checked at once (msgspec, in C)
                msg = fast_client.json(data)
            else:
                msg = validate_client(msgpack.unpackb(data, raw=False))
        except wire.WireError as exc:
            raw = _json_decode(data) if text else msgpack.unpackb(data, raw=False)
            client_id = raw.get("id") if isinstance(raw, dict) else None
            self._error(
                conn, client_id if isinstance(client_id, str) else None, exc.code, exc.message
            )
            return None
        except Exception:  # not JSON, or not msgpack
            self._error(conn, None, wire.BAD_MESSAGE, "not JSON (text) or msgpack (binary)")
            return None
        kind = msg["type"]
        self.metrics.received(kind)
        if kind == "act" and conn.grant is not None:
            try:
                self._act(conn, msg)  # nothing to wait for here
            except Exception:  # our bug: answer it, keep the connection
                self.log.exception("client_message_failed", type=kind)
                self._error(conn, msg.get("id"), wire.INTERNAL, "the gateway failed; try again")
            return None
        return kind, msg

    async def _handle(self, conn: Connection, kind: str, msg: dict[str, Any]) -> None:
        try:
            await self._handle_client(conn, kind, msg)
        except REDIS_DOWN:
            self._error(conn, msg.get("id"), wire.UNAVAILABLE, "the game service is unreachable")
        except Exception:  # our bug: answer it, keep the connection
            self.log.exception("client_message_failed", type=kind)
            self._error(conn, msg.get("id"), wire.INTERNAL, "the gateway failed; try again")

    if TYPE_CHECKING:  # the client protocol, in sockets.py
        async def _handle_client(
            self, conn: Connection, kind: str, msg: dict[str, Any]
        ) -> None: ...
        def _act(self, conn: Connection, msg: dict[str, Any]) -> None: ...
        async def _disconnect(self, conn: Connection) -> None: ...
        def _error(
            self, conn: Connection, message_id: str | None, code: str, text: str, **extra: Any
        ) -> None: ...


def _hello(token: str) -> bytes:
    """The hello a ``?token=`` in the WebSocket's URL says."""
    return json.dumps({"v": 1, "type": "hello", "token": token}).encode()


def _peek_id(data: bytes, text: bool) -> str | None:
    """The id of a message refused before it was read (rate limited), if it has one:
    a client waiting on that id learns why. Bounded: the message is not yet size-checked."""
    if len(data) > MAX_CLIENT_BYTES:
        return None
    try:
        raw = _json_decode(data) if text else msgpack.unpackb(data, raw=False)
    except Exception:
        return None
    found = raw.get("id") if isinstance(raw, dict) else None
    return found if isinstance(found, str) and len(found) <= 64 else None
