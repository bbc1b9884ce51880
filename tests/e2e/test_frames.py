"""TurnWrites the gateway writes itself (no task switch per message) are valid WebSocket
frames of every length class, and queue behind a client that is not reading."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from aiohttp import web

from dudo.gateway.clients import WRITE_BUFFER_HIGH, Connection, TurnWrites
from dudo.gateway.settings import GatewaySettings


def test_direct_frames_of_every_length_reach_a_real_client() -> None:
    sizes = [0, 10, 125, 126, 4000, 65535, 65536, 200_000]

    async def scenario() -> list[Any]:
        async def handler(request: web.Request) -> web.WebSocketResponse:
            ws = web.WebSocketResponse(compress=False)
            await ws.prepare(request)
            conn = Connection(ws, GatewaySettings())
            conn.transport, conn.direct = request.transport, True
            writer = asyncio.create_task(conn.write_loop())  # for what had to queue
            for n in sizes:
                conn.send(None, json.dumps({"pad": "x" * n}).encode())
            await ws.receive()  # until the client closes
            writer.cancel()
            return ws

        app = web.Application()
        app.router.add_get("/ws", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        got = []
        url = f"http://127.0.0.1:{port}/ws"
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(url, max_msg_size=0) as ws,
        ):
            for _ in sizes:
                msg = await ws.receive(timeout=10)
                assert msg.type == aiohttp.WSMsgType.TEXT
                got.append(json.loads(msg.data))
        await runner.cleanup()
        return got

    got = asyncio.run(scenario())
    assert [len(m["pad"]) for m in got] == sizes


class _SlowTransport:
    """A socket whose client stopped reading: everything stays in its buffer."""

    def __init__(self) -> None:
        self.buffered = 0

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def write(self, data: bytes) -> None:
        self.buffered += len(data)

    def abort(self) -> None:
        pass


class _Ws:
    closed = False


def test_messages_queue_behind_a_client_that_is_not_reading() -> None:
    async def scenario() -> Connection:
        conn = Connection(_Ws(), GatewaySettings(send_queue=8))  # type: ignore[arg-type]
        conn.transport, conn.direct = _SlowTransport(), True
        big = b"x" * (WRITE_BUFFER_HIGH // 2)
        conn.send(None, big)
        conn.send(None, big)  # written at once, until the buffer is past its mark...
        assert conn.queued == 0
        conn.send(None, big)  # ...then queued
        assert conn.queued == 1
        for _ in range(8):
            conn.send(None, b"{}")
        return conn

    conn = asyncio.run(scenario())
    assert conn.closing is not None and conn.closing[0] == 4002  # the queue overflowed


class _CountingTransport(_SlowTransport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def get_write_buffer_size(self) -> int:
        return 0


def test_frames_of_one_turn_go_out_in_one_write_and_none_after_a_close() -> None:
    async def scenario() -> tuple[list[bytes], list[bytes]]:
        writes = TurnWrites()
        ana, ben = (Connection(_Ws(), GatewaySettings(), writes) for _ in range(2))  # type: ignore[arg-type]
        for conn in (ana, ben):
            conn.transport, conn.direct = _CountingTransport(), True
        ana.send(None, b'{"type":"ack"}')
        ana.send(None, b'{"type":"view"}')
        ben.send(None, b'{"type":"view"}')
        assert ana.transport.writes == []  # nothing yet: at the end of the turn
        await asyncio.sleep(0)
        ben.send(None, b'{"type":"late"}')
        ben.close_soon(4002, "too slow")  # its batch goes with it: no frame after a close
        await asyncio.sleep(0)
        return ana.transport.writes, ben.transport.writes

    ana, ben = asyncio.run(scenario())
    assert ana == [b'\x81\x0e{"type":"ack"}\x81\x0f{"type":"view"}']  # two frames, one write
    assert ben == [b'\x81\x0f{"type":"view"}']
