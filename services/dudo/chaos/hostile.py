"""A hostile gateway among a chaos run's faults (docs/security.md).

It is an admitted gateway of an app of its own, driven by someone who holds its Redis
password: it registers, reads what a gateway may read (the lobby: tables, their hosts'
handles) and, all through the run, writes entries meant to act for players it was never
handed: moves, leaves and starts naming other seats' holders by their public handles,
joins naming player ids or carrying forged seat tokens or other apps' identities,
entries claiming to come from the run's honest gateways, and attaches. Some it signs,
some not. It never writes an honest join: every seat of the run is the scripted
players', and the audit's verdict covers them.

It also tries what a gateway's Redis user may do to the streams every app shares, as an
audit once did (issue 50): an entry with the last possible id and ``MAXLEN 0`` into the
deployment's inbox and the honest gateways' (Redis must refuse both: ``NOPERM``; into its
own inbox they are allowed, its own loss), ``SELECT`` of another database, a huge value
in its presence key, tables made under ids it could guess, WebSockets saying hello to
the honest gateways with forged seat tokens naming a table's host, and floods of 4 KB
entries nobody signed into its own inbox.

What it counts: entries written; what came back to it applied (an ``applied`` act, a
``joined``, a ``left``: each a seat acted for by a gateway that did not hold it), any
private part of a seat in a view it got (a leak), and anything Redis let it do to a
stream that is not its own (a breach). The run is ok only with all three at 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from redis.exceptions import NoPermissionError

from ..auth import make_token
from ..infra import connect_async
from ..link import AsyncGatewayLink
from ..wire import key_of_url, keys

MAX_ID = "18446744073709551615-18446744073709551615"
FLOOD = 200  # unsigned 4 KB entries into its own inbox, each round of attacks
ROUND_S = 1.0  # seconds between two rounds of the attacks on the shared streams

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
    bases: list[str] = field(default_factory=list)  # the honest gateways, for its hellos
    breaches: list[str] = field(default_factory=list)  # what Redis should have refused
    tried: dict[str, int] = field(default_factory=dict)  # attacks on shared streams, by kind
    _ids: set[str] = field(default_factory=set)

    async def run(self, until: float, every: float = 0.05) -> None:
        """Write hostile entries until ``until`` (monotonic), reading its outbox."""
        client = connect_async(self.url)
        link = AsyncGatewayLink(client, self.gateway, self.partitions,
                                signer=key_of_url(self.url, keys.USER_PREFIX))  # fmt: skip
        link.confined = True
        next_round = 0.0
        try:
            async with aiohttp.ClientSession() as session:
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
                        if time.monotonic() >= next_round:
                            next_round = time.monotonic() + ROUND_S
                            await self._shared_streams(client)
                            await self._squat(link, session, tables)
                    await asyncio.sleep(every)
        finally:
            await client.aclose()

    def _count(self, kind: str, n: int = 1) -> None:
        self.tried[kind] = self.tried.get(kind, 0) + n

    async def _refused_by_redis(self, kind: str, attempt: Any) -> None:
        """``attempt`` must be refused NOPERM; if Redis lets it through, that is a breach."""
        self._count(kind)
        try:
            await attempt
        except NoPermissionError:
            return
        except Exception:  # Redis away (a fault of the run): nothing was let through
            return
        self.breaches.append(kind)

    async def _shared_streams(self, client: Any) -> None:
        """What a gateway's user could once do to every app through the shared inboxes,
        tried on them (refused) and on its own inbox (its own loss)."""
        partition = self.rng.randrange(self.partitions)
        others = [keys.inbox(partition), keys.TOURNAMENTS.inbox(0),
                  *(keys.inbox(partition, victim) for victim in self.victims)]  # fmt: skip
        for key in others:
            await self._refused_by_redis(
                "max_id", client.xadd(key, {"m": b"x"}, id=MAX_ID)
            )
            await self._refused_by_redis(
                "maxlen_0", client.xadd(key, {"m": b"x"}, maxlen=0, approximate=False)
            )
        await self._refused_by_redis("select", client.execute_command("SELECT", 7))
        own = keys.inbox(partition, self.gateway)
        with contextlib.suppress(Exception):  # its own inbox: allowed, its own loss
            await client.xadd(own, {"m": b"x"}, maxlen=0, approximate=False)
            if self.rng.random() < 0.1:  # now and then exhausted, on one partition
                await client.xadd(own, {"m": b"x"}, id=MAX_ID)
                self._count("own_max_id")
        with contextlib.suppress(Exception):  # a presence value every worker reads
            await client.set(keys.presence(self.gateway), b"v" * 4_000_000, px=5000)
            self._count("huge_presence")
        with contextlib.suppress(Exception):  # unsigned 4 KB entries, a flood
            pipe = client.pipeline(transaction=False)
            junk = {"m": b"\x81" + self.rng.randbytes(4000)}
            for _ in range(FLOOD):
                pipe.xadd(keys.inbox(self.rng.randrange(self.partitions), self.gateway), junk)
            await pipe.execute(raise_on_error=False)
            self._count("unsigned_flood", FLOOD)

    async def _squat(
        self, link: AsyncGatewayLink, session: aiohttp.ClientSession, tables: dict[str, Any]
    ) -> None:
        """Tables under ids it could guess from the lobby's, and hellos to the honest
        gateways with forged seat tokens naming a table's host (four at a time, as many
        as one token may hold open)."""
        for table in self.rng.sample(sorted(tables), min(3, len(tables))):
            msg = link.message("create", id=f"q{secrets.token_hex(4)}", table=f"{table}-1",
                               rules={}, seats=[{"kind": "open"}] * 2)  # fmt: skip
            with contextlib.suppress(Exception):
                await link.send(msg)
                self._count("table_squat")
        hosts = [(t, e["host"]) for t, e in tables.items() if e.get("host")]
        if not hosts or not self.bases:
            return
        table, host = self.rng.choice(hosts)
        body = {"t": table, "p": host, "n": "Host", "k": "seat", "e": int(time.time()) + 600}
        forged = make_token(secrets.token_bytes(32), body)
        base = self.rng.choice(self.bases).replace("http", "ws") + "/ws"
        with contextlib.suppress(Exception):
            sockets = [await session.ws_connect(base) for _ in range(4)]
            for ws in sockets:
                await ws.send_str(f'{{"v":1,"type":"hello","token":"{forged}"}}')
            self._count("forged_hellos", len(sockets))
            await asyncio.sleep(0.2)
            for ws in sockets:
                await ws.close()

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
            "breaches": len(self.breaches),
            "refused_answered": self.refused,
            "tried": dict(sorted(self.tried.items())),
            "problems": (self.applied + self.leaked + self.breaches)[:10],
        }


