"""A tournament's state, declared once: the fields its parts share (plain data).

:class:`~dudo.director.tournament.Tournament` is this state with its behaviour:
:class:`~dudo.director.progress.Progress` (the start, reports, the end) and
:class:`~dudo.director.record.Stored` (the record and its rows) both subclass it,
so each sees the fields without listing them again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..auth import Authority
from ..entity import RecentIds
from ..wire import keys
from .balance import Balancer
from .quotas import NoQuotas, Quotas
from .standings import Entrant

REGISTERING, RUNNING, OVER = "registering", "running", "over"
CANCELLED = "cancelled"  # never started: every buy-in went back
ENDED = frozenset({OVER, CANCELLED})
BROADCAST_EVERY_MS = 1000
# A finished tournament stays in the listing (as over) this long; its record, with the
# results, is kept for the director's --keep-finished-days (docs/tournaments.md).
LISTED_OVER_MS = 24 * 3600 * 1000
# A tournament with no start time that has not begun this long after its creation is
# cancelled, its buy-ins paid back: none waits for ever, and the listing every lobby
# reads does not grow with abandoned ones (docs/tournaments.md).
UNSTARTED_MS = 24 * 3600 * 1000


@dataclass(frozen=True)
class Context:
    """What a tournament needs to know of the deployment (the worker's ``limits`` slot)."""

    table_partitions: int = keys.DEFAULT_PARTITIONS
    director_partitions: int = keys.DEFAULT_DIRECTOR_PARTITIONS
    # The deployment's credentials (entrant tokens, player ids): the director's own.
    authority: Authority = field(default_factory=Authority, compare=False)
    # What each admitted app may create and register here (dudo.director.quotas)
    quotas: Quotas = field(default_factory=NoQuotas, compare=False)


@dataclass
class TournamentState:
    """Everything a tournament is; the record and rows hold all but the transient part."""

    id: str
    config: dict[str, Any]  # name, rules, seats, format, advance, start_*, max_players, ...
    host: str | None = None
    version: int = 1
    status: str = REGISTERING
    entrants: dict[str, Entrant] = field(default_factory=dict)
    balancer: Balancer | None = None
    reported: dict[str, int] = field(default_factory=dict)  # table -> last report version
    # table -> [player, dice] of its last report, as the msgpack the table wrote (read
    # only for the standings): stored in the table's row, so a round that changes only
    # dice writes that one row, not a row per player whose dice changed.
    seated_at: dict[str, msgspec.Raw] = field(default_factory=dict)
    heat: int = 0
    heat_tables: list[str] = field(default_factory=list)
    qualified: list[str] = field(default_factory=list)  # heats: through, waiting for the next
    out: int = 0  # players eliminated so far
    entrant_seq: int = 0  # entrants numbered so far (each one's `number`)
    pool: int = 0
    tables_made: int = 0
    seat_seq: int = 0
    subscribers: list[str] = field(default_factory=list)
    # Measured as it runs (for `dudo bench tournament` and operators): the largest
    # difference between two tables' players (counting players on their way) seen
    # at a report, the seat changes made, and the tables the start opened.
    max_imbalance: int = 0
    reseats: int = 0
    tables_at_start: int = 0
    seen: RecentIds = field(default_factory=RecentIds)
    wake: int | None = None
    created: int = 0
    # What its organizer (the host) did (dudo.director.organizer): paused, how many pause
    # and resume messages the tables got, the announcement ({text, at} or None), when it
    # started (ms: the late registration's window), whom the host kicked (out at their
    # table's round's end, never seated again), who bought re-entries and how many.
    paused: bool = False
    paused_at: int = 0  # when the pause began (ms): a line announced since goes at resume
    pause_seq: int = 0
    announcement: dict[str, Any] | None = None
    started: int = 0
    kicked: list[str] = field(default_factory=list)
    reentered: dict[str, int] = field(default_factory=dict)  # player -> re-entries bought
    # Every closed table's history, as the table sent it when it closed (table_history):
    # table -> rows [round, ms, [[player, dice] joined], [[player, dice] left], [out]]. A row
    # of its own in the record's hash (h:<table>), written once per table.
    histories: dict[str, list[list[Any]]] = field(default_factory=dict)
    # ... and what each closed table's dice came from (its history's `seeds`: the names
    # a verifier's log gives them), a row of its own too (d:<table>), written with it.
    table_seeds: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Transient, per batch.
    limits: Any = field(default_factory=Context, compare=False, repr=False)
    timer_member: str | None = None
    _direct: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _sends: list[tuple[str, bytes]] = field(default_factory=list)
    _dirty: bool = False
    _persist: bool = False
    _lobby: bool = False
    _decide: bool = False  # reports changed the counts: plan once at the end of the batch
    # Standings go to subscribers after every change, but while it runs at most every
    # BROADCAST_EVERY_MS (thousands of players, reports every few milliseconds).
    _news: bool = False
    _now: int = 0
    _last_broadcast: int = -BROADCAST_EVERY_MS
    _handles: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    # handle -> player of every entrant, made at the first entrant token this process
    # checks for the tournament, kept up with registrations after that (None: not made)
    _by_handle: dict[str, str] | None = field(default=None, compare=False, repr=False)
    # how many entrants hold each key of wire.name_keys (names that look alike share
    # one), made at the first registration this process takes for the tournament, kept
    # up after that (None: not made)
    _names: Counter[str] | None = field(default=None, compare=False, repr=False)
    # (version, the whole standings) last asked for by a gateway (`standings`)
    _full_standings: tuple[int, dict[str, Any]] | None = field(
        default=None, compare=False, repr=False
    )
    _came_from: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    _inboxes: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    # Rows to store with the next record (see to_rows): entrants who changed, came or
    # went; tables whose report or heat changed (the balancer keeps its own set).
    _entrants_changed: set[str] = field(default_factory=set, compare=False, repr=False)
    _tables_changed: set[str] = field(default_factory=set, compare=False, repr=False)
    _histories_changed: set[str] = field(default_factory=set, compare=False, repr=False)

    def touch(self, entrant: Entrant) -> Entrant:
        """``entrant`` changed (or came): its row is stored with the next batch. Every
        change to an entrant goes with this call; whole tournaments played in the tests
        compare what Redis holds with this state after every batch, row for row."""
        self._entrants_changed.add(entrant.player)
        return entrant
