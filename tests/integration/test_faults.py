"""Hostile input and failing infrastructure, against real worker processes on a real Redis.

Each test here reproduces a defect of issue 10 as an operator or a hostile client
would meet it, and checks the behaviour that must hold instead.
"""

from __future__ import annotations

import msgpack
import redis

from dudo import keys, wire
from dudo.link import GatewayLink
from dudo.table import Table

from .procs import P, Workers, owners, wait_for


def test_one_malformed_entry_does_not_stop_any_worker(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """A ``create`` whose ``rules.preset`` is a list used to raise out of decoding: the
    owner died, the next owner replayed it and died too, and the partition stopped."""
    workers.start("p1")
    workers.start("p2")
    wait_for(lambda: len(set(owners(real_redis).values())) == 2, 10, "two workers sharing")
    link = GatewayLink(real_redis, "gw-poison", P)
    base = {"v": 1, "type": "create", "gateway": link.id, "seats": [{"kind": "open"}] * 2}
    for i, preset in enumerate([[], {}, [1, 2], {"x": None}]):
        link.send_raw(
            "pz",
            msgpack.packb({**base, "id": f"bad{i}", "table": "pz", "rules": {"preset": preset}}),
        )
    link.send(link.message("create", id="good", table="pz", rules={}, seats=base["seats"]))
    got: list[dict] = []
    wait_for(
        lambda: got.extend(link.read(block_ms=100)) or any(m["type"] == "view" for m in got),
        15,
        "the good create applied",
    )
    assert {m["id"]: m["code"] for m in got if m["type"] == "error"} == {
        f"bad{i}": wire.BAD_RULES for i in range(4)
    }
    assert all(proc.poll() is None for proc in workers.procs.values()), "a worker died"
    table = Table.from_bytes(real_redis.hget(keys.table_of("pz", P), "s"))
    assert table.status == "open"
    assert real_redis.xlen(keys.dead_letters(keys.partition_of("pz", P))) == 4
