"""The worker tests run on fakeredis (fast) and on the session's real redis-server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(params=["fakeredis", "redis-server"])
def client(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "fakeredis":
        yield request.getfixturevalue("fake_redis")
    else:
        yield request.getfixturevalue("real_redis")
