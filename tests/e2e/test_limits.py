"""What one client may cost a gateway (issue 10, defect 11), on a real gateway process:
table creation is rate limited per address, a connection that never says hello is
closed, one token (or one address) opens a bounded number of sockets, and a
resync flood is refused at the gateway instead of reaching the workers."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from ..integration.procs import Workers
from ..servers import RedisServer

PARTITIONS = 4


@pytest.fixture(scope="module")
def gateway(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    redis_server.client().flushall()
    group = Workers(redis_server.url, tmp_path_factory.mktemp("limits"), partitions=PARTITIONS)
    group.start("w1")
    yield group.gateway(
        "gw-limits",
        "--creates-per-min",
        "5",
        "--hello-timeout",
        "0.5",
        "--conns-per-token",
        "2",
        "--conns-per-address",
        "12",
        "--trust-proxy",  # each test is another client: its own X-Forwarded-For
    )
    group.stop_all()


def post(
    url: str, body: dict[str, Any] | None = None, client: str = "10.0.0.1"
) -> tuple[int, dict[str, Any], Any]:
    data = json.dumps(body or {}).encode()
    headers = {"Content-Type": "application/json", "X-Forwarded-For": client}
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc), exc.headers


def test_table_creation_is_rate_limited_per_address(gateway: str) -> None:
    codes = [post(f"{gateway}/api/tables", {"seats": 2})[0] for _ in range(8)]
    assert codes[:5] == [201] * 5  # the burst
    assert set(codes[5:]) == {429}
    assert post(f"{gateway}/api/tables", {"seats": 2}, client="10.0.0.77")[0] == 201  # another
    status, body, headers = post(f"{gateway}/api/tables", {"seats": 2})
    assert status == 429 and body["code"] == "rate_limited"
    assert int(headers["Retry-After"]) >= 1


async def _close_code(ws: aiohttp.ClientWebSocketResponse, timeout: float = 5) -> int | None:
    while True:
        frame = await ws.receive(timeout=timeout)
        if frame.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
            return ws.close_code
        if frame.type == aiohttp.WSMsgType.ERROR:
            return None


def test_silent_connections_are_closed_and_sockets_are_capped(gateway: str) -> None:
    url = gateway.replace("http", "ws") + "/ws"
    table = post(f"{gateway}/api/tables", {"seats": 2, "name": "Ana"}, client="10.0.0.2")
    watch = post(f"{gateway}/api/tables/{table[1]['table']}/watch", client="10.0.0.2")[1]["token"]

    async def scenario() -> None:
        headers = {"X-Forwarded-For": "10.0.0.2"}
        async with aiohttp.ClientSession(headers=headers) as session:
            silent = await session.ws_connect(url)  # never says hello
            assert await _close_code(silent) == 4001
            lobby = await session.ws_connect(url)  # watching the lobby is reason enough
            await lobby.send_str('{"v":1,"type":"watch_lobby"}')
            await asyncio.sleep(1.0)
            assert not lobby.closed
            # One token: two sockets, not three.
            sockets = []
            for _ in range(3):
                ws = await session.ws_connect(url)
                await ws.send_str(json.dumps({"v": 1, "type": "hello", "token": watch}))
                sockets.append(ws)
            assert await _close_code(sockets[2]) == 4003
            assert not sockets[0].closed and not sockets[1].closed
            # A resync flood: one goes to the workers, the rest are refused here.
            for _ in range(10):
                await sockets[0].send_str('{"v":1,"type":"resync"}')
            errors = []
            with __import__("contextlib").suppress(TimeoutError):
                while len(errors) < 9:
                    msg = json.loads((await sockets[0].receive(timeout=3)).data)
                    if msg["type"] == "error":
                        errors.append(msg["code"])
            assert errors == ["rate_limited"] * 9
            # One address: twelve sockets at most (two are open, plus the lobby one).
            more = [await session.ws_connect(url) for _ in range(10)]
            for ws in more:
                await ws.send_str('{"v":1,"type":"watch_lobby"}')
            codes = [await _close_code(ws, timeout=2) if ws is more[-1] else None for ws in more]
            assert codes[-1] == 4003
            for ws in [lobby, *sockets[:2], *more]:
                await ws.close()

    asyncio.run(scenario())


def test_non_ascii_and_oversized_inputs_get_typed_errors(gateway: str, tmp_path: Path) -> None:
    """Issue 10, defect 12: these answered 500 or dropped the connection."""
    client = "10.0.0.3"
    assert post(f"{gateway}/api/tables", {"rules": {"preset": []}}, client)[0] == 400
    assert post(f"{gateway}/api/tables", {"rules": {"preset": {}}}, client)[0] == 400
    table = post(f"{gateway}/api/tables/nonexistent/join", {"name": "Ana", "seat": 2**70}, client)
    assert table[0] == 400 and table[1]["code"] == "bad_message"
    try:
        urllib.request.urlopen(f"{gateway}/static/{'a' * 5000}", timeout=5)
    except urllib.error.HTTPError as exc:
        assert exc.code == 404
    url = gateway.replace("http", "ws") + "/ws"
    created = post(f"{gateway}/api/tables", {"seats": 2, "name": "Ana"}, client)[1]

    async def scenario() -> None:
        async with aiohttp.ClientSession(headers={"X-Forwarded-For": client}) as session:
            ws = await session.ws_connect(url + "?token=%C3%A9t%C3%A9")  # non-ASCII
            msg = json.loads((await ws.receive(timeout=5)).data)
            assert msg["type"] == "error" and msg["code"] == "bad_message"
            await ws.send_str(json.dumps({"v": 1, "type": "hello", "token": created["token"]}))
            while msg["type"] != "view":
                msg = json.loads((await ws.receive(timeout=5)).data)
            big = '{"v":1,"type":"act","id":"a1","action":{"type":"bid","quantity":%d,"face":2}}'
            for value in (2**64, -(2**70)):
                await ws.send_str(big % value)
                msg = json.loads((await ws.receive(timeout=5)).data)
                assert (msg["type"], msg["code"], msg["id"]) == ("error", "bad_action", "a1")
            assert not ws.closed
            await ws.close()

    asyncio.run(scenario())


def test_names_are_cleaned_once_and_hidden_characters_refused(gateway: str) -> None:
    """Issue 10, defect 12: a padded name passed the gateway and was refused by the worker
    after the table was created (an orphan table); control, bidi and zero-width
    characters were accepted; a name of 32 emoji made a token too long for hello."""
    client = "10.0.0.4"
    status, body, _ = post(f"{gateway}/api/tables", {"seats": 2, "name": f"  {'A' * 32}  "}, client)
    assert status == 201  # trimmed to 32 characters: fine
    join = f"{gateway}/api/tables/{body['table']}/join"
    for bad in ("Ana\u202egnp.exe", "A\u200bna", "Ana\x07", "   ", "A" * 33):
        status, refused, _ = post(join, {"name": bad}, client)
        assert (status, refused["code"]) == (400, "bad_message"), bad
    emoji = "\U0001f3b2" * 32
    status, created, _ = post(f"{gateway}/api/tables", {"seats": 2, "name": emoji}, client)
    assert status == 201

    async def hello() -> dict[str, Any]:
        async with aiohttp.ClientSession(headers={"X-Forwarded-For": client}) as session:
            ws = await session.ws_connect(gateway.replace("http", "ws") + "/ws")
            await ws.send_str(json.dumps({"v": 1, "type": "hello", "token": created["token"]}))
            while True:
                msg = json.loads((await ws.receive(timeout=5)).data)
                if msg["type"] == "view":
                    await ws.close()
                    return msg

    view = asyncio.run(hello())
    assert view["players"][0]["name"] == emoji


def test_a_request_sent_again_with_its_key_is_the_same_request(gateway: str) -> None:
    """A create or join retried after a timeout, a 503 or a cut connection (through any
    gateway) must not make a second table or seat a ghost: with the same request
    key it is the same request, answered the same way."""
    client = "10.0.0.5"
    body = {"seats": 3, "name": "Ana", "request": "create-key-1"}
    first = post(f"{gateway}/api/tables", body, client)
    again = post(f"{gateway}/api/tables", body, client)
    assert first[0] == again[0] == 201
    assert {k: first[1][k] for k in ("table", "seat", "player")} == {
        k: again[1][k] for k in ("table", "seat", "player")
    }
    join = f"{gateway}/api/tables/{first[1]['table']}/join"
    ben = [post(join, {"name": "Ben", "request": "join-key-ben"}, client) for _ in range(3)]
    assert [b[0] for b in ben] == [200] * 3
    assert len({(b[1]["seat"], b[1]["player"]) for b in ben}) == 1
    cai = post(join, {"name": "Cai", "request": "join-key-cai"}, client)
    assert cai[0] == 200 and cai[1]["seat"] != ben[0][1]["seat"]  # another key: another seat
    assert post(join, {"name": "Dan", "request": "bad key!"}, client)[0] == 400
