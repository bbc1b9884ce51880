"""The gateway's WebSocket side: one connection per client, the client protocol.

A mixin of :class:`~dudo.gateway.app.Gateway`, which holds the state used here
(declared in :mod:`~dudo.gateway.state`); the connections' open, close and intake are
:mod:`~dudo.gateway.intake`'s. A connection says ``hello`` with a token; for a seat, the
gateway writes a ``join`` with that token (the worker checks it, attaches the seat
to this gateway and answers ``joined`` then the latest view) and registers the
connection with the :class:`~dudo.gateway.audience.Audience` when ``joined``
arrives: never on the token's word alone, which the gateway cannot check. Everything
the connection then sends is written with the seat's table and its player's handle,
never the client's.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import secrets
import time
from typing import Any

import structlog

from .. import wire
from ..infra import REDIS_DOWN
from ..link import TokenError
from .clients import CLOSE_TOO_MANY, Connection
from .intake import Intake
from .lobby import listing

log = structlog.get_logger("dudo.gateway")


class Sockets(Intake):
    """The client protocol: hello, seats, actions, the table's controls."""

    async def _handle_client(self, conn: Connection, kind: str, msg: dict[str, Any]) -> None:
        client_id = msg.get("id")  # every client message may carry one; answers quote it
        if kind == "hello":
            await self._hello(conn, msg["token"], client_id)
        elif kind == "ping":
            conn.send(wire.message("pong", id=client_id))
        elif kind in ("watch_lobby", "resync") and not conn.costly(self.settings.costly_every):
            self._error(
                conn, client_id, wire.RATE_LIMITED, f"one {kind} per second at most",
                retry_ms=conn.costly_retry_ms(self.settings.costly_every),
            )  # fmt: skip
        elif kind == "watch_lobby":
            await self._watch_lobby(conn, client_id)
        elif conn.grant is None:
            self._error(conn, client_id, wire.UNAUTHORIZED, "send hello with a token")
        elif kind == "act":
            self._act(conn, msg)
        else:
            await self._control(conn, kind, client_id, msg)

    async def _hello(self, conn: Connection, token: str, client_id: str | None = None) -> None:
        conn.hello_id = client_id
        try:
            grant = self.tokens.check(token)
        except TokenError as exc:
            self._error(conn, client_id, exc.code, exc.message)
            return
        await self._detach(conn)
        conn.grant, conn.seat, conn.token = grant, None, token
        if grant.kind in ("watch", "claim") and not self._count_token(conn):
            return  # our own tokens, checked here: counted at once
        conn.table = None if grant.kind == "entrant" else grant.table
        assert self.streams.link is not None
        if grant.kind == "entrant":
            await self._hello_entrant(conn)
            return
        if grant.kind == "watch":
            first = self.audience.watch(conn, grant.table)
            renewed = self.tokens.watch(grant.table)  # every hello: 7 days from now
            conn.welcome(table=grant.table, seat=None, player=None, token=renewed)
            messages = [
                self.streams.link.message("resync", id=f"r-{conn.id}", table=grant.table, seat=None)
            ]
            if first:
                messages.insert(
                    0,
                    self.streams.link.message(
                        "watch", id=f"w-{secrets.token_hex(4)}", table=grant.table, on=True
                    ),
                )
            await self.streams.link.send(*messages)
            return
        await self._join_seat(conn, grant.table)

    def _count_token(self, conn: Connection) -> bool:
        """Count ``conn`` among its token's connections (at most ``conns_per_token``),
        once the token is known good: ours at once, the deployment's (seat, entrant)
        once the worker or director took it. Counting a token nobody checked let four
        forged hellos naming a host's handle close the host's own reconnect 4003."""
        grant = conn.grant
        assert grant is not None
        key = f"{grant.kind}:{grant.table}:{grant.player or grant.request}"
        if conn.token_key == key:
            return True
        if self.by_token.get(key) >= self.settings.conns_per_token:
            conn.close_soon(CLOSE_TOO_MANY, "too many connections with this token")
            return False
        self.by_token.add(key)
        conn.token_key = key
        return True

    def _refused_hello(self, conn: Connection) -> None:
        """A hello the deployment refused: the connection holds nothing now, and goes
        unless it says hello again (or watches the lobby) within the hello timeout."""
        conn.grant = None
        conn.hello = None
        asyncio.get_running_loop().call_later(
            self.settings.hello_timeout, self._hello_overdue, conn
        )

    async def _join_seat(self, conn: Connection, table: str) -> None:
        """(Re)join with the token at ``table``, which attaches the seat to this
        gateway (a claim token: the join it claims, sent again). The worker answers
        `joined`, then the latest view in the same outbox entry, so the connection is
        registered when `joined` is dispatched (see _dispatch), before that view is
        relayed."""
        grant = conn.grant
        assert grant is not None and self.streams.link is not None
        if grant.kind == "claim":
            credential = {"request": grant.request, "name": grant.name}
        else:
            credential = {"token": conn.token}
        join = self.streams.link.message(
            "join", id=f"h-{conn.id}-{secrets.token_hex(3)}", table=table, **credential
        )
        self.hellos[join["id"]] = conn
        conn.hello = join["id"]
        reply = self._expect(join["id"])
        await self.streams.link.send(join)
        try:
            answer = await asyncio.wait_for(reply, self.settings.reply_timeout)
        except TimeoutError:
            # The join may still be applied: a late `joined` seats this connection
            # then (the hello stays registered until the connection closes).
            self._error(conn, conn.hello_id, wire.TIMEOUT, "no worker answered yet; still trying")
            return
        finally:
            self._forget([join["id"]])
        self.hellos.pop(join["id"], None)
        if answer["type"] == "error":
            if grant.kind == "entrant":  # between tables: `moved` will seat it
                self._welcome_entrant(conn, None)
                return
            self._refused_hello(conn)
            self._error(conn, conn.hello_id, answer["code"], answer["message"])

    async def _hello_entrant(self, conn: Connection) -> None:
        """An entrant follows its player: standings of its tournament, and the seat at
        whichever table the tournament has the player now (`moved` when that changes).
        The director checks the token first (``subscribe`` with it, answered by
        ``entrant``): only then does this connection follow that player."""
        grant = conn.grant
        assert grant is not None and grant.player is not None and self.streams.link is not None
        tournament = grant.table
        subscribe = self.streams.link.message(
            "subscribe", id=f"s-{conn.id}-{secrets.token_hex(3)}", tournament=tournament,
            on=True, token=conn.token,
        )  # fmt: skip
        answer = await self._ask(subscribe)
        if answer is None:
            self._error(conn, conn.hello_id, wire.TIMEOUT, "no director answered; say hello again")
            return
        if conn.grant is not grant:  # another hello (or the close) came meanwhile
            return
        if answer["type"] == "error":
            self._refused_hello(conn)
            self._error(conn, conn.hello_id, answer["code"], answer["message"])
            return
        if not self._count_token(conn):  # the director took the token: count it now
            return
        self.audience.follow(conn, tournament, grant.player)
        if answer["table"] is None:
            self._welcome_entrant(conn, None)
        else:
            await self._join_seat(conn, answer["table"])
        # The standings answering the subscribe came before this connection followed.
        self.audience.send_standings(conn, tournament)

    def _welcome_entrant(self, conn: Connection, seat: int | None) -> None:
        grant = conn.grant
        assert grant is not None and grant.player is not None
        conn.welcome(table=conn.table, seat=seat, player=grant.player, tournament=grant.table)

    def _seated(self, conn: Connection, msg: dict[str, Any]) -> None:
        """A hello's join succeeded: this connection now plays that seat (for its player,
        whom the worker names by handle)."""
        grant = conn.grant
        assert grant is not None
        if grant.player != msg["player"]:  # a claim: the player is known from now on
            grant = conn.grant = dataclasses.replace(grant, player=msg["player"])
        if grant.kind == "seat" and not self._count_token(conn):  # the worker took it
            return
        self.audience.seat(conn, msg["table"], msg["player"], msg["seat"])
        if grant.kind == "entrant":
            self._welcome_entrant(conn, conn.seat)
            return
        # The worker's `joined` carries a seat token made now: the client keeps it in
        # place of the one it said hello with (a claim's becomes a seat token), so a
        # player who comes back within 7 days of the last hello is never locked out.
        fresh = {"token": msg["token"]} if msg.get("token") else {}
        conn.welcome(table=grant.table, seat=conn.seat, player=grant.player, **fresh)

    def _act(self, conn: Connection, msg: dict[str, Any]) -> None:
        """Write a seat's action to its table's inbox, without waiting: the connection
        reads its next message at once, and a write Redis refused is answered by
        :meth:`_act_written`. The table's answer (ack, view or error) comes through
        the outbox."""
        grant = conn.grant
        assert grant is not None and self.streams.link is not None
        if grant.kind == "watch":
            self._error(conn, msg["id"], wire.UNAUTHORIZED, "this token only watches")
            return
        table = conn.table
        if conn.seat is None or table is None:
            self._error(conn, msg["id"], wire.NOT_SEATED, "this connection plays no seat now")
            return
        if msg.get("table", table) != table or msg.get("seat", conn.seat) != conn.seat:
            self._error(
                conn, msg["id"], wire.UNAUTHORIZED, "a token acts only for its own seat and table"
            )
            return
        message_id = _act_id(grant.player, msg["id"])
        act = self.streams.link.message(
            "act",
            id=message_id,
            table=table,
            player=grant.player,
            seat=conn.seat,
            action=msg["action"],
        )
        self._remember_request(conn, table, message_id, msg["id"], timed=True)
        if self.debug:  # one action traced across processes by its id (docs/operations.md)
            self.log.debug("act_sent", table=table, id=message_id, seat=conn.seat)
        written = self.streams.link.send_soon(act)
        written.add_done_callback(lambda done: self._act_written(done, conn, msg["id"]))

    def _act_written(self, done: asyncio.Future[None], conn: Connection, client_id: str) -> None:
        """The inbox write of an act finished: if Redis refused it or could not be
        reached, the client hears so, quoting its id. (A write whose reply was lost
        may still have been written: the act stays remembered, so if the table
        applies it after all, its ack and view still reach the client.)"""
        if done.cancelled():
            return
        error = done.exception()
        if error is None:
            return
        if isinstance(error, REDIS_DOWN):
            self._error(conn, client_id, wire.UNAVAILABLE, "the game service is unreachable")
        else:
            self.log.error("act_write_failed", error=str(error))
            self._error(conn, client_id, wire.INTERNAL, "the gateway failed; try again")

    async def _control(
        self, conn: Connection, kind: str, client_id: str | None, msg: dict[str, Any]
    ) -> None:
        """``resync``, ``leave``, ``start``, ``react``, ``seed``, ``rematch``: sent on to
        the table under an id of our own, remembered with the client's (a refusal comes
        back quoting the client's id; a leave is confirmed with ``left``; a start, a seed
        or a rematch shows in the next view)."""
        grant = conn.grant
        assert grant is not None and self.streams.link is not None
        table = conn.table or grant.table
        base = {"id": f"{kind[0]}-{conn.id}-{secrets.token_hex(3)}", "table": table}
        if kind == "resync" and grant.kind == "watch":
            body = self.streams.link.message("resync", seat=None, **base)
        elif grant.kind == "watch":
            self._error(conn, client_id, wire.UNAUTHORIZED, "this token only watches")
            return
        elif conn.seat is None or conn.table is None:
            self._error(conn, client_id, wire.NOT_SEATED, "this connection plays no seat now")
            return
        elif kind == "start":
            body = self.streams.link.message("start", player=grant.player, **base)
        elif kind == "react":
            body = self.streams.link.message(
                "react", seat=conn.seat, player=grant.player, emote=msg["emote"], **base
            )
        elif kind in ("seed", "commit_seed"):  # (its form: the client schema's)
            field = "seed" if kind == "seed" else "commitment"
            body = self.streams.link.message(
                kind, seat=conn.seat, player=grant.player, **{field: msg[field]}, **base
            )
        elif kind == "rematch":  # (its `table` is an id: the client schema's pattern)
            body = self.streams.link.message(
                "rematch", seat=conn.seat, player=grant.player, next=msg["table"], **base
            )
        else:  # resync or leave, for the seat
            body = self.streams.link.message(kind, seat=conn.seat, player=grant.player, **base)
        self._remember_request(conn, table, body["id"], client_id, timed=False)
        await self.streams.link.send(body)

    def _remember_request(
        self,
        conn: Connection,
        table: str,
        message_id: str,
        client_id: str | None,
        *,
        timed: bool,
    ) -> None:
        """Route the table's answer to ``message_id`` back to ``conn`` as ``client_id``;
        forgotten once a later view of the table shows it was handled (``timed``: an
        action, whose time to that view is the gateway's latency metric)."""
        sent = time.perf_counter() if timed else -1.0
        before = self.audience.versions.get(table, 0)
        self.pending.add(conn, table, message_id, client_id, before, sent)

    async def _watch_lobby(self, conn: Connection, client_id: str | None = None) -> None:
        """The full list, then every change: news that comes while the list is read
        waits and follows it (a client applies the list, then the changes)."""
        self.audience.watch_lobby(conn)
        assert self.streams.link is not None
        conn.lobby_held = held = []
        try:
            tables = listing(await self.streams.link.open_tables(), self.settings.lobby_max)
            conn.send(wire.message("lobby", tables=tables, id=client_id))
        finally:
            conn.lobby_held = None
            for note in held:
                conn.send(note)

    async def _detach(self, conn: Connection) -> None:
        """Forget what ``conn`` played or watched (before a new hello, or at its close)."""
        if conn.hello is not None:
            self.hellos.pop(conn.hello, None)
            conn.hello = None
        if conn.token_key is not None:
            self.by_token.remove(conn.token_key)
            conn.token_key = None
        unwatched = self.audience.drop(conn)
        if unwatched is not None and self.streams.link is not None:
            with contextlib.suppress(Exception):
                await self.streams.link.send(
                    self.streams.link.message(
                        "watch", id=f"w-{secrets.token_hex(4)}", table=unwatched, on=False
                    )
                )

    async def _disconnect(self, conn: Connection) -> None:
        await self._detach(conn)
        self.pending.forget(conn)  # its requests' answers have nobody to go to

    def _error(
        self, conn: Connection, message_id: str | None, code: str, text: str, **extra: Any
    ) -> None:
        """Refuse a client's message: ``extra`` may add ``retry_ms`` (rate limits)."""
        self.metrics.errors.labels(code).inc()
        conn.send(wire.message("error", id=message_id, code=code, message=text[:500], **extra))


def _act_id(player: str, client_id: str) -> str:
    """The stream id of a client's act: unique per table, so per player and client id.

    ``<player>.<client id>`` when it fits the 64 characters of a message id; a
    digest of both otherwise (cutting it short made two long client ids of one
    player collide, and the second was refused as a duplicate)."""
    full = f"{player}.{client_id}"
    if len(full) <= 64:
        return full
    digest = hashlib.sha256(f"{player}\0{client_id}".encode()).digest()
    return "h." + base64.urlsafe_b64encode(digest).decode().rstrip("=")
