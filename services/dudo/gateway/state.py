"""The web gateway's state, declared once: what its parts (the HTTP API, tournaments, the
WebSockets, and the outbox side it shares with the chat gateway, ``link.side``) read
and write, set in one ``__init__``, and the waiting for a worker's answer they all use.
As :class:`~dudo.worker.state.WorkerState` is for a worker: the parts subclass it and
re-declare nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
from typing import TYPE_CHECKING, Any

import structlog
from aiohttp import web

from ..infra import PerKey
from ..link import OutboxHandlers, StreamSide, Tokens
from .audience import Audience
from .clients import Connection, Metrics, TurnWrites
from .guard import ConnectionGuard
from .limits import Counts
from .pending import PendingRequests
from .settings import GatewaySettings

log = structlog.get_logger("dudo.gateway")


class GatewayState:
    """Everything a web gateway holds: settings, tokens, limits, the sockets and who they
    are, the answers it waits for, and its side of the streams (``streams``: it writes
    with ``streams.link``; the streams give it what comes through ``handlers``)."""

    def __init__(
        self, settings: GatewaySettings, handlers: OutboxHandlers, redis_client: Any = None
    ) -> None:
        self.settings = settings
        secret = settings.secret  # the command line's: $DUDO_GATEWAY_SECRET (dudo.cli)
        if secret is None:
            secret = secrets.token_bytes(32)
            log.warning("gateway_secret_random", hint="set DUDO_GATEWAY_SECRET to share tokens")
        self.tokens = Tokens(secret)
        self.guard = ConnectionGuard(
            per_address=None if settings.trust_proxy else settings.http_conns_per_address,
            request_timeout=settings.request_timeout,
        )
        bound = log.bind(gateway=settings.gateway_id)
        self.streams = StreamSide(settings, bound, handlers, redis_client)
        self._flags = dataclasses.replace(settings)  # what dudo admin limits falls back to
        self._limits_seen: dict[str, float] = {}
        self.metrics = Metrics()
        self.metrics.send_queue.set_function(lambda: sum(c.queued for c in self.sockets))
        self.audience = Audience(self.metrics)  # who gets which view, error, lobby news
        per_min = 1 / 60
        self.creates = PerKey(settings.creates_per_min * per_min, settings.creates_per_min)
        self.joins = PerKey(settings.joins_per_min * per_min, settings.joins_per_min)
        self.by_token = Counts()  # open sockets per token
        self.by_address = Counts()  # open sockets per client address
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}  # message id -> reply
        self.hellos: dict[str, Connection] = {}  # join message id -> connection saying hello
        self.sockets: set[Connection] = set()  # every open WebSocket
        self.closing_tasks: set[asyncio.Task[None]] = set()  # picows closes being cleaned up
        self.turn_writes = TurnWrites()  # frames batched this turn, one write per connection
        self.created: dict[str, asyncio.Future[dict[str, Any]]] = {}  # table -> first view
        # Requests sent for clients, until settled: who asked, and since when (pending.py).
        self.pending: PendingRequests[Connection] = PendingRequests()
        self.log = log.bind(gateway=settings.gateway_id)
        self.debug = self.log.is_enabled_for(logging.DEBUG)  # (checked once: the hot path)

    # -- waiting for a worker's answer ---------------------------------------------

    def _expect(self, message_id: str) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[message_id] = future
        return future

    def _expect_table(self, table: str) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.created[table] = future
        return future

    async def _ask(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        """Send ``msg`` and wait for what answers it by its id (an error, or the answer
        its kind has); None if nothing came in time. Redis failing raises."""
        assert self.streams.link is not None
        reply = self._expect(msg["id"])
        try:
            await self.streams.link.send(msg)
            return await asyncio.wait_for(reply, self.settings.reply_timeout)
        except TimeoutError:
            return None
        finally:
            self._forget([msg["id"]])

    def _forget(self, ids: list[str], table: str | None = None) -> None:
        for message_id in ids:
            self.waiting.pop(message_id, None)
        if table is not None:
            self.created.pop(table, None)

    def _address(self, request: web.Request) -> str:
        return self._address_of(request.headers, request.remote or "")

    def _address_of(self, headers: Any, remote: str) -> str:
        """The client's address, for per-address limits. Behind a trusted proxy, the
        last address of X-Forwarded-For: the one that proxy appended, the address it saw.
        Everything before it came from the client, who may write anything there (the
        first once was believed: a client refused 429 made 40 more tables under made-up
        addresses, through deploy/'s HAProxy). ``headers``: a request's, case-blind
        (aiohttp's and picows's are both a CIMultiDict)."""
        if self.settings.trust_proxy:
            forwarded = headers.getall("X-Forwarded-For", [])
            last = forwarded[-1].split(",")[-1].strip() if forwarded else ""
            if last:
                return last[:64]
        return remote

    if TYPE_CHECKING:  # what the parts call of each other, defined in theirs
        # http.py
        def _new_id(self, kind: str, key: str | None) -> str: ...
        def _too_fast(
            self, limit: PerKey, request: web.Request, what: str
        ) -> web.Response | None: ...
