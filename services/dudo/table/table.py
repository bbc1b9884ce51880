"""One table's life around the engine: seating, start, leaving, clocks, and who gets which view.

A :class:`Table` is pure data and logic, with no Redis in sight: the worker
loads it, feeds it decoded inbox messages with :meth:`Table.handle`, then asks
:meth:`Table.flush` for what to persist and deliver. Keeping this apart from the
worker loop means every rule of the table protocol is testable without a
server, and the worker is only I/O.

Delivery rule: a seat's view goes only to the gateway that seat is attached
to; spectator views go to gateways that asked to watch. Nothing else leaves.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import wire
from ..engine import (
    OVER,
    SERVER_SEED_BYTES,
    Rules,
    RulesConfigError,
    action_from_dict,
    from_bytes,
    rules_from_tuple,
    rules_tuple,
    to_bytes,
)
from ..entity import RecentIds, account_of, ledger_send, message_id, result_send
from ..wire import DudoError, Refusal, message
from .clocks import TableClocks
from .log import calls_by_seat, packed_round
from .output import TableOutput, error_for
from .record import FORMAT, tournament_fields, upgraded
from .seating import TableSeating
from .state import DEFAULT_LIMITS, DONE, OPEN, PAUSED_NOW, Limits, Seat
from .tournament import TournamentSeats

# A game's log keeps this many rounds at most (a game of six players with five dice has
# about thirty; Calza's regained dice make some longer): a record's size stays bounded.
LOG_ROUNDS = 200
# A seat reacts (`react`) at most once in this long: a table's views are not a chat.
REACT_GAP_MS = 1500


@dataclass
class Table(TableSeating, TableClocks, TournamentSeats, TableOutput):
    """One table (an :class:`~dudo.entity.Entity` of the worker's partitions): its
    state (:class:`~dudo.table.state.TableState`, declared once) with the behaviour of
    its parts: seating, clocks, a tournament's seats, output; creation, storage and
    the handlers here."""

    KEY: ClassVar[str] = "table"
    CREATES: ClassVar[frozenset[str]] = frozenset({"create"})
    DIRECTION: ClassVar[str] = "in"
    UNKNOWN: ClassVar[str] = wire.UNKNOWN_TABLE

    # -- creation and storage ---------------------------------------------------

    @classmethod
    def create(
        cls,
        msg: dict[str, Any],
        now: int,
        limits: Limits = DEFAULT_LIMITS,
        rng: random.Random | None = None,
    ) -> Table:
        """A new table from a validated ``create`` message (raises Refusal): open, or,
        for a tournament, playing at once with its first players (``rng`` deals)."""
        try:
            rules = Rules.from_dict(msg["rules"])
        except RulesConfigError as exc:
            raise Refusal(wire.BAD_RULES, str(exc)) from exc
        plan = [dict(spec) for spec in msg["seats"]]
        label = msg.get("label")
        try:
            if label is not None and wire.clean_line(label, "create.label") != label:
                raise Refusal(wire.BAD_MESSAGE, "create.label: trim it, one space between words")
        except wire.WireError as exc:
            raise Refusal(wire.BAD_MESSAGE, exc.message) from exc
        if not rules.seats_allowed(len(plan)):
            raise Refusal(
                wire.BAD_RULES,
                f"these rules seat {rules.min_players}..{rules.max_players}, "
                f"the plan has {len(plan)} seats",
            )
        # The host: the deployment's own creates name it; a gateway's, by the creator's
        # credential (the join that follows names the same player); else the first to sit.
        credential = any(msg.get(k) is not None for k in ("host", "identity", "request"))
        table = cls(
            id=msg["table"],
            rules=rules,
            plan=plan,
            seats=[Seat() for _ in plan],
            host=limits.authority.player_for(msg, msg["table"], "host") if credential else None,
            created=now,
            limits=limits,
            label=msg.get("label"),
            app=limits.authority.app_of(msg.get("gateway")),
            # Drawn before anyone can sit, shown only as its commitment until the end.
            server_seed=(rng or random.SystemRandom()).randbytes(SERVER_SEED_BYTES),
        )
        table.seen.add(msg["id"])
        table._dirty = table._persist = table._lobby = True
        if "tournament" in msg:  # the director wants reports, not views
            table._seat_first_players(msg["tournament"], now, rng or random.SystemRandom())
        else:
            table._requests.append((msg["gateway"], None))
            table._rearm(now)
        return table

    def to_bytes(self) -> bytes:
        return wire.encode(
            [
                FORMAT,
                self.id,
                self.version,
                self.status,
                rules_tuple(self.rules),
                self.plan,
                [
                    [s.player, s.name, s.gateway, s.bot, s.away, s.commitment, s.seed, s.brings]
                    for s in self.seats
                ],
                self.host,
                self.watchers,
                to_bytes(self.game) if self.game is not None else None,
                "\n".join(self.seen),
                self.deadline,
                self.created,
                self.wake,
                [
                    self.tournament,
                    self.director,
                    self.advance,
                    self.order,
                    self.order_done,
                    self.seat_seq,
                    self.arrivals,
                    self.pause_seq,
                    self.paused,
                    self.forfeits,
                    self.history,
                    self.asked,
                    self.first_counts,
                    self.redealt,
                ],
                self.hold_until,
                self.idle,
                self.label,
                self.log,
                self.round_bids,
                self.rematch,
                self.reacted,
                self.app,
                self.server_seed,
                self.seeding_until,
                self.dealt,
            ]
        )

    @classmethod
    def from_bytes(cls, data: bytes, rows: Mapping[bytes, bytes] | None = None) -> Table:
        raw = wire.unpack(data)
        raw = upgraded(raw)
        (
            _,
            tid,
            version,
            status,
            rules,
            plan,
            seats,
            host,
            watchers,
            game,
            seen,
            deadline,
            created,
            wake,
            tournament,
            hold_until,
            idle,
            label,
            log,
            round_bids,
            rematch,
            reacted,
            app,
            server_seed,
            seeding_until,
            dealt,
        ) = raw
        table = cls(
            id=tid,
            rules=rules_from_tuple(tuple(rules)),
            plan=plan,
            seats=[Seat(*s) for s in seats],
            host=host,
            version=version,
            status=status,
            watchers=watchers,
            game=from_bytes(game) if game is not None else None,
            seen=RecentIds(seen.split("\n") if seen else ()),
            deadline=deadline,
            created=created,
            wake=wake,
            hold_until=hold_until,
            idle=idle,
            label=label,
            log=log,
            round_bids=round_bids,
            rematch=rematch,
            reacted=reacted,
            app=app,
            server_seed=server_seed,
            seeding_until=seeding_until,
            dealt=dealt,
        )
        (
            table.tournament,
            table.director,
            table.advance,
            table.order,
            table.order_done,
            table.seat_seq,
            table.arrivals,
            table.pause_seq,
            table.paused,
            table.forfeits,
            table.history,
            table.asked,
            table.first_counts,
            table.redealt,
        ) = tournament_fields(tournament)
        table.timer_member = table._timer_name() if wake is not None else None
        return table

    # -- handling messages --------------------------------------------------------

    def handle(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """Apply one validated inbox message. Refusals become error messages."""
        kind = msg["type"]
        if kind == "timeout":
            self._timeout(msg, now, rng)
            return
        if msg["id"] in self.seen:
            self._error(msg, wire.DUPLICATE, "this message id was already applied")
            return
        version = self.version
        try:
            HANDLERS[kind](self, msg, now, rng)
        except DudoError as exc:  # the rules', the table's or a credential's refusal
            self._error(msg, exc.code, exc.message)
        if self.status == OPEN and self.version != version:
            self._rearm(now)  # an open table lives on while something happens at it

    def _answered(self, msg: dict[str, Any]) -> None:
        """``msg`` (an act, a start, a resync) went through: its gateway's next view names
        it (``applied``), and the gateway tells its client so, quoting the client's id."""
        self._applied.setdefault(msg["gateway"], []).append(msg["id"])

    def _changed(self, msg: dict[str, Any] | None = None, *, visible: bool = True) -> None:
        if msg is not None:
            self.seen.add(msg["id"])
        self._persist = True
        if visible:
            self._dirty = True
            self.version += 1

    def _error(self, msg: dict[str, Any], code: str, text: str) -> None:
        gateway = msg.get("gateway")
        if gateway is None:
            return
        facts = self._facts(code)
        self._direct.append(
            (
                gateway,
                message(
                    "error",
                    table=self.id,
                    seat=msg.get("seat"),
                    player=msg.get("player"),
                    id=msg.get("id"),
                    code=code,
                    message=text,
                    **({"facts": facts} if facts else {}),
                ),
            )
        )

    def _facts(self, code: str) -> dict[str, Any]:
        """What a refusal refers to, as data: a gateway words it in its player's language
        and names people as it knows them (docs/protocol.md, "Errors")."""
        game = self.game
        if code in ("not_your_turn", "direction_required") and game is not None:
            return {"turn": game.turn} if game.turn is not None else {}
        if code in ("bid_not_higher", "palifico_face_locked") and game is not None and game.bids:
            return {"bid": list(game.bids[-1])}
        if code == "bid_out_of_range" and game is not None:
            return {"dice_in_play": sum(game.counts)}
        if code == wire.NOT_HOST and self.host is not None:
            return {"host": wire.public_id(self.host)}
        if code == wire.TOO_FEW_PLAYERS:
            seated = sum(1 for s in self.seats if s.taken)
            return {"seated": seated, "needed": self.rules.min_players}
        return {}

    def _on_create(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        raise Refusal(wire.TABLE_EXISTS, f"table {self.id} already exists")

    def _on_act(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        if self.status == OPEN:
            raise Refusal(wire.GAME_NOT_STARTED, "the game has not started")
        seat = self._held(msg)
        if self.paused == PAUSED_NOW:
            raise Refusal(wire.PAUSED, "the organizer paused the tournament: wait for resume")
        assert self.game is not None
        events = self.game.apply(msg["seat"], action_from_dict(msg["action"]))
        seat.away = False
        self._not_idle(msg["seat"])
        self._answered(msg)
        self._after_game_change(events, msg, now)

    def _log_rounds(self, events: list[dict[str, Any]]) -> None:
        """Keep the game's history from its events: the bids as they come, and at each
        reveal the round whole (what every client saw happen, in one place: a page that
        opens the game later, or its replay, needs no event it missed)."""
        for event in events:
            if event["type"] == "bid":
                self.round_bids.append([event["seat"], event["quantity"], event["face"]])
            elif event["type"] == "reveal":
                if len(self.log) < LOG_ROUNDS:
                    names = [seat.name for seat in self.seats]
                    self.log.append(packed_round(event, self.round_bids, names))
                self.round_bids = []

    def _on_react(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """A seated player's quick reaction: one event for everyone at the table, at most
        one a seat every REACT_GAP_MS (a hostile client cannot flood the views)."""
        self._held(msg)
        seat = msg["seat"]
        last = self.reacted + [0] * (len(self.seats) - len(self.reacted))
        if now - last[seat] < REACT_GAP_MS:
            raise Refusal(wire.RATE_LIMITED, f"one reaction every {REACT_GAP_MS} ms")
        last[seat] = now
        self.reacted = last
        self._events.append({"type": "reaction", "seat": seat, "emote": msg["emote"]})
        self._answered(msg)
        self._changed(msg)

    def _on_rematch(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """A seat of the finished game proposes the table it made for a rematch; the
        first proposal stays (a second player's is refused, naming the first's table in
        every view, where they join it instead)."""
        if self.tournament is not None:
            raise Refusal(wire.BAD_MESSAGE, "a tournament's table has no rematch")
        if self.game is None or self.game.phase != OVER:
            raise Refusal(wire.GAME_NOT_OVER, "a rematch comes after the game's end")
        self._held(msg)
        if self.rematch is not None and self.rematch["table"] != msg["next"]:
            raise Refusal(wire.TABLE_EXISTS, f"a rematch is proposed at {self.rematch['table']}")
        if self.rematch is None:
            self.rematch = {"table": msg["next"], "by": msg["seat"]}
        self._answered(msg)
        self._changed(msg)

    def _on_resync(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        index = msg.get("seat")
        if index is not None:
            if "player" not in msg:
                raise Refusal(wire.NOT_SEATED, "a seat's view needs its player")
            self._held(msg)
        self._requests.append((msg["gateway"], index))
        self._answered(msg)

    def _on_watch(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        gateway = msg["gateway"]
        if msg["on"]:
            if gateway not in self.watchers:
                self.watchers.append(gateway)
            self._requests.append((gateway, None))
        elif gateway in self.watchers:
            self.watchers.remove(gateway)
        self._changed(msg, visible=False)

    def _after_game_change(
        self, events: list[dict[str, Any]], msg: dict[str, Any], now: int
    ) -> None:
        self._events.extend(events)
        self._log_rounds(events)
        if self.tournament is not None:
            # A tournament's table plays on until its director has taken everyone away.
            self._changed(msg)
            self._tournament_step(events, now)
        else:
            self._vacate_idle(events)
            if self.game is not None and self.game.phase == OVER:
                self.status = DONE
                self._lobby = True  # no longer listed
                self._results = self._ranking()
            self._changed(msg)
        self._hold_for_reveal(events, now)
        self._rearm(now)

    def _ranking(self) -> list[list[str]]:
        """The people of a finished game, first to last (bots are not rated)."""
        assert self.game is not None
        ranking = []
        for seat in self.game.standings():
            holder = self.seats[seat]
            if holder.player is not None and holder.bot is None:
                ranking.append([holder.player, holder.name or ""])
        return ranking

    def _tallies(self, ranking: list[list[str]]) -> list[list[Any]]:
        """Each person's game for their statistics: won or not, and their calls (from
        the log; a table that is no tournament's keeps its seats for the whole game)."""
        winner = self.game.winner if self.game is not None else None
        calls = calls_by_seat(self.log, len(self.seats))
        seat_of = {seat.player: n for n, seat in enumerate(self.seats) if seat.bot is None}
        return [
            [player, int(seat_of[player] == winner), *calls[seat_of[player]]]
            for player, _ in ranking
        ]

    def _result_sends(self) -> list[tuple[str, bytes]]:
        """The finished game's places and calls, for the ratings and the players'
        statistics, and, with a stake, its chips."""
        ranking, self._results = self._results, None
        if ranking is None:
            return []
        sends = result_send("table", self.id, ranking, self._tallies(ranking))
        chips = self.game.chips() if self.game is not None else None
        if chips:
            moves = [
                [account_of(seat.player or "", seat.bot), chips[i]]
                for i, seat in enumerate(self.seats)
                if seat.player is not None
            ]
            sends += ledger_send(message_id("ls", self.id), moves)
        return sends

    # -- what the partition loop asks of every entity --------------------------------

    @staticmethod
    def error_for(msg: dict[str, Any], code: str, text: str) -> tuple[str, bytes] | None:
        return error_for(msg, code, text)

    @staticmethod
    def lobby_note(entity: str, entry: dict[str, Any] | None, version: int) -> bytes:
        """News of an open table for every gateway's lobby (None: no longer open)."""
        return wire.encode(wire.message("lobby", table=entity, entry=entry, version=version))

    @staticmethod
    def timeout(entity: str, version: int) -> dict[str, Any]:
        """The inbox message a due timer becomes. Its id only has to be unique within
        its table (a 64-character table id in it made it too long for the id field)."""
        return wire.message("timeout", id=f"t:{version}", table=entity, version=version)


Handler = Callable[[Table, dict[str, Any], int, random.Random], None]

# What a table does with each message of its inbox (wire.INBOX_TYPES), taken once by its
# id; a `timeout` (the table's own timer, no id) goes to TableClocks._timeout instead.
# tests/test_handlers.py holds this table to the protocol's inbox types.
HANDLERS: dict[str, Handler] = {
    "create": Table._on_create,  # a second create of the same table: table_exists
    "join": TableSeating._on_join,
    "leave": TableSeating._on_leave,
    "rename": TableSeating._on_rename,
    "attach": TableSeating._on_attach,
    "start": TableSeating._on_start,
    "handover": TableSeating._on_handover,
    "close": TableSeating._on_close,
    "seed": TableSeating._on_seed,
    "commit_seed": TableSeating._on_commit_seed,
    "rematch": Table._on_rematch,
    "react": Table._on_react,
    "act": Table._on_act,
    "resync": Table._on_resync,
    "watch": Table._on_watch,
    "seat_in": TournamentSeats._on_seat_in,
    "order": TournamentSeats._on_order,
    "pause": TournamentSeats._on_pause,
    "forfeit": TournamentSeats._on_forfeit,
}
UNTRACKED = frozenset({"timeout"})  # handled before the id check: Table.handle
