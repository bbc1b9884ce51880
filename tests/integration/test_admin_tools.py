"""`dudo admin` on a live deployment (real worker processes, a real redis-server): the
partitions with their owners, lag and dead letters; a table without its dice unless
revealed; dead letters listed, shown and replayed; a worker drained and undrained;
limits set for every gateway while they run."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import aiohttp
import redis

from dudo import wire
from dudo.link import GatewayLink
from dudo.ops import inspect as ops
from dudo.wire import keys

from ..servers import RedisServer
from .procs import P, Workers, owners, wait_for


def admin(redis_server: RedisServer, *args: str) -> Any:
    out = subprocess.run(
        [sys.executable, "-m", "dudo", "admin", *args, "--redis", redis_server.url, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def playing_table(link: GatewayLink, table: str) -> dict[str, Any]:
    link.send(link.message("create", id=f"c-{table}", table=table, rules={"preset": "classic"},
                           seats=[{"kind": "open"}] * 2))  # fmt: skip
    link.send(link.message("join", id=f"j0-{table}", table=table, player="pa", name="Ana"))
    link.send(link.message("join", id=f"j1-{table}", table=table, player="pb", name="Ben"))
    while True:
        for msg in link.read(block_ms=200):
            if msg["type"] == "view" and msg["status"] == "playing":
                return msg


def test_partitions_table_and_dead_letters_as_an_operator_sees_them(
    workers: Workers, real_redis: redis.Redis, redis_server: RedisServer
) -> None:
    workers.start("a1")
    wait_for(lambda: len(owners(real_redis)) == P, 10, "leases taken")
    link = GatewayLink(real_redis, "gw-ops", P)
    view = playing_table(link, "opst")

    rows = admin(redis_server, "partitions")
    assert [r["partition"] for r in rows] == list(range(P))
    assert {r["owner"] for r in rows} == {"a1"} and all(r["lease_ms_left"] > 0 for r in rows)
    assert all(r["lag"] == 0 and r["pending"] == 0 for r in rows)
    assert sum(r["listed"] for r in rows) == 1  # the table, being played, is listed

    # A table without its dice; with --reveal, every hand (and the log says so).
    seen = admin(redis_server, "table", "opst")
    assert seen["status"] == "playing" and [s["name"] for s in seen["seats"]] == ["Ana", "Ben"]
    assert "hands" not in seen and "dice" not in json.dumps(seen["game"]).replace(
        "dice_counts", ""
    ).replace("dice_in_play", "").replace("start_dice", "").replace("max_dice", "")
    assert seen["seats"][0]["player"] == wire.public_id("pa")  # never the player id itself
    revealed = admin(redis_server, "table", "opst", "--reveal")
    ana = view["holders"].index(wire.public_id("pa"))
    mine = view["seats"][ana]["dice"]
    assert sorted(revealed["hands"][0]) == sorted(mine)

    # A dead letter: listed, shown (its raw message decoded), replayed.
    partition = keys.partition_of("opst", P)
    link.send_raw("opst", b"\x92\x01not a map")
    turn = view["game"]["turn"]
    private = next(p for p in view["seats"] if p["seat"] == turn)
    face = next(f for f in range(2, 7) if private["legal"]["bid"][f - 1] is not None)
    action = {"type": "bid", "quantity": private["legal"]["bid"][face - 1], "face": face}
    player = view["holders"][view["seats"].index(private)]
    move = link.message("act", id="w-late", table="opst", player=player, seat=turn,
                        action=action)  # fmt: skip
    good = wire.encode(move)
    real_redis.xadd(keys.dead_letters(partition), {"entry": "0-1", "reason": "test: parked",
                                                   "m": good})  # fmt: skip
    wait_for(lambda: len(admin(redis_server, "dead", "list")) == 2, 10, "the dead letters")
    letters = admin(redis_server, "dead", "list")
    assert {d["reason"].split(":")[0] for d in letters} == {"bad_message", "test"}
    parked = next(d for d in letters if d["reason"] == "test: parked")
    shown = admin(redis_server, "dead", "show", parked["id"], "--partition", str(partition))
    assert shown["message"]["id"] == "w-late" and shown["type"] == "act"
    version = real_redis.hget(keys.table_of("opst", P), "v")
    admin(redis_server, "dead", "replay", parked["id"], "--partition", str(partition))
    wait_for(lambda: real_redis.hget(keys.table_of("opst", P), "v") != version, 10, "applied")
    assert len(admin(redis_server, "dead", "list")) == 1  # the replayed one is gone
    # Replaying the same message again changes nothing: a duplicate id is refused.
    real_redis.xadd(keys.dead_letters(partition), {"entry": "0-2", "reason": "again", "m": good})
    again = admin(redis_server, "dead", "list", "--partition", str(partition))[0]
    version = real_redis.hget(keys.table_of("opst", P), "v")
    admin(redis_server, "dead", "replay", again["id"], "--partition", str(partition))
    errors = []
    wait_for(lambda: errors.extend(m for m in link.read(block_ms=100) if m["type"] == "error")
             or errors, 10, "the duplicate refused")  # fmt: skip
    assert errors[0]["code"] == wire.DUPLICATE
    assert real_redis.hget(keys.table_of("opst", P), "v") == version


def test_a_drained_worker_hands_everything_to_the_others_and_says_not_ready(
    workers: Workers, real_redis: redis.Redis, redis_server: RedisServer
) -> None:
    from ..servers import free_port
    from .test_metrics import scrape, value

    port = free_port()
    workers.start("d1", "--health-port", str(port))
    workers.start("d2")
    wait_for(lambda: set(owners(real_redis).values()) == {"d1", "d2"}, 15, "an even split")
    assert admin(redis_server, "drain", "d1") == ["d1"]
    wait_for(lambda: set(owners(real_redis).values()) == {"d2"}, 15, "d2 holding everything")
    wait_for(lambda: value(scrape(port), "dudo_partitions_owned", role="worker") == 0, 10, "0")
    import urllib.error
    import urllib.request

    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=3)
        raise AssertionError("a drained worker said ready")
    except urllib.error.HTTPError as exc:
        assert exc.code == 503 and "drained" in exc.read().decode()
    assert admin(redis_server, "drain", "d1", "--undo") == []
    wait_for(lambda: set(owners(real_redis).values()) == {"d1", "d2"}, 15, "shared again")


def test_limits_set_for_every_gateway_apply_while_they_run(
    workers: Workers, real_redis: redis.Redis, redis_server: RedisServer
) -> None:
    workers.start("l1")
    base = workers.gateway("gw-l", "--rate-per-s", "50", "--burst", "50")
    with_bad = subprocess.run(
        [sys.executable, "-m", "dudo", "admin", "limits", "set", "burst=0", "--redis",
         redis_server.url], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert with_bad.returncode == 2 and "burst must be within" in with_bad.stderr
    assert admin(redis_server, "limits", "set", "rate_per_s=1", "burst=2") == {
        "rate_per_s": 1.0, "burst": 2.0,
    }  # fmt: skip

    async def pings() -> list[str]:
        async with aiohttp.ClientSession() as session, session.ws_connect(f"{base}/ws") as ws:
            await asyncio.sleep(3)  # the gateway's heartbeat (2 s) reads the limits
            for i in range(5):
                await ws.send_json({"v": 1, "type": "ping", "id": f"p{i}"})
            got = []
            for _ in range(5):
                got.append((await ws.receive_json(timeout=5))["type"])
            return got

    answers = asyncio.run(pings())
    assert answers.count("pong") == 2 and answers.count("error") == 3  # burst 2, then 1/s
    assert admin(redis_server, "limits", "unset", "rate_per_s", "burst") == {}
    assert ops.limits(real_redis) == {}
