"""Each gateway with a Redis user of its own (``dudo admin gateway``), on a real
redis-server: under it a gateway serves whole games, and Redis refuses it everything
else — a table's dice, leases, the dead letters, other gateways' outboxes, the
inboxes' contents, any write but an inbox append and its own keys. Revoking it cuts
its connections at once."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.exceptions import AuthenticationError, NoPermissionError, ResponseError

from dudo import wire
from dudo.infra import keyring
from dudo.ops import admin
from dudo.run.remote_bot import run as play_remote
from dudo.wire import keys

from ..servers import RedisServer, free_port
from .procs import Workers, wait_for


@pytest.fixture
def admin_client(real_redis: redis.Redis) -> Iterator[redis.Redis]:
    yield real_redis
    for name in admin.gateways(real_redis):
        admin.revoke_gateway(real_redis, name)
    real_redis.execute_command("ACL", "LOG", "RESET")


def connect(redis_server: RedisServer, gateway: str, password: str) -> redis.Redis:
    return redis.Redis.from_url(admin.url_for(redis_server.url, gateway, password))


def denied(admin_client: redis.Redis, user: str) -> list[str]:
    """What Redis refused this user, from its ACL log: command and key or channel."""
    found = []
    for entry in admin_client.acl_log(count=100):
        if entry.get("username") == user:
            found.append(f"{entry.get('context')} {entry.get('object')} {entry.get('reason')}")
    return found


def test_a_gateway_under_its_own_user_serves_a_whole_game(
    redis_server: RedisServer, admin_client: redis.Redis, tmp_path: Path
) -> None:
    group = Workers(redis_server.url, tmp_path)
    try:
        # The deployment runs first; then the first app is admitted (checking starts
        # only once its processes sign: none of their entries may be refused).
        group.start("w1")
        group.bots("b1")
        wait_for(lambda: admin_client.zcard(keys.GATEWAYS) >= 1, 15, "the bot service")
        password = admin.add_gateway(admin_client, "gw-a")
        url = admin.url_for(redis_server.url, "gw-a", password)
        base = group.gateway("gw-a", "--redis", url)
        outcome = asyncio.run(
            play_remote(
                base,
                level="normal",
                seed=3,
                name="Ana",
                think=(0.0, 0.0),
                create={"rules": {"preset": "classic", "start_dice": 2}, "seats": 2,
                        "bots": ["normal"]},
            )
        )  # fmt: skip
        assert outcome.winner is not None and outcome.moves > 0, outcome.text()
        assert outcome.refused == 0, outcome.text()
        assert denied(admin_client, admin.user_of("gw-a")) == []  # nothing it needed refused
        # Every entry was checked, and each bore its writer's signature: the gateway's,
        # the bot service's and the worker's own (dudo.wire.signing).
        assert keyring.internal_key(admin_client) is not None
        assert [admin_client.xlen(keys.dead_letters(p)) for p in range(8)] == [0] * 8
        assert admin_client.pttl(keys.presence("gw-a")) > 0  # registered itself, and only
    finally:
        group.stop_all()


def test_a_gateway_user_is_refused_everything_else(
    redis_server: RedisServer, admin_client: redis.Redis
) -> None:
    a = connect(redis_server, "gw-a", admin.add_gateway(admin_client, "gw-a"))
    admin.add_gateway(admin_client, "gw-b")
    table = keys.table_of("t1", 16)
    admin_client.hset(table, mapping={"v": 1, "s": b"the dice"})
    admin_client.set(keys.lease(3), "1|w1|0")
    admin_client.xadd(keys.dead_letters(3), {"m": b"x"})
    admin_client.xadd(keys.outbox("gw-b"), {"m": wire.encode({"secret": "b's player"})})
    admin_client.xadd(keys.inbox(3), {"m": b"someone's move"})
    admin_client.xadd(keys.outbox("gw-a"), {"m": b"a view for a's player"})

    # What a gateway does: allowed (its own inboxes: issue 50).
    a.xadd(keys.inbox(3, "gw-a"), {"m": b"a move"})
    a.xadd(keys.TOURNAMENTS.inbox(1, "gw-a"), {"m": b"a registration"})
    assert a.xread({keys.outbox("gw-a"): "0"}, count=1)
    a.xtrim(keys.outbox("gw-a"), maxlen=0)
    a.hgetall(keys.lobby(0))
    a.hgetall(keys.TOURNAMENTS.lobby(1))
    a.hget(keys.RATINGS.lobby(0), keys.RATINGS_ID)  # the leaderboard, by handle
    admin_client.hset(keys.BOT_SOLVES, "bots-1", b"{}")
    assert a.hgetall(keys.BOT_SOLVES)  # the bot services' endgame solves (GET /api/bots)
    with pytest.raises(NoPermissionError):
        a.hset(keys.BOT_SOLVES, "bots-1", b'{"done": 15, "of": 15, "at": 0}')  # read only
    a.set(keys.presence("gw-a"), "view", px=keys.PRESENCE_TTL_MS)
    a.zcount(keys.WORKERS, 0, "+inf")
    a.hset(keys.gateway_memory("gw-a"), "rooms", b"what the chat gateway remembers")
    assert a.hgetall(keys.gateway_memory("gw-a"))
    admin_client.hset(keys.gateway_memory("gw-b"), "rooms", b"b's players")
    # Its refused entries and why (the workers write them): its own to read and trim.
    admin_client.xadd(keys.refused("gw-a"), {"id": "c1", "code": "unauthorized"})
    admin_client.xadd(keys.refused("gw-b"), {"id": "c2", "code": "bad_message"})
    assert a.xrange(keys.refused("gw-a"))[0][1][b"id"] == b"c1"
    assert a.xread({keys.refused("gw-a"): "0"})
    a.xtrim(keys.refused("gw-a"), maxlen=0)

    refused = {
        "a table's record (its dice)": lambda: a.hgetall(table),
        "a tournament's record (player ids)": lambda: a.hgetall(keys.tournament_of("cup", 4)),
        "the ratings record (player ids)": lambda: a.hgetall(
            keys.RATINGS.record(0, keys.RATINGS_ID)
        ),
        "the deployment's keys": lambda: a.hgetall(keys.SECRETS),
        "the apps' keys": lambda: a.hgetall(keys.APPS),
        "a lease": lambda: a.get(keys.lease(3)),
        "the dead letters": lambda: a.xrange(keys.dead_letters(3)),
        "another gateway's outbox": lambda: a.xread({keys.outbox("gw-b"): "0"}),
        "writing to another gateway's outbox": lambda: a.xadd(keys.outbox("gw-b"), {"m": b"x"}),
        "writing to its own outbox (only workers do)": lambda: a.xadd(
            keys.outbox("gw-a"), {"m": b"x"}
        ),
        "trimming another gateway's outbox": lambda: a.xtrim(keys.outbox("gw-b"), maxlen=0),
        "another gateway's refused entries": lambda: a.xrange(keys.refused("gw-b")),
        "writing its own refused entries (only workers do)": lambda: a.xadd(
            keys.refused("gw-a"), {"code": "x"}
        ),
        "writing the deployment's inbox": lambda: a.xadd(keys.inbox(3), {"m": b"x"}),
        "writing another gateway's inbox": lambda: a.xadd(keys.inbox(3, "gw-b"), {"m": b"x"}),
        "another database (issue 50: never read nor expired)": lambda: a.execute_command(
            "SELECT", 7
        ),
        "reading its own inbox": lambda: a.xrange(keys.inbox(3, "gw-a")),
        "trimming its own inbox": lambda: a.xtrim(keys.inbox(3, "gw-a"), maxlen=0),
        "reading an inbox (others' moves)": lambda: a.xrange(keys.inbox(3)),
        "reading an inbox by XREAD": lambda: a.xread({keys.inbox(3): "0"}),
        "deleting an inbox": lambda: a.delete(keys.inbox(3)),
        "trimming an inbox": lambda: a.xtrim(keys.inbox(3), maxlen=0),
        "writing a table's record": lambda: a.hset(table, "s", b"more dice"),
        "writing a lobby": lambda: a.hset(keys.lobby(0), "t9", b"x"),
        "taking a lease": lambda: a.set(keys.lease(3), "9|me|0"),
        "scripts": lambda: a.eval("return redis.call('GET', KEYS[1])", 1, keys.lease(3)),
        "listing keys": lambda: a.keys("*"),
        "scanning keys": lambda: a.scan(0),
        "flushing": lambda: a.flushall(),
        "configuration": lambda: a.config_get("*"),
        "the users": lambda: a.acl_list(),
        "the signing keys": lambda: a.hgetall(keys.GATEWAY_KEYS),
        "another gateway's key": lambda: a.hget(keys.GATEWAY_KEYS, "gw-b"),
        "subscribing": lambda: a.publish("any", "x"),
        "another gateway's memory": lambda: a.hgetall(keys.gateway_memory("gw-b")),
        "registering others": lambda: a.zadd(keys.GATEWAYS, {"ghost": 1}),
        "another gateway's presence": lambda: a.set(keys.presence("gw-b"), "view"),
        "another gateway's view format": lambda: a.hset(keys.GATEWAY_VIEWS, "gw-b", "frames"),
        "the gateways' apps": lambda: a.hset(keys.GATEWAY_APPS, "gw-a", "web"),
        "writing another gateway's memory": lambda: a.hset(
            keys.gateway_memory("gw-b"), "rooms", b"x"
        ),
    }
    for what, attempt in refused.items():
        with pytest.raises(NoPermissionError):
            attempt()
            pytest.fail(f"a gateway user was allowed {what}")
    assert admin_client.hget(table, "s") == b"the dice"
    assert admin_client.xlen(keys.outbox("gw-b")) == 1 and admin_client.xlen(keys.inbox(3)) == 1
    assert admin_client.xlen(keys.inbox(3, "gw-a")) == 1


def test_revoking_cuts_the_gateway_off_at_once(
    redis_server: RedisServer, admin_client: redis.Redis
) -> None:
    password = admin.add_gateway(admin_client, "gw-a")
    a = connect(redis_server, "gw-a", password)
    assert a.ping()
    assert admin.gateways(admin_client) == ["gw-a"]
    assert admin.revoke_gateway(admin_client, "gw-a")
    assert admin.gateways(admin_client) == []
    with pytest.raises((redis.ConnectionError, AuthenticationError, ResponseError)):
        a.ping()  # its connection was closed; reconnecting is refused
    with pytest.raises((AuthenticationError, ResponseError)):
        connect(redis_server, "gw-a", password).ping()
    assert not admin.revoke_gateway(admin_client, "gw-a")


def test_admin_gateway_command_prints_a_url_that_connects(
    redis_server: RedisServer, admin_client: redis.Redis
) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "dudo", "admin", "gateway", "add", "gw-c",
         "--redis", redis_server.url],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip
    url = next(line for line in out.splitlines() if line.startswith("redis://"))
    client: Any = redis.Redis.from_url(url)
    client.xadd(keys.inbox(0, "gw-c"), {"m": b"x"})  # it connects, and does what gateways do
    with pytest.raises(NoPermissionError):
        client.hgetall(keys.table_of("t1", 16))
    wait_for(lambda: admin.gateways(admin_client) == ["gw-c"], 5, "the user")
    listed = subprocess.run(
        [sys.executable, "-m", "dudo", "admin", "gateway", "list", "--redis", redis_server.url],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip
    assert "gw-c" in listed.split()
    subprocess.run(
        [sys.executable, "-m", "dudo", "admin", "gateway", "revoke", "gw-c",
         "--redis", redis_server.url],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    assert admin.gateways(admin_client) == []


def test_a_gateway_started_before_the_workers_checks_their_partition_count_later(
    redis_server: RedisServer, admin_client: redis.Redis, tmp_path: Path
) -> None:
    """It may not store the count (its user may only read it): it checks the workers'
    once they stored it, and one that differs from its own makes it not ready."""
    import json
    import urllib.error
    import urllib.request

    def ready(base: str) -> tuple[int, dict[str, Any]]:
        try:
            with urllib.request.urlopen(base + "/readyz", timeout=5) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())
        except urllib.error.URLError:  # its presence is in Redis before its port listens
            return 0, {}

    group = Workers(redis_server.url, tmp_path)
    try:
        url_a = admin.url_for(redis_server.url, "gw-a", admin.add_gateway(admin_client, "gw-a"))
        url_b = admin.url_for(redis_server.url, "gw-b", admin.add_gateway(admin_client, "gw-b"))
        bases = {}
        for name, url, partitions in (("gw-a", url_a, "8"), ("gw-b", url_b, "16")):
            port = free_port()  # not ready without a worker: started without waiting
            group.spawn(name, "gateway", "--redis", url, "--port", str(port), "--id", name,
                        "--partitions", partitions)  # fmt: skip
            bases[name] = f"http://127.0.0.1:{port}"
        right, wrong = bases["gw-a"], bases["gw-b"]  # the workers' count is 8
        wait_for(
            lambda: all(admin_client.exists(keys.presence(g)) for g in ("gw-a", "gw-b")),
            15, "both gateways up",
        )  # fmt: skip
        assert admin_client.hgetall(keys.CONFIG) == {}  # neither stored anything
        group.start("w1")
        wait_for(lambda: ready(right)[0] == 200, 15, "the right gateway ready")
        def mismatch() -> tuple[int, dict[str, Any]] | None:
            found = ready(wrong)
            return found if "config" in found[1] else None

        status, body = wait_for(mismatch, 15, "the mismatch seen")
        assert status == 503 and "8 partitions" in body["config"]
        assert ready(right)[0] == 200
    finally:
        group.stop_all()


def test_a_gateway_user_cannot_act_as_another_gateway(
    redis_server: RedisServer, admin_client: redis.Redis
) -> None:
    """gw-b, through its own Redis user, writes a leave naming gw-a for gw-a's player
    (into its own inbox, the one it may write), signed with its own key and unsigned: the
    worker applies neither; the same leave written by gw-a through its user is applied."""
    from dudo.link import GatewayLink
    from dudo.run import table_worker
    from dudo.table import Table
    from dudo.wire.signing import key_of_password
    from dudo.worker import WorkerSettings

    pa, pb = admin.add_gateway(admin_client, "gw-a"), admin.add_gateway(admin_client, "gw-b")
    a = GatewayLink(connect(redis_server, "gw-a", pa), "gw-a", 8, signer=key_of_password(pa),
                    confined=True)  # fmt: skip
    b = GatewayLink(connect(redis_server, "gw-b", pb), "gw-b", 8, signer=key_of_password(pb),
                    confined=True)  # fmt: skip
    worker = table_worker(WorkerSettings(partitions=8, worker_id="w1"), client=admin_client)
    worker.setup()
    worker.heartbeat()

    def table() -> Table:
        return Table.from_bytes(admin_client.hget(keys.table_of("t9", 8), "s"))

    def cycles() -> None:
        for _ in range(3):
            worker.run_once()

    a.send(
        a.message("create", id="c1", table="t9", rules={}, seats=[{"kind": "open"}] * 3),
        a.message("join", id="j1", table="t9", request="ana-request", name="Ana"),
    )
    cycles()
    version = table().version
    ana = table().seats[0].player
    assert ana is not None
    leave = a.message("leave", id="l1", table="t9", player=wire.public_id(ana), seat=0)
    b.send(leave)  # signed by gw-b
    b.signer = None
    b.send({**leave, "id": "l2"})  # unsigned
    cycles()
    assert table().version == version and table().seats[0].player == ana
    dead = admin_client.xrange(keys.dead_letters(keys.partition_of("t9", 8)))
    assert [f[b"reason"].split(b":")[0] for _, f in dead] == [b"unauthorized"] * 2
    a.send(leave)
    cycles()
    assert table().version > version and table().seats[0].player is None
