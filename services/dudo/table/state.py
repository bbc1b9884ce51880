"""A table's state, declared once: the fields its parts share (plain data), and the
calls they make of each other.

:class:`~dudo.table.Table` is this state with its behaviour, in parts that each
subclass it and so see the fields without listing them again (as
:mod:`dudo.director.state` does for a tournament): seating
(:mod:`dudo.table.seating`), clocks (:mod:`dudo.table.clocks`), a tournament's seats
(:mod:`dudo.table.tournament`) and output (:mod:`dudo.table.output`). None of them
imports the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import wire
from ..auth import Authority
from ..engine import Rules, State
from ..entity import RecentIds
from ..wire import keys

if TYPE_CHECKING:
    import random

    from ..entity import Report

__all__ = ["DEFAULT_LIMITS", "DONE", "OPEN", "PLAYING", "Limits", "Seat", "TableState"]

OPEN, PLAYING, DONE = wire.TABLE_STATUSES
# A tournament table's pause (its organizer's): wanted at the end of the round in
# progress, then in effect until resumed.
PAUSE_WANTED, PAUSED_NOW = 1, 2


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
    # After a round's reveal, at a table where people sit, the next turn's clock, bots
    # and the house wait this long, so everyone can read what happened (0: no hold).
    reveal_hold_ms: int = 0
    # A person whose turns the house played this many times in a row (their clock ran
    # out, or they left) is out at the end of the round (event `vacated`): an absent
    # player's seat is not played to a win, at a tournament's tables too (a no-show had
    # won one, the house playing all his turns: issue 53, item 8). 0: never.
    vacate_after: int = 3
    # ... and from this many, everyone sees the seat marked away (`players[i].away`).
    away_after: int = 2
    # How long a table whose seats committed to seeds of their own waits for them before
    # the deal (dudo.table.seeds): the libraries reveal on the view that asks, so this is
    # a dropped connection's margin; seats that did not reveal are dealt public seeds.
    seed_reveal_ms: int = 5_000
    partitions: int = keys.DEFAULT_PARTITIONS  # the deployment's: to address its own inbox
    # The deployment's credentials (dudo.auth.authority): the worker's, refreshed at every
    # heartbeat; random keys where a table is tested alone.
    authority: Authority = field(default_factory=Authority, compare=False)


DEFAULT_LIMITS = Limits()


@dataclass(slots=True)
class Seat:
    """Who holds a seat, and where its views go."""

    player: str | None = None
    name: str | None = None
    gateway: str | None = None
    bot: str | None = None
    away: bool = False
    # Dice no one can choose (dudo.table.seeds): the holder's commitment to a seed of
    # their own, and the seed once revealed.
    commitment: str | None = None
    seed: str | None = None
    # A tournament's entrant whose client brings seeds (`register.seeds`): asked for a
    # commitment when the table is made, and again whenever someone arrives.
    brings: bool = False

    @property
    def taken(self) -> bool:
        return self.player is not None

    @property
    def handle(self) -> str | None:
        """The holder's public handle: how gateways name and route the player (the
        player id itself never leaves the deployment)."""
        return wire.public_id(self.player) if self.player is not None else None

    def public(self, absent: bool = False) -> dict[str, Any] | None:
        """What everyone sees of the seat; ``absent``: the house played its last turns
        (the clock ran out), so it is marked away as one that left is."""
        if self.player is None:
            return None
        return {"name": self.name, "bot": self.bot, "away": self.away or absent}


@dataclass
class TableState:
    """Everything a table is; its record holds all but the transient part."""

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
    # Until when the reveal holds the clocks and bots (clocks.py), shown to
    # clients as the view's `reveal_until`.
    hold_until: int | None = None
    # A tournament's table (dudo.table.tournament): its tournament and director
    # partition, heats' `advance`, what waits for the end of the round, what was done.
    tournament: str | None = None
    director: int = 0
    advance: int | None = None
    order: list[Any] | None = None  # [seq, count or None]: carried out at the round's end
    order_done: int = 0
    seat_seq: int = 0  # the last seat_in taken (its seq)
    # [player, name, dice, gateway, bot, from, brings seeds], as they came
    arrivals: list[list[Any]] = field(default_factory=list)
    # The organizer's pause (dudo.table.tournament): the last `pause` taken (its seq), and
    # whether the table is to stop at its round's end (WANTED) or has (PAUSED_NOW).
    pause_seq: int = 0
    paused: int = 0
    forfeits: list[str] = field(default_factory=list)  # players to take out (kicked)
    # Who sat down and who left, by round, for the tournament's records: rows of
    # [round, ms, [[player, dice] who joined], [[player, dice] who left], [players out]],
    # sent to the director once, when the table closes (dudo.table.tournament).
    history: list[list[Any]] = field(default_factory=list)
    # Before its first deal (dudo.table.seeds): the seats asked for a commitment that
    # have not given one (entrants whose clients bring seeds), and the dice its first
    # players brought, dealt once the seeds are in.
    asked: list[int] = field(default_factory=list)
    first_counts: list[int] | None = None
    # After someone arrived (the director chose who sits where, knowing nothing of the
    # seeds to come): [round, [[commitment, seed or None] by seat]] for each round held
    # and dealt from seeds given after the change, the game's secret from then on.
    redealt: list[list[Any]] = field(default_factory=list)
    # [[seat, turns]]: people whose turns the house played that many times in a row
    # (clocks.py: at `Limits.vacate_after` they are out at the round's end).
    idle: list[list[int]] = field(default_factory=list)
    label: str | None = None  # where it is played (`create.label`), for the lobby
    # The app whose gateway created it (None: the deployment's own): the lobby shares its
    # places between apps (issue 50).
    app: str | None = None
    # The game's rounds as they ended, for its history and its replay (`game.log` in the
    # views once the game is over: TableOutput.rounds), packed as the record keeps them
    # (dudo.table.log): each the round's reveal, its bids ([seat, quantity, face], in
    # order) and the seats' names then. ``round_bids``: the bids of the round under way.
    log: list[list[Any]] = field(default_factory=list)
    round_bids: list[list[int]] = field(default_factory=list)
    # After the end: the rematch a seat proposed, {"table": the new table, "by": its
    # seat}, shown in every later view for the others to join (the first one stays).
    rematch: dict[str, Any] | None = None
    # When each seat last reacted (ms; `react`): one reaction a seat per REACT_GAP_MS.
    reacted: list[int] = field(default_factory=list)
    # Dice no one can choose (dudo.table.seeds): the server seed drawn at the table's
    # making (None: a table from before seeds), until when the table waits for the
    # seats' seeds, and each seat's [commitment, seed or None: its public one] at the deal.
    server_seed: bytes | None = None
    seeding_until: int | None = None
    dealt: list[list[Any]] | None = None
    # Transient, per batch: not persisted.
    limits: Limits = field(default=DEFAULT_LIMITS, compare=False, repr=False)
    timer_member: str | None = None
    _events: list[dict[str, Any]] = field(default_factory=list)
    _direct: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _requests: list[tuple[str, int | None]] = field(default_factory=list)
    # Acts, starts and resyncs applied this batch, by the gateway that sent them: its
    # next view names them (`applied`), so a client learns its request went through,
    # not only that the table changed.
    _applied: dict[str, list[str]] = field(default_factory=dict)
    _history_due: bool = False  # closed in this batch: its history goes to the director
    _dirty: bool = False
    _persist: bool = False
    _lobby: bool = False
    _reports: list[dict[str, Any]] = field(default_factory=list, compare=False)
    _play_now: bool = field(default=False, compare=False)
    _results: list[list[str]] | None = field(default=None, compare=False)
    # when this table last reported (ms; not stored: 0 after a load)
    _last_report: int = field(default=0, compare=False)

    if TYPE_CHECKING:  # what the parts call of each other, each defined once in its part
        # table.py
        def to_bytes(self) -> bytes: ...
        def _changed(self, msg: dict[str, Any] | None = None, *, visible: bool = True) -> None: ...
        def _answered(self, msg: dict[str, Any]) -> None: ...
        def _after_game_change(
            self, events: list[dict[str, Any]], msg: dict[str, Any], now: int
        ) -> None: ...
        def _result_sends(self) -> list[tuple[str, bytes]]: ...

        # seating.py
        def _held(self, msg: dict[str, Any], *, attached: bool = True) -> Seat: ...
        def _detach(self, index: int) -> None: ...
        def _deal(self, now: int, rng: random.Random) -> None: ...

        # seeds.py
        def _deal_secret(self, rng: random.Random) -> bytes: ...
        def _seeds_timeout(self, now: int, rng: random.Random) -> None: ...
        def _ask_for_commitments(self, seats: list[int], now: int, rng: random.Random) -> None: ...
        def _ask_again(self, now: int) -> None: ...
        def _redeal(self, now: int, rng: random.Random) -> None: ...
        def seeds_view(self) -> dict[str, Any] | None: ...
        def logged_seeds(self) -> dict[str, Any] | None: ...

        # clocks.py
        def _rearm(self, now: int, *, reset: bool = True) -> None: ...
        def _not_idle(self, seat: int) -> None: ...
        def _vacate_idle(self, events: list[dict[str, Any]]) -> None: ...
        def _close(self, now: int, why: str) -> None: ...

        # tournament.py
        def _deal_tournament(self, now: int, rng: random.Random) -> None: ...
        def _house_played(self, seat: Seat) -> bool: ...
        def _house_move(self) -> list[tuple[str, bytes]]: ...
        def _carry_out(self, out: list[str], now: int, *, round_end: bool) -> None: ...
        def _reports_out(self) -> list[Report]: ...
