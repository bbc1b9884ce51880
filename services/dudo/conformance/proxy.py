"""The conformance kit's man in the middle: a proxy between the client under test and the
real gateway that makes the server refuse two of the client's moves, for real.

Everything the client sends or receives passes through unchanged except:

1. **a refusal**: the client's first move after one the table accepted is rewritten into
   a bid the rules forbid (its ``id`` kept), so the real worker refuses it with an
   ``error`` quoting that id. A conforming client takes the refusal and plays a legal
   move before its clock runs out.
2. **a rate limit**: the next move after that is preceded by a burst of pings on the
   client's own connection until the real gateway's rate limit is spent, so the move is
   refused with ``rate_limited`` and a ``retry_ms``. A conforming client waits that long,
   sends again, and its move is applied.

The proxy decides nothing from the client's output: it watches the answers (``ack`` or
``error`` with the move's id) and the views' ``house_bot`` events, which say that the
client's clock ran out and the server played for it.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
import msgpack
from aiohttp import web

from .. import wire

PING_ID = "conformance-kit-ping"  # the proxy's own pings: their answers are not forwarded
FLOOD = 200  # pings at most before the move: far above any burst a gateway allows
EARLY_SLACK_MS = 5  # timers may fire a little early; more than this is not waiting
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "upgrade", "host",
              "content-length", "content-encoding"}  # fmt: skip


@dataclass
class Fault:
    """One refusal the proxy brings about, and what the client did with it."""

    move_id: str | None = None  # the id of the move that was refused
    refused_at: float | None = None  # when the first refusal went to the client (monotonic)
    code: str | None = None  # the refusal's code, as the server sent it
    retry_ms: int | None = None
    next_sent_at: float | None = None  # the client's next move after the refusal
    applied: bool = False  # a move of the client's was acknowledged after the refusal
    timed_out: bool = False  # the house bot played for the client before that
    # The latest refusal of this move (a resend may be refused again) and whether any
    # resend came before the ``retry_ms`` it named was up.
    last_refused_at: float | None = None
    last_retry_ms: int | None = None
    early: bool = False

    @property
    def handled(self) -> bool:
        """Refused (an answer quoting the move's id reached the client), then a move of
        the client's applied before its clock ran out."""
        return self.refused_at is not None and self.applied and not self.timed_out

    @property
    def waited(self) -> bool:
        """The client sent again, each time no earlier than the ``retry_ms`` of the
        refusal before (a resend the server refuses once more is judged the same way)."""
        return self.next_sent_at is not None and self.retry_ms is not None and not self.early

    def refused(self, msg: dict[str, Any]) -> None:
        now = time.monotonic()
        if self.refused_at is None:
            self.refused_at = now
            self.code, self.retry_ms = msg.get("code"), msg.get("retry_ms")
        self.last_refused_at, self.last_retry_ms = now, msg.get("retry_ms")

    def sent_again(self) -> None:
        now = time.monotonic()
        if self.next_sent_at is None:
            self.next_sent_at = now
        if self.last_refused_at is not None and self.last_retry_ms is not None:
            waited_ms = (now - self.last_refused_at) * 1000
            self.early = self.early or waited_ms < self.last_retry_ms - EARLY_SLACK_MS
        self.last_refused_at = None  # judged: the next refusal (if any) starts anew


class FaultProxy:
    """Serves HTTP and the WebSocket on ``port``, forwarding to ``upstream``."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.refusal = Fault()
        self.rate_limit = Fault()
        self._stage = "warmup"  # warmup, refuse, after_refusal, limit, after_limit, done
        self._pending: dict[str, str] = {}  # move id -> stage it was sent in
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self, port: int) -> None:
        self._session = aiohttp.ClientSession()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self.port = port

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.path == "/ws" and request.headers.get("Upgrade", "").lower() == "websocket":
            return await self._websocket(request)
        assert self._session is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        try:
            async with self._session.request(
                request.method, self.upstream + request.path_qs, headers=headers,
                data=await request.read(), allow_redirects=False,
            ) as answer:  # fmt: skip
                body = await answer.read()
                kept = {k: v for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP}
                return web.Response(status=answer.status, body=body, headers=kept)
        except aiohttp.ClientError:
            return web.Response(status=502, text="the server under the kit is down")

    async def _websocket(self, request: web.Request) -> web.WebSocketResponse:
        assert self._session is not None
        client = web.WebSocketResponse()
        await client.prepare(request)
        try:
            server = await self._session.ws_connect(self.upstream.replace("http", "ws", 1) + "/ws")
        except aiohttp.ClientError:
            await client.close(code=1011, message=b"server down")
            return client
        async with server:
            up = asyncio.create_task(self._upward(client, server))
            try:
                await self._downward(server, client)
            finally:
                up.cancel()
        await client.close(code=1012, message=b"server went away")
        return client

    async def _upward(self, client: web.WebSocketResponse, server: Any) -> None:
        """The client's frames to the server, one move rewritten or preceded by a flood."""
        async for frame in client:
            if frame.type not in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                continue
            text = frame.type == aiohttp.WSMsgType.TEXT
            msg = _decode(frame.data, text)
            if isinstance(msg, dict) and msg.get("type") == "act" and "id" in msg:
                msg = self._on_move(msg)
                if self._pending.get(msg["id"]) == "limit":
                    ping = {"v": wire.PROTOCOL_VERSION, "type": "ping", "id": PING_ID}
                    for _ in range(FLOOD):
                        await _send(server, ping, text)
                await _send(server, msg, text)
            else:
                await (server.send_str(frame.data) if text else server.send_bytes(frame.data))
        await server.close()

    async def _downward(self, server: Any, client: web.WebSocketResponse) -> None:
        async for frame in server:
            if frame.type not in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                break
            text = frame.type == aiohttp.WSMsgType.TEXT
            msg = _decode(frame.data, text)
            if isinstance(msg, dict):
                if msg.get("id") == PING_ID:
                    continue  # our flood's pongs and refusals
                self._on_answer(msg)
            if client.closed:
                break
            await (client.send_str(frame.data) if text else client.send_bytes(frame.data))

    def _on_move(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Record a move of the client's; rewrite the one chosen for a refusal."""
        for fault in (self.refusal, self.rate_limit):
            if fault.refused_at is not None and not fault.applied:
                fault.sent_again()
        stage = self._stage
        if stage == "refuse":
            msg = {**msg, "action": {"type": "bid", "quantity": 99, "face": 2}}
            self.refusal.move_id, self._stage = msg["id"], "after_refusal"
        elif stage == "limit":
            self.rate_limit.move_id, self._stage = msg["id"], "after_limit"
        self._pending[msg["id"]] = stage
        return msg

    def _on_answer(self, msg: dict[str, Any]) -> None:
        """Follow the server's answers to the client's moves and its house bot's moves."""
        kind, move = msg.get("type"), msg.get("id")
        if kind == "view":
            for event in msg.get("events") or ():
                if event.get("type") == "house_bot" and event.get("seat") == msg.get("seat"):
                    for fault in (self.refusal, self.rate_limit):
                        if fault.refused_at is not None and not fault.applied:
                            fault.timed_out = True
            return
        stage = self._pending.pop(move, None) if isinstance(move, str) else None
        if stage is None:
            return  # not an answer to a move (or one that does not quote it: no refusal)
        if kind == "ack":
            for fault in (self.refusal, self.rate_limit):
                if fault.refused_at is not None and fault.next_sent_at is not None:
                    fault.applied = True
            if stage == "warmup":
                self._stage = "refuse"
            elif stage == "after_refusal" and self.refusal.applied:
                self._stage = "limit"
        elif kind == "error" and move in (self.refusal.move_id, self.rate_limit.move_id):
            fault = self.refusal if move == self.refusal.move_id else self.rate_limit
            if fault.refused_at is None or fault is self.rate_limit:
                fault.refused(msg)


def _decode(data: Any, text: bool) -> Any:
    try:
        return json.loads(data) if text else msgpack.unpackb(data, raw=False)
    except Exception:
        return None  # not ours to judge: forwarded as it came


async def _send(server: Any, msg: dict[str, Any], text: bool) -> None:
    if text:
        await server.send_str(json.dumps(msg))
    else:
        await server.send_bytes(msgpack.packb(msg))
