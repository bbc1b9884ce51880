"""Issue 50, item 8: four WebSockets saying hello with forged seat tokens naming a table
and its host's handle (both public in the lobby) filled the host's connections per token
(a token was counted before anyone checked it, and a refused hello kept its socket past
the hello timeout): the real host's reconnect was closed 4003. On a real gateway
process and worker."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from pathlib import Path

import aiohttp

from dudo.auth.authority import make_token

from ..integration.procs import Workers
from ..servers import RedisServer


async def _next(ws: aiohttp.ClientWebSocketResponse, timeout: float = 10) -> dict | int:
    """The next message, or the close code."""
    frame = await ws.receive(timeout=timeout)
    if frame.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
        return ws.close_code or 0
    return json.loads(frame.data)


def test_forged_tokens_take_no_place_of_the_real_one(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    redis_server.client().flushall()
    group = Workers(redis_server.url, tmp_path, partitions=4)
    try:
        group.start("w1")
        base = group.gateway("gw-hello", "--conns-per-token", "2", "--hello-timeout", "1.5")
        request = urllib.request.Request(
            f"{base}/api/tables", data=json.dumps({"seats": 2, "name": "Host"}).encode(),
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=10) as response:
            made = json.load(response)
        asyncio.run(_scenario(base.replace("http", "ws") + "/ws", made["table"], made["token"]))
    finally:
        group.stop_all()


async def _scenario(url: str, table: str, token: str) -> None:
    async with aiohttp.ClientSession() as session:
        host = await session.ws_connect(url)
        await host.send_str(json.dumps({"v": 1, "type": "hello", "token": token}))
        welcome = await _next(host)
        assert isinstance(welcome, dict) and welcome["type"] == "welcome", welcome
        handle = welcome["player"]
        await host.close()
        # What anyone can read in the lobby: the table and its host's handle.
        forged = make_token(b"guessed-key-guessed-key-guessed!",
                            {"t": table, "p": handle, "n": "Host", "k": "seat",
                             "e": int(time.time()) + 3600})  # fmt: skip
        attackers = []
        for _ in range(4):
            ws = await session.ws_connect(url)
            await ws.send_str(json.dumps({"v": 1, "type": "hello", "token": forged}))
            attackers.append(ws)
        for ws in attackers:  # each refused by the worker...
            answer = await _next(ws)
            assert isinstance(answer, dict) and answer["type"] == "error", answer
        # ... and the host's own reconnects are welcomed, up to its cap (two).
        again = []
        for _ in range(2):
            ws = await session.ws_connect(url)
            await ws.send_str(json.dumps({"v": 1, "type": "hello", "token": token}))
            answer = await _next(ws)
            assert isinstance(answer, dict) and answer["type"] == "welcome", answer
            again.append(ws)
        # The refused ones are closed once the hello timeout has passed since.
        started = time.monotonic()
        for ws in attackers:
            assert await _next(ws, timeout=5) == 4001
        assert time.monotonic() - started < 4
        for ws in again:
            assert not ws.closed
            await ws.close()
