"""Fixtures of the integration tests: worker processes on the session's redis-server; an
IRC server (ngIRCd), a Matrix homeserver (Synapse) and a deployment for the chat
gateways."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from dudo.ops import admin
from dudo.wire import keys

from ..irc import IrcServer
from ..matrix import SynapseServer
from ..servers import RedisServer
from .procs import Workers, wait_for


@pytest.fixture
def workers(
    redis_server: RedisServer, real_redis: redis.Redis, tmp_path: Path
) -> Iterator[Workers]:
    group = Workers(redis_server.url, tmp_path)
    yield group
    group.stop_all()


@pytest.fixture
def irc_server(tmp_path: Path) -> Iterator[IrcServer]:
    server = IrcServer(tmp_path / "ngircd")
    yield server
    server.stop()


@pytest.fixture
def synapse(tmp_path: Path) -> Iterator[SynapseServer]:
    server = SynapseServer(tmp_path / "synapse")
    yield server
    server.stop()


@pytest.fixture
def deployment(
    redis_server: RedisServer, real_redis: redis.Redis, workers: Workers
) -> Iterator[tuple[Workers, str]]:
    """A worker and a bot service; the chat gateway's own Redis user (its URL)."""
    workers.start("w1")
    workers.bots("b1")
    wait_for(lambda: real_redis.zcard(keys.GATEWAYS) >= 1, 15, "the bot service")
    password = admin.add_gateway(real_redis, "irc-1")
    yield workers, admin.url_for(redis_server.url, "irc-1", password)
    for name in admin.gateways(real_redis):
        admin.revoke_gateway(real_redis, name)
