"""The web gateway: HTTP lobby API, WebSocket play, the browser client, health and metrics.

A gateway is thin and replaceable. It turns people's HTTP requests and
WebSocket messages into stream messages on the tables' inboxes, and hands
back, from its own outbox, the views of exactly the seats it hosts. It keeps
no game state: a restarted gateway (or another instance, sharing the secret)
picks up where this one was, because every seat token names a table and a
player and the worker re-attaches the seat on ``join``.

Routes:

- ``GET /`` and ``/static/*``: the browser client;
- ``GET /api/tables``: open tables; ``POST /api/tables``: create one (and take a
  seat); ``POST /api/tables/{id}/join``: take a seat; ``POST /api/tables/{id}/watch``:
  a spectator token;
- ``GET /ws``: the WebSocket (client protocol in :mod:`dudo.gateway.messages`);
- ``GET /healthz``, ``/readyz``, ``/metrics``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
import re
import secrets
import socket
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import structlog
from aiohttp import WSCloseCode, WSMsgType, web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    generate_latest,
)

from .. import keys, wire
from ..connection import connect, connect_async, ensure_partitions
from ..engine import Rules, RulesConfigError
from ..link import AsyncGatewayLink
from ..runtime import quiet_collector, settle_heap
from ..service import REDIS_DOWN, Backoff
from .audience import Audience
from .clients import CLOSE_NO_HELLO, CLOSE_TOO_MANY, Connection, Metrics
from .limits import Counts, PerKey
from .messages import MAX_CLIENT_BYTES, validate_client
from .tokens import TokenError, Tokens

log = structlog.get_logger("dudo.gateway")
STATIC = Path(__file__).parent / "static"
STATIC_FILES = {p.name: p for p in STATIC.iterdir() if p.is_file()}
CLOSE_TIMEOUT = 2.0  # seconds to wait for a client's reply to our close frame
WORKER_SILENCE_MS = 3000  # a worker whose heartbeat is older does not count as live
READER_STALE_S = 5.0  # the outbox reader is unwell if it has not read for this long


def default_gateway_id() -> str:
    return f"gw-{socket.gethostname()[:20]}-{os.getpid()}-{secrets.token_hex(2)}".replace(".", "-")


@dataclass
class GatewaySettings:
    redis_url: str = "redis://127.0.0.1:6379/0"
    host: str = "127.0.0.1"
    port: int = 8000
    partitions: int = keys.DEFAULT_PARTITIONS
    gateway_id: str = field(default_factory=default_gateway_id)
    # Shared by every gateway of a deployment (tokens made by one work on all).
    # None: DUDO_GATEWAY_SECRET, or a random one (tokens then die with the process).
    secret: bytes | None = None
    rate_per_s: float = 20.0  # client messages per second per connection
    burst: int = 40
    reply_timeout: float = 5.0  # HTTP calls waiting for a worker's answer
    heartbeat: float = 2.0
    send_queue: int = 256  # messages queued for one connection before it is closed as too slow
    send_timeout: float = 10.0  # seconds one message may take to go out before that
    # What one client may cost (docs/operations.md, "Limits"): per client address,
    # per token, per connection. Limits are per gateway instance.
    creates_per_min: float = 30.0  # tables one address may create per minute (and at once)
    joins_per_min: float = 120.0  # joins and watch tokens per address per minute
    hello_timeout: float = 10.0  # a connection must say hello (or watch the lobby) by then
    conns_per_token: int = 4  # sockets one token may hold open at once
    conns_per_address: int = 256  # sockets one address may hold open at once
    costly_every: float = 1.0  # one resync or lobby listing per connection per this long
    lobby_max: int = 500  # open tables listed at most (the emptiest first)
    trust_proxy: bool = False  # the client address is X-Forwarded-For's first (behind a proxy)


class Gateway:
    def __init__(self, settings: GatewaySettings, redis_client: Any = None) -> None:
        self.settings = settings
        secret = settings.secret or os.environ.get("DUDO_GATEWAY_SECRET", "").encode() or None
        if secret is None:
            secret = secrets.token_bytes(32)
            log.warning("gateway_secret_random", hint="set DUDO_GATEWAY_SECRET to share tokens")
        self.tokens = Tokens(secret)
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
        self.created: dict[str, asyncio.Future[dict[str, Any]]] = {}  # table -> first view
        self.acts: dict[str, tuple[Connection, str]] = {}  # message id -> sender, client's id
        self.timing: dict[str, list[tuple[float, int, str]]] = defaultdict(list)  # per table
        self.tasks: list[asyncio.Task[None]] = []
        self.ready = False
        self.reader_ok_at = 0.0  # when the outbox reader last read (or waited) successfully
        self.live_workers = 0
        self.log = log.bind(gateway=settings.gateway_id)

    # -- lifecycle ------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024, middlewares=[_json_errors])
        app.add_routes(
            [
                web.get("/", self.index),
                web.get("/api/tables", self.list_tables),
                web.post("/api/tables", self.create_table),
                web.post("/api/tables/{table}/join", self.join_table),
                web.post("/api/tables/{table}/watch", self.watch_table),
                web.get("/ws", self.websocket),
                web.get("/healthz", self.healthz),
                web.get("/readyz", self.readyz),
                web.get("/metrics", self.metrics_page),
                web.get("/static/{name}", self.static_file),
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
                await asyncio.to_thread(self._check_config)
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
        self.link = AsyncGatewayLink(self.redis, self.settings.gateway_id, self.settings.partitions)
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
        ]
        self.ready = True
        self.log.info("gateway_started", partitions=self.settings.partitions)

    def _check_config(self) -> None:
        sync = connect(self.settings.redis_url)
        try:
            ensure_partitions(sync, self.settings.partitions)
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
                for conn in self.audience.connections()
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
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.aclose(), 2.0)

    async def _heartbeat(self) -> None:
        """Register every few seconds, and count the live workers (for readiness)."""
        assert self.link is not None
        while True:
            await asyncio.sleep(self.settings.heartbeat)
            settle_heap()
            try:
                await self.link.register()
                now = time.time() * 1000
                self.live_workers = await self.redis.zcount(
                    keys.WORKERS, now - WORKER_SILENCE_MS, "+inf"
                )
            except Exception as exc:
                self.log.warning("heartbeat_failed", error=str(exc))

    # -- HTTP -------------------------------------------------------------------------

    async def index(self, _request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "index.html")

    async def static_file(self, request: web.Request) -> web.StreamResponse:
        """The browser client's files, and nothing else: the name is looked up among
        them, never joined to a path (a 5,000-character name used to answer 500)."""
        path = STATIC_FILES.get(request.match_info["name"])
        if path is None:
            return _http_error(404, "not_found", "no such file")
        return web.FileResponse(path)

    async def healthz(self, _request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def readyz(self, _request: web.Request) -> web.Response:
        """Ready when this gateway can serve a game: Redis answers, the outbox reader
        reads, and at least one table worker is alive (without one, every game
        stalls: a load balancer should send players elsewhere, and say so)."""
        reader_alive = (
            bool(self.tasks)
            and not self.tasks[0].done()
            and time.monotonic() - self.reader_ok_at < READER_STALE_S
        )
        try:
            redis_ok = self.redis is not None and bool(
                await asyncio.wait_for(self.redis.ping(), 1.0)
            )
        except Exception:
            redis_ok = False
        workers = self.live_workers
        ok = self.ready and reader_alive and redis_ok and workers > 0
        body = {"ready": ok, "redis": redis_ok, "reader": reader_alive, "workers": workers}
        return web.json_response(body, status=200 if ok else 503)

    async def metrics_page(self, _request: web.Request) -> web.Response:
        body = generate_latest(self.metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def list_tables(self, _request: web.Request) -> web.Response:
        assert self.link is not None
        tables = self._listing(await self.link.open_tables())
        return web.json_response({"tables": tables})

    async def create_table(self, request: web.Request) -> web.Response:
        """Body: ``{rules, seats, bots: [level, ...], name?}``; with a name the creator
        takes a seat and gets a token."""
        refused = self._too_fast(self.creates, request, "tables")
        if refused is not None:
            return refused
        body = await _json_body(request)
        rules = body.get("rules", {})
        try:
            Rules.from_dict(rules)
        except RulesConfigError as exc:
            return _http_error(400, wire.BAD_RULES, str(exc))
        seats, bots = body.get("seats", 4), body.get("bots", [])
        if not isinstance(seats, int) or isinstance(seats, bool) or not 2 <= seats <= 6:
            return _http_error(400, wire.BAD_MESSAGE, "seats must be 2..6")
        if not isinstance(bots, list) or not all(b in wire.BOT_LEVELS for b in bots):
            return _http_error(400, wire.BAD_MESSAGE, f"bots must be levels {wire.BOT_LEVELS}")
        if len(bots) >= seats:
            return _http_error(400, wire.BAD_MESSAGE, "leave at least one seat for people")
        name = body.get("name")
        if name is not None:
            name, refused = _clean_name(name)
            if refused is not None:
                return refused
        key, refused = _request_key(request, body)
        if refused is not None:
            return refused
        # With a request key, a retry (through any gateway) names the same table and
        # player: the create is then refused as a duplicate, the join finds its seat.
        table = self._derived("table", key)[:11] if key else secrets.token_urlsafe(8)
        player = None
        if name:
            player = self._derived("player", table, key)[:12] if key else secrets.token_urlsafe(9)
        plan = [{"kind": "open"}] * (seats - len(bots)) + [
            {"kind": "bot", "level": level} for level in bots
        ]
        assert self.link is not None
        create = self.link.message(
            "create",
            id=f"c-{table}",
            table=table,
            rules=rules,
            seats=plan,
            **({"host": player} if player else {}),
        )
        refused = self._expect(create["id"])  # only an error answers a create
        try:
            if name:
                join = self.link.message(
                    "join", id=f"j-{player}-{secrets.token_hex(3)}", table=table,
                    player=player, name=name,
                )  # fmt: skip
                answer_to = self._expect(join["id"])  # joined, or error
                await self.link.send(create, join)
            else:
                answer_to = self._expect_table(table)  # the first view of the new table
                await self.link.send(create)
        except REDIS_DOWN:  # written or not, nobody can tell: the caller gets the token
            self._forget([create["id"], join["id"] if name else ""], table)
            return self._unsettled(table, player, name, wire.UNAVAILABLE)
        try:
            done, _ = await asyncio.wait(
                [refused, answer_to],
                timeout=self.settings.reply_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
            # A retry (same request key) of a create that was applied: the table is
            # there; with a name, the join (a fresh message) finds the seat.
            exists = refused in done and key is not None and refused.result()["code"] in _EXISTS
            if refused in done and not exists:  # the create itself was refused
                answer = refused.result()
                return _http_error(400, answer["code"], answer["message"])
            if exists and not name:
                return web.json_response({"table": table}, status=201)
            if answer_to not in done:
                done, _ = await asyncio.wait([answer_to], timeout=self.settings.reply_timeout)
        finally:
            self._forget([create["id"], join["id"] if name else ""], table)
        if answer_to not in done:
            return self._unsettled(table, player, name, wire.TIMEOUT)
        answer = answer_to.result()
        if answer["type"] == "error":
            return _http_error(409, answer["code"], answer["message"])
        result: dict[str, Any] = {"table": table}
        if name:
            token = self.tokens.issue(table, player, name)
            result.update(seat=answer["seat"], player=wire.public_id(player), token=token)
        return web.json_response(result, status=201)

    async def join_table(self, request: web.Request) -> web.Response:
        """Body: ``{name, seat?}``: take a seat; returns the seat and its token."""
        refused = self._too_fast(self.joins, request, "joins")
        if refused is not None:
            return refused
        table = request.match_info["table"]
        body = await _json_body(request)
        name, refused = _clean_name(body.get("name"))
        if refused is not None:
            return refused
        seat = body.get("seat")
        if seat is not None and (
            not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat <= 5
        ):
            return _http_error(400, wire.BAD_MESSAGE, "seat must be an integer 0..5")
        if not keys.ID_PATTERN.fullmatch(table):
            return _http_error(404, wire.UNKNOWN_TABLE, "no such table")
        key, refused = _request_key(request, body)
        if refused is not None:
            return refused
        # With a request key, a retry names the same player: it finds its seat.
        player = self._derived("player", table, key)[:12] if key else secrets.token_urlsafe(9)
        assert self.link is not None
        join = self.link.message(
            "join", id=f"j-{player}-{secrets.token_hex(3)}", table=table, player=player,
            name=name, seat=seat,
        )  # fmt: skip
        reply = self._expect(join["id"])
        try:
            await self.link.send(join)
            answer = await asyncio.wait_for(reply, self.settings.reply_timeout)
        except TimeoutError:
            return self._unsettled(table, player, name, wire.TIMEOUT)
        except REDIS_DOWN:  # written or not, nobody can tell: the caller gets the token
            return self._unsettled(table, player, name, wire.UNAVAILABLE)
        finally:
            self._forget([join["id"]])
        if answer["type"] == "error":
            status = 404 if answer["code"] == wire.UNKNOWN_TABLE else 409
            return _http_error(status, answer["code"], answer["message"])
        token = self.tokens.issue(table, player, name)
        return web.json_response(
            {
                "table": table,
                "seat": answer["seat"],
                "player": wire.public_id(player),
                "token": token,
            }
        )

    def _derived(self, kind: str, *parts: str | None) -> str:
        """An id derived from a client's request key with the deployment's secret: the
        same on every gateway, unguessable without the secret (it may be a player id)."""
        return self.tokens.derive("dudo-request/1", kind, *(p or "" for p in parts))

    def _unsettled(
        self, table: str, player: str | None, name: str | None, code: str
    ) -> web.Response:
        """A create or join whose outcome is unknown: no answer in time (504
        ``timeout``), or Redis failed while the request was being written (503
        ``unavailable``: it may have been written all the same). Never leave a seat
        nobody can claim: the caller gets the token for the player it asked a seat
        for, and ``hello`` with it settles the matter (a hello joins: it takes the
        seat if the first join never happened, and finds it if it did)."""
        body: dict[str, Any] = {
            "code": code,
            "message": "the request may or may not be applied: say hello with this token "
            "to get your seat",
            "table": table,
        }
        if player is not None:
            body.update(player=wire.public_id(player), token=self.tokens.issue(table, player, name))
        response = web.json_response(body, status=504 if code == wire.TIMEOUT else 503)
        if code == wire.UNAVAILABLE:
            response.headers["Retry-After"] = "1"
        return response

    async def watch_table(self, request: web.Request) -> web.Response:
        refused = self._too_fast(self.joins, request, "watch tokens")
        if refused is not None:
            return refused
        table = request.match_info["table"]
        if not keys.ID_PATTERN.fullmatch(table) or not await self.redis.exists(
            keys.table_of(table, self.settings.partitions)
        ):
            return _http_error(404, wire.UNKNOWN_TABLE, "no such table")
        return web.json_response(
            {"table": table, "token": self.tokens.issue(table, None, None, "watch")}
        )

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

    # -- WebSocket ------------------------------------------------------------------------

    async def websocket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=20, max_msg_size=64 * 1024, timeout=CLOSE_TIMEOUT)
        await ws.prepare(request)
        conn = Connection(ws, self.settings)
        conn.transport = request.transport
        conn.address = self._address(request)
        writer = asyncio.create_task(conn.write_loop())
        self.by_address.add(conn.address)
        if self.by_address.get(conn.address) > self.settings.conns_per_address:
            conn.close_soon(CLOSE_TOO_MANY, "too many connections from your address")
        # A connection that neither says hello nor watches the lobby in time goes.
        idle = asyncio.get_running_loop().call_later(
            self.settings.hello_timeout, self._hello_overdue, conn
        )
        token = request.query.get("token")
        try:
            if token:
                await self._receive(
                    conn, json.dumps({"v": 1, "type": "hello", "token": token}).encode(), text=True
                )
            async for frame in ws:
                if frame.type == WSMsgType.TEXT:
                    await self._receive(conn, frame.data.encode(), text=True)
                elif frame.type == WSMsgType.BINARY:
                    conn.binary = True
                    await self._receive(conn, frame.data, text=False)
        finally:
            idle.cancel()
            await self._disconnect(conn)
            self.by_address.remove(conn.address)
            writer.cancel()
        return ws

    def _hello_overdue(self, conn: Connection) -> None:
        if conn.grant is None and conn.hello is None and conn not in self.audience.lobby:
            conn.close_soon(CLOSE_NO_HELLO, "say hello (or watch the lobby) first")

    def _address(self, request: web.Request) -> str:
        """The client's address, for per-address limits (behind a trusted proxy, the
        first address of X-Forwarded-For)."""
        if self.settings.trust_proxy:
            forwarded = request.headers.get("X-Forwarded-For", "")
            first = forwarded.split(",")[0].strip()
            if first:
                return first[:64]
        return request.remote or ""

    def _too_fast(self, limit: PerKey, request: web.Request, what: str) -> web.Response | None:
        """429 with Retry-After if this address went past ``limit``."""
        bucket = limit.bucket(self._address(request))
        if bucket.allow():
            return None
        self.metrics.errors.labels(wire.RATE_LIMITED).inc()
        response = _http_error(429, wire.RATE_LIMITED, f"too many {what} from your address")
        response.headers["Retry-After"] = str(max(1, round(bucket.wait())))
        return response

    async def _receive(self, conn: Connection, data: bytes, *, text: bool) -> None:
        if not conn.allow():
            self._error(conn, None, wire.RATE_LIMITED, "too many messages; slow down")
            return
        if len(data) > MAX_CLIENT_BYTES:
            self._error(conn, None, wire.TOO_LARGE, f"at most {MAX_CLIENT_BYTES} bytes")
            return
        try:
            raw = json.loads(data) if text else msgpack.unpackb(data, raw=False)
        except Exception:
            self._error(conn, None, wire.BAD_MESSAGE, "not JSON (text) or msgpack (binary)")
            return
        try:
            msg = validate_client(raw)
        except wire.WireError as exc:
            client_id = raw.get("id") if isinstance(raw, dict) else None
            self._error(
                conn, client_id if isinstance(client_id, str) else None, exc.code, exc.message
            )
            return
        kind = msg["type"]
        self.metrics.messages.labels("in", kind).inc()
        try:
            await self._handle_client(conn, kind, msg)
        except REDIS_DOWN:
            self._error(conn, msg.get("id"), wire.UNAVAILABLE, "the game service is unreachable")
        except Exception:  # our bug: answer it, keep the connection
            self.log.exception("client_message_failed", type=kind)
            self._error(conn, msg.get("id"), wire.INTERNAL, "the gateway failed; try again")

    async def _handle_client(self, conn: Connection, kind: str, msg: dict[str, Any]) -> None:
        if kind == "hello":
            await self._hello(conn, msg["token"])
        elif kind == "ping":
            conn.send(wire.message("pong"))
        elif kind in ("watch_lobby", "resync") and not conn.costly(self.settings.costly_every):
            self._error(conn, msg.get("id"), wire.RATE_LIMITED, f"one {kind} per second at most")
        elif kind == "watch_lobby":
            await self._watch_lobby(conn)
        elif conn.grant is None:
            self._error(conn, msg.get("id"), wire.UNAUTHORIZED, "send hello with a token")
        elif kind == "act":
            await self._act(conn, msg)
        else:
            await self._control(conn, kind)

    async def _hello(self, conn: Connection, token: str) -> None:
        try:
            grant = self.tokens.check(token)
        except TokenError as exc:
            self._error(conn, None, wire.UNAUTHORIZED, str(exc))
            return
        await self._detach(conn)
        key = f"{grant.kind}:{grant.table}:{grant.player}"
        if self.by_token.get(key) >= self.settings.conns_per_token:
            conn.close_soon(CLOSE_TOO_MANY, "too many connections with this token")
            return
        self.by_token.add(key)
        conn.token_key = key
        conn.grant, conn.seat = grant, None
        assert self.link is not None
        if grant.kind == "watch":
            first = self.audience.watch(conn, grant.table)
            conn.send(wire.message("welcome", table=grant.table, seat=None, player=None))
            messages = [
                self.link.message("resync", id=f"r-{conn.id}", table=grant.table, seat=None)
            ]
            if first:
                messages.insert(
                    0,
                    self.link.message(
                        "watch", id=f"w-{secrets.token_hex(4)}", table=grant.table, on=True
                    ),
                )
            await self.link.send(*messages)
            return
        # A seat: (re)join, which attaches the seat to this gateway. The worker
        # answers `joined`, then the latest view in the same outbox entry, so the
        # connection is registered when `joined` is dispatched (see _dispatch),
        # before that view is relayed.
        join = self.link.message(
            "join",
            id=f"h-{conn.id}-{secrets.token_hex(3)}",
            table=grant.table,
            player=grant.player,
            name=grant.name,
        )
        self.hellos[join["id"]] = conn
        conn.hello = join["id"]
        reply = self._expect(join["id"])
        await self.link.send(join)
        try:
            answer = await asyncio.wait_for(reply, self.settings.reply_timeout)
        except TimeoutError:
            # The join may still be applied: a late `joined` seats this connection
            # then (the hello stays registered until the connection closes).
            self._error(conn, None, wire.TIMEOUT, "no worker answered yet; still trying")
            return
        finally:
            self._forget([join["id"]])
        self.hellos.pop(join["id"], None)
        if answer["type"] == "error":
            conn.grant = None
            self._error(conn, None, answer["code"], answer["message"])

    def _seated(self, conn: Connection, msg: dict[str, Any]) -> None:
        """A hello's join succeeded: this connection now plays that seat (for its player)."""
        grant = conn.grant
        assert grant is not None and grant.player == msg["player"]
        self.audience.seat(conn, grant.table, msg["player"], msg["seat"])
        conn.send(
            wire.message(
                "welcome", table=grant.table, seat=conn.seat, player=wire.public_id(grant.player)
            )
        )

    async def _act(self, conn: Connection, msg: dict[str, Any]) -> None:
        grant = conn.grant
        assert grant is not None and self.link is not None
        if grant.kind != "seat":
            self._error(conn, msg["id"], wire.UNAUTHORIZED, "this token only watches")
            return
        if conn.seat is None:
            self._error(conn, msg["id"], wire.NOT_SEATED, "this connection plays no seat now")
            return
        if msg.get("table", grant.table) != grant.table or msg.get("seat", conn.seat) != conn.seat:
            self._error(
                conn, msg["id"], wire.UNAUTHORIZED, "a token acts only for its own seat and table"
            )
            return
        message_id = _act_id(grant.player, msg["id"])
        act = self.link.message(
            "act",
            id=message_id,
            table=grant.table,
            player=grant.player,
            seat=conn.seat,
            action=msg["action"],
        )
        self.acts[message_id] = (conn, msg["id"])
        self.timing[grant.table].append(
            (time.perf_counter(), self.audience.versions.get(grant.table, 0), message_id)
        )
        await self.link.send(act)

    async def _control(self, conn: Connection, kind: str) -> None:
        grant = conn.grant
        assert grant is not None and self.link is not None
        base = {"id": f"{kind[0]}-{conn.id}-{secrets.token_hex(3)}", "table": grant.table}
        if kind == "resync":
            if grant.kind == "watch":
                await self.link.send(self.link.message("resync", seat=None, **base))
            elif conn.seat is not None:
                await self.link.send(
                    self.link.message("resync", seat=conn.seat, player=grant.player, **base)
                )
        elif grant.kind != "seat":
            self._error(conn, None, wire.UNAUTHORIZED, "this token only watches")
        elif conn.seat is None:
            self._error(conn, None, wire.NOT_SEATED, "this connection plays no seat now")
        elif kind == "leave":
            await self.link.send(
                self.link.message("leave", seat=conn.seat, player=grant.player, **base)
            )
        elif kind == "start":
            await self.link.send(self.link.message("start", player=grant.player, **base))

    async def _watch_lobby(self, conn: Connection) -> None:
        self.audience.watch_lobby(conn)
        assert self.link is not None
        tables = self._listing(await self.link.open_tables())
        conn.send(wire.message("lobby", tables=tables))

    def _listing(self, open_tables: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        """The lobby as clients get it: tables with free seats first, at most
        ``lobby_max`` of them."""
        tables = [{"table": t, **entry} for t, entry in open_tables.items()]
        tables.sort(key=lambda t: (t["taken"] == t["seats"], t["table"]))
        return tables[: self.settings.lobby_max]

    async def _detach(self, conn: Connection) -> None:
        """Forget what ``conn`` played or watched (before a new hello, or at its close)."""
        if conn.hello is not None:
            self.hellos.pop(conn.hello, None)
            conn.hello = None
        if conn.token_key is not None:
            self.by_token.remove(conn.token_key)
            conn.token_key = None
        unwatched = self.audience.drop(conn)
        if unwatched is not None and self.link is not None:
            with contextlib.suppress(Exception):
                await self.link.send(
                    self.link.message(
                        "watch", id=f"w-{secrets.token_hex(4)}", table=unwatched, on=False
                    )
                )

    async def _disconnect(self, conn: Connection) -> None:
        await self._detach(conn)

    def _error(self, conn: Connection, message_id: str | None, code: str, text: str) -> None:
        self.metrics.errors.labels(code).inc()
        conn.send(wire.message("error", id=message_id, code=code, message=text[:500]))

    # -- the outbox ------------------------------------------------------------------------

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
        if kind == "view":
            self._relay_view(msg)
        elif kind in ("joined", "left"):
            if kind == "joined":
                conn = self.hellos.pop(msg["id"], None)
                if conn is not None and conn.grant is not None:
                    conn.hello = None
                    self._seated(conn, msg)
            else:  # the player gave the seat up: none of its connections plays it now
                self.audience.detach_player(msg["table"], msg["player"], None)
            waiter = self.waiting.get(msg["id"])
            if waiter is not None and not waiter.done():
                waiter.set_result(msg)
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

    def _relay_view(self, msg: dict[str, Any]) -> None:
        table = msg["table"]
        waiter = self.created.get(table)
        if waiter is not None and not waiter.done():
            waiter.set_result(msg)
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
        waiter = self.waiting.get(message_id) if message_id else None
        if waiter is not None and not waiter.done():
            waiter.set_result(msg)
            return
        act = self.acts.pop(message_id, None) if message_id else None
        if act is not None:
            conn, client_id = act
            self._error(conn, client_id, msg["code"], msg["message"])
            return
        self.audience.relay_error(msg)


@web.middleware
async def _json_errors(request: web.Request, handler: Any) -> web.StreamResponse:
    """Unexpected failures answer JSON like every other error (code ``internal``)."""
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except REDIS_DOWN:
        response = _http_error(503, wire.UNAVAILABLE, "the game service is unreachable; retry")
        response.headers["Retry-After"] = "1"
        return response
    except Exception:
        log.exception("request_failed", path=request.path)
        return _http_error(500, wire.INTERNAL, "the gateway failed; try again")


def _act_id(player: str, client_id: str) -> str:
    """The stream id of a client's act: unique per table, so per player and client id.

    ``<player>.<client id>`` when it fits the 64 characters of a message id; a
    digest of both otherwise (cutting it short made two long client ids of one
    player collide, and the second was refused as a duplicate)."""
    full = f"{player}.{client_id}"
    if len(full) <= 64:
        return full
    digest = hashlib.sha256(f"{player}\0{client_id}".encode()).digest()
    return "h." + base64.urlsafe_b64encode(digest).decode().rstrip("=")


_EXISTS = (wire.DUPLICATE, wire.TABLE_EXISTS)  # a create that was applied before
_REQUEST_KEY = re.compile(r"[A-Za-z0-9_-]{8,64}")


def _request_key(request: web.Request, body: dict[str, Any]) -> tuple[str | None, Any]:
    """The client's idempotency key (body ``request`` or header ``Idempotency-Key``):
    the same key makes a retried create or join the same request."""
    key = body.get("request", request.headers.get("Idempotency-Key"))
    if key is None:
        return None, None
    if not isinstance(key, str) or not _REQUEST_KEY.fullmatch(key):
        return None, _http_error(400, wire.BAD_MESSAGE, "request must be 8..64 of [A-Za-z0-9_-]")
    return key, None


def _clean_name(name: Any) -> tuple[str | None, web.Response | None]:
    """The name cleaned as every worker wants it, or a 400 saying why not."""
    try:
        return wire.clean_name(name), None
    except wire.WireError as exc:
        return None, _http_error(400, exc.code, exc.message)


async def _json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except Exception:
        raise web.HTTPBadRequest(
            text=json.dumps({"code": wire.BAD_MESSAGE, "message": "the body must be JSON"}),
            content_type="application/json",
        ) from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(
            text=json.dumps({"code": wire.BAD_MESSAGE, "message": "the body must be an object"}),
            content_type="application/json",
        )
    return body


def _http_error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"code": code, "message": message}, status=status)


def run(settings: GatewaySettings) -> None:
    """Serve until SIGTERM/SIGINT (aiohttp then runs the graceful shutdown)."""
    gateway = Gateway(settings)
    web.run_app(
        gateway.app(), host=settings.host, port=settings.port, print=None, shutdown_timeout=5
    )
