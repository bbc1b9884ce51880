"""The design's shape with no game in it: the floor ``dudo bench path --skeleton`` measures.

client → gateway → Redis → worker → Redis → gateway → every client at the table,
with the same libraries as ours (the same WebSocket layer, picows or aiohttp's,
on one port with aiohttp's HTTP; the lean Redis client of :mod:`dudo.infra.resp`,
msgspec) and nothing else: no rules, no fencing, no checks,
no rate limits, no metrics. It speaks just enough of the client protocol for
the path bench's load generator (``load.mjs``) to drive it unchanged:

- ``POST /api/tables`` and ``POST /api/tables/{table}/join`` hand out seat tokens;
- ``/ws``: ``hello`` puts the socket in its seat and answers with a view;
  ``act`` is appended to one inbox stream (coalesced per turn of the loop);
- the worker reads the inbox with ``XREADGROUP``, bumps the table's version,
  passes the turn on, writes a table record of realistic size (``HSET``),
  encodes the new view for each seat (``protocol/examples/ws-out-view.json``'s
  shape and size) and, in one round trip, acks and deletes the entries and
  appends the views to the gateway's outbox;
- the gateway reads the outbox (``XREAD BLOCK``) and writes each seat its frame.

So it costs what any server of this shape pays per move in these libraries:
what our gateway and worker spend beyond it is the logic of ours (rules,
views, fencing, checks), which is where a faster path has to come from.
The games never end (the worker plays no rules).

Run by the bench as ``python -m dudo.bench.skeleton gateway URL PORT [LAYER [LOOP]]``
(``picows``, the default, or ``aiohttp``; ``uvloop``, the default, or ``asyncio``) and
``python -m dudo.bench.skeleton worker URL``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import web
from picows import WSFrame, WSListener, WSMsgType, WSTransport
from redis.exceptions import ResponseError

from ..gateway import ConnectionGuard, fastws, serve
from ..infra import AsyncResp, Resp, connect, options_of

INBOX = "skeleton:in"
OUTBOX = "skeleton:out"
GROUP = "workers"
RECORD_BYTES = 2400  # about what our table record weighs (docs/benchmarks.md)
_EXAMPLE = Path(__file__).parents[3] / "protocol" / "examples" / "ws-out-view.json"

_json = msgspec.json.Encoder()
_decode_json = msgspec.json.Decoder()
_pack = msgspec.msgpack.Encoder()
_unpack = msgspec.msgpack.Decoder()


def view_template() -> dict[str, Any]:
    """A seat's view as our clients get it (the published example), with a bid legal
    at every face so the load generator's policy always has a move."""
    view = json.loads(_EXAMPLE.read_text())
    view["game"]["legal"]["bid"] = [1] * 6
    return view


def view_text(template: dict[str, Any], table: str, version: int, seat: int, turn: int) -> bytes:
    view = copy.copy(template)
    game = view["game"] = copy.copy(template["game"])
    view.update(table=table, version=version, seat=seat)
    game.update(turn=turn, seat=seat)
    return _json.encode(view)


def _frame(payload: bytes) -> bytes:
    """One unmasked text frame (RFC 6455 §5.2), as the real gateway writes them."""
    n = len(payload)
    if n < 126:
        return bytes((0x81, n)) + payload
    if n < 65536:
        return bytes((0x81, 126)) + n.to_bytes(2, "big") + payload
    return bytes((0x81, 127)) + n.to_bytes(8, "big") + payload


class SkeletonGateway:
    def __init__(self, url: str, seats: int = 4) -> None:
        options = options_of(connect(url))
        assert options is not None, "the skeleton needs a standalone Redis"
        self.writer = AsyncResp(options)
        self.reader = AsyncResp(options)  # its XREAD blocks: a connection of its own
        self.seats = seats
        self.sockets: dict[str, list[Any]] = {}
        self.joined: dict[str, int] = {}
        self.numbers = itertools.count(1)
        self.template = view_template()
        self.outgoing: list[bytes] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/tables", self.create)
        app.router.add_post("/api/tables/{table}/join", self.join)
        app.router.add_get("/ws", self.websocket)
        app.router.add_get("/readyz", self.ready)
        app.on_startup.append(self._start_reading)
        return app

    async def ready(self, request: web.Request) -> web.Response:
        return web.json_response({"ready": True})

    async def create(self, request: web.Request) -> web.Response:
        table = f"s{next(self.numbers)}"
        self.sockets[table] = [None] * self.seats
        self.joined[table] = 1
        return web.json_response({"table": table, "token": f"{table}.0"})

    async def join(self, request: web.Request) -> web.Response:
        table = request.match_info["table"]
        seat = self.joined[table]
        self.joined[table] = seat + 1
        return web.json_response({"table": table, "token": f"{table}.{seat}"})

    async def websocket(self, request: web.Request) -> web.WebSocketResponse:
        """``/ws`` on aiohttp (``LAYER`` aiohttp)."""
        ws = web.WebSocketResponse(compress=False)
        await ws.prepare(request)
        seat = _Seat(request.transport)
        async for frame in ws:
            self.receive(seat, frame.data)
        return ws

    def upgrade(self, head: bytes) -> asyncio.BufferedProtocol | None:
        """``/ws`` on picows (``LAYER`` picows), as the gateway routes it."""
        if not fastws.wants_websocket(head, compress=False):
            return None
        return fastws.protocol(lambda _request: _FastSeat(self))

    def receive(self, seat: _Seat, data: str | bytes) -> None:
        msg = _decode_json.decode(data)
        if msg["type"] == "act":
            if not self.outgoing:
                asyncio.get_running_loop().call_soon(self._flush)
            self.outgoing.append(_pack.encode((seat.table, seat.seat)))
        elif msg["type"] == "hello":
            seat.table, number = msg["token"].rsplit(".", 1)
            seat.seat = int(number)
            self.sockets[seat.table][seat.seat] = seat.transport
            seat.transport.write(_frame(view_text(self.template, seat.table, 1, seat.seat, 0)))

    def _flush(self) -> None:
        entries, self.outgoing = self.outgoing, []
        commands = [("XADD", INBOX, "*", "m", entry) for entry in entries]
        asyncio.get_running_loop().create_task(self.writer.execute(commands))

    async def _start_reading(self, app: web.Application) -> None:
        app["reading"] = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        last = "$"
        while True:
            got = await self.reader.call(
                "XREAD", "COUNT", 200, "BLOCK", 1000, "STREAMS", OUTBOX, last, wait=1.0
            )
            for _stream, entries in got or ():
                for entry_id, fields in entries:
                    last = entry_id
                    for table, texts in _unpack.decode(fields[1]):
                        for transport, text in zip(self.sockets[table], texts, strict=True):
                            if transport is not None and not transport.is_closing():
                                transport.write(_frame(text))


class _Seat:
    """One WebSocket: its socket, and the seat it said hello for."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.table, self.seat = "", 0


class _FastSeat(WSListener):  # type: ignore[misc]
    """A seat's WebSocket on picows: each text frame handed to the gateway as read."""

    def __init__(self, gateway: SkeletonGateway) -> None:
        self.gateway = gateway
        self.seat: _Seat | None = None

    def on_ws_connected(self, transport: WSTransport) -> None:
        self.seat = _Seat(transport.underlying_transport)

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        if frame.msg_type is WSMsgType.TEXT and self.seat is not None:
            self.gateway.receive(self.seat, frame.get_payload_as_bytes())
        elif frame.msg_type is WSMsgType.CLOSE:
            transport.send_close(frame.get_close_code())
            transport.disconnect()


def run_worker(url: str, seats: int = 4) -> None:
    redis = Resp(options_of(connect(url)) or {})
    with contextlib.suppress(ResponseError):  # BUSYGROUP: it exists
        redis.call("XGROUP", "CREATE", INBOX, GROUP, "$", "MKSTREAM")
    template = view_template()
    versions: dict[str, int] = {}
    record = b"r" * RECORD_BYTES
    while True:
        got = redis.call(
            "XREADGROUP", "GROUP", GROUP, "skeleton", "COUNT", 256, "BLOCK", 1000,
            "STREAMS", INBOX, ">", wait=1.0,
        )  # fmt: skip
        if not got:
            continue
        ids: list[bytes] = []
        views: list[tuple[str, list[bytes]]] = []
        commands: list[tuple[Any, ...]] = []
        for _stream, entries in got:
            for entry_id, fields in entries:
                ids.append(entry_id)
                table, seat = _unpack.decode(fields[1])
                version = versions[table] = versions.get(table, 1) + 1
                turn = (seat + 1) % seats
                texts = [view_text(template, table, version, s, turn) for s in range(seats)]
                views.append((table, texts))
                commands.append(("HSET", f"skeleton:t:{table}", "v", version, "s", record))
        commands.append(("XACK", INBOX, GROUP, *ids))
        commands.append(("XDEL", INBOX, *ids))
        commands.append(("XADD", OUTBOX, "MAXLEN", "~", 10000, "*", "m", _pack.encode(views)))
        redis.execute(commands)


def main(argv: list[str]) -> None:
    role, url = argv[0], argv[1]
    if role == "gateway":
        gateway = SkeletonGateway(url)
        layer = argv[3] if len(argv) > 3 else "picows"
        event_loop = argv[4] if len(argv) > 4 else "uvloop"
        if layer not in ("picows", "aiohttp") or event_loop not in ("uvloop", "asyncio"):
            raise SystemExit(f"picows or aiohttp, uvloop or asyncio: not {argv[3:]}")
        serve(
            gateway.app(), ConnectionGuard(per_address=None, request_timeout=60),
            host="127.0.0.1", port=int(argv[2]),
            upgrade=gateway.upgrade if layer == "picows" else None, event_loop=event_loop,
        )  # fmt: skip
    elif role == "worker":
        run_worker(url)
    else:
        raise SystemExit(f"role: gateway or worker, not {role!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
