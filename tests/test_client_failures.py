"""Issue 33, item 2: the Python client library when the gateway is down, silent or
flaky. Every failure is a `DudoError` (the gateway unreachable too: it was aiohttp's
own error); reconnecting has a limit, `open()` a timeout, and the caller hears the
drops, the reconnects and the giving up. Against stand-ins on loopback: a closed port,
a server that accepts and says nothing, and a gateway that drops its first socket."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from aiohttp import web

from dudo_client import DudoApi, DudoConnection, DudoError

from .servers import free_port


def test_a_call_to_a_gateway_that_is_down_is_a_dudo_error() -> None:
    async def scenario() -> None:
        async with DudoApi(f"http://127.0.0.1:{free_port()}") as api:
            with pytest.raises(DudoError) as refused:
                await api.create_table(rules={"preset": "classic"}, seats=2, name="Ana")
        assert refused.value.code == "unavailable" and refused.value.status is None

    asyncio.run(scenario())


def test_reconnecting_gives_up_after_its_limit_and_says_so() -> None:
    heard: list[tuple[str, str]] = []

    async def scenario() -> None:
        conn = DudoConnection(f"http://127.0.0.1:{free_port()}", "token", retries=2,
                              on_event=lambda kind, why: heard.append((kind, why)))  # fmt: skip
        started = time.monotonic()
        with pytest.raises(DudoError) as gave_up:
            await conn.open()
        assert gave_up.value.code == "unavailable"
        assert time.monotonic() - started < 10  # three tries with backoff, not forever
        await conn.close()

    asyncio.run(scenario())
    assert [kind for kind, _ in heard] == ["gave_up"]
    assert "3 connection attempts failed" in heard[0][1]


def test_open_waits_for_the_welcome_no_longer_than_its_timeout() -> None:
    async def scenario() -> None:
        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await asyncio.sleep(30)  # accepts, never answers the upgrade

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        conn = DudoConnection(f"http://127.0.0.1:{port}", "token", open_timeout=1.0)
        started = time.monotonic()
        with pytest.raises(DudoError) as late:
            await conn.open()
        assert late.value.code == "unavailable" and time.monotonic() - started < 5
        server.close()

    asyncio.run(scenario())


def test_a_dropped_socket_is_heard_then_the_reconnect_and_a_request_is_answered() -> None:
    heard: list[str] = []
    sockets = 0

    async def ws(request: web.Request) -> web.WebSocketResponse:
        nonlocal sockets
        sockets += 1
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        async for frame in socket:
            msg = json.loads(frame.data)
            if msg["type"] == "hello":
                welcome = {"v": 1, "type": "welcome", "id": msg.get("id"), "table": "t1",
                           "seat": 0, "player": "p1"}  # fmt: skip
                await socket.send_str(json.dumps(welcome))
                if sockets == 1:
                    await socket.close()  # the first socket drops at once
            elif msg["type"] == "ping":
                await socket.send_str(json.dumps({"v": 1, "type": "pong", "id": msg["id"]}))
        return socket

    async def scenario() -> None:
        app = web.Application()
        app.router.add_get("/ws", ws)
        runner = web.AppRunner(app)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        try:
            url = f"http://127.0.0.1:{port}"
            hear = lambda kind, _: heard.append(kind)  # noqa: E731
            async with DudoConnection(url, "token", retries=3, on_event=hear) as conn:
                pong = await asyncio.wait_for(conn.ping(), 10)
                assert pong["type"] == "pong"
        finally:
            await runner.cleanup()

    asyncio.run(scenario())
    assert heard[:2] == ["dropped", "reconnected"], heard
    assert sockets == 2

