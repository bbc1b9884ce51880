"""One bot service fills and plays a thousand bot seats through a real worker."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import redis

from dudo.infra.connection import connect
from dudo.link import GatewayLink
from dudo.run.bots import BotService
from dudo.table import Table
from dudo.wire import keys

from .procs import P, Workers, owners, wait_for


def test_one_service_fills_and_plays_a_thousand_seats(
    redis_server: object, real_redis: redis.Redis, tmp_path: Path
) -> None:
    workers = Workers(redis_server.url, tmp_path)  # type: ignore[attr-defined]
    try:
        workers.start("bw1")
        wait_for(lambda: len(owners(real_redis)) == P, 10, "leases taken")
        link = GatewayLink(real_redis, "gw-host", P)
        tables = [f"bt{i}" for i in range(250)]
        plan = [{"kind": "bot", "level": level} for level in ("easy", "normal", "hard", "normal")]
        link.send(
            *[
                link.message(
                    "create",
                    id=f"c-{t}",
                    table=t,
                    rules={"preset": "classic", "start_dice": 2},
                    seats=plan,
                )
                for t in tables
            ]
        )
        service = BotService(connect(redis_server.url), P, scan_every=0.2)  # type: ignore[attr-defined]
        thread = threading.Thread(target=service.run, daemon=True)
        thread.start()

        def finished() -> int:
            pipe = real_redis.pipeline()
            for t in tables:
                pipe.hget(keys.table_of(t, P), "s")
            return sum(
                1 for blob in pipe.execute() if blob and Table.from_bytes(blob).status == "over"
            )

        started = time.monotonic()
        wait_for(lambda: finished() == len(tables), 120, "every table finished")
        service.stop()
        thread.join(10)
        table = Table.from_bytes(real_redis.hget(keys.table_of(tables[0], P), "s"))
        assert [s.bot for s in table.seats] == ["easy", "normal", "hard", "normal"]
        assert all(s.gateway == service.service_id for s in table.seats)
        assert time.monotonic() - started < 120
    finally:
        workers.stop_all()
