"""Issue 33, item 2: the Python client library when the gateway is down, silent or
flaky. Every failure is a `DudoError` (the gateway unreachable too: it was aiohttp's
own error); reconnecting has a limit, `open()` a timeout, and the caller hears the
drops, the reconnects and the giving up. Against stand-ins on loopback: a closed port,
a server that accepts and says nothing, and a gateway that drops its first socket."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from aiohttp import web

from dudo_client import DudoApi, DudoConnection, DudoError

from ..servers import free_port


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
        assert gave_up.value.code == "gave_up"
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



class _Gateway:
    """A stand-in gateway on loopback: welcomes a hello (or refuses it with
    ``refuse``), answers pings, never answers an act; ``stop()`` takes it down for good."""

    def __init__(self, refuse: str | None = None) -> None:
        self.refuse = refuse
        self.hellos = 0
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def ws(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        async for frame in socket:
            msg = json.loads(frame.data)
            if msg["type"] == "hello":
                self.hellos += 1
                if self.refuse:
                    answer = {"v": 1, "type": "error", "id": msg.get("id"), "code": self.refuse,
                              "message": "no such table"}  # fmt: skip
                else:
                    answer = {"v": 1, "type": "welcome", "id": msg.get("id"), "table": "t1",
                              "seat": 0, "player": "p1"}  # fmt: skip
                await socket.send_str(json.dumps(answer))
            elif msg["type"] == "ping":
                await socket.send_str(json.dumps({"v": 1, "type": "pong", "id": msg["id"]}))
        return socket

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/ws", self.ws)
        self.runner = web.AppRunner(app, shutdown_timeout=0.5)  # stop(): gone at once
        await self.runner.setup()
        port = free_port()
        await web.TCPSite(self.runner, "127.0.0.1", port).start()
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        assert self.runner is not None
        await self.runner.cleanup()


def test_a_gateway_gone_for_good_ends_every_wait_with_gave_up() -> None:
    """Issue 52: after giving up, `next("view")` waited for ever and `act()` never
    settled. Now the act pending when the gateway died, the reader waiting for a view,
    and every call after, all raise `gave_up` within the give-up time."""

    async def scenario() -> None:
        gateway = _Gateway()
        await gateway.start()
        conn = DudoConnection(gateway.url, "token", retries=2)
        await conn.open()
        pending = asyncio.ensure_future(conn.act({"type": "dudo"}))
        reader = asyncio.ensure_future(conn.next("view"))
        await asyncio.sleep(0.1)
        started = time.monotonic()
        await gateway.stop()
        for waiting in (pending, reader):
            with pytest.raises(DudoError) as ended:
                await asyncio.wait_for(waiting, 15)
            assert ended.value.code == "gave_up"
        assert time.monotonic() - started < 15
        assert (await asyncio.wait_for(conn.wait_closed(), 1)).code == "gave_up"
        assert conn.reason is not None and conn.reason.code == "gave_up"
        for later in (conn.act({"type": "dudo"}), conn.next("view"), conn.ping()):
            with pytest.raises(DudoError) as refused:
                await asyncio.wait_for(later, 1)  # at once, not after a timeout
            assert refused.value.code == "gave_up"
        await conn.close()
        assert conn.reason.code == "gave_up"  # the first reason stays

    asyncio.run(scenario())


def test_after_close_every_call_raises_closed_at_once() -> None:
    async def scenario() -> None:
        gateway = _Gateway()
        await gateway.start()
        try:
            conn = DudoConnection(gateway.url, "token")
            await conn.open()
            reader = asyncio.ensure_future(conn.next("view"))
            pending = asyncio.ensure_future(conn.act({"type": "dudo"}))
            await asyncio.sleep(0.1)
            closing = asyncio.ensure_future(conn.wait_closed())
            await conn.close()
            for waiting in (reader, pending):
                with pytest.raises(DudoError) as ended:
                    await asyncio.wait_for(waiting, 1)
                assert ended.value.code == "closed"
            assert (await asyncio.wait_for(closing, 1)).code == "closed"
            for later in (conn.act({"type": "dudo"}), conn.next("view")):
                with pytest.raises(DudoError) as refused:
                    await asyncio.wait_for(later, 1)
                assert refused.value.code == "closed"
            # Iterating the messages stops at the end too (the reader took the welcome).

            async def rest() -> list[str]:
                return [m["type"] async for m in conn.messages()]

            assert await asyncio.wait_for(rest(), 1) == []
        finally:
            await gateway.stop()

    asyncio.run(scenario())


def test_a_hello_refused_for_a_table_that_is_gone_ends_the_connection() -> None:
    """Issue 52: after `dudo serve` restarted (its embedded Redis, and every table, gone),
    the hello is refused `unknown_table` and the Python library said nothing and stayed
    open. Now `open()` raises it, the connection ends with it and says hello no more."""

    async def scenario() -> None:
        gateway = _Gateway(refuse="unknown_table")
        await gateway.start()
        try:
            conn = DudoConnection(gateway.url, "token", open_timeout=10)
            with pytest.raises(DudoError) as refused:
                await conn.open()
            assert refused.value.code == "unknown_table"
            assert (await asyncio.wait_for(conn.wait_closed(), 1)).code == "unknown_table"
            with pytest.raises(DudoError) as later:
                await asyncio.wait_for(conn.next("view"), 1)
            assert later.value.code == "unknown_table"
            await asyncio.sleep(1.5)
            assert gateway.hellos == 1
        finally:
            await gateway.stop()

    asyncio.run(scenario())


def _view(version: int, turn: int, winner: int | None = None) -> dict[str, Any]:
    game = {"turn": turn, "winner": winner, "legal": {"bid": [1] * 6, "dudo": False}}
    return {"v": 1, "type": "view", "table": "t1", "version": version, "seat": 0,
            "status": "over" if winner is not None else "playing", "game": game}  # fmt: skip


def test_play_acts_on_each_turn_and_rides_out_refusals() -> None:
    """`conn.play(policy)` (issue 52, item 5): the policy is asked on the seat's turns;
    an act refused `not_your_turn` (the view it was chosen from was stale) waits for the
    next view; a refusal of the action itself (`bid_not_higher`) is heard and the policy
    asked again, three times a view at most, then the next view is waited for; the
    game's end returns its last view."""
    acts: list[dict[str, Any]] = []

    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)

        async def send(message: dict[str, Any]) -> None:
            await socket.send_str(json.dumps(message))

        def refuse(msg: dict[str, Any], code: str) -> dict[str, Any]:
            return {"v": 1, "type": "error", "id": msg["id"], "code": code, "message": code}

        async for frame in socket:
            msg = json.loads(frame.data)
            if msg["type"] == "hello":
                await send({"v": 1, "type": "welcome", "id": msg["id"], "table": "t1",
                            "seat": 0, "player": "p1"})  # fmt: skip
                await send(_view(1, 0))
            elif msg["type"] == "act":
                acts.append(msg["action"])
                if len(acts) == 1:  # the turn had moved on: a race, then our turn again
                    await send(refuse(msg, "not_your_turn"))
                    await send(_view(2, 1))
                    await send(_view(3, 0))
                elif len(acts) <= 4:  # three refusals on view 3
                    await send(refuse(msg, "bid_not_higher"))
                    if len(acts) == 4:
                        await asyncio.sleep(0.3)  # the client waits now: nothing comes
                        await send(_view(5, 0))
                else:
                    await send({"v": 1, "type": "ack", "id": msg["id"], "table": "t1",
                                "version": 6})  # fmt: skip
                    await send(_view(6, 1, winner=0))
        return socket

    async def scenario() -> None:
        app = web.Application()
        app.router.add_get("/ws", ws)
        runner = web.AppRunner(app, shutdown_timeout=0.5)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        asked: list[int] = []
        heard: list[str] = []

        async def policy(game: Any) -> Any:  # a coroutine function works too
            asked.append(game["turn"])
            return {"type": "bid", "quantity": len(asked), "face": 2}

        try:
            async with DudoConnection(f"http://127.0.0.1:{port}", "token") as conn:
                last = await asyncio.wait_for(
                    conn.play(policy, on_refused=lambda err: heard.append(err.code)), 10
                )
                assert last["version"] == 6 and last["game"]["winner"] == 0
            assert heard == ["not_your_turn"] + ["bid_not_higher"] * 3
            assert len(asked) == len(acts) == 5 and set(asked) == {0}
        finally:
            await runner.cleanup()

    asyncio.run(scenario())
