"""Shared fixtures: real Redis servers for integration tests, fakeredis for unit tests."""

from __future__ import annotations

from collections.abc import Iterator

import fakeredis
import pytest
import redis

from .servers import RedisCluster, RedisServer


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture
def real_redis(redis_server: RedisServer) -> Iterator[redis.Redis]:
    """A clean database on the session's own redis-server, its ACL log emptied too (a
    gateway revoked at the end of an earlier test may still try to AUTH as it goes: that
    refusal belongs to that test, not to the next one that reads the log)."""
    client = redis_server.client()
    client.flushall()
    client.acl_log_reset()
    yield client
    client.close()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    cluster = RedisCluster(tmp_path_factory.mktemp("cluster"))
    yield cluster
    cluster.stop()


@pytest.fixture
def fake_redis() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis(server=fakeredis.FakeServer())
