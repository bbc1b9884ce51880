"""Issue 50, item 10 (and 6): a gateway's memory hash took any number of fields of any
size (48 × 1 MB kept, no time to live), its presence any value (128 MB), and Redis has
no limit to give a user. The deployment keeps one: the warden (the table worker holding
partition 0) measures each admitted gateway's own keys, exports it, and revokes a
gateway past the hard limit, deleting its keys. On a real redis-server."""

from __future__ import annotations

import json

import pytest
import redis
from prometheus_client import generate_latest

from dudo.ops import admin
from dudo.wire import keys
from dudo.worker.metrics import REGISTRY
from dudo.worker.warden import Budget, Warden

from .conftest import Deployment

MB = 1024 * 1024


def _patrol(d: Deployment, soft: int = 1 * MB, hard: int = 8 * MB) -> list[str]:
    d.worker.warden = Warden(d.admin, Budget(soft, hard), d.worker.metrics)
    d.worker.heartbeat()  # it holds partition 0: its heartbeat makes the round
    return sorted(admin.revoked(d.admin))


def test_a_gateway_past_its_memory_budget_is_revoked_and_its_keys_freed(
    d: Deployment,
) -> None:
    memory = keys.gateway_memory(d.club.gateway)
    for i in range(12):  # 12 MB in its own memory hash (the audit: 48)
        d.club.client.hset(memory, f"f{i}", b"x" * MB)
    d.web.client.hset(keys.gateway_memory(d.web.gateway), "rooms", b"what a chat keeps")
    assert _patrol(d) == [d.club.gateway]
    why = admin.revoked(d.admin)[d.club.gateway]
    assert why["bytes"] > 8 * MB and "over the hard limit" in why["reason"]
    with pytest.raises((redis.ConnectionError, redis.AuthenticationError, redis.ResponseError)):
        d.club.client.ping()  # its user is gone, its connections closed
    assert not d.admin.exists(memory)  # what it wrote costs Redis nothing more
    assert d.club.gateway not in admin.gateways(d.admin)
    assert d.web.client.ping() and d.web.gateway in admin.gateways(d.admin)
    exported = generate_latest(REGISTRY).decode()
    assert f'dudo_gateway_memory_bytes{{gateway="{d.web.gateway}"}}' in exported
    assert 'dudo_gateway_memory_budget_bytes{limit="hard"} 8.388608e+06' in exported
    # Admitted again by an operator, it is no longer listed as revoked.
    admin.add_gateway(d.admin, d.club.gateway, app="club")
    assert admin.revoked(d.admin) == {}


def test_a_huge_presence_or_countless_fields_are_past_the_budget_too(d: Deployment) -> None:
    d.club.client.set(keys.presence(d.club.gateway), b"v" * (10 * MB), px=60_000)
    assert _patrol(d) == [d.club.gateway]
    record = json.loads(d.admin.hget(keys.REVOKED, d.club.gateway))
    assert record["bytes"] > 10 * MB
    # A web gateway with too many fields in its memory: over, unmeasured (measuring it
    # exactly would cost Redis time in proportion to its fields).
    pipe = d.web.client.pipeline(transaction=False)
    for i in range(1500):
        pipe.hset(keys.gateway_memory(d.web.gateway), f"k{i}", b"1")
    pipe.execute()
    assert _patrol(d) == sorted([d.club.gateway, d.web.gateway])
    assert "fields" in admin.revoked(d.admin)[d.web.gateway]["reason"]


def test_a_gateway_within_its_budget_is_left_alone_and_only_the_warden_measures(
    d: Deployment,
) -> None:
    d.club.client.hset(keys.gateway_memory(d.club.gateway), "rooms", b"x" * 100_000)
    assert _patrol(d) == []
    assert d.club.client.ping()
    assert d.worker.warden is not None and d.worker.warden.on_duty
    d.worker.partitions.pop(0)  # partition 0 went to another worker
    d.worker._keep_budgets()
    assert not d.worker.warden.on_duty
    assert "dudo_gateway_memory_bytes{" not in generate_latest(REGISTRY).decode()
