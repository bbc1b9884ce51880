"""The gateway's view of its clients: one WebSocket each, their limits, what they are sent.

Kept apart from the routes (:mod:`dudo.gateway.app`): a :class:`Connection` knows
its grant (the token it said hello with), its seat, its rate limit and whether it
speaks JSON or msgpack; :class:`SnapshotTexts` turns one ``view`` message into
the JSON every connection at that table gets, encoding the shared part once.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from typing import TYPE_CHECKING, Any

import msgpack
from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from .tokens import Grant

if TYPE_CHECKING:
    from .app import GatewaySettings


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.connections = Gauge(
            "dudo_gateway_connections", "open WebSockets", ["kind"], registry=r
        )
        self.messages = Counter(
            "dudo_gateway_messages_total", "client messages", ["direction", "type"], registry=r
        )
        self.errors = Counter(
            "dudo_gateway_errors_total", "errors sent to clients", ["code"], registry=r
        )
        self.latency = Histogram(
            "dudo_gateway_action_seconds",
            "from an action written to the inbox to the view that shows it",
            buckets=(0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
            registry=r,
        )
        self.batches = Counter(
            "dudo_gateway_outbox_entries_total", "outbox entries read", registry=r
        )


class Connection:
    """One WebSocket, and what it may do."""

    def __init__(self, ws: web.WebSocketResponse, settings: GatewaySettings) -> None:
        self.ws = ws
        self.id = secrets.token_hex(4)
        self.grant: Grant | None = None
        self.seat: int | None = None
        self.binary = False  # answer in msgpack once the client spoke msgpack
        self.tokens = float(settings.burst)
        self.refilled = time.monotonic()
        self.rate = settings.rate_per_s
        self.burst = settings.burst

    def allow(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.refilled) * self.rate)
        self.refilled = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    async def send(self, message: dict[str, Any], text: str | None = None) -> None:
        """Send a message; ``text`` is its JSON when the caller already has it."""
        if self.ws.closed:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            if self.binary:
                await self.ws.send_bytes(msgpack.packb(message, use_bin_type=True))
            else:
                await self.ws.send_str(text or json.dumps(message, separators=(",", ":")))


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class SnapshotTexts:
    """The JSON a client gets for a ``view`` message, with the public part encoded once.

    A seat's snapshot is the wrapper plus ``game`` = public part merged with its
    private part (their keys never overlap), so the text is spliced: the public
    object without its closing brace, then the private members. Equal, byte for
    byte, to encoding :func:`wire.seat_snapshot` (tests/e2e/test_gateway.py).
    """

    def __init__(self, view: dict[str, Any]) -> None:
        wrapper = {k: v for k, v in view.items() if k not in ("game", "seats")}
        self.head = _json(wrapper)[:-1]
        self.public = _json(view["game"]) if view["game"] is not None else None

    def seat(self, private: dict[str, Any]) -> str:
        game = "null" if self.public is None else f"{self.public[:-1]},{_json(private)[1:]}"
        return f'{self.head},"seat":{private["seat"]},"game":{game}}}'

    def spectator(self) -> str:
        game = "null" if self.public is None else f'{self.public[:-1]},"seat":null}}'
        return f'{self.head},"seat":null,"game":{game}}}'
