"""The web gateway: HTTP lobby API, WebSocket play, the browser client, health and metrics.

A gateway is thin and replaceable. It turns people's HTTP requests and
WebSocket messages into stream messages on the tables' inboxes, and hands
back, from its own outbox, the views of exactly the seats it hosts. It keeps
no game state and no credential of its own: a restarted gateway (or any other
instance of the deployment) picks up where this one was, because every seat
token is the deployment's, names a table and a player's handle, and the worker
that checks it re-attaches the seat on ``join``.

The code is in four places: this module (lifecycle, the outbox reader),
:mod:`~dudo.gateway.http` (the HTTP API), :mod:`~dudo.gateway.sockets` (the
WebSocket and the client protocol), :mod:`~dudo.gateway.audience` (who gets
which view). Routes:

- ``GET /`` and ``/static/*``: the browser client;
- ``GET /api/tables``: open tables; ``POST /api/tables``: create one (and take a
  seat); ``POST /api/tables/{id}/join``: take a seat; ``POST /api/tables/{id}/watch``:
  a spectator token;
- ``GET /api/leaderboard``, ``GET /api/players/{handle}``: ratings and an identity
  user's statistics; ``/api/tournaments...``: tournaments;
- ``GET /ws``: the WebSocket (client protocol in :mod:`dudo.wire.client`);
- ``GET /healthz``, ``/readyz``, ``/metrics``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import structlog
from aiohttp import WSCloseCode, web

from .. import wire
from ..link import OutboxHandlers, default_gateway_id
from ..wire import keys
from . import fastws
from .clients import Connection
from .guard import serve
from .http import HttpApi
from .intake import CLOSE_TIMEOUT
from .requests import json_errors
from .settings import GatewaySettings
from .sockets import Sockets
from .tournaments import ORGANIZE_ACTIONS, TournamentApi

__all__ = ["Gateway", "GatewaySettings", "default_gateway_id", "run"]

log = structlog.get_logger("dudo.gateway")


class Gateway(HttpApi, TournamentApi, Sockets):
    """The web gateway (its state: :class:`~dudo.gateway.state.GatewayState`): its routes,
    its life, and what comes back from the outbox."""

    def __init__(self, settings: GatewaySettings, redis_client: Any = None) -> None:
        handlers = OutboxHandlers(self._dispatch, on_heartbeat=self._on_heartbeat)
        super().__init__(settings, handlers, redis_client)

    # -- lifecycle ------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(
            client_max_size=64 * 1024, middlewares=[self.guard.middleware, json_errors]
        )
        app.add_routes(
            [
                web.get("/", self.index),
                web.get("/api/tables", self.list_tables),
                web.post("/api/tables", self.create_table),
                web.post("/api/tables/{table}/join", self.join_table),
                web.post("/api/quickplay", self.quick_play),
                web.post("/api/tables/{table}/watch", self.watch_table),
                web.get("/api/tournaments", self.list_tournaments),
                web.get("/api/leaderboard", self.leaderboard),
                web.get("/api/bots", self.bot_solves),
                web.get("/api/players/{handle}", self.player_profile),
                web.post("/api/tournaments", self.create_tournament),
                web.get("/api/tournaments/{tournament}", self.tournament_standings),
                web.get("/api/tournaments/{tournament}/results", self.tournament_results),
                web.post("/api/tournaments/{tournament}/register", self.register_tournament),
                web.post("/api/tournaments/{tournament}/begin", self.begin_tournament),
                web.post("/api/tournaments/{tournament}/unregister", self.unregister_tournament),
                *(
                    web.post(f"/api/tournaments/{{tournament}}/{action}", self.organize_tournament)
                    for action in ORGANIZE_ACTIONS
                ),
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

    def upgrade(self, head: bytes) -> asyncio.BufferedProtocol | None:
        """picows's protocol for a request head that is a plain WebSocket upgrade of
        ``/ws`` (:func:`~dudo.gateway.guard.serve` routes each connection by it)."""
        s = self.settings
        if s.ws_layer != "picows" or not fastws.wants_websocket(head, compress=s.ws_compress):
            return None
        return fastws.protocol(lambda request: fastws.FastSocket(self, request))

    async def _startup(self, _app: web.Application) -> None:
        await self.streams.open()
        self.streams.tasks.append(asyncio.create_task(self._watchdog()))
        self.streams.ready = True
        self.log.info("gateway_started", partitions=self.settings.partitions)

    async def _shutdown(self, _app: web.Application) -> None:
        """Close every WebSocket with 1001 (clients reconnect elsewhere) and deregister."""
        self.streams.ready = False
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
        if self.streams.link is not None:
            with contextlib.suppress(Exception):
                await self.streams.link.deregister()
        self.log.info("gateway_stopped")

    async def _cleanup(self, _app: web.Application) -> None:
        await self.streams.close()

    async def _watchdog(self) -> None:
        """Drop, every second, the connections whose current send has hung past
        ``send_timeout`` (a client that stopped reading with full buffers)."""
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            for conn in [c for c in self.sockets if c.stuck(now)]:
                self.log.info("client_too_slow", conn=conn.id)
                conn.drop_stuck()

    # -- limits set for every gateway (dudo admin limits) ---------------------------

    async def _on_heartbeat(self) -> None:
        raw = await self.streams.redis.hgetall(keys.LIMITS)
        found = {
            keys.as_text(k): float(v)
            for k, v in raw.items()
            if keys.as_text(k) in keys.ADJUSTABLE_LIMITS
        }
        if found != self._limits_seen:
            self._limits_seen = found
            self.apply_limits(found)

    def apply_limits(self, found: dict[str, float]) -> None:
        """The deployment's limits over this gateway's own flags (a limit unset returns
        to its flag), for new connections and those already open."""
        s = self.settings
        for name, (kind, _, _) in keys.ADJUSTABLE_LIMITS.items():
            setattr(s, name, kind(found.get(name, getattr(self._flags, name))))
        for per_key, per_min in ((self.creates, s.creates_per_min), (self.joins, s.joins_per_min)):
            per_key.rate, per_key.burst = per_min / 60, per_min
            for bucket in per_key.buckets.values():
                bucket.rate, bucket.burst = per_key.rate, per_key.burst
        for conn in self.sockets:
            conn.bucket.rate, conn.bucket.burst = s.rate_per_s, s.burst
            conn.resize_queue(s.send_queue)
        self.log.info("limits_applied", **found)

    # -- the outbox -----------------------------------------------------------------

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
                asked = self.pending.route(msg["id"])
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
        elif kind in ("registered", "entrant") or (kind == "tournament" and msg.get("id")):
            _settle(self.waiting, msg["id"], msg)
        elif kind == "tournament":
            _settle(self.created, f"t:{msg['tournament']}", msg)
            self.audience.relay_tournament(msg)
        elif kind == "moved":
            self.audience.moved(msg)

    def _relay_view(self, msg: dict[str, Any]) -> None:
        table = msg["table"]
        _settle(self.created, table, msg)
        sent_away: set[Connection] = set()
        for message_id in msg.get("applied", ()):
            # The sender's action went through: tell it, quoting its own id, before
            # the view that shows it.
            if self.debug:
                self.log.debug("act_applied", table=table, id=message_id, version=msg["version"])
            asked = self.pending.route(message_id)
            if asked is not None and asked[1] is not None:
                conn = asked[0]
                conn.send(wire.message("ack", id=asked[1], table=table, version=msg["version"]))
                grant = conn.grant
                if conn.seat is None and grant is not None and grant.kind == "entrant":
                    sent_away.add(conn)  # the step that ended its round moved it on
        now = time.perf_counter()
        if self.audience.relay_view(msg, sent_away):
            # Requests sent before this version are applied (or refused): time them.
            for seconds in self.pending.handled(table, msg["version"], now):
                self.metrics.latency.observe(seconds)
        if msg["status"] == "over":  # nothing will be applied there any more
            self.pending.table_over(table)

    def _relay_error(self, msg: dict[str, Any]) -> None:
        message_id = msg.get("id")
        if message_id and _settle(self.waiting, message_id, msg):
            return
        act = self.pending.refused(msg.get("table"), message_id) if message_id else None
        if act is not None:
            conn, client_id = act
            facts = {"facts": msg["facts"]} if "facts" in msg else {}
            self._error(conn, client_id, msg["code"], msg["message"], **facts)
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
    serve(
        gateway.app(), gateway.guard, host=settings.host, port=settings.port,
        upgrade=gateway.upgrade, event_loop=settings.event_loop,
    )  # fmt: skip
