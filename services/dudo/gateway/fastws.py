"""The WebSocket layer of ``/ws``: picows, a WebSocket written in Cython, under the
same client protocol as aiohttp's.

Why: with aiohttp every frame a client sent went through a Python parser and woke
the connection's handler task; here picows parses frames in C and hands each one to
:meth:`FastSocket.on_ws_frame` in the same turn of the event loop, and an ``act`` is
written to its inbox there and then (docs/benchmarks.md, "The WebSocket layer").
aiohttp keeps everything else: HTTP, and a WebSocket that asks for permessage-deflate
when the gateway compresses (``--ws-compress``), which picows does not speak.

One port serves both: :mod:`dudo.gateway.guard` reads the head of each new TCP
connection and hands a plain WebSocket upgrade of ``/ws`` to :func:`protocol`, every
other request to aiohttp. What the gateway does with a connection is the same on
both layers (:mod:`dudo.gateway.intake`, :mod:`dudo.gateway.sockets`); what differs
is kept here: the frames come in by callback, and the close handshake is ours to run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import structlog
from picows import WSCloseCode, WSFrame, WSListener, WSMsgType, WSTransport, WSUpgradeRequest
from picows.picows import WSProtocol  # built as picows.ws_create_server builds it

from .. import wire

if TYPE_CHECKING:
    from .clients import Connection
    from .intake import Intake

MAX_MESSAGE = 64 * 1024  # bytes of one client message, its fragments together (as aiohttp's)
READ_BUFFER = 4096  # picows's first read buffer per connection (it grows when a frame needs)
PING_IDLE_S = 20.0  # a silent client is pinged after this long, and dropped if no pong
HANDSHAKE_S = 5.0  # the upgrade's head is already here when picows gets the connection
log = structlog.get_logger("dudo.gateway")
_LOGGER = logging.getLogger("picows.dudo")
_LOGGER.setLevel(logging.WARNING)  # picows logs every accepted connection at INFO


def wants_websocket(head: bytes, *, compress: bool) -> bool:
    """Is this request head (up to its blank line) a WebSocket upgrade of ``/ws``
    that picows serves? Not when the gateway compresses and the client offers
    permessage-deflate: aiohttp negotiates that."""
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or parts[0] != b"GET" or parts[1].split(b"?", 1)[0] != b"/ws":
        return False
    upgrade = False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"upgrade" and value.strip().lower() == b"websocket":
            upgrade = True
        elif name == b"sec-websocket-extensions" and compress and b"permessage-deflate" in value:
            return False
    return upgrade


def protocol(listener: Callable[[WSUpgradeRequest], WSListener]) -> asyncio.BufferedProtocol:
    """picows's protocol for one connection whose head says it is ours; ``listener``
    makes the object its frames go to (:class:`FastSocket` for the gateway)."""
    proto: asyncio.BufferedProtocol = WSProtocol(
        None,  # host and port: a client's
        None,  # path: a client's
        False,  # the server side
        listener,
        _LOGGER,
        True,  # a failing callback drops its connection
        HANDSHAKE_S,
        True,  # ping a silent client (aiohttp's heartbeat did)
        PING_IDLE_S,
        PING_IDLE_S / 2,
        1,  # WSAutoPingStrategy.PING_WHEN_IDLE
        True,  # answer pings
        MAX_MESSAGE,
        None,  # no extra response headers
        READ_BUFFER,
    )
    return proto


class FastSocket(WSListener):  # type: ignore[misc]
    """One client's WebSocket on picows, as :class:`~dudo.gateway.clients.Connection`
    sees it (``closed``, :meth:`close`; never compressed, so the connection writes its
    frames to the socket itself), and the frames it sends, handed on whole."""

    def __init__(self, gateway: Intake, request: WSUpgradeRequest) -> None:
        self.gateway = gateway
        self.request = request
        self.transport: WSTransport | None = None
        self.conn: Connection | None = None
        self.closed = False  # our close frame went out, or the connection is gone
        self._parts: list[bytes] = []  # a fragmented message so far
        self._parts_size = 0
        self._text = False  # what the fragmented message is

    # -- what Connection calls ---------------------------------------------------------

    async def close(self, *, code: int, message: bytes = b"") -> None:
        """Send a close frame (once) and wait until the client answered it and the
        connection is gone (the caller bounds the wait)."""
        t = self.transport
        if t is None:
            return
        if not self.closed:
            self.closed = True
            t.send_close(WSCloseCode(code), message)  # (picows's enum takes our 4000s too)
        await t.wait_disconnected()

    # -- picows's callbacks ----------------------------------------------------------

    def on_ws_connected(self, transport: WSTransport) -> None:
        self.transport = transport
        raw = transport.underlying_transport
        peer = raw.get_extra_info("peername")
        remote = str(peer[0]) if isinstance(peer, tuple) else ""
        address = self.gateway._address_of(self.request.headers, remote)
        path = self.request.path.decode("latin-1")
        token = parse_qs(urlsplit(path).query).get("token", [""])[0]
        self.conn = self.gateway._opened(self, raw, address, direct=True, token=token or None)

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        kind = frame.msg_type
        if kind is WSMsgType.TEXT or kind is WSMsgType.BINARY:
            if frame.fin and not self._parts:  # the usual case: one frame, one message
                self._deliver(frame.get_payload_as_bytes(), kind is WSMsgType.TEXT)
                return
            if self._parts:  # a new message before the last one ended
                self._fail(transport, WSCloseCode.PROTOCOL_ERROR, "a fragmented message broke off")
                return
            self._text = kind is WSMsgType.TEXT
            self._gather(transport, frame)
        elif kind is WSMsgType.CONTINUATION:
            if not self._parts:
                self._fail(transport, WSCloseCode.PROTOCOL_ERROR, "a continuation of nothing")
                return
            self._gather(transport, frame)
        elif kind is WSMsgType.CLOSE:
            if not self.closed:  # the client's: answered with its code, then we hang up
                self.closed = True
                code = frame.get_close_code()
                transport.send_close(code if int(code) >= 1000 else WSCloseCode.OK)
            transport.disconnect()
        # PING is answered by picows; a PONG needs nothing

    def on_ws_disconnected(self, transport: WSTransport) -> None:
        self.closed = True
        conn, self.conn = self.conn, None
        if conn is not None:
            self.gateway._gone(conn)

    # -- inside ----------------------------------------------------------------------

    def _gather(self, transport: WSTransport, frame: WSFrame) -> None:
        self._parts_size += frame.payload_size
        if self._parts_size > MAX_MESSAGE:
            self._fail(transport, WSCloseCode.MESSAGE_TOO_BIG, "message too big")
            return
        self._parts.append(frame.get_payload_as_bytes())
        if frame.fin:
            data = b"".join(self._parts)
            self._parts, self._parts_size = [], 0
            self._deliver(data, self._text)

    def _deliver(self, data: bytes, text: bool) -> None:
        conn = self.conn
        if conn is None or self.closed:
            return
        try:
            self.gateway._feed(conn, data, text=text)
        except Exception:  # our bug: said, and the client answered, not dropped by picows
            log.exception("client_frame_failed", conn=conn.id)
            self.gateway._error(conn, None, wire.INTERNAL, "the gateway failed; try again")

    def _fail(self, transport: WSTransport, code: WSCloseCode, reason: str) -> None:
        self._parts, self._parts_size = [], 0
        if not self.closed:
            self.closed = True
            with contextlib.suppress(Exception):
                transport.send_close(code, reason.encode())
        transport.disconnect()

