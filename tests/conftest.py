"""Shared fixtures: real Redis servers for integration tests, fakeredis for unit tests."""

from __future__ import annotations

from collections.abc import Iterator

import fakeredis
import pytest
import redis

from .servers import RedisCluster, RedisServer

# The longest test by far (a chaos run of two storms and their audits: ~50 s alone, up to
# ~240 s beside the rest of the suite under -n 4) starts first, so that it runs beside the
# others instead of after them: where it fell in collection order, two thirds into one
# worker's share, it set the suite's end.
FIRST = ("tests/integration/test_chaos.py::",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(FIRST))  # stable: the rest as found


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture
def real_redis(redis_server: RedisServer) -> Iterator[redis.Redis]:
    """A clean database on the session's own redis-server."""
    client = redis_server.client()
    client.flushall()
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
