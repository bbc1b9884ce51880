"""The gateway's view of its clients: one WebSocket each, their limits, what they are sent.

Kept apart from the routes (:mod:`dudo.gateway.app`): a :class:`Connection` knows
its grant (the token it said hello with), its seat, its rate limit and whether it
speaks JSON or msgpack; :class:`TurnWrites` batches what each connection is sent in
one turn of the event loop into one write.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import secrets
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import msgpack
from aiohttp import WSMsgType
from prometheus_client import Counter, Gauge, Histogram

from .. import wire
from ..infra import Bucket, metrics_registry
from ..link import Grant
from ..wire import encode_json

if TYPE_CHECKING:
    from .settings import GatewaySettings

# WebSocket close codes of the gateway (4000-4999 are the application's own).
CLOSE_NO_HELLO = 4001  # neither hello nor watch_lobby in time
CLOSE_TOO_SLOW = 4002  # stopped reading: its send queue overflowed, or a send hung
CLOSE_TOO_MANY = 4003  # too many connections for this token or address
# Bytes waiting in a socket's buffer past which messages queue instead of being written.
WRITE_BUFFER_HIGH = 64 * 1024


class Metrics:
    def __init__(self) -> None:
        self.registry = metrics_registry()
        r = self.registry
        self.connections = Gauge(
            "dudo_gateway_connections", "open WebSockets", ["kind"], registry=r
        )
        self.opened = Counter(
            "dudo_gateway_websockets_opened_total",
            "WebSockets opened, by the layer that serves them (picows, or aiohttp)",
            ["layer"],
            registry=r,
        )
        self.messages = Counter(
            "dudo_gateway_messages_total", "client messages", ["direction", "type"], registry=r
        )
        self.errors = Counter(
            "dudo_gateway_errors_total", "errors sent to clients", ["code"], registry=r
        )
        self.latency = Histogram(
            "dudo_gateway_action_seconds",
            "from an action written to the inbox to the view that shows it",
            buckets=(0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
            registry=r,
        )
        self.batches = Counter(
            "dudo_gateway_outbox_entries_total", "outbox entries read", registry=r
        )
        # Messages waiting for slow clients (set to count the gateway's connections).
        self.send_queue = Gauge(
            "dudo_gateway_send_queue", "messages queued for clients not reading yet", registry=r
        )
        self._received: dict[str, Any] = {}

    def received(self, kind: str) -> None:
        """Count a client message of ``kind``: the labelled child is looked up once per
        kind (``labels()`` takes a lock and builds a key: on every message, it cost
        more than the count)."""
        child = self._received.get(kind)
        if child is None:
            child = self._received[kind] = self.messages.labels("in", kind)
        child.inc()


class TurnWrites:
    """The connections with frames batched this turn of the event loop: one callback
    at the end of the turn writes each connection's frames in one write (one
    system call for an ``ack`` and the view after it, instead of two)."""

    def __init__(self) -> None:
        self._waiting: list[Connection] = []

    def add(self, conn: Connection) -> None:
        if not self._waiting:
            asyncio.get_running_loop().call_soon(self.flush)
        self._waiting.append(conn)

    def flush(self) -> None:
        waiting, self._waiting = self._waiting, []
        for conn in waiting:
            try:
                conn.flush_batch()
            except (ConnectionError, RuntimeError):  # that peer is gone; the others are not
                continue


class Connection:
    """One WebSocket, and what it may do.

    Sending never waits for the client: :meth:`send` puts the message on this
    connection's own queue and a writer task (:meth:`write_loop`) drains it. A
    client that stops reading fills only its own queue; past ``send_queue``
    messages it is closed with :data:`CLOSE_TOO_SLOW` and nobody else waits
    (one non-reading spectator used to stall every table of its gateway).
    """

    def __init__(
        self, ws: Any, settings: GatewaySettings, writes: TurnWrites | None = None
    ) -> None:
        """``ws``: aiohttp's ``WebSocketResponse``, or a :class:`~dudo.gateway.fastws.
        FastSocket` (``closed``, ``close(code=, message=)``; with no compression the
        frames are written to ``transport`` here, on either layer)."""
        self.ws = ws
        self.id = secrets.token_hex(4)
        self.grant: Grant | None = None
        self.token: str | None = None  # as the client gave it: relayed to the worker to check
        self.seat: int | None = None
        # The table it plays or watches: the token's, or, for an entrant, where the
        # tournament seats its player now (None between tables).
        self.table: str | None = None
        self.hello: str | None = None  # the id of the join our hello is waiting for
        self.hello_id: str | None = None  # the client's id of its last hello (for `welcome`)
        self.lobby_held: list[dict[str, Any]] | None = None  # news waiting for the full list
        self.binary = False  # answer in msgpack once the client spoke msgpack
        self.bucket = Bucket(settings.rate_per_s, settings.burst)
        self.token_key: str | None = None  # the token it said hello with, for per-token caps
        self.last_costly = -1e9  # when it last asked for something expensive (resync, lobby)
        self.address = ""  # the client's address, for per-address limits
        self.transport: Any = None  # to drop a client that does not even take a close frame
        self.direct = False  # frames written to the transport ourselves (no compression)
        self.writer: asyncio.Task[None] | None = None  # write_loop's task
        self.idle: asyncio.TimerHandle | None = None  # the hello deadline
        # picows: the task handling a message that waits for an answer, and the
        # messages that came behind it (None: none is waiting)
        self.reader: asyncio.Task[None] | None = None
        self.backlog: deque[tuple[bytes, bool]] | None = None
        self._queue: deque[tuple[dict[str, Any] | None, bytes | None]] = deque()
        self._limit = settings.send_queue
        self._send_timeout = settings.send_timeout
        self._wakeup = asyncio.Event()
        self._writing = False  # a send is in progress
        self._write_started = 0.0  # since when (time.monotonic())
        self.closing: tuple[int, str] | None = None  # why we close it, once decided
        self._writes = writes if writes is not None else TurnWrites()
        self._batch: list[bytes] = []  # frames for the write at the end of this turn
        self._batch_bytes = 0

    def allow(self) -> bool:
        return self.bucket.allow()

    def resize_queue(self, limit: int) -> None:
        """A new bound for the send queue (messages already queued stay queued)."""
        self._limit = limit

    def retry_ms(self) -> int:
        """After a refusal by the rate limit: milliseconds until a message is allowed."""
        return max(1, math.ceil(self.bucket.wait() * 1000))

    def costly(self, every: float) -> bool:
        """May it ask for something expensive now (at most once per ``every`` seconds)?"""
        now = time.monotonic()
        if now - self.last_costly < every:
            return False
        self.last_costly = now
        return True

    def costly_retry_ms(self, every: float) -> int:
        """After :meth:`costly` said no: milliseconds until it says yes."""
        return max(1, math.ceil((self.last_costly + every - time.monotonic()) * 1000))

    def welcome(self, **fields: Any) -> None:
        """``welcome`` with these fields; the first after a hello quotes that hello's id.
        ``now``: this gateway's clock, from which a client counts the views' deadlines
        (a phone whose clock runs 12 s fast showed 3 s left of a 15 s turn)."""
        now = int(time.time() * 1000)
        self.send(wire.message("welcome", id=self.hello_id, now=now, **fields))
        self.hello_id = None

    @property
    def queued(self) -> int:
        return len(self._queue)

    def send(self, message: dict[str, Any] | None, text: bytes | None = None) -> None:
        """Send a message, or queue it; ``text`` is its JSON when the caller already has
        it (then ``message`` may be None for a connection that speaks JSON). Never waits.

        With nothing queued and room in the socket's buffer, the frame joins this
        turn's batch: every frame a connection gets in one turn of the event loop
        (an ``ack`` and the view after it, say) goes out in one write at its end,
        with no task switch per message. Otherwise it joins the queue that
        :meth:`write_loop` drains."""
        if self.closing is not None or self.ws.closed:
            return
        if not self._queue and not self._writing and self._has_room():
            frame = self._frame(message, text)
            if not self._batch:
                self._writes.add(self)
            self._batch.append(frame)
            self._batch_bytes += len(frame)
            return
        if len(self._queue) >= self._limit:
            self.close_soon(CLOSE_TOO_SLOW, "too slow: messages were not read in time")
            return
        self._queue.append((message, text))
        self._wakeup.set()

    def flush_batch(self) -> None:
        """Write this turn's frames in one go (called once per turn by :class:`TurnWrites`)."""
        batch = self._batch
        if not batch:
            return
        self._batch, self._batch_bytes = [], 0
        t = self.transport
        if self.closing is not None or self.ws.closed or t is None or t.is_closing():
            return  # never a data frame after a close frame
        t.write(batch[0] if len(batch) == 1 else b"".join(batch))

    def close_soon(self, code: int, reason: str) -> None:
        """Close with ``code`` as soon as the writer gets to it (queued messages dropped).

        If a send is stuck right now, a close frame could not get through either:
        the TCP connection is dropped at once."""
        if self.closing is None:
            self.closing = (code, reason)
            self._queue.clear()
            self._batch, self._batch_bytes = [], 0
            self._wakeup.set()
            if self._writing:
                self.abort()

    def abort(self) -> None:
        """Drop the TCP connection without a goodbye."""
        if self.transport is not None:
            with contextlib.suppress(Exception):
                self.transport.abort()

    def stuck(self, now: float) -> bool:
        """Has the message being sent now been going out for longer than allowed?"""
        return self._writing and now - self._write_started > self._send_timeout

    def drop_stuck(self) -> None:
        """Close it as too slow, at once (called by the gateway's watchdog for a
        connection whose send hung: its buffers are full, a close frame could not
        get through either)."""
        self.closing = (CLOSE_TOO_SLOW, "too slow: a message could not be sent")
        self.abort()

    def _writable(self) -> bool:
        """May a frame be written straight to the socket now? Not when aiohttp compresses
        (permessage-deflate keeps state per connection), nor when the client is
        behind (bytes waiting in the transport's buffer)."""
        t = self.transport
        return (
            self.direct
            and t is not None
            and not t.is_closing()
            and t.get_write_buffer_size() < WRITE_BUFFER_HIGH
        )

    def _has_room(self) -> bool:
        """:meth:`_writable`, counting the frames already batched for this turn."""
        t = self.transport
        return (
            self.direct
            and t is not None
            and not t.is_closing()
            and t.get_write_buffer_size() + self._batch_bytes < WRITE_BUFFER_HIGH
        )

    def _frame(self, message: dict[str, Any] | None, text: bytes | None) -> bytes:
        """One whole WebSocket frame, unmasked as a server's are (RFC 6455 §5.2). Whole
        frames only, so they never interleave with aiohttp's own (ping, close)."""
        if self.binary and message is not None:
            opcode, payload = 0x82, msgpack.packb(message, use_bin_type=True)
        else:
            opcode, payload = 0x81, text or encode_json(message)
        n = len(payload)
        if n < 126:
            header = bytes((opcode, n))
        elif n < 65536:
            header = bytes((opcode, 126)) + n.to_bytes(2, "big")
        else:
            header = bytes((opcode, 127)) + n.to_bytes(8, "big")
        return header + payload

    def _write_now(self, message: dict[str, Any] | None, text: bytes | None) -> None:
        self.flush_batch()  # what was batched goes first
        self.transport.write(self._frame(message, text))

    async def write_loop(self) -> None:
        """Drain the queue into the socket, one message at a time, until closed.

        A send that waits (the client's buffers are full) is watched from outside
        (:meth:`stuck`), not with a timer per message: a timer per message cost
        more than the send itself."""
        while not self.ws.closed:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self._queue and self.closing is None:
                message, text = self._queue.popleft()
                self._writing = True
                self._write_started = time.monotonic()
                try:
                    if self.direct:
                        while not self._writable():  # the client is behind: let it read
                            if self.transport is None or self.transport.is_closing():
                                return
                            await asyncio.sleep(0.005)
                        self._write_now(message, text)
                    elif self.binary and message is not None:
                        await self.ws.send_bytes(msgpack.packb(message, use_bin_type=True))
                    else:
                        await self.ws.send_frame(text or encode_json(message), WSMsgType.TEXT)
                except (ConnectionError, RuntimeError):
                    return  # the peer went away (or was dropped); the reader side cleans up
                finally:
                    self._writing = False
            if self.closing is not None:
                await self._close(*self.closing)
                return

    async def _close(self, code: int, reason: str) -> None:
        """A close frame if the client takes it in time, else drop the TCP connection."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(code=code, message=reason.encode()), 2.0)
            return
        self.abort()
