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
from dataclasses import dataclass, field
from typing import Any, ClassVar

from . import keys, wire
from .bots.policies import HOUSE_POLICY, LEVELS
from .engine import (
    OVER,
    RuleError,
    Rules,
    RulesConfigError,
    State,
    action_from_dict,
    from_bytes,
    new_game,
    rules_from_tuple,
    rules_tuple,
    seat_view,
    to_bytes,
)
from .entity import SEEN_IDS, Flush, RecentIds, timer_change  # noqa: F401  (SEEN_IDS: re-exported)
from .results import account_of, ledger_send, message_id, result_send
from .table_output import TableOutput, error_for
from .tournament_table import TournamentSeats
from .wire import WireError, message

FORMAT = 3  # 2 added `wake`, 3 the tournament fields; older records are still read
OPEN, PLAYING, DONE = wire.TABLE_STATUSES


@dataclass(frozen=True)
class Limits:
    """How long a table may wait for something to happen (milliseconds).

    Without these, an open table nobody joins and a game everyone walked away
    from lived forever, and a bot seat whose bot service died was never played.
    """

    open_ttl_ms: int = 3_600_000  # an open table with no change for this long is closed
    idle_ttl_ms: int = 7_200_000  # a game with no clock and no move for this long is abandoned
    bot_grace_ms: int = 15_000  # a bot seat silent this long is played by the house bot
    # A tournament's bot the table plays itself waits this long when people sit at the
    # table (so they can follow), and not at all at a table of bots only.
    house_think_ms: int = 800
    partitions: int = keys.DEFAULT_PARTITIONS  # the deployment's: to address its own inbox


DEFAULT_LIMITS = Limits()


@dataclass(slots=True)
class Seat:
    """Who holds a seat, and where its views go."""

    player: str | None = None
    name: str | None = None
    gateway: str | None = None
    bot: str | None = None
    away: bool = False

    @property
    def taken(self) -> bool:
        return self.player is not None

    def public(self) -> dict[str, Any] | None:
        if self.player is None:
            return None
        return {"name": self.name, "bot": self.bot, "away": self.away}


@dataclass
class Table(TournamentSeats, TableOutput):
    """One table (an :class:`~dudo.entity.Entity` of the worker's partitions)."""

    KEY: ClassVar[str] = "table"
    CREATES: ClassVar[frozenset[str]] = frozenset({"create"})
    DIRECTION: ClassVar[str] = "in"
    UNKNOWN: ClassVar[str] = wire.UNKNOWN_TABLE
    TYPES: ClassVar[frozenset[str]] = frozenset(
        {"create", "join", "leave", "attach", "act", "resync", "watch", "start", "timeout"}
        | {"seat_in", "order"}  # from a tournament's director (dudo.tournament_table)
    )

    id: str
    rules: Rules
    plan: list[dict[str, Any]]
    seats: list[Seat]
    host: str | None = None
    version: int = 1
    status: str = OPEN
    watchers: list[str] = field(default_factory=list)
    game: State | None = None
    seen: RecentIds = field(default_factory=RecentIds)
    deadline: int | None = None  # the turn clock, shown to players
    created: int = 0
    # When the table's timer fires if nothing happens first: the turn deadline, or
    # the end of a bot seat's grace, of an open table's or an idle game's life.
    wake: int | None = None
    # A tournament's table (dudo.tournament_table): its tournament and director
    # partition, heats' `advance`, what waits for the end of the round, what was done.
    tournament: str | None = None
    director: int = 0
    advance: int | None = None
    order: list[Any] | None = None
    order_done: int = 0
    seat_seq: int = 0
    arrivals: list[list[Any]] = field(default_factory=list)
    # Transient, per batch: not persisted.
    limits: Limits = field(default=DEFAULT_LIMITS, compare=False, repr=False)
    timer_member: str | None = None
    _events: list[dict[str, Any]] = field(default_factory=list)
    _direct: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _requests: list[tuple[str, int | None]] = field(default_factory=list)
    _dirty: bool = False
    _persist: bool = False
    _lobby: bool = False
    _reports: list[dict[str, Any]] = field(default_factory=list, compare=False)
    _play_now: bool = field(default=False, compare=False)
    _results: list[list[str]] | None = field(default=None, compare=False)
    _last_report: int = field(default=0, compare=False)

    # -- creation and storage ---------------------------------------------------

    @classmethod
    def create(
        cls,
        msg: dict[str, Any],
        now: int,
        limits: Limits = DEFAULT_LIMITS,
        rng: random.Random | None = None,
    ) -> Table:
        """A new table from a validated ``create`` message (raises WireError): open, or,
        for a tournament, playing at once with its first players (``rng`` deals)."""
        try:
            rules = Rules.from_dict(msg["rules"])
        except RulesConfigError as exc:
            raise WireError(wire.BAD_RULES, str(exc)) from exc
        plan = [dict(spec) for spec in msg["seats"]]
        if not rules.seats_allowed(len(plan)):
            raise WireError(
                wire.BAD_RULES,
                f"these rules seat {rules.min_players}..{rules.max_players}, "
                f"the plan has {len(plan)} seats",
            )
        table = cls(
            id=msg["table"],
            rules=rules,
            plan=plan,
            seats=[Seat() for _ in plan],
            host=msg.get("host"),
            created=now,
            limits=limits,
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
                [[s.player, s.name, s.gateway, s.bot, s.away] for s in self.seats],
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
                ],
            ]
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> Table:
        raw = wire.unpack(data)
        if not isinstance(raw, list) or raw[0] not in (1, 2, FORMAT):
            raise ValueError("unknown table record format")
        if raw[0] == 1:  # before `wake`: the turn deadline was the only timer
            raw = [*raw, raw[11]]
        if raw[0] < 3:  # before tournaments
            raw = [*raw, [None, 0, None, None, 0, 0, []]]
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
        )
        (
            table.tournament,
            table.director,
            table.advance,
            table.order,
            table.order_done,
            table.seat_seq,
            table.arrivals,
        ) = tournament
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
            getattr(self, f"_on_{kind}")(msg, now, rng)
        except WireError as exc:
            self._error(msg, exc.code, exc.message)
        except RuleError as exc:
            self._error(msg, exc.code, exc.message)
        if self.status == OPEN and self.version != version:
            self._rearm(now)  # an open table lives on while something happens at it

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
                ),
            )
        )

    def _seat_of(self, player: str) -> int | None:
        for i, seat in enumerate(self.seats):
            if seat.player == player:
                return i
        return None

    def _held(self, msg: dict[str, Any], *, attached: bool = True) -> Seat:
        """The seat the message names, if its player holds it (and sent it through its gateway)."""
        index = msg["seat"]
        if index >= len(self.seats) or self.seats[index].player != msg["player"]:
            raise WireError(wire.NOT_SEATED, f"{msg['player']} does not hold seat {index}")
        seat = self.seats[index]
        if attached and seat.gateway != msg["gateway"]:
            raise WireError(wire.NOT_ATTACHED, f"seat {index} is attached to another gateway")
        return seat

    def _on_create(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        raise WireError(wire.TABLE_EXISTS, f"table {self.id} already exists")

    def _on_join(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        player, gateway = msg["player"], msg["gateway"]
        index = self._seat_of(player)
        if index is not None:  # coming back: same seat, now through this gateway
            seat = self.seats[index]
            was_away = seat.away
            self._reattach(index, gateway)
            seat.away = False
            self._changed(msg, visible=was_away)
            self._direct.append(
                (gateway, message("joined", table=self.id, seat=index, player=player, id=msg["id"]))
            )
            self._requests.append((gateway, index))
            return
        if self.status != OPEN:
            raise WireError(wire.GAME_STARTED, "the game has started; seats are closed")
        index = self._free_seat(msg.get("seat"), msg.get("bot"))
        self.seats[index] = Seat(player, msg["name"], gateway, msg.get("bot"), False)
        if self.host is None:
            self.host = player
        self._changed(msg)
        self._lobby = True
        self._direct.append(
            (gateway, message("joined", table=self.id, seat=index, player=player, id=msg["id"]))
        )
        if all(seat.taken for seat in self.seats):
            self._start(now, rng)

    def _reattach(self, index: int, gateway: str) -> None:
        """Deliver seat ``index``'s views to ``gateway`` from now on; the gateway that had
        it is told, so that its connections of that player stop getting this table."""
        seat = self.seats[index]
        if seat.gateway is not None and seat.gateway != gateway:
            self._direct.append(
                (
                    seat.gateway,
                    message("detached", table=self.id, seat=index, player=seat.player),
                )
            )
        seat.gateway = gateway

    def _free_seat(self, wanted: int | None, bot: str | None) -> int:
        def allowed(i: int) -> bool:
            return bot is not None or self.plan[i]["kind"] == "open"

        if wanted is not None:
            if wanted >= len(self.seats):
                raise WireError(wire.SEAT_TAKEN, f"there is no seat {wanted}")
            if self.seats[wanted].taken or not allowed(wanted):
                raise WireError(wire.SEAT_TAKEN, f"seat {wanted} is not free for you")
            return wanted
        order = range(len(self.seats))
        if bot is not None:  # bots take the seats set aside for bots first
            order = sorted(order, key=lambda i: self.plan[i]["kind"] != "bot")
        for i in order:
            if not self.seats[i].taken and allowed(i):
                return i
        raise WireError(wire.TABLE_FULL, "no free seat")

    def _on_leave(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        seat = self._held(msg)
        index = msg["seat"]
        if self.status == OPEN:
            self.seats[index] = Seat()
            if self.host == msg["player"]:
                self.host = next((s.player for s in self.seats if s.taken), None)
            self._lobby = True
        elif self.status == PLAYING:
            seat.away = True
            self._rearm(now, reset=False)
        self._changed(msg)
        self._direct.append(
            (
                msg["gateway"],
                message("left", table=self.id, seat=index, player=msg["player"], id=msg["id"]),
            )
        )

    def _on_attach(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        self._held(msg, attached=False)
        self._reattach(msg["seat"], msg["gateway"])
        self._changed(msg, visible=False)
        self._requests.append((msg["gateway"], msg["seat"]))

    def _on_act(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        if self.status == OPEN:
            raise WireError(wire.GAME_NOT_STARTED, "the game has not started")
        seat = self._held(msg)
        assert self.game is not None
        events = self.game.apply(msg["seat"], action_from_dict(msg["action"]))
        seat.away = False
        self._after_game_change(events, msg, now)

    def _on_resync(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        index = msg.get("seat")
        if index is not None:
            if "player" not in msg:
                raise WireError(wire.NOT_SEATED, "a seat's view needs its player")
            self._held(msg)
        self._requests.append((msg["gateway"], index))

    def _on_watch(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        gateway = msg["gateway"]
        if msg["on"]:
            if gateway not in self.watchers:
                self.watchers.append(gateway)
            self._requests.append((gateway, None))
        elif gateway in self.watchers:
            self.watchers.remove(gateway)
        self._changed(msg, visible=False)

    def _on_start(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        if msg["player"] != self.host:
            raise WireError(wire.NOT_HOST, "only the host may start the table")
        if self.status != OPEN:
            raise WireError(wire.GAME_STARTED, "the game has already started")
        taken = [i for i, s in enumerate(self.seats) if s.taken]
        if self.rules.bots_fill and len(taken) < len(self.seats):
            # Bots fill the empty seats (seed 003, Cacho): they become bot seats, the
            # bot service takes them, and the game starts when the table is full.
            for i, seat in enumerate(self.seats):
                if not seat.taken:
                    self.plan[i] = {"kind": "bot", "level": "normal"}
            self._changed(msg)
            self._lobby = True
            return
        if len(taken) < self.rules.min_players:
            raise WireError(
                wire.TOO_FEW_PLAYERS, f"{len(taken)} seated, {self.rules.min_players} needed"
            )
        # Open seats are dropped; players keep their order and learn their new seat.
        self.seats = [self.seats[i] for i in taken]
        self.plan = [self.plan[i] for i in taken]
        for new, old in enumerate(taken):
            seat = self.seats[new]
            if new != old and seat.gateway is not None:
                self._direct.append(
                    (
                        seat.gateway,
                        message(
                            "joined", table=self.id, seat=new, player=seat.player, id=msg["id"]
                        ),
                    )
                )
        self._changed(msg)
        self._start(now, rng)

    def _start(self, now: int, rng: random.Random) -> None:
        n = len(self.seats)
        self.game = new_game(self.rules, n, rng.randbytes(32), opener=rng.randrange(n))
        self.status = PLAYING
        self._lobby = True
        self._events.append(
            {"type": "game_start", "opener": self.game.opener, "commitment": self.game.commitment}
        )
        self._rearm(now)

    def _timeout(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """The table's timer fired, and nothing happened since it was set: a turn clock
        ran out or a bot seat stayed silent (the house bot plays the seat in turn), or
        the table outlived its limit (an open table closes, an idle game is abandoned)."""
        game = self.game
        if msg["version"] != self.version or self.status == DONE:
            return  # the table moved on since the timer was set
        if self.status == OPEN:
            self._close(now, "expired")
            return
        assert game is not None
        if self.tournament is not None and game.phase == OVER:
            self._carry_out([], now, round_end=False)  # arrivals that waited a step
            return
        seat = game.turn
        assert seat is not None
        if self.deadline is None and self.seats[seat].bot is None:
            self._close(now, "abandoned")
            return
        view = {"seat": seat, "game": seat_view(game, seat)}
        level = self.seats[seat].bot
        policy = LEVELS[level] if self.tournament is not None and level in LEVELS else HOUSE_POLICY
        action = action_from_dict(policy(view, rng))
        events = game.apply(seat, action)
        self._events.append({"type": "house_bot", "seat": seat})
        self._after_game_change(events, msg, now)

    def _close(self, now: int, why: str) -> None:
        """End a table that will not be played: it leaves the lobby, its record expires."""
        self.status = DONE
        self.deadline = None
        self._lobby = True
        self._events.append({"type": why})
        self._changed()
        self._rearm(now)

    def _after_game_change(
        self, events: list[dict[str, Any]], msg: dict[str, Any], now: int
    ) -> None:
        self._events.extend(events)
        if self.tournament is not None:
            # A tournament's table plays on until its director has taken everyone away.
            self._changed(msg)
            self._tournament_step(events, now)
        else:
            if self.game is not None and self.game.phase == OVER:
                self.status = DONE
                self._results = self._ranking()
            self._changed(msg)
        self._rearm(now)

    def _rearm(self, now: int, *, reset: bool = True) -> None:
        """Set the clocks after a change. The seat in turn gets turn_seconds (the
        public ``deadline``); an away seat's turn is played by the house bot at once.
        The timer (``wake``) fires at the deadline, or, without one, when a bot seat
        in turn has been silent for ``bot_grace_ms`` (its bot service may be dead),
        or when an open table or an idle game has outlived its limit."""
        game, limits = self.game, self.limits
        if self.status == OPEN:
            self.deadline, self.wake = None, now + limits.open_ttl_ms
            return
        if self.status != PLAYING or game is None or game.turn is None:
            self.deadline = self.wake = None
            return
        seat = self.seats[game.turn]
        if seat.away:
            self.deadline = now
        elif reset:
            seconds = self.rules.turn_seconds
            self.deadline = now + seconds * 1000 if seconds else None
        if self.deadline is not None:
            self.wake = self.deadline
        elif self._house_played(seat):
            # A tournament's bot with no bot service behind it is played by the table:
            # at once at a table of such bots (a timeout entry sent to its own inbox with
            # the commit, no timer), after a pause where people watch.
            people = any(s.player and not self._house_played(s) for s in self.seats)
            if people:
                self.wake = now + limits.house_think_ms
            else:
                self.wake, self._play_now = None, True
        elif seat.bot is not None:
            self.wake = now + limits.bot_grace_ms
        else:
            self.wake = now + limits.idle_ttl_ms

    def _ranking(self) -> list[list[str]]:
        """The people of a finished game, first to last (bots are not rated)."""
        assert self.game is not None
        ranking = []
        for seat in self.game.standings():
            holder = self.seats[seat]
            if holder.player is not None and holder.bot is None:
                ranking.append([holder.player, holder.name or ""])
        return ranking

    def _result_sends(self) -> list[tuple[str, bytes]]:
        """The finished game's places for the ratings and, with a stake, its chips."""
        ranking, self._results = self._results, None
        if ranking is None:
            return []
        sends = result_send("table", self.id, ranking)
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
