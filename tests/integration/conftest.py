"""Fixtures of the integration tests: worker processes on the session's redis-server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from ..servers import RedisServer
from .procs import Workers


@pytest.fixture
def workers(
    redis_server: RedisServer, real_redis: redis.Redis, tmp_path: Path
) -> Iterator[Workers]:
    group = Workers(redis_server.url, tmp_path)
    yield group
    group.stop_all()
