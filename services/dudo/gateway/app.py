"""The web gateway: HTTP lobby API, WebSocket play, the browser client, health and metrics.

A gateway is thin and replaceable. It turns people's HTTP requests and
WebSocket messages into stream messages on the tables' inboxes, and hands
back, from its own outbox, the views of exactly the seats it hosts. It keeps
no game state: a restarted gateway (or another instance, sharing the secret)
picks up where this one was, because every seat token names a table and a
player and the worker re-attaches the seat on ``join``.

The code is in four places: this module (lifecycle, the outbox reader),
:mod:`~dudo.gateway.http` (the HTTP API), :mod:`~dudo.gateway.sockets` (the
WebSocket and the client protocol), :mod:`~dudo.gateway.audience` (who gets
which view). Routes:

- ``GET /`` and ``/static/*``: the browser client;
- ``GET /api/tables``: open tables; ``POST /api/tables``: create one (and take a
  seat); ``POST /api/tables/{id}/join``: take a seat; ``POST /api/tables/{id}/watch``:
  a spectator token;
- ``GET /ws``: the WebSocket (client protocol in :mod:`dudo.gateway.messages`);
- ``GET /healthz``, ``/readyz``, ``/metrics``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections import defaultdict
from typing import Any

import structlog
from aiohttp import WSCloseCode, web

from .. import admin, keys, signing, wire
from ..connection import ConfigMismatch, connect, connect_async, ensure_partitions, fast
from ..link import AsyncGatewayLink
from ..runtime import quiet_collector, settle_heap
from ..service import REDIS_DOWN, Backoff
from ..signing import key_of_url
from .audience import Audience
from .clients import Connection, Metrics, TurnWrites
from .http import HttpApi, json_errors
from .identity import Identities, parse_apps
from .limits import Counts, PerKey
from .settings import GatewaySettings, default_gateway_id
from .sockets import CLOSE_TIMEOUT, Sockets
from .tokens import Tokens
from .tournaments import TournamentApi

__all__ = ["Gateway", "GatewaySettings", "default_gateway_id", "run"]

log = structlog.get_logger("dudo.gateway")
WORKER_SILENCE_MS = 3000  # a worker whose heartbeat is older does not count as live


class Gateway(HttpApi, TournamentApi, Sockets):
    def __init__(self, settings: GatewaySettings, redis_client: Any = None) -> None:
        self.settings = settings
        secret = settings.secret or os.environ.get("DUDO_GATEWAY_SECRET", "").encode() or None
        if secret is None:
            secret = secrets.token_bytes(32)
            log.warning("gateway_secret_random", hint="set DUDO_GATEWAY_SECRET to share tokens")
        self.tokens = Tokens(secret)
        apps = settings.apps
        if apps is None:
            apps = parse_apps(os.environ.get("DUDO_APPS", ""))
        self.identities = Identities(apps)
        self.redis = redis_client
        self.link: AsyncGatewayLink | None = None  # writes to inboxes
        self.reader: AsyncGatewayLink | None = None  # reads this gateway's outbox
        self.reader_redis: Any = None
        self.metrics = Metrics()
        self.audience = Audience(self.metrics)  # who gets which view, error, lobby news
        per_min = 1 / 60
        self.creates = PerKey(settings.creates_per_min * per_min, settings.creates_per_min)
        self.joins = PerKey(settings.joins_per_min * per_min, settings.joins_per_min)
        self.by_token = Counts()  # open sockets per token
        self.by_address = Counts()  # open sockets per client address
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}  # message id -> reply
        self.hellos: dict[str, Connection] = {}  # join message id -> connection saying hello
        self.sockets: set[Connection] = set()  # every open WebSocket
        self.turn_writes = TurnWrites()  # frames batched this turn, one write per connection
        self.created: dict[str, asyncio.Future[dict[str, Any]]] = {}  # table -> first view
        # stream message id -> the connection that asked, and the client's id for it
        self.acts: dict[str, tuple[Connection, str | None]] = {}
        self.timing: dict[str, list[tuple[float, int, str]]] = defaultdict(list)  # per table
        self.tasks: list[asyncio.Task[None]] = []
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
        self.log = log.bind(gateway=settings.gateway_id)

    # -- lifecycle ------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024, middlewares=[json_errors])
        app.add_routes(
            [
                web.get("/", self.index),
                web.get("/api/tables", self.list_tables),
                web.post("/api/tables", self.create_table),
                web.post("/api/tables/{table}/join", self.join_table),
                web.post("/api/tables/{table}/watch", self.watch_table),
                web.get("/api/tournaments", self.list_tournaments),
                web.get("/api/leaderboard", self.leaderboard),
                web.post("/api/tournaments", self.create_tournament),
                web.get("/api/tournaments/{tournament}", self.tournament_standings),
                web.post("/api/tournaments/{tournament}/register", self.register_tournament),
                web.post("/api/tournaments/{tournament}/begin", self.begin_tournament),
                web.get("/ws", self.websocket),
                web.get("/healthz", self.healthz),
                web.get("/readyz", self.readyz),
                web.get("/metrics", self.metrics_page),
                web.get("/static/{name}", self.static_file),
                web.get("/manifest.webmanifest", self.web_manifest),
                web.get("/sw.js", self.service_worker),
                web.get("/icons/{size}.png", self.icon),
            ]
        )
        app.on_startup.append(self._startup)
        app.on_shutdown.append(self._shutdown)
        app.on_cleanup.append(self._cleanup)
        return app

    async def _startup(self, _app: web.Application) -> None:
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
        if self.redis is None:
            self.redis = connect_async(self.settings.redis_url)
        # The outbox reader blocks on XREAD: it gets a connection of its own.
        self.reader_redis = connect_async(self.settings.redis_url, max_connections=2)
        self.link = AsyncGatewayLink(
            self.redis,
            self.settings.gateway_id,
            self.settings.partitions,
            self.settings.director_partitions,
            # Under a Redis user of its own it signs every entry (dudo.signing).
            signer=key_of_url(self.settings.redis_url, admin.USER_PREFIX),
        )
        self.own_key = self.link.signer is not None
        await self._refresh_signer()
        self.link.views = "frames" if self.settings.frames else None
        self.reader = AsyncGatewayLink(
            self.reader_redis, self.settings.gateway_id, self.settings.partitions
        )
        # Start reading where the outbox is now: anything older was for a previous life.
        info = (
            await self.redis.xinfo_stream(self.link.outbox)
            if await self.redis.exists(self.link.outbox)
            else None
        )
        if info:
            last = info.get("last-generated-id") or info.get(b"last-generated-id")
            self.reader.last_id = last.decode() if isinstance(last, bytes) else last
        await self.link.register()
        self.live_workers = await self.redis.zcount(
            keys.WORKERS, time.time() * 1000 - WORKER_SILENCE_MS, "+inf"
        )
        quiet_collector()
        self.tasks = [
            asyncio.create_task(self._read_outbox()),
            asyncio.create_task(self._heartbeat()),
            asyncio.create_task(self._watchdog()),
        ]
        self.ready = True
        self.log.info("gateway_started", partitions=self.settings.partitions)

    def _check_config(self) -> bool:
        """Compare our partition count with the stored one (ConfigMismatch if they
        differ); False if none is stored yet."""
        sync = connect(self.settings.redis_url)
        try:
            return ensure_partitions(sync, self.settings.partitions, set_up=False) is not None
        finally:
            sync.close()

    async def _shutdown(self, _app: web.Application) -> None:
        """Close every WebSocket with 1001 (clients reconnect elsewhere) and deregister."""
        self.ready = False
        # All at once, each waiting at most CLOSE_TIMEOUT for the client's reply: a
        # client that vanished must not hold the shutdown.
        await asyncio.gather(
            *(
                asyncio.wait_for(
                    conn.ws.close(code=WSCloseCode.GOING_AWAY, message=b"gateway stopping"),
                    CLOSE_TIMEOUT,
                )
                for conn in list(self.sockets)
            ),
            return_exceptions=True,
        )
        if self.link is not None:
            with contextlib.suppress(Exception):
                await self.link.deregister()
        self.log.info("gateway_stopped")

    async def _cleanup(self, _app: web.Application) -> None:
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
                now = time.time() * 1000
                self.live_workers = await self.redis.zcount(
                    keys.WORKERS, now - WORKER_SILENCE_MS, "+inf"
                )
            except Exception as exc:
                self.log.warning("heartbeat_failed", error=str(exc))

    async def _watchdog(self) -> None:
        """Drop, every second, the connections whose current send has hung past
        ``send_timeout`` (a client that stopped reading with full buffers)."""
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            for conn in [c for c in self.sockets if c.stuck(now)]:
                self.log.info("client_too_slow", conn=conn.id)
                conn.drop_stuck()

    # -- waiting for a worker's answer ---------------------------------------------

    def _expect(self, message_id: str) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[message_id] = future
        return future

    def _expect_table(self, table: str) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.created[table] = future
        return future

    def _forget(self, ids: list[str], table: str | None = None) -> None:
        for message_id in ids:
            self.waiting.pop(message_id, None)
        if table is not None:
            self.created.pop(table, None)

    def _address(self, request: web.Request) -> str:
        """The client's address, for per-address limits (behind a trusted proxy, the
        first address of X-Forwarded-For)."""
        if self.settings.trust_proxy:
            forwarded = request.headers.get("X-Forwarded-For", "")
            first = forwarded.split(",")[0].strip()
            if first:
                return first[:64]
        return request.remote or ""

    # -- the outbox -----------------------------------------------------------------

    async def _read_outbox(self) -> None:
        assert self.reader is not None
        backoff = Backoff()
        down_since: float | None = None
        while True:
            try:
                messages = await self.reader.read(block_ms=1000, count=200)
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
                    await self._dispatch(msg)
                except Exception:
                    self.log.exception("dispatch_failed", type=msg.get("type"))

    async def _dispatch(self, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        if kind in ("view", "frames"):
            self._relay_view(msg)
        elif kind in ("joined", "left"):
            if kind == "joined":
                conn = self.hellos.pop(msg["id"], None)
                if conn is not None and conn.grant is not None:
                    conn.hello = None
                    self._seated(conn, msg)
                else:  # the host started early: seated connections learn their new seat
                    self.audience.renumbered(msg["table"], msg["player"], msg["seat"])
            else:  # the player gave the seat up: none of its connections plays it now
                asked = self.acts.pop(msg["id"], None)
                self.audience.player_left(msg, asked)
            _settle(self.waiting, msg["id"], msg)
        elif kind == "detached":
            self.audience.detach_player(
                msg["table"],
                msg["player"],
                (wire.NOT_ATTACHED, "this seat is now played through another connection"),
            )
        elif kind == "error":
            self._relay_error(msg)
        elif kind == "lobby":
            self.audience.relay_lobby(msg)
        elif kind == "registered":
            _settle(self.waiting, msg["id"], msg)
        elif kind == "tournament":
            _settle(self.created, f"t:{msg['tournament']}", msg)
            self.audience.relay_tournament(msg)
        elif kind == "moved":
            self.audience.moved(msg)

    def _relay_view(self, msg: dict[str, Any]) -> None:
        table = msg["table"]
        _settle(self.created, table, msg)
        for message_id in msg.get("applied", ()):
            # The sender's action went through: tell it, quoting its own id, before
            # the view that shows it.
            asked = self.acts.pop(message_id, None)
            if asked is not None and asked[1] is not None:
                asked[0].send(wire.message("ack", id=asked[1], table=table, version=msg["version"]))
        now = time.perf_counter()
        if self.audience.relay_view(msg):
            self._observe_latency(table, msg["version"], now)

    def _observe_latency(self, table: str, version: int, now: float) -> None:
        """Actions sent before this version are applied (or refused): time them, forget them."""
        pending = self.timing.get(table)
        if not pending:
            return
        keep = []
        for sent, before, message_id in pending:
            if version > before:
                if sent >= 0:  # an action (not a resync, leave or start)
                    self.metrics.latency.observe(now - sent)
                self.acts.pop(message_id, None)
            else:
                keep.append((sent, before, message_id))
        if keep:
            self.timing[table] = keep
        else:
            del self.timing[table]

    def _relay_error(self, msg: dict[str, Any]) -> None:
        message_id = msg.get("id")
        if message_id and _settle(self.waiting, message_id, msg):
            return
        act = self.acts.pop(message_id, None) if message_id else None
        if act is not None:
            conn, client_id = act
            self._error(conn, client_id, msg["code"], msg["message"])
            return
        self.audience.relay_error(msg)


def _settle(waiters: dict[str, asyncio.Future[dict[str, Any]]], key: str, msg: Any) -> bool:
    """Hand ``msg`` to whoever waits under ``key`` (an HTTP request, a hello); True if
    someone was still waiting."""
    waiter = waiters.get(key)
    if waiter is None or waiter.done():
        return False
    waiter.set_result(msg)
    return True


def run(settings: GatewaySettings) -> None:
    """Serve until SIGTERM/SIGINT (aiohttp then runs the graceful shutdown)."""
    gateway = Gateway(settings)
    web.run_app(
        gateway.app(),
        host=settings.host,
        port=settings.port,
        print=None,
        shutdown_timeout=5,
    )
