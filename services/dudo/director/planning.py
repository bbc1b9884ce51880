"""The plan: which tables break now and how many players each sends (pure functions).

:func:`plan` decides from scratch, from the counts of every table, what
:mod:`dudo.director.balance` describes; a :class:`~dudo.director.balance.Balancer`
keeps its tables filed by size between decisions and calls :func:`plan_filed`,
which reads the files from their ends only.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter

from ..auth import table_order
from .sizes import Lookahead, SizeIndex


@dataclass
class TableCount:
    """One table as the director sees it."""

    table: str
    seated: int  # players with dice at the table, as it last reported
    arriving: int = 0  # placed here, not seated yet (they sit at its next boundary)
    breaking: bool = False  # every player leaves at its next boundary; then it closes
    order: int = 0  # players it was last told to send at its next boundary (not yet done)
    order_seq: int = 0  # that order's number (0: none outstanding)
    # Its place in the order tables opened (by the number its id ends with: t2 < t10,
    # <tournament>-<tag>-2 < <tournament>-<other tag>-10), worked out once: every plan
    # sorts 1,667 tables of a 10,000-player tournament by it.
    rank_key: tuple[int, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.rank_key = table_order(self.table)

    @property
    def on_paper(self) -> int:
        """Players here once every player on the way has sat down."""
        return 0 if self.breaking else self.seated + self.arriving


@dataclass
class Plan:
    """What :func:`plan` decided: tables to break now, and how many each table sends."""

    breaks: list[str] = field(default_factory=list)
    sends: dict[str, int] = field(default_factory=dict)  # absolute, not increments


def tables_needed(players: int, seats: int) -> int:
    """How many tables ``players`` need at ``seats`` per table (at least one)."""
    return max(1, -(-players // seats))


def plan(tables: Iterable[TableCount], seats: int, waiting: int = 0) -> Plan:
    """Decide, from scratch, which tables break now and how many players each sends.

    ``waiting`` players have left their table and found no seat yet. Idempotent:
    the same counts give the same plan, so it is simply computed again after
    every batch of reports, and orders change only where the answer changed.
    Ties are broken by the order tables were opened (``rank_key``).

    A :class:`Balancer` keeps its tables filed by size between decisions and plans
    over those files (:func:`plan_filed`); this files ``tables`` first.
    """
    files, counts = SizeIndex(), {}
    for rank, table in enumerate(sorted(tables, key=OPENING_ORDER)):
        counts[rank] = table
        if table.breaking:
            waiting += table.seated
        else:
            files.file(rank, table.seated + table.arriving)
    return plan_filed(files, counts, seats, waiting)


def plan_filed(
    files: SizeIndex, counts: Mapping[int, TableCount], seats: int, pending: int
) -> Plan:
    """:func:`plan` over tables filed by size: ``files`` holds the tables that are not
    breaking, by rank (their place in opening order; ``counts`` names them), and
    ``pending`` players have a seat to find (waiting, or at tables breaking up).

    It reads the files from the ends only, so a decision costs what it decides, not
    the number of tables: the lonely tables (size 0 or 1), the smallest when tables
    break, as many of the shortest as players are placed, and the fullest and
    shortest while they are two or more apart. What the plan changes on paper is
    kept beside the files (``paper``) and never written to them.
    """
    result = Plan()
    alive = len(files)
    total = files.total + pending
    broken: set[int] = set()

    def break_table(rank: int, size: int) -> None:
        nonlocal pending, alive
        result.breaks.append(counts[rank].table)
        pending += size
        broken.add(rank)
        alive -= 1

    # 1. Tables down to one player (or none), nobody on the way: broken, in rank order.
    lonely = sorted((r, s) for s in (0, 1) for r in files.at(s) if counts[r].arriving == 0)
    for rank, size in lonely:
        if alive > 1:
            break_table(rank, size)
    # 2. As few tables as the players need.
    for rank, size in _fewest(files, counts, broken, alive - tables_needed(total, seats)):
        break_table(rank, size)
    paper = _seat_leavers(files, broken, pending, seats)
    if alive >= 2:
        sends = _even_out(files, counts, broken, paper)
        result.sends = {counts[rank].table: n for rank, n in sorted(sends.items())}
    return result


def _fewest(
    files: SizeIndex, counts: Mapping[int, TableCount], broken: set[int], extra: int
) -> list[tuple[int, int]]:
    """The ``extra`` tables with the fewest players (ties: the table opened last), never
    one with players on their way nor one ``broken`` already: ``(rank, size)``."""
    if extra <= 0:
        return []
    victims: list[tuple[int, int]] = []
    for size, ranks in files.by_size():
        victims.extend(
            (r, size) for r in reversed(ranks) if r not in broken and counts[r].arriving == 0
        )
        if len(victims) >= extra:
            break
    return victims[:extra]


def _seat_leavers(
    files: SizeIndex, broken: set[int], pending: int, seats: int
) -> dict[int, int]:
    """3. Everyone who is leaving takes the shortest table, on paper, one at a time
    (ties: the first opened). Only the first `pending` of the shortest can be chosen
    (some of them is always still smaller than anything after them), and one at a time
    comes to water filling: every table below some level is raised to it, and the
    players left over go to the first tables at that level."""
    if not pending:
        return {}
    room: list[tuple[int, int]] = []
    for size, rank in files.ascending():
        if size >= seats or len(room) == pending:
            break
        if rank not in broken:
            room.append((size, rank))
    return _fill(room, pending, seats)


def _even_out(
    files: SizeIndex, counts: Mapping[int, TableCount], broken: set[int], paper: dict[int, int]
) -> dict[int, int]:
    """4. The fullest tables send one player at a time to the shortest, never leaving
    fewer than two of their own (ties: the first opened): how many each sends. A table
    either only sends or only receives. Tables the plan changed (``paper``, updated
    here) are read from the two heaps (entries whose size has changed since are
    stale), the others from the files."""
    shortest = [(size, rank) for rank, size in paper.items()]
    fullest = [(-size, rank) for rank, size in paper.items()]
    heapq.heapify(shortest)
    heapq.heapify(fullest)
    low_files = Lookahead(files.ascending(), broken, paper)
    high_files = Lookahead(files.descending(), broken, paper)
    sends: dict[int, int] = {}
    while True:
        while shortest and shortest[0][0] != paper[shortest[0][1]]:
            heapq.heappop(shortest)
        lows = [entry for entry in (low_files.peek(), shortest[0] if shortest else None) if entry]
        if not lows:
            break
        low, short = min(lows)
        above, top = high_files.peek(), fullest[0] if fullest else None
        from_files = above is not None and (top is None or (-above[0], above[1]) < top)
        if from_files:
            assert above is not None
            size, full = above
        elif top is not None:
            size, full = -top[0], top[1]
        else:
            break
        stale = not from_files and size != paper[full]
        sender = not stale and counts[full].seated - sends.get(full, 0) > 2
        if sender and size - low <= 1:
            break
        if from_files:  # this entry is read: the next one is looked at
            high_files.take()
        else:
            heapq.heappop(fullest)
        if not sender:  # stale, or keeps its last two: never a sender again
            continue
        sends[full] = sends.get(full, 0) + 1
        paper[full], paper[short] = size - 1, low + 1
        heapq.heappush(fullest, (1 - size, full))
        heapq.heappush(shortest, (low + 1, short))
    return sends


def _fill(room: list[tuple[int, int]], players: int, seats: int) -> dict[int, int]:
    """Seat ``players`` one at a time at the shortest of ``room`` (``(size, rank)``,
    shortest first, all below ``seats``; ties: the lowest rank), on paper: the new
    size of every table that took someone. Computed as water filling, which is what
    one at a time comes to, without a heap operation per player."""
    if not room:
        return {}
    level, below, left = room[0][0], 0, players
    while level < seats:
        while below < len(room) and room[below][0] <= level:
            below += 1  # room[:below] are all at `level` by now
        if left < below:
            break
        left -= below  # each of them takes one: the level rises
        level += 1
    changed = {rank: level for size, rank in room[:below] if size != level}
    if level < seats:  # the players left over: the first tables at the level, by rank
        for rank in sorted(rank for _, rank in room[:below])[:left]:
            changed[rank] = level + 1
    return changed


# Tables in the order they were opened, as a sort key that costs no Python call per table.
OPENING_ORDER = attrgetter("rank_key")
