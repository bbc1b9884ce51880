"""Real worker processes on a real redis-server: ordering, kill -9, rebalancing, shutdown."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from dudo import keys
from dudo.bench.driver import TableDriver
from dudo.engine import seat_view, to_bytes
from dudo.link import GatewayLink
from dudo.table import Table

from ..servers import RedisServer

P = 8
FAST = ["--lease-ms", "1500", "--heartbeat", "0.2", "--dead-after-ms", "1000"]


class Workers:
    """Starts and stops `dudo worker` processes; their logs go to the test's temp dir."""

    def __init__(self, url: str, folder: Path) -> None:
        self.url = url
        self.folder = folder
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, *extra: str) -> subprocess.Popen[bytes]:
        log = open(self.folder / f"{name}.log", "wb")  # noqa: SIM115 - lives with the process
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dudo",
                "worker",
                "--redis",
                self.url,
                "--partitions",
                str(P),
                "--id",
                name,
                "--log-level",
                "info",
                *FAST,
                *extra,
            ],
            stdout=log,
            stderr=log,
        )
        self.procs[name] = proc
        return proc

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        self.procs[name].send_signal(sig)
        self.procs[name].wait(10)

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


@pytest.fixture
def workers(
    redis_server: RedisServer, real_redis: redis.Redis, tmp_path: Path
) -> Iterator[Workers]:
    group = Workers(redis_server.url, tmp_path)
    yield group
    group.stop_all()


def owners(client: redis.Redis) -> dict[int, str]:
    """Partition -> worker holding a live lease."""
    out = {}
    for p in range(P):
        raw = client.get(keys.lease(p))
        if raw:
            _, owner, _ = raw.decode().split("|")
            if owner:
                out[p] = owner
    return out


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_actions_of_a_table_apply_in_the_order_sent_with_several_workers(
    workers: Workers, real_redis: redis.Redis
) -> None:
    workers.start("w1")
    workers.start("w2")
    wait_for(lambda: len(set(owners(real_redis).values())) == 2, 10, "two workers sharing")
    link = GatewayLink(real_redis, "gw-order", P)
    tables = [f"ord{i}" for i in range(16)]
    driver = TableDriver(link, seats=4)
    driver.create(tables)
    openers: dict[str, int] = {}
    deadline = time.monotonic() + 20
    while len(openers) < len(tables):
        assert time.monotonic() < deadline
        for msg in link.read(block_ms=100):
            if msg["type"] == "view" and msg["status"] == "playing":
                openers.setdefault(msg["table"], msg["game"]["opener"])
    # Twelve raises per table, each legal only after the one before it, written
    # back to back without waiting; a third worker joins in the middle.
    raises = [(q, f) for q in (1, 2) for f in (2, 3, 4, 5, 6)] + [(3, 2), (3, 3)]
    for step, (q, f) in enumerate(raises):
        if step == 6:
            workers.start("w3")
        batch = []
        for tid in tables:
            seat = (openers[tid] + step) % 4
            batch.append(
                link.message(
                    "act",
                    id=f"{tid}-o{step}",
                    table=tid,
                    player=f"{tid}-p{seat}",
                    seat=seat,
                    action={"type": "bid", "quantity": q, "face": f},
                )
            )
        link.send(*batch)

    def all_applied() -> bool:
        return all(
            Table.from_bytes(real_redis.hget(keys.table_of(t, P), "s")).game.version == len(raises)
            for t in tables
        )

    wait_for(all_applied, 20, "every raise applied")
    for tid in tables:
        game = Table.from_bytes(real_redis.hget(keys.table_of(tid, P), "s")).game
        assert [(q, f) for _, q, f in game.bids] == raises
    errors = [m for m in link.read(block_ms=100) if m["type"] == "error"]
    assert errors == []
    wait_for(lambda: len(set(owners(real_redis).values())) == 3, 10, "three workers sharing")


def play(
    workers: Workers, client: redis.Redis, *, kill: bool
) -> tuple[dict[str, Any], TableDriver]:
    """Forty 4-seat tables played to the end by bots; optionally kill -9 a worker mid-way."""
    client.flushall()
    workers.start("wa", "--seed", "42")
    workers.start("wb", "--seed", "42")
    wait_for(lambda: len(set(owners(client).values())) == 2, 10, "two workers sharing")
    link = GatewayLink(client, "gw-kill", P)
    driver = TableDriver(link, seats=4, seed=9, resend_after=1.5)
    driver.create([f"k{i}" for i in range(40)])
    started = time.monotonic()
    killed = False
    deadline = started + 120
    while not driver.done:
        assert time.monotonic() < deadline, "games did not finish"
        driver.pump(block_ms=50)
        if kill and not killed and driver.applied > 1500:
            workers.kill("wa")  # in the middle of heavy traffic
            killed = True
    assert killed == kill
    if kill:  # the survivor took over every partition of the dead worker
        assert set(owners(client).values()) == {"wb"}
    finals = {}
    for tid in driver.tables:
        table = Table.from_bytes(client.hget(keys.table_of(tid, P), "s"))
        finals[tid] = (table.version, to_bytes(table.game))
        for seat, view in driver.tables[tid].last_views.items():
            assert view["version"] == table.version
            assert view["game"] == seat_view(table.game, seat)
    for name in ("wa", "wb"):
        if workers.procs[name].poll() is None:
            workers.kill(name, signal.SIGTERM)
    return finals, driver


def test_kill_9_loses_nothing_and_applies_everything_once(
    workers: Workers, real_redis: redis.Redis
) -> None:
    calm, calm_driver = play(workers, real_redis, kill=False)
    rough, rough_driver = play(workers, real_redis, kill=True)
    assert calm_driver.errors == []
    # The only errors allowed after the kill: duplicates of actions resent while
    # the partitions moved, which took effect once already.
    assert {e["code"] for e in rough_driver.errors} <= {"duplicate"}
    assert rough == calm, "every table ends exactly as in the run without the kill"
    assert sum(t.actions for t in rough_driver.tables.values()) == sum(
        t.actions for t in calm_driver.tables.values()
    )
    for p in range(P):
        assert real_redis.xpending(keys.inbox(p), keys.CONSUMER_GROUP)["pending"] == 0


def test_workers_rebalance_when_joining_and_leaving(
    workers: Workers, real_redis: redis.Redis
) -> None:
    workers.start("r1")
    wait_for(
        lambda: set(owners(real_redis).values()) == {"r1"} and len(owners(real_redis)) == P,
        10,
        "r1 holding every partition",
    )
    workers.start("r2")

    def fair() -> bool:
        held = list(owners(real_redis).values())
        return len(held) == P and held.count("r1") == held.count("r2") == P // 2

    wait_for(fair, 10, "an even split")
    workers.kill("r2")  # no goodbye: its leases must expire
    wait_for(lambda: list(owners(real_redis).values()).count("r1") == P, 10, "r1 taking all back")


def test_sigterm_finishes_releases_and_exits(workers: Workers, real_redis: redis.Redis) -> None:
    proc = workers.start("s1")
    wait_for(lambda: len(owners(real_redis)) == P, 10, "leases taken")
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    assert time.monotonic() - started < 5
    assert owners(real_redis) == {}  # released, not left to expire
    assert real_redis.zscore(keys.WORKERS, "s1") is None
    log = (workers.folder / "s1.log").read_text()
    assert '"event": "worker_stopped"' in log and '"worker": "s1"' in log


def test_a_worker_with_another_partition_count_refuses_to_start(
    workers: Workers, real_redis: redis.Redis
) -> None:
    real_redis.hset(keys.CONFIG, mapping={"partitions": 16, "protocol": 1})
    proc = workers.start("m1")
    assert proc.wait(20) == 2
    assert "16 partitions" in (workers.folder / "m1.log").read_text()


def test_structured_logs_carry_table_partition_and_ids(
    workers: Workers, real_redis: redis.Redis
) -> None:
    workers.start("l1", "--log-level", "debug")
    link = GatewayLink(real_redis, "gw-log", P)
    link.send(
        link.message("create", id="c-log", table="logt", rules={}, seats=[{"kind": "open"}] * 2)
    )
    wait_for(lambda: real_redis.hget(keys.table_of("logt", P), "s"), 10, "table created")
    workers.kill("l1", signal.SIGTERM)
    lines = [json.loads(line) for line in (workers.folder / "l1.log").read_text().splitlines()]
    created = [line for line in lines if line.get("event") == "table_created"]
    assert created and created[0]["table"] == "logt" and created[0]["id"] == "c-log"
    assert created[0]["partition"] == keys.partition_of("logt", P)
