"""A hostile gateway among a chaos run's faults (docs/security.md).

It is an admitted gateway of an app of its own, driven by someone who holds its Redis
password: it registers, reads what a gateway may read (the lobby: tables, their hosts'
handles) and, all through the run, writes entries meant to act for players it was never
handed: moves, leaves and starts naming other seats' holders by their public handles,
joins naming player ids or carrying forged seat tokens or other apps' identities,
entries claiming to come from the run's honest gateways, and attaches. Some it signs,
some not. It never writes an honest join: every seat of the run is the scripted
players', and the audit's verdict covers them.

What it counts: entries written; what came back to it applied (an ``applied`` act, a
``joined``, a ``left``: each a seat acted for by a gateway that did not hold it), and any
private part of a seat in a view it got (a leak). The run is ok only with both at 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from ..auth.authority import make_token
from ..infra.connection import connect_async
from ..link import AsyncGatewayLink
from ..wire import keys
from ..wire.signing import key_of_url

KINDS = ("act", "leave", "start", "resync", "join-player", "join-forged", "join-identity",
         "impersonate", "attach")  # fmt: skip


@dataclass
class Hostile:
    url: str  # its own Redis user's URL (dudo admin gateway add)
    gateway: str
    partitions: int
    victims: list[str]  # the honest gateways' ids, to claim to be
    rng: random.Random = field(default_factory=random.Random)
    sent: int = 0
    applied: list[str] = field(default_factory=list)
    leaked: list[str] = field(default_factory=list)
    refused: int = 0
    _ids: set[str] = field(default_factory=set)

    async def run(self, until: float, every: float = 0.05) -> None:
        """Write hostile entries until ``until`` (monotonic), reading its outbox."""
        client = connect_async(self.url)
        link = AsyncGatewayLink(client, self.gateway, self.partitions,
                                signer=key_of_url(self.url, keys.USER_PREFIX))  # fmt: skip
        link.confined = True
        try:
            while time.monotonic() < until:
                with contextlib.suppress(Exception):  # Redis restarts are a fault too
                    await link.register()
                    tables = await link.open_tables()
                    for _ in range(10):
                        if tables:
                            msg, signed = self._entry(link, tables)
                            await self._write(link, msg, signed)
                    for got in await link.read(block_ms=None, count=500):
                        self._check(got)
                await asyncio.sleep(every)
        finally:
            await client.aclose()

    def _entry(self, link: AsyncGatewayLink, tables: dict[str, Any]) -> tuple[dict, bool]:
        table = self.rng.choice(sorted(tables))
        entry = tables[table]
        handle = entry.get("host") or secrets.token_urlsafe(12)[:16]
        seat = self.rng.randrange(entry.get("seats", 2))
        kind = self.rng.choice(KINDS)
        msg_id = f"x{secrets.token_hex(5)}"
        self._ids.add(msg_id)
        base: dict[str, Any] = {"id": msg_id, "table": table}
        if kind == "act":
            action = self.rng.choice([{"type": "dudo"}, {"type": "calza"},
                                      {"type": "bid", "quantity": 1, "face": 2}])  # fmt: skip
            msg = link.message("act", player=handle, seat=seat, action=action, **base)
        elif kind in ("leave", "resync"):
            msg = link.message(kind, player=handle, seat=seat, **base)
        elif kind == "start":
            msg = link.message("start", player=handle, **base)
        elif kind == "join-player":  # as if it had read a player id somewhere
            msg = link.message("join", player=f"u-{secrets.token_urlsafe(16)}", name="Eve",
                               **base)  # fmt: skip
        elif kind == "join-forged":
            body = {"t": table, "p": handle, "n": "Eve", "k": "seat",
                    "e": int(time.time()) + 600}  # fmt: skip
            token = make_token(secrets.token_bytes(32), body)
            msg = link.message("join", token=token, **base)
        elif kind == "join-identity":  # an app's name, signed by nobody it knows
            msg = link.message("join", name="Eve", identity="eyJhbGciOiJub25lIn0.e30.", **base)
        elif kind == "attach":
            msg = link.message("attach", player=handle, seat=seat, **base)
        else:  # one of the honest gateways' acts, written by this one
            msg = link.message("act", player=handle, seat=seat, action={"type": "dudo"}, **base)
            msg["gateway"] = self.rng.choice(self.victims)
        return msg, self.rng.random() < 0.8

    async def _write(self, link: AsyncGatewayLink, msg: dict[str, Any], signed: bool) -> None:
        signer = link.signer
        if not signed:
            link.signer = None
        try:
            await link.send(msg)
            self.sent += 1
        finally:
            link.signer = signer

    def _check(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if kind in ("view", "frames"):
            for applied in msg.get("applied") or ():
                if applied in self._ids:
                    self.applied.append(f"{applied} at {msg['table']}")
            if msg.get("holders"):
                self.leaked.append(f"{msg['table']} v{msg['version']}: {msg['holders']}")
        elif kind in ("joined", "left") and msg.get("id") in self._ids:
            self.applied.append(f"{kind} {msg['id']} at {msg['table']}")
        elif kind == "error":
            self.refused += 1

    def report(self) -> dict[str, Any]:
        return {
            "sent": self.sent,
            "applied": len(self.applied),
            "leaked": len(self.leaked),
            "refused_answered": self.refused,
            "problems": (self.applied + self.leaked)[:10],
        }


