"""A lean Redis client for the hot path: commands packed and replies parsed by hiredis.

Why it exists: redis-py 8's command machinery (its connection pool, retry
wrapper, observability hooks and event dispatch around every call) costs far
more CPU than the protocol work: several times what ``hiredis.pack_command`` on a
plain socket and ``hiredis.Reader`` cost, the packer and parser redis-py itself uses
(docs/benchmarks.md, "A lean client for the hot path" and "Measurements behind the
code"). The worker makes two or three calls per cycle and the gateway two per batch
of moves, so that difference was most of what the whole path cost at light load.

So the few calls on the path of every move (the worker's read and commit
scripts and its blocking wait, the gateway's inbox appends and outbox reads)
go through this module on a standalone Redis; everything else, and anything
on a Redis Cluster or fakeredis, stays on redis-py. This is transport only:
hiredis packs and parses, this module writes the bytes, reads the replies in
order and gives the errors redis-py's types, so the callers' handling
(:data:`dudo.infra.service.REDIS_DOWN`, ``NoScriptError``) is the same either way.

:class:`Resp` is for blocking code (one socket per thread), :class:`AsyncResp`
for asyncio (one connection, pipelined: many callers may wait at once).
Neither resends anything by itself (see :func:`dudo.infra.connection.no_retries`): a
call whose connection fails raises, and the connection is made again by the
next call.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Sequence
from typing import Any

import hiredis
import redis
from redis import exceptions as rx

__all__ = ["AsyncResp", "Resp", "options_of"]

Command = Sequence[Any]
READ_SIZE = 65536  # bytes read from the socket at a time (into a buffer kept for it)

# Error replies by their first word, as redis-py raises them.
_ERRORS: dict[str, type[rx.ResponseError]] = {
    "NOSCRIPT": rx.NoScriptError,
    "READONLY": rx.ReadOnlyError,
    "NOAUTH": rx.AuthenticationError,
    "WRONGPASS": rx.AuthenticationError,
    "NOPERM": rx.NoPermissionError,
    "EXECABORT": rx.ExecAbortError,
}
# Replies that mean "this server cannot serve now": redis-py raises these as
# connection-level errors (retry later), not as a bad command.
_UNAVAILABLE: dict[str, type[Exception]] = {
    "LOADING": rx.BusyLoadingError,
    "MASTERDOWN": rx.MasterDownError,
    "CLUSTERDOWN": rx.ClusterDownError,
    "TRYAGAIN": rx.TryAgainError,
}


class _ErrorReply(Exception):
    """What hiredis hands back for an error reply (converted by :func:`_error`)."""


def _error(reply: _ErrorReply) -> Exception:
    text = str(reply)
    word = text.split(" ", 1)[0]
    kind = _UNAVAILABLE.get(word) or _ERRORS.get(word, rx.ResponseError)
    return kind(text)


def options_of(client: Any) -> dict[str, Any] | None:
    """How to reach the standalone Redis a redis-py client (sync or asyncio) talks
    to, or None when this module cannot stand in for it: a Cluster client,
    fakeredis, or a connection class it does not know."""
    pool = getattr(client, "connection_pool", None)
    if pool is None:
        return None
    cls = pool.connection_class
    known = {
        redis.connection.Connection: "tcp",
        redis.connection.SSLConnection: "tls",
        redis.connection.UnixDomainSocketConnection: "unix",
    }
    import redis.asyncio.connection as aconn

    known |= {
        aconn.Connection: "tcp",
        aconn.SSLConnection: "tls",
        aconn.UnixDomainSocketConnection: "unix",
    }
    transport = known.get(cls)
    if transport is None:
        return None
    kw = pool.connection_kwargs
    if kw.get("credential_provider") is not None or kw.get("protocol") not in (None, 2, "2"):
        return None
    return {
        "transport": transport,
        "host": kw.get("host", "localhost"),
        "port": int(kw.get("port", 6379)),
        "path": kw.get("path"),
        "db": int(kw.get("db", 0) or 0),
        "username": kw.get("username"),
        "password": kw.get("password"),
        "connect_timeout": kw.get("socket_connect_timeout") or 5.0,
        "ssl_ca_certs": kw.get("ssl_ca_certs"),
        "ssl_cert_reqs": kw.get("ssl_cert_reqs", "required"),
    }


def _handshake(options: dict[str, Any]) -> list[Command]:
    """The commands a new connection sends first: AUTH and SELECT, as configured."""
    first: list[Command] = []
    if options.get("password") is not None:
        if options.get("username"):
            first.append(("AUTH", options["username"], options["password"]))
        else:
            first.append(("AUTH", options["password"]))
    if options.get("db"):
        first.append(("SELECT", options["db"]))
    return first


def _ssl_context(options: dict[str, Any]) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=options.get("ssl_ca_certs"))
    if options.get("ssl_cert_reqs") in (None, "none", ssl.CERT_NONE):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def _pack(commands: Sequence[Command]) -> bytes:
    pack = hiredis.pack_command
    if len(commands) == 1:
        c = commands[0]
        return pack(c if type(c) is tuple else tuple(c))
    return b"".join(pack(c if type(c) is tuple else tuple(c)) for c in commands)


def _settle(replies: list[Any], raise_on_error: bool) -> list[Any]:
    """Error replies become redis-py's exceptions: raised (the first), or left as values."""
    for i, reply in enumerate(replies):
        if isinstance(reply, _ErrorReply):
            replies[i] = error = _error(reply)
            if raise_on_error or isinstance(error, tuple(_UNAVAILABLE.values())):
                raise error
    return replies


class Resp:
    """Blocking: one socket per thread, commands pipelined per :meth:`execute`."""

    def __init__(self, options: dict[str, Any], timeout: float = 10.0) -> None:
        self.options = options
        self.timeout = timeout  # seconds a reply may take (beyond a blocking command's wait)
        self._local = threading.local()

    def execute(
        self,
        commands: Sequence[Command],
        *,
        raise_on_error: bool = True,
        wait: float = 0.0,
    ) -> list[Any]:
        """Send ``commands`` in one write and return their replies, in order. ``wait``:
        seconds a blocking command among them may hold its reply (XREAD BLOCK)."""
        if not commands:
            return []
        sock, reader = self._connection()
        try:
            sock.settimeout(self.timeout + wait)
            sock.sendall(_pack(commands))
            replies = self._read(sock, reader, len(commands))
        except TimeoutError as exc:
            self.close()
            raise rx.TimeoutError(f"Redis did not answer in {self.timeout + wait:.1f} s") from exc
        except OSError as exc:
            self.close()
            raise rx.ConnectionError(f"Redis connection failed: {exc}") from exc
        return _settle(replies, raise_on_error)

    def call(self, *args: Any, wait: float = 0.0) -> Any:
        """One command; an error reply raises."""
        return self.execute([args], wait=wait)[0]

    def close(self) -> None:
        sock = getattr(self._local, "sock", None)
        self._local.sock = None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

    def _read(self, sock: socket.socket, reader: Any, count: int) -> list[Any]:
        replies: list[Any] = []
        buffer = self._local.buffer
        while len(replies) < count:
            reply = reader.gets()
            if reply is False:
                # Into one buffer kept per socket: a plain recv(n) allocates n bytes
                # each time, and past the allocator's mmap threshold (128 KiB) that
                # is a system call or two per read.
                n = sock.recv_into(buffer)
                if not n:
                    raise ConnectionResetError("Redis closed the connection")
                reader.feed(buffer, 0, n)
                continue
            replies.append(reply)
        return replies

    def _connection(self) -> tuple[socket.socket, Any]:
        sock = getattr(self._local, "sock", None)
        if sock is not None:
            return sock, self._local.reader
        o = self.options
        try:
            if o["transport"] == "unix":
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(o["connect_timeout"])
                sock.connect(o["path"])
            else:
                sock = socket.create_connection((o["host"], o["port"]), o["connect_timeout"])
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if o["transport"] == "tls":
                    sock = _ssl_context(o).wrap_socket(sock, server_hostname=o["host"])
        except OSError as exc:
            raise rx.ConnectionError(f"cannot connect to Redis: {exc}") from exc
        reader = hiredis.Reader(replyError=_ErrorReply)
        self._local.sock, self._local.reader = sock, reader
        self._local.buffer = bytearray(READ_SIZE)
        first = _handshake(o)
        if first:
            try:
                self.execute(first)
            except Exception:
                self.close()
                raise
        return sock, reader


class _Waiting:
    __slots__ = ("count", "deadline", "future", "raise_on_error", "replies")

    def __init__(
        self, future: asyncio.Future[list[Any]], count: int, deadline: float, raise_on_error: bool
    ) -> None:
        self.future, self.count, self.deadline = future, count, deadline
        self.raise_on_error = raise_on_error
        self.replies: list[Any] = []


class _Protocol(asyncio.BufferedProtocol):
    """One connection: replies are matched to callers in the order they wrote.

    Buffered: the event loop reads into one buffer kept for the connection
    (a plain protocol gets a new 256 KiB bytes object per read)."""

    def __init__(self) -> None:
        self.reader = hiredis.Reader(replyError=_ErrorReply)
        self.waiting: collections.deque[_Waiting] = collections.deque()
        self.transport: asyncio.Transport | None = None
        self.lost: Exception | None = None
        self.buffer = bytearray(READ_SIZE)
        self.watchdog: asyncio.TimerHandle | None = None  # see AsyncResp._watch

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> bytearray:
        return self.buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.reader.feed(self.buffer, 0, nbytes)
        self._deliver()

    def _deliver(self) -> None:
        reader, waiting = self.reader, self.waiting
        while True:
            reply = reader.gets()
            if reply is False:
                return
            if not waiting:  # a reply nobody asked for: the stream is out of step
                self._fail(rx.ConnectionError("Redis sent a reply nobody asked for"))
                return
            head = waiting[0]
            head.replies.append(reply)
            if len(head.replies) == head.count:
                waiting.popleft()
                if not head.future.done():
                    try:
                        head.future.set_result(_settle(head.replies, head.raise_on_error))
                    except Exception as exc:
                        head.future.set_exception(exc)

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(
            self.lost or rx.ConnectionError(f"Redis connection lost: {exc or 'closed by Redis'}")
        )

    def _fail(self, error: Exception) -> None:
        self.lost = self.lost or error
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None
        while self.waiting:
            head = self.waiting.popleft()
            if not head.future.done():
                head.future.set_exception(self.lost)
        if self.transport is not None:
            self.transport.abort()


class AsyncResp:
    """asyncio: one connection shared by every caller, their commands pipelined.

    A call that gets no reply in ``timeout`` seconds (plus its own ``wait``)
    fails, and with it every call then waiting on the connection (the stream
    of replies can no longer be trusted): one watchdog per connection checks
    every quarter second while calls wait, instead of a timer per call (the
    handshake of a connection being made is watched the same way).
    """

    WATCH_EVERY = 0.25

    def __init__(self, options: dict[str, Any], timeout: float = 10.0) -> None:
        self.options = options
        self.timeout = timeout
        self._protocol: _Protocol | None = None
        self._connecting: asyncio.Lock | None = None

    async def execute(
        self,
        commands: Sequence[Command],
        *,
        raise_on_error: bool = True,
        wait: float = 0.0,
    ) -> list[Any]:
        """Write ``commands`` at once and wait for their replies, in order."""
        if not commands:
            return []
        protocol = self._protocol
        if protocol is None or protocol.lost is not None:
            protocol = await self._connect()
        return await self._send(protocol, commands, raise_on_error, wait)

    async def call(self, *args: Any, wait: float = 0.0) -> Any:
        return (await self.execute([args], wait=wait))[0]

    def close(self) -> None:
        protocol, self._protocol = self._protocol, None
        if protocol is not None:
            protocol._fail(rx.ConnectionError("closed"))

    def _send(
        self, protocol: _Protocol, commands: Sequence[Command], raise_on_error: bool, wait: float
    ) -> asyncio.Future[list[Any]]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Any]] = loop.create_future()
        deadline = time.monotonic() + self.timeout + wait
        protocol.waiting.append(_Waiting(future, len(commands), deadline, raise_on_error))
        assert protocol.transport is not None
        protocol.transport.write(_pack(commands))
        if protocol.watchdog is None:
            protocol.watchdog = loop.call_later(self.WATCH_EVERY, self._watch, protocol)
        return future

    def _watch(self, protocol: _Protocol) -> None:
        protocol.watchdog = None
        if protocol.lost is not None or not protocol.waiting:
            return
        now = time.monotonic()
        if any(w.deadline < now for w in protocol.waiting):
            protocol._fail(rx.TimeoutError(f"Redis did not answer in {self.timeout:.1f} s"))
            return
        loop = asyncio.get_running_loop()
        protocol.watchdog = loop.call_later(self.WATCH_EVERY, self._watch, protocol)

    async def _connect(self) -> _Protocol:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            protocol = self._protocol
            if protocol is not None and protocol.lost is None:
                return protocol  # another caller connected meanwhile
            o = self.options
            loop = asyncio.get_running_loop()
            try:
                if o["transport"] == "unix":
                    made = loop.create_unix_connection(_Protocol, o["path"])
                else:
                    made = loop.create_connection(
                        _Protocol,
                        o["host"],
                        o["port"],
                        ssl=_ssl_context(o) if o["transport"] == "tls" else None,
                    )
                _, protocol = await asyncio.wait_for(made, o["connect_timeout"])
            except (OSError, TimeoutError) as exc:
                raise rx.ConnectionError(f"cannot connect to Redis: {exc}") from exc
            first = _handshake(o)
            if first:
                try:
                    await self._send(protocol, first, True, 0.0)
                except Exception:
                    protocol._fail(rx.ConnectionError("handshake failed"))
                    raise
            self._protocol = protocol
            return protocol
