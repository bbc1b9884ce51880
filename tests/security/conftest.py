"""Two apps that do not trust each other, on a real redis-server (docs/security.md).

``web`` is an honest app; ``club`` is driven by an attacker who holds everything its
operator holds: its gateway's Redis URL and password, and its app's private identity
key. The deployment runs in this process (a worker, a director, the ratings keeper),
connected as the admin, so each test drives it step by step."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis

from dudo import wire
from dudo.auth.identity import new_key, public_jwks
from dudo.bots.policies import baseline, my_turn
from dudo.infra import keyring
from dudo.infra.log import configure
from dudo.link import GatewayLink
from dudo.ops import admin
from dudo.run import table_worker
from dudo.run.director import director, ratings_keeper
from dudo.table import Table
from dudo.wire import keys
from dudo.wire.signing import key_of_password
from dudo.worker import Worker, WorkerSettings

from ..integration.conftest import deployment, irc_server, workers  # noqa: F401 (fixtures)
from ..servers import RedisServer

P, D = 4, 2
configure("warning")


@dataclass
class App:
    """An admitted app: its gateway's Redis user and link, its identity key."""

    name: str
    gateway: str
    password: str
    key: str  # the app backend's private key (PEM)
    client: redis.Redis  # as its gateway's own Redis user
    link: GatewayLink
    seen: list[dict[str, Any]] = field(default_factory=list)

    def send(self, kind: str, **fields: Any) -> dict[str, Any]:
        msg = self.link.message(kind, **fields)
        self.link.send(msg)
        return msg

    def read(self) -> list[dict[str, Any]]:
        got = self.link.read(block_ms=None, count=1000)
        self.seen.extend(got)
        return got


@dataclass
class Deployment:
    server: RedisServer
    admin: redis.Redis
    worker: Worker
    director: Worker
    ratings: Worker
    web: App
    club: App

    def pump(self, cycles: int = 4) -> None:
        for _ in range(cycles):
            for loop in (self.worker, self.director, self.ratings):
                loop.run_once()
            for app in (self.web, self.club):
                app.read()

    def table(self, tid: str) -> Table:
        return Table.from_bytes(self.admin.hget(keys.table_of(tid, P), "s"))

    def dead(self, tid: str) -> list[str]:
        found = self.admin.xrange(keys.dead_letters(keys.partition_of(tid, P)))
        return [f[b"reason"].decode() for _, f in found]


def _app(server: RedisServer, client: redis.Redis, name: str) -> App:
    gateway = f"{name}-1"
    password = admin.add_gateway(client, gateway, app=name)
    key = new_key()
    admin.add_app(client, name, public_jwks(key))
    user = redis.Redis.from_url(admin.url_for(server.url, gateway, password))
    link = GatewayLink(user, gateway, P, D, signer=key_of_password(password), confined=True)
    # Registered as any admitted gateway registers: its own presence key.
    user.set(keys.presence(gateway), "view", px=keys.PRESENCE_TTL_MS)
    return App(name, gateway, password, key, user, link)


@pytest.fixture
def d(redis_server: RedisServer, real_redis: redis.Redis) -> Iterator[Deployment]:
    """The deployment, with web (honest) and club (the attacker's) admitted."""
    client = real_redis
    # A small quota, so that a flood shows (dudo.worker.quota).
    # Short idle waits: each test drives the loops by hand, cycle by cycle.
    settings = WorkerSettings(partitions=P, worker_id="w1", seed=3, gateway_entries_per_s=50,
                              idle_block_ms=2)  # fmt: skip
    worker = table_worker(settings, client=client)
    loop = director(WorkerSettings(partitions=D, worker_id="d1", seed=3), P, client, pace_ms=0)
    keeper = ratings_keeper(WorkerSettings(worker_id="r1"), client, director_partitions=D)
    for each in (loop, keeper):  # a director idles long (its CPU): not while a test drives it
        each.settings.idle_block_ms = 2
    for each in (worker, loop, keeper):
        each.setup()  # the partition counts stored: a gateway's user gets those inboxes
    keyring.start_signing(client, wait_s=0)  # nothing of ours runs yet: check from now on
    web, club = _app(redis_server, client, "web"), _app(redis_server, client, "club")
    for each in (worker, loop, keeper):
        each.heartbeat()
    yield Deployment(redis_server, client, worker, loop, keeper, web, club)
    for app in (web, club):
        app.client.close()
    for name in admin.gateways(client):
        admin.revoke_gateway(client, name)


def handle(player: str) -> str:
    return wire.public_id(player)


def play_out(
    d: Deployment, app: App, table: str, limit: int = 400, moves: int | None = None
) -> None:
    """``app``'s players at ``table`` play it to the end, or ``moves`` moves applied (the
    baseline bot decides for each), acting as a gateway does: by the holder's handle,
    through this gateway."""
    acted: set[tuple[int, int]] = set()
    start = d.table(table).version
    for _ in range(limit):
        d.pump(2)
        if d.table(table).status == "over":
            return
        if moves is not None and d.table(table).version - start >= moves:
            return
        views = [m for m in app.seen if m["type"] == "view" and m["table"] == table]
        if not views:
            continue
        view = max(views, key=lambda m: m["version"])
        for private, holder in zip(view["seats"], view["holders"], strict=True):
            snapshot = wire.seat_snapshot(view, private)
            if view["status"] == "playing" and my_turn(snapshot):
                key = (view["version"], private["seat"])
                if key not in acted:
                    acted.add(key)
                    action = baseline(snapshot, random.Random(1))
                    app.send("act", id=f"a{len(acted)}", table=table, player=holder,
                             seat=private["seat"], action=action)  # fmt: skip
    raise AssertionError(f"{table} did not end")
