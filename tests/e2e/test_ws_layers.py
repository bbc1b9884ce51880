"""The gateway's two WebSocket layers on one port (dudo.gateway.fastws, gateway.guard).

A plain client gets picows; a client asking for permessage-deflate from a gateway that
compresses gets aiohttp; HTTP stays aiohttp's. What aiohttp did for free is tested on
picows with a client that speaks raw RFC 6455 (the other tests' clients never
fragment, pipeline or misbehave): fragmented messages, messages sent in the same
packet as the upgrade and handled in their order behind a hello that waits for the
worker, a message too big, the close handshake, pings, and a head sent too slowly.
Every connection is counted by the guard and counted out again when it goes.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import socket
import struct
import time
import urllib.request
from typing import Any

import aiohttp
import pytest

from ..integration.procs import Workers
from ..servers import RedisServer


@pytest.fixture(scope="module")
def group(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    redis_server.client().flushall()
    workers = Workers(redis_server.url, tmp_path_factory.mktemp("layers"), partitions=4)
    workers.start("w1")
    yield workers
    workers.stop_all()


@pytest.fixture(scope="module")
def gateway(group: Workers) -> str:
    """picows by default (aiohttp for clients asking for compression, which this one
    offers); few connections per address, short deadlines for a request and a hello."""
    return group.gateway(
        "gw-fast", "--ws-compress", "--http-conns-per-address", "6",
        "--request-timeout", "1", "--hello-timeout", "1",
    )  # fmt: skip


def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)  # type: ignore[no-any-return]


def opened(base: str) -> dict[str, float]:
    """dudo_gateway_websockets_opened_total by layer."""
    with urllib.request.urlopen(f"{base}/metrics", timeout=10) as response:
        text = response.read().decode()
    found = re.findall(r'dudo_gateway_websockets_opened_total\{layer="(\w+)"\} ([\d.]+)', text)
    return {layer: float(n) for layer, n in found}


class Raw:
    """A WebSocket client written from RFC 6455 alone: frames masked by hand."""

    def __init__(self, base: str, path: str = "/ws", *, extra: bytes = b"", after: bytes = b""):
        host, port = base.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        head = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n"
        ).encode() + extra + b"\r\n"
        self.sock.sendall(head + after)  # `after`: frames in the same packet as the head
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self._recv()
        status, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        assert status.startswith(b"HTTP/1.1 101"), status

    def _recv(self) -> bytes:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed")
        return data

    def send(self, opcode: int, payload: bytes, *, fin: bool = True) -> None:
        self.sock.sendall(frame(opcode, payload, fin=fin))

    def send_json(self, message: dict[str, Any]) -> None:
        self.send(1, json.dumps({"v": 1, **message}).encode())

    def receive(self) -> tuple[int, bytes]:
        while True:
            if len(self.buffer) >= 2:
                opcode, n = self.buffer[0] & 0x0F, self.buffer[1] & 0x7F
                start = 2
                if n == 126:
                    n, start = struct.unpack(">H", self.buffer[2:4])[0], 4
                elif n == 127:
                    n, start = struct.unpack(">Q", self.buffer[2:10])[0], 10
                if len(self.buffer) >= start + n:
                    payload = self.buffer[start : start + n]
                    self.buffer = self.buffer[start + n :]
                    return opcode, payload
            self.buffer += self._recv()

    def message(self) -> dict[str, Any]:
        """The next text message (pings and pongs skipped)."""
        while True:
            opcode, payload = self.receive()
            if opcode == 1:
                return json.loads(payload)  # type: ignore[no-any-return]
            assert opcode in (9, 10), (opcode, payload)

    def close_code(self) -> int:
        """Read until the server's close frame; its code."""
        while True:
            opcode, payload = self.receive()
            if opcode == 8:
                return int(struct.unpack(">H", payload[:2])[0])

    def gone(self) -> bool:
        """Has the server closed the TCP connection (within a few seconds)?"""
        self.sock.settimeout(5)
        try:
            while self.sock.recv(65536):
                pass
        except (TimeoutError, OSError):
            return False
        return True


def frame(opcode: int, payload: bytes, *, fin: bool = True) -> bytes:
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        length = bytes((0x80 | n,))
    elif n < 65536:
        length = bytes((0x80 | 126,)) + struct.pack(">H", n)
    else:
        length = bytes((0x80 | 127,)) + struct.pack(">Q", n)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes(((0x80 if fin else 0) | opcode,)) + length + mask + masked


def seat_token(base: str) -> str:
    return str(post(f"{base}/api/tables", {"seats": 2, "name": "Ana"})["token"])


def test_a_plain_client_is_served_by_picows_a_compressing_one_by_aiohttp(gateway: str) -> None:
    before = opened(gateway)

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        url = gateway.replace("http", "ws") + "/ws"
        async with aiohttp.ClientSession() as session:
            answers = []
            for compress in (0, 15):
                async with session.ws_connect(url, compress=compress) as ws:
                    await ws.send_json({"v": 1, "type": "ping", "id": "p"})
                    answers.append(await ws.receive_json(timeout=10))
                    assert bool(ws.compress) == bool(compress)
            return answers[0], answers[1]

    plain, deflated = asyncio.run(both())
    assert plain == deflated == {"v": 1, "type": "pong", "id": "p"}
    after = opened(gateway)
    assert after.get("picows", 0) - before.get("picows", 0) == 1
    assert after.get("aiohttp", 0) - before.get("aiohttp", 0) == 1


def test_aiohttp_serves_every_websocket_when_told(group: Workers) -> None:
    """The layers before picows, all of them: aiohttp on the standard event loop."""
    base = group.gateway("gw-aiohttp", "--ws-layer", "aiohttp", "--event-loop", "asyncio")
    ws = Raw(base)
    ws.send_json({"type": "ping", "id": "a"})
    assert ws.message()["type"] == "pong"
    assert opened(base) == {"aiohttp": 1.0}


def test_picows_on_the_standard_event_loop(group: Workers) -> None:
    """The connection handed from the front door to picows on asyncio's own loop (its
    transports switch protocols unlike uvloop's), frames behind the head included."""
    base = group.gateway("gw-asyncio", "--event-loop", "asyncio")
    ordered_after_a_hello(base)
    assert opened(base) == {"picows": 1.0}


def test_a_fragmented_message_is_read_whole(gateway: str) -> None:
    ws = Raw(gateway)
    text = json.dumps({"v": 1, "type": "ping", "id": "in-three-parts"}).encode()
    ws.send(1, text[:10], fin=False)
    ws.send(9, b"between")  # a control frame may come between fragments
    ws.send(0, text[10:20], fin=False)
    ws.send(0, text[20:])
    assert ws.message() == {"v": 1, "type": "pong", "id": "in-three-parts"}


def test_messages_are_handled_in_order_behind_a_hello_that_waits(gateway: str) -> None:
    """A hello waits for the worker's `joined`; the ping sent behind it, in the same
    packet as the upgrade itself, is answered after the welcome, not before."""
    ordered_after_a_hello(gateway)


def ordered_after_a_hello(gateway: str) -> None:
    token = seat_token(gateway)
    hello = json.dumps({"v": 1, "type": "hello", "token": token, "id": "h"}).encode()
    ping = json.dumps({"v": 1, "type": "ping", "id": "after"}).encode()
    ws = Raw(gateway, after=frame(1, hello) + frame(1, ping))
    kinds = []
    while "pong" not in kinds:
        kinds.append(ws.message()["type"])
    assert kinds.index("welcome") < kinds.index("pong"), kinds


def test_a_token_in_the_url_says_hello(gateway: str) -> None:
    ws = Raw(gateway, f"/ws?token={seat_token(gateway)}")
    first = ws.message()
    assert first["type"] == "welcome" and first["seat"] == 0


def test_a_message_too_big_closes_the_connection(gateway: str) -> None:
    ws = Raw(gateway)
    ws.send(1, b" " * (64 * 1024 + 1))
    assert ws.close_code() == 1009
    assert ws.gone()


def test_the_close_handshake_and_pings(gateway: str) -> None:
    ws = Raw(gateway)
    ws.send(9, b"are you there")
    opcode, payload = ws.receive()
    assert (opcode, payload) == (10, b"are you there")
    ws.send(8, struct.pack(">H", 1000) + b"bye")
    assert ws.close_code() == 1000
    assert ws.gone()


def test_our_own_close_codes_reach_the_client(gateway: str) -> None:
    """A connection that never says hello is closed 4001 (the hello timeout) with
    picows's close frame, and the TCP connection ends after the client answers."""
    ws = Raw(gateway)
    assert ws.close_code() == 4001
    ws.send(8, struct.pack(">H", 4001))
    assert ws.gone()


def test_every_connection_is_counted_out_again(gateway: str) -> None:
    """Six TCP connections per address at most: thirty WebSockets opened and closed
    one after another (each way a picows connection ends) leave room for more."""
    for i in range(30):
        ws = Raw(gateway)
        if i % 3 == 0:
            ws.send(8, struct.pack(">H", 1000))
            ws.close_code()
        elif i % 3 == 1:
            ws.send(1, b"{not json")
            assert ws.message()["code"] == "bad_message"
        ws.sock.close()
        time.sleep(0.02)
    held = [Raw(gateway) for _ in range(5)]  # the guard let go of every one before
    for ws in held:
        ws.send_json({"type": "ping", "id": "x"})
        assert ws.message()["type"] == "pong"


def test_a_head_sent_too_slowly_is_cut_off(gateway: str) -> None:
    """The request deadline (1 s here) holds for a head that starts like a WebSocket
    upgrade and never ends: picows never sees it."""
    host, port = gateway.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    started = time.monotonic()
    sock.sendall(b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n")
    closed = False
    for _ in range(50):
        try:
            sock.sendall(b"X-Slow: 1\r\n")
        except OSError:
            closed = True
            break
        time.sleep(0.1)
        sock.settimeout(0.01)
        try:
            if sock.recv(1024) == b"":
                closed = True
                break
        except (TimeoutError, BlockingIOError):
            pass
        except OSError:
            closed = True
            break
    assert closed and time.monotonic() - started < 4


def test_http_is_served_on_the_same_port(gateway: str) -> None:
    with urllib.request.urlopen(f"{gateway}/api/tables", timeout=10) as response:
        assert response.status == 200
    with urllib.request.urlopen(f"{gateway}/readyz", timeout=10) as response:
        assert response.status == 200


def test_a_flood_behind_a_waiting_hello_is_bounded_and_answered_in_order(gateway: str) -> None:
    """Five hundred pings in the packet behind a hello that waits for the worker: the
    socket is not read while the hello waits, the pings then meet the rate limit in
    order (the burst answered, the rest refused), and the connection lives on."""
    token = seat_token(gateway)
    hello = frame(1, json.dumps({"v": 1, "type": "hello", "token": token, "id": "h"}).encode())
    pings = b"".join(
        frame(1, json.dumps({"v": 1, "type": "ping", "id": f"p{i}"}).encode()) for i in range(500)
    )
    ws = Raw(gateway, after=hello + pings)
    answers = []
    while len([a for a in answers if a.get("id", "").startswith("p")]) < 500:
        answers.append(ws.message())
    kinds = [a["type"] for a in answers]
    assert kinds.index("welcome") < kinds.index("pong")
    replies = [a for a in answers if a.get("id", "").startswith("p")]
    assert [a["id"] for a in replies] == [f"p{i}" for i in range(500)]  # in the order sent
    pongs = sum(a["type"] == "pong" for a in replies)
    assert 30 <= pongs <= 60, pongs  # the burst (40), and what refilled meanwhile
    assert {a["code"] for a in replies if a["type"] == "error"} == {"rate_limited"}
    time.sleep(2.5)  # the bucket refills
    ws.send_json({"type": "ping", "id": "later"})
    assert ws.message() == {"v": 1, "type": "pong", "id": "later"}


def test_a_bad_upgrade_is_refused_and_counted_out(gateway: str) -> None:
    """An upgrade of /ws without a key: picows answers 400 and hangs up; ten of them
    leave the address's six connections free."""
    host, port = gateway.removeprefix("http://").split(":")
    for _ in range(10):
        sock = socket.create_connection((host, int(port)), timeout=10)
        sock.sendall(
            b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
        )
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 400"), answer[:100]
        sock.close()
    time.sleep(0.2)
    held = [Raw(gateway) for _ in range(5)]
    for ws in held:
        ws.send_json({"type": "ping", "id": "x"})
        assert ws.message()["type"] == "pong"
