"""The lean hot-path client (dudo.infra.resp) on a real redis-server: the same replies and
errors as redis-py, pipelining, and what it does when Redis dies, pauses or restarts."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis
from redis import exceptions as rx

from dudo.infra.connection import Batch, fast, xread
from dudo.infra.resp import AsyncResp, Resp, options_of
from dudo.infra.service import REDIS_DOWN

from ..servers import RedisServer

pytestmark = pytest.mark.redis


def _resp(server: RedisServer, timeout: float = 5.0) -> Resp:
    options = options_of(server.client())
    assert options is not None
    return Resp(options, timeout=timeout)


def test_replies_are_what_redis_py_passes_on(real_redis: redis.Redis, redis_server) -> None:
    lean = _resp(redis_server)
    entry = lean.call("XADD", "s", "*", "m", b"\x00\xffbytes")
    assert isinstance(entry, bytes) and entry == real_redis.xrange("s")[0][0]
    real_redis.hset("h", mapping={"v": 3, "s": b"x"})
    script = "return {tonumber(ARGV[1]) + 1, KEYS[1], redis.call('HGET', KEYS[1], 'v'), false}"
    sha = real_redis.script_load(script)
    ours = lean.call("EVALSHA", sha, 1, "h", 41)
    theirs = real_redis.evalsha(sha, 1, "h", 41)
    assert ours == theirs == [42, b"h", b"3", None]
    # several commands, one write; replies in order
    assert lean.execute([("SET", "a", 1), ("INCRBY", "a", 2), ("GET", "a")]) == [b"OK", 3, b"3"]


def test_error_replies_have_redis_pys_types_and_stay_in_step(redis_server, real_redis) -> None:
    lean = _resp(redis_server)
    with pytest.raises(rx.NoScriptError):
        lean.call("EVALSHA", "0" * 40, 0)
    replies = lean.execute(
        [("SET", "k", "v"), ("INCR", "k"), ("EVALSHA", "0" * 40, 0), ("GET", "k")],
        raise_on_error=False,
    )
    assert replies[0] == b"OK" and replies[3] == b"v"
    assert type(replies[1]) is rx.ResponseError and "not an integer" in str(replies[1])
    assert isinstance(replies[2], rx.NoScriptError)
    assert lean.call("PING") == b"PONG"  # the stream of replies is still in step


def test_xread_has_redis_pys_shape_through_either_client(redis_server, real_redis) -> None:
    real_redis.xadd("in", {"m": b"one"})
    second = real_redis.xadd("in", {"m": b"two", "x": b"3"})
    theirs = real_redis.xread({"in": "0-0"})
    ours = xread(real_redis, {"in": "0-0"}, count=10)
    assert fast(real_redis) is not None  # the lean client answered
    assert [[s, list(e)] for s, e in ours] == [[s, list(e)] for s, e in theirs]
    assert ours[0][1][1] == (second, {b"m": b"two", b"x": b"3"})
    started = time.monotonic()
    assert xread(real_redis, {"in": second.decode()}, block=200) == []
    assert time.monotonic() - started >= 0.18  # it did block


def test_a_batch_replies_alike_through_every_client(redis_server, real_redis) -> None:
    """A Batch's replies are RESP2's, whichever way it goes: the lean client, redis-py
    speaking RESP3 (its default since 8) or RESP2, or fakeredis. Each command is spelled
    once, so a reply read by one path must read the same by the others (the worker's
    heartbeat once read a hash as a dict from one and a flat list from the other)."""
    import fakeredis

    def batch_replies(client: object) -> list[object]:
        client.delete("s", "h", "z", "set", "k")  # type: ignore[attr-defined]
        batch = Batch(client)  # type: ignore[arg-type]
        batch.add("s", "XADD", "s", "1-1", "m", b"\x00\xff")
        batch.add("s", "XGROUP", "CREATE", "s", "workers", "0")
        batch.add("h", "HSET", "h", "v", 3, "s", b"x")
        batch.add("h", "HGETALL", "h")
        batch.add("z", "ZADD", "z", 1.5, "a", 2, "b")
        batch.add("z", "ZSCORE", "z", "a")  # (RESP3: a double)
        batch.add("set", "SADD", "set", "only")
        batch.add("set", "SMEMBERS", "set")
        batch.add("s", "XRANGE", "s", "-", "+")
        batch.add("s", "XINFO", "GROUPS", "s")
        batch.add("k", "GET", "k")
        batch.add("k", "SET", "k", "v")
        batch.add("k", "EVAL", "return {1, KEYS[1], false, redis.call('GET', KEYS[1])}", 1, "k")
        batch.add("k", "HGETALL", "k")  # the wrong type: an error, as a value
        replies = batch.execute()
        assert isinstance(replies[-1], rx.ResponseError), replies[-1]
        # XINFO's lag and entries-read fields depend on the server's version: not compared
        replies[9] = [group[:8] for group in replies[9]]
        return replies[:-1]

    lean = batch_replies(real_redis)
    assert fast(real_redis) is not None  # it went through the lean client
    assert lean[3] == [b"v", b"3", b"s", b"x"]  # a hash: a flat array
    assert lean[5] == b"1.5"  # a score: a string
    resp3 = redis.Redis(port=redis_server.port, protocol=3)
    assert fast(resp3) is None  # the lean client speaks RESP2 only: redis-py's pipeline
    assert batch_replies(resp3) == lean
    assert batch_replies(redis.Redis(port=redis_server.port, protocol=2)) == lean
    fake = fakeredis.FakeRedis()
    ours = batch_replies(fake)
    assert ours[:9] == lean[:9] and ours[10:] == lean[10:]
    assert [g[:2] for g in ours[9]] == [g[:2] for g in lean[9]]  # the group's name


def test_auth_and_select_from_the_clients_own_settings(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "acl")
    try:
        client = redis.Redis(port=server.port, db=3)
        client.acl_setuser("gw", enabled=True, passwords=["+gwpass"], keys=["*"],
                           commands=["+@all"])  # fmt: skip
        user = redis.Redis(port=server.port, username="gw", password="gwpass", db=3)
        lean = fast(user)
        assert isinstance(lean, Resp)
        lean.call("SET", "where", "db3")
        assert lean.call("ACL", "WHOAMI") == b"gw"
        assert client.get("where") == b"db3"  # db 3, as the client was set up
        assert redis.Redis(port=server.port).get("where") is None
        wrong = Resp({**options_of(user), "password": "nope"})  # type: ignore[dict-item]
        with pytest.raises(rx.AuthenticationError):
            wrong.call("PING")
    finally:
        server.stop()


def test_a_dead_redis_is_a_connection_error_and_a_restarted_one_is_reached_again(
    tmp_path: Path,
) -> None:
    server = RedisServer(tmp_path / "restart")
    try:
        lean = _resp(server)
        assert lean.call("PING") == b"PONG"
        server.stop()
        with pytest.raises(REDIS_DOWN):
            lean.call("PING")
        server.restart()
        assert lean.call("PING") == b"PONG"  # a new connection, made by the next call
    finally:
        server.stop()


def test_a_paused_redis_times_out_instead_of_hanging(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "pause")
    try:
        lean = _resp(server, timeout=0.3)
        lean.call("PING")
        os.kill(server.process.pid, signal.SIGSTOP)
        started = time.monotonic()
        try:
            with pytest.raises(rx.TimeoutError):
                lean.call("PING")
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        assert time.monotonic() - started < 2
        assert lean.call("PING") == b"PONG"  # the stale reply went with the old socket
    finally:
        server.stop()


def test_async_callers_share_one_pipelined_connection(redis_server, real_redis) -> None:
    async def main() -> None:
        client = aioredis.Redis(port=redis_server.port)
        lean = fast(client)
        assert isinstance(lean, AsyncResp)
        replies = await asyncio.gather(*(lean.call("INCR", "n") for _ in range(200)))
        assert sorted(replies) == list(range(1, 201))  # every caller its own reply
        batch = await lean.execute([("INCR", "n"), ("GET", "n")])
        assert batch == [201, b"201"]
        with pytest.raises(rx.NoScriptError):
            await lean.call("EVALSHA", "0" * 40, 0)
        assert await lean.call("GET", "n") == b"201"
        lean.close()
        await client.aclose()

    asyncio.run(main())


def test_async_a_paused_redis_fails_every_waiting_caller_then_recovers(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "apause")

    async def main() -> None:
        options = options_of(server.client())
        assert options is not None
        lean = AsyncResp(options, timeout=0.3)
        await lean.call("PING")
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            results = await asyncio.gather(
                *(lean.call("PING") for _ in range(5)), return_exceptions=True
            )
            assert all(isinstance(r, rx.TimeoutError) for r in results), results
            assert time.monotonic() - started < 2
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        assert await lean.call("PING") == b"PONG"
        # a blocking read may wait as long as it asked, on top of the timeout
        got = await lean.call("XREAD", "BLOCK", 500, "STREAMS", "none", "$", wait=0.5)
        assert got is None
        server.stop()
        with pytest.raises(REDIS_DOWN):
            await lean.call("PING")
        lean.close()

    try:
        asyncio.run(main())
    finally:
        server.stop()


def test_no_lean_client_for_fakeredis_or_a_cluster(fake_redis, redis_cluster) -> None:
    assert fast(fake_redis) is None
    from dudo.infra.connection import connect

    assert fast(connect(redis_cluster.url)) is None


def test_async_a_connection_made_to_a_paused_redis_times_out_in_its_handshake(
    tmp_path: Path,
) -> None:
    """AUTH on a new connection waits for its reply like any call: a paused Redis
    (the kernel still accepts the connection) is a timeout, not a hang."""
    server = RedisServer(tmp_path / "hpause")

    async def main() -> None:
        admin = server.client()
        admin.acl_setuser("gw", enabled=True, passwords=["+pw"], keys=["*"], commands=["+@all"])
        options = options_of(redis.Redis(port=server.port, username="gw", password="pw"))
        assert options is not None
        lean = AsyncResp(options, timeout=0.3)
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(rx.TimeoutError):
                await asyncio.wait_for(lean.call("PING"), 5)
            assert time.monotonic() - started < 2
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        assert await lean.call("ACL", "WHOAMI") == b"gw"  # and made again afterwards
        lean.close()

    try:
        asyncio.run(main())
    finally:
        server.stop()
