"""Issue 55 through workers and Redis: a table waiting for its seats' seeds outlives the
worker that put it there. The new owner takes the reveals, and its timer deals at the
time the views said, with public seeds for the seats that did not reveal."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from dudo import wire
from dudo.engine.fairness import game_secret, public_client_seed
from dudo.link import GatewayLink
from dudo.run import table_worker
from dudo.table import Limits
from dudo.worker import Worker, WorkerSettings

from .test_worker import P, pump, stored

ANA, BEN = "ana-4f1c", "ben-7f3a"


def commit(seed: str) -> str:
    return hashlib.sha256(b"dudo-client/2:" + seed.encode()).hexdigest()


def worker(client: Any, name: str, **settings: Any) -> Worker:
    made = table_worker(
        WorkerSettings(partitions=P, worker_id=name, timer_interval=0.01, **settings),
        client=client,
        limits=Limits(seed_reveal_ms=600, partitions=P),
    )
    made.setup()
    made.heartbeat()
    return made


def test_a_table_waiting_for_seeds_outlives_its_worker(client: Any) -> None:
    link = GatewayLink(client, "gw-1", P)
    link.register()
    first = worker(client, "wa", lease_ms=300)
    link.send(link.message("create", id="c1", table="t1", rules={"preset": "classic"},
                           seats=[{"kind": "open"}] * 2))  # fmt: skip
    for i, seed in enumerate((ANA, BEN)):
        link.send(link.message("join", id=f"j{i}", table="t1", player=f"p{i}", name=f"P{i}",
                               seed_commitment=commit(seed)))  # fmt: skip
    pump(first, link)
    waiting = stored(client, "t1")
    assert waiting.seeding and waiting.game is None
    server_seed = waiting.server_seed

    # The worker dies (it never runs again); another takes its partitions.
    time.sleep(0.4)
    second = worker(client, "wb", dead_after_ms=200)
    link.send(link.message("seed", id="s0", table="t1", player=wire.public_id("p0"), seat=0,
                           seed=ANA))  # fmt: skip
    deadline = time.monotonic() + 10
    while stored(client, "t1").game is None:  # Ben never reveals: the timer deals
        assert time.monotonic() < deadline, "the wait for seeds never ended"
        pump(second, link, 1)
        time.sleep(0.05)
    dealt = stored(client, "t1")
    assert dealt.status == "playing" and dealt.server_seed == server_seed
    assert dealt.dealt == [[commit(ANA), ANA], [commit(BEN), None]]
    assert dealt.game.secret == game_secret(server_seed, [ANA, public_client_seed("t1", 1)])
