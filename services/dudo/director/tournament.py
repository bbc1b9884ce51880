"""A tournament: registration, the start, tables and their balancing, places and payouts.

An :class:`~dudo.entity.Entity` of the director's partitions: the director is the
worker's loop run over tournament partitions (:mod:`dudo.run.director`), so a
tournament is leased, fenced, committed and taken over exactly like a table. It
never touches a table itself: it creates tables and sends them ``seat_in`` and
``order`` messages (appended to their inboxes with its own commit), and learns
what happened from their ``report`` messages (appended with theirs).

Formats (docs/tournaments.md): ``elimination`` balances tables between rounds
(:mod:`dudo.director.balance`) down to a final table; ``heats`` plays rounds of
tables where the last ``advance`` players standing at each go through, reseated
with fresh dice, until the survivors fit one final table.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from hmac import compare_digest
from typing import Any, ClassVar

from .. import wire
from ..entity import Flush, Flushing, account_of, ledger_send, message_id, pool_of
from ..wire import DudoError, Refusal, TableReport, keys, message
from .config import config_of
from .organizer import Organizer
from .record import Stored
from .results import Results
from .standings import STREAMED_PLACES, STREAMED_TABLES, Entrant, standings
from .state import (
    BROADCAST_EVERY_MS,
    CANCELLED,
    ENDED,
    REGISTERING,
    RUNNING,
    UNSTARTED_MS,
    Context,
)


class Tournament(Organizer, Results, Stored, Flushing):
    """A tournament: its state (:class:`~dudo.director.state.TournamentState`), how it goes
    on (:class:`~dudo.director.progress.Progress`), what its host may do (:class:`Organizer`),
    what it keeps once played (:class:`Results`: rating changes, every table's history),
    how it is stored (:class:`Stored`), and the messages it takes."""

    KEY: ClassVar[str] = "tournament"
    CREATES: ClassVar[frozenset[str]] = frozenset({"tournament_create"})
    DIRECTION: ClassVar[str] = "director"
    UNKNOWN: ClassVar[str] = wire.UNKNOWN_TOURNAMENT

    # -- creation and storage -----------------------------------------------------------

    @classmethod
    def create(
        cls, msg: dict[str, Any], now: int, limits: Any = None, rng: random.Random | None = None
    ) -> Tournament:
        tid = msg["tournament"]
        config = config_of(msg, now)
        limits = limits or Context()
        if msg.get("host") is None:  # a gateway's create (the deployment's own name a host)
            limits.quotas.create(limits.authority.app_of(msg.get("gateway")))
        # The host: the deployment's own creates name it; a gateway's, by the creator's
        # credential (the register that follows names the same player).
        credential = any(msg.get(k) is not None for k in ("host", "identity", "request"))
        host = limits.authority.player_for(msg, tid, "host") if credential else None
        tournament = cls(id=tid, config=config, host=host, created=now, limits=limits)
        tournament.seen.add(msg["id"])
        tournament.subscribers.append(msg["gateway"])
        tournament.wake = config["start_at"] or now + UNSTARTED_MS
        tournament._changed()
        tournament._lobby = True
        return tournament

    def _enter(self, entrant: Entrant) -> None:
        """A new entrant: numbered, and stored with the next record."""
        self.entrant_seq += 1
        entrant.number = self.entrant_seq
        self.entrants[entrant.player] = self.touch(entrant)
        if self._by_handle is not None:
            self._by_handle[wire.public_id(entrant.player)] = entrant.player
        if self._names is not None:
            self._names.update(wire.name_keys(entrant.name))

    def _entrant_of(self, token: str) -> Entrant:
        """The entrant an entrant token of this tournament names (by handle), or
        :class:`Refusal`: ``unauthorized`` (forged, foreign, expired), ``not_seated``
        (no such entrant: unregistered since)."""
        grant = self.limits.authority.check(token, {"entrant": self.id})
        return self._entrant_by_handle(grant.player, "that entrant is not registered")

    def _player_of(self, msg: dict[str, Any]) -> str:
        """Who a message from a gateway names: the entrant of its ``token``; the
        deployment's own name a ``player``."""
        if msg.get("player") is not None:
            return msg["player"]
        if msg.get("token") is None:
            raise Refusal(wire.UNAUTHORIZED, "send the entrant token")
        return self._entrant_of(msg["token"]).player

    # -- handling messages ------------------------------------------------------------

    def handle(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        self._now = now
        kind = msg["type"]
        if kind == "reports":  # a worker commit's reports, each as a `report` alone
            for report in msg["reports"]:  # TableReports when ours (wire.decode_own)
                if not isinstance(report, TableReport):
                    report = TableReport.of(report)
                self._on_report(report, rng)
            return
        if kind == "report":  # reports are taken once by their table's version
            self._on_report(TableReport.of(msg), rng)
            return
        if kind == "tournament_timeout":
            if msg["version"] == self.version and self.status == REGISTERING:
                # With no start time the timer is the day's end (not begun: cancelled);
                # at its start time with nobody (and no bots), it is cancelled too.
                nobody = not self.entrants and self.config["bots"] is None
                if self.config["start_at"] is None or nobody:
                    self._cancel()
                else:
                    self._start(rng)
            elif msg["version"] == self.version and self.status in ENDED:
                self.wake = None  # out of the listing; the record stays (its retention)
                self._lobby = True
                self._changed(visible=False)
            # Running, any version: the standings news held back (flush) is due now; the
            # flush that follows this entry sends it.
            return
        if msg["id"] in self.seen:
            self._error(msg, wire.DUPLICATE, "this message id was already applied")
            return
        try:
            HANDLERS[kind](self, msg, now, rng)
        except DudoError as exc:
            self._error(msg, exc.code, exc.message)

    def _changed(self, msg: dict[str, Any] | None = None, *, visible: bool = True) -> None:
        if msg is not None and "id" in msg:
            self.seen.add(msg["id"])
        self._persist = True
        if visible:
            self._dirty = True
            self._lobby = True
            self.version += 1

    def _error(self, msg: dict[str, Any], code: str, text: str) -> None:
        reply = Tournament.error_for(msg, code, text)
        if reply is not None:
            self._direct.append((reply[0], wire.unpack(reply[1])))

    def _on_tournament_create(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        raise Refusal(wire.TABLE_EXISTS, f"tournament {self.id} already exists")

    def _on_register(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        player = self.limits.authority.player_for(msg, self.id)
        late = self._late_open()
        if player not in self.entrants:
            if self.status != REGISTERING and not late:
                raise Refusal(wire.GAME_STARTED, self._closed_why("registration is closed"))
            invite = self.config.get("invite")
            given = str(msg.get("invite") or "")
            if invite is not None and player != self.host and not compare_digest(given, invite):
                raise Refusal(
                    wire.UNAUTHORIZED, "this tournament is private: register with its invite"
                )
            if len(self.entrants) >= self.config["max_players"]:
                raise Refusal(wire.TOURNAMENT_FULL, "the tournament is full")
            if self._names is None:
                self._names = Counter(
                    k for e in self.entrants.values() for k in wire.name_keys(e.name)
                )
            if any(key in self._names for key in wire.name_keys(msg["name"])):
                raise Refusal(
                    wire.NAME_TAKEN, f"an entrant here is called {msg['name']!r} (or alike)"
                )
            if msg.get("player") is None:  # a gateway's (the deployment's own name players)
                self.limits.quotas.register(self.limits.authority.app_of(msg.get("gateway")))
            buy_in, bot = self.config["buy_in"], msg.get("bot")
            entrant = Entrant(player, msg["name"], msg["gateway"], bot, paid=buy_in, late=late,
                              seeds=bool(msg.get("seeds")))  # fmt: skip
            self._enter(entrant)
            self.pool += buy_in
            if late:
                self._enter_late(entrant)
            self._changed(msg)
            self._ledger("lb", [[account_of(player, bot), -buy_in], [pool_of(self.id), buy_in]])
        elif late:
            self._reenter(self.entrants[player])
            self._changed(msg)
        else:
            self._changed(msg)
        self._ack(msg, player, on=True)
        wanted = self.config["start_players"]
        if self.status == REGISTERING and wanted is not None and len(self.entrants) >= wanted:
            self._start(rng)

    def _on_unregister(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        if self.status != REGISTERING:
            raise Refusal(wire.GAME_STARTED, self._closed_why("the tournament has started"))
        player = self._player_of(msg)
        entrant = self.entrants.get(player)
        self._changed(msg)
        if entrant is not None:
            self._unregister(entrant)
        self._ack(msg, player, on=False)

    def _unregister(self, entrant: Entrant) -> None:
        """``entrant`` leaves before the start (their own wish, or the host's kick): their
        row goes, and their buy-in back."""
        del self.entrants[entrant.player]
        self._entrants_changed.add(entrant.player)  # its row goes
        if self._by_handle is not None:
            self._by_handle.pop(wire.public_id(entrant.player), None)
        if self._names is not None:
            for key in wire.name_keys(entrant.name):
                self._names[key] -= 1
                if self._names[key] <= 0:
                    del self._names[key]  # no entrant holds it any more
        self.pool -= entrant.paid
        self._ledger("lu", self._paid_back(entrant))

    def _ack(self, msg: dict[str, Any], player: str, *, on: bool) -> None:
        """``registered``: with the entrant token, the answer to a register."""
        answer = message(
            "registered",
            tournament=self.id,
            player=wire.public_id(player),
            id=msg["id"],
            on=on,
            entrants=len(self.entrants),
        )
        entrant = self.entrants.get(player)
        if on and entrant is not None:
            answer["token"] = self.limits.authority.token("entrant", self.id, player, entrant.name)
            if player == self.host and self.config.get("invite") is not None:
                answer["invite"] = self.config["invite"]  # the host hands it out
        self._direct.append((msg["gateway"], answer))

    def _closed_why(self, otherwise: str) -> str:
        return "the tournament was cancelled" if self.status == CANCELLED else otherwise

    def _on_begin(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        if self._player_of(msg) != self.host:
            raise Refusal(wire.NOT_HOST, "only the host may begin the tournament")
        if self.status != REGISTERING:
            raise Refusal(wire.GAME_STARTED, self._closed_why("the tournament has already started"))
        if len(self.entrants) < 2 and self.config["bots"] is None:
            raise Refusal(wire.TOO_FEW_PLAYERS, f"{len(self.entrants)} registered, 2 needed")
        self._changed(msg)
        self._start(rng)
        # The answer to a begin: the standings, now running.
        self._direct.append((msg["gateway"], self._standings_message()))

    def _on_subscribe(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        gateway = msg["gateway"]
        if msg.get("token") is not None and msg["on"]:
            self._follow(msg, gateway)
        if msg["on"] and gateway not in self.subscribers:
            self.subscribers.append(gateway)
        elif not msg["on"] and gateway in self.subscribers:
            self.subscribers.remove(gateway)
        self._changed(msg, visible=False)
        if msg["on"]:
            self._direct.append((gateway, self._standings_message()))

    def _on_standings(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """The whole standings, to the gateway that asked (GET /api/tournaments/ID): built
        once per version however many ask. Changes nothing. A private tournament's go to
        those who show an entrant token of it or its invite (its results, names, handles
        and ratings were once served to anyone who had its id)."""
        invite = self.config.get("invite")
        if invite is not None:
            given = msg.get("invite")
            if not (isinstance(given, str) and compare_digest(given, invite)):
                if msg.get("token") is None:
                    raise Refusal(
                        wire.UNAUTHORIZED,
                        "this tournament is private: ask with an entrant's token or its invite",
                    )
                self.limits.authority.check(msg["token"], {"entrant": self.id})
        cached = self._full_standings
        if cached is None or cached[0] != self.version:
            cached = self._full_standings = (self.version, self.standings())
        answer = message("tournament", tournament=self.id, version=self.version,
                         standings=cached[1], id=msg["id"])  # fmt: skip
        if msg.get("history"):
            answer["history"] = self.history()
        self._direct.append((msg["gateway"], answer))

    def _follow(self, msg: dict[str, Any], gateway: str) -> None:
        """An entrant's client says hello through ``gateway``: its seats are attached
        there from now on, and the gateway learns where it sits (``entrant``)."""
        entrant = self._entrant_of(msg["token"])
        if entrant.gateway != gateway and entrant.bot is None:
            entrant.gateway = gateway
            self.touch(entrant)
            self._changed(visible=False)
        self._direct.append(
            (
                gateway,
                message(
                    "entrant",
                    tournament=self.id,
                    player=wire.public_id(entrant.player),
                    id=msg["id"],
                    table=entrant.table,
                    seat=None,
                ),
            )
        )

    # -- output -------------------------------------------------------------------------

    def _ledger(self, kind: str, transfers: list[list[Any]]) -> None:
        """Chips moving for this tournament, to the ratings keeper's ledger (dudo.entity.results),
        numbered by the tournament's version: each change moves chips at most once."""
        self._sends.extend(ledger_send(message_id(kind, self.id, self.version), transfers))

    def _entrant_message(self, entrant: Entrant) -> dict[str, Any]:
        return {
            "player": entrant.player,
            "name": entrant.name,
            "dice": entrant.dice,
            "gateway": entrant.gateway,
            "bot": entrant.bot,
            **({"seeds": True} if entrant.seeds else {}),  # asked for commitments (tables)
        }

    def _send_to_table(self, table: str, body: dict[str, Any]) -> None:
        inbox = self._inboxes.get(table)
        if inbox is None:  # a table gets many messages (its players, its orders)
            partition = keys.partition_of(table, self.limits.table_partitions)
            inbox = self._inboxes[table] = keys.inbox(partition)
        self._sends.append((inbox, wire.encode(body)))

    def _summary(self) -> dict[str, Any]:
        c = self.config
        return {
            "name": c["name"],
            "format": c["format"],
            "status": self.status,
            "seats": c["seats"],
            "heat": self.heat,
            "buy_in": c["buy_in"],
            "pool": self.pool,
            "payouts": c["payouts"],
            "start_players": c["start_players"],
            "start_at": c["start_at"],
            "private": c.get("private", False),
            "late_until": self._late_until(),
            "reentries": c.get("reentries", 0),
            "paused": self.paused,
            "announcement": self.announcement,
            "host": wire.public_id(self.host) if self.host is not None else None,
            "rules": c["rules"],  # for a newcomer: a private one is in no listing
            "max_players": c["max_players"],
        }

    def standings(
        self, *, places_limit: int | None = None, tables_limit: int | None = None
    ) -> dict[str, Any]:
        tables = list(self.balancer.tables) if self.balancer else list(self.heat_tables)
        moving = 0
        if self.balancer is not None:
            moving = len(self.balancer.waiting) + sum(
                t.arriving for t in self.balancer.tables.values()
            )
        return standings(
            self._summary(),
            self.entrants,
            tables,
            moving,
            places_limit=places_limit,
            tables_limit=tables_limit,
            handles=self._handles,
            seated=self.seated_at,
            kicked=self.kicked,
        )

    def _standings_message(self) -> dict[str, Any]:
        return message(
            "tournament",
            tournament=self.id,
            version=self.version,
            standings=self.standings(places_limit=STREAMED_PLACES, tables_limit=STREAMED_TABLES),
        )

    def lobby_entry(self) -> dict[str, Any] | None:
        if self.status in ENDED and self.wake is None:
            return None  # its time in the listing is over (tournament_timeout)
        if self.config.get("private"):
            return None  # reached by its link, registered with its invite
        c = self.config
        left = len(self.entrants) - self.out
        return {
            "name": c["name"],
            "format": c["format"],
            "status": self.status,
            "seats": c["seats"],
            "entrants": len(self.entrants),
            "left": left,
            "max_players": c["max_players"],
            "buy_in": c["buy_in"],
            "start_players": c["start_players"],
            "start_at": c["start_at"],
            "rules": c["rules"],
            "host": wire.public_id(self.host) if self.host is not None else None,
            "late_until": self._late_until(),
        }

    # -- what the partition loop asks of every entity --------------------------------

    @staticmethod
    def error_for(msg: dict[str, Any], code: str, text: str) -> tuple[str, bytes] | None:
        gateway = msg.get("gateway")
        if gateway is None:
            return None
        body = message(
            "error",
            table=None,
            seat=None,
            player=msg.get("player"),
            id=msg.get("id"),
            code=code,
            message=text,
        )
        if msg.get("tournament") is not None:
            body["tournament"] = msg["tournament"]
        return gateway, wire.encode(body)

    @staticmethod
    def lobby_note(entity: str, entry: dict[str, Any] | None, version: int) -> bytes:
        return wire.encode(message("tournaments", tournament=entity, entry=entry, version=version))

    def _timer_name(self) -> str:
        """While it runs, the only timer is the held-back news' (flush): one entry,
        ``<id>|0``, whatever the version, so reports arriving every few milliseconds
        do not move it each batch (its timeout applies at any version)."""
        if self.status == RUNNING:
            return f"{self.id}|0"
        return f"{self.id}|{self.version}"

    @staticmethod
    def timeout(entity: str, version: int) -> dict[str, Any]:
        return message("tournament_timeout", id=f"t:{version}", tournament=entity, version=version)

    def flush(self, frame_gateways: frozenset[str] = frozenset()) -> Flush:
        if self._decide and self.balancer is not None and self.status == RUNNING:
            self._decide_moves()
        self._decide = False
        outputs = [(gateway, wire.encode(body)) for gateway, body in self._direct]
        self._news = self._news or self._dirty
        due = self.status != RUNNING or self._now - self._last_broadcast >= BROADCAST_EVERY_MS
        if self._news and due and self.subscribers:
            news = wire.encode(self._standings_message())
            outputs.extend((gateway, news) for gateway in self.subscribers)
            self._news, self._last_broadcast = False, self._now
        if self.status == RUNNING:
            # News held back (one broadcast a second) must not wait for the next entry:
            # a paused tournament, or tables waiting on people, may send none for long.
            # A wake-up then, on one timer entry for the whole run (_timer_name).
            held = self._news and bool(self.subscribers)
            wake = (self.wake or self._last_broadcast + BROADCAST_EVERY_MS) if held else None
            if wake != self.wake:
                self.wake, self._persist = wake, True  # the record keeps its timer
        if (
            self._entrants_changed
            or self._tables_changed
            or (self.balancer is not None and self.balancer.touched)
        ):
            self._persist = True
        rows = self.to_rows() if self._persist else []
        result = self._flush(outputs, self._sends, finished=self.status in ENDED, rows=rows)
        self._direct, self._sends = [], []
        return result


Handler = Callable[[Tournament, dict[str, Any], int, random.Random], None]

# What a tournament does with each message of its director's inbox
# (wire.DIRECTOR_TYPES), taken once by its id; UNTRACKED ones are handled before the id
# check (Tournament.handle): reports by their table's version, the timer by its own.
# tests/test_handlers.py holds this table to the protocol's director types.
HANDLERS: dict[str, Handler] = {
    "tournament_create": Tournament._on_tournament_create,  # a second one: table_exists
    "register": Tournament._on_register,
    "unregister": Tournament._on_unregister,
    "begin": Tournament._on_begin,
    "organize": Tournament._on_organize,
    "subscribe": Tournament._on_subscribe,
    "standings": Tournament._on_standings,
    "rated": Tournament._on_rated,
    "table_history": Tournament._on_table_history,
}
UNTRACKED = frozenset({"report", "reports", "tournament_timeout"})
