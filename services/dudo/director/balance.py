"""Table balancing for multi-table tournaments, as pure functions (no Redis, no clock).

The director keeps, per table, what the table last reported and what it has
ordered since (:class:`TableCount`). Tables play on while the director thinks,
so every order takes effect at the table's *next* round boundary: a table told
to send ``k`` players away gives up, when its round ends, the ``k`` seats that
would act last (:func:`dudo.engine.leavers`); each player who leaves is then
placed by :func:`place` at the table that is shortest *at that moment*. So the
director decides how many leave where, never mid-round, and where each goes
only once they are actually up.

:func:`plan` is called after every report. On paper (every order carried out),
it brings the tables to the poker rules of a multi-table tournament:

1. as few tables as the players need: while the others can seat everyone, the
   table with the fewest players is broken (all its players leave); so when
   the players left fit one table, every other table breaks and the last one
   is the final table;
2. a table whose players are down to one (the rest were eliminated) is broken,
   unless players are on their way to it;
3. no two tables differ by more than one player: the fullest table sends one
   player at a time while it is two or more above the shortest.

A table with players on their way to it is never broken (they would have to
move twice), and no order leaves a table that is not being broken with fewer
than two players who are still there.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter

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
    # Its place in the order tables opened (ids sort by length, then text: t2 < t10),
    # worked out once: every plan sorts 1,667 tables of a 10,000-player tournament by it.
    rank_key: tuple[int, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.rank_key = (len(self.table), self.table)

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
    for rank, table in enumerate(sorted(tables, key=_RANK)):
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
    # 2. As few tables as the players need: the fewest players first (ties: the table
    # opened last), never one with players on their way.
    extra = alive - tables_needed(total, seats)
    if extra > 0:
        victims: list[tuple[int, int]] = []
        for size, ranks in files.by_size():
            victims.extend(
                (r, size) for r in reversed(ranks) if r not in broken and counts[r].arriving == 0
            )
            if len(victims) >= extra:
                break
        for rank, size in victims[:extra]:
            break_table(rank, size)

    # 3. Everyone who is leaving takes the shortest table, on paper: only the first
    # `pending` of the shortest can be chosen (each choice takes the smallest, and
    # some of those first ones is always still smaller than anything after them).
    paper: dict[int, int] = {}
    if pending:
        room: list[tuple[int, int]] = []
        for size, rank in files.ascending():
            if size >= seats or len(room) == pending:
                break
            if rank not in broken:
                room.append((size, rank))  # in order: already a heap
        for _ in range(pending):
            if not room:
                break
            size, rank = heapq.heappop(room)
            paper[rank] = size + 1
            if size + 1 < seats:
                heapq.heappush(room, (size + 1, rank))
    if alive < 2:
        return result

    # 4. The fullest tables send one player at a time to the shortest, never leaving
    # fewer than two of their own (ties: the first opened). A table either only
    # sends or only receives. Tables the plan changed are read from the two heaps
    # (entries whose size has changed since are stale), the others from the files.
    def unread(rank: int) -> bool:
        return rank in broken or rank in paper

    shortest = [(size, rank) for rank, size in paper.items()]
    fullest = [(-size, rank) for rank, size in paper.items()]
    heapq.heapify(shortest)
    heapq.heapify(fullest)
    low_files = Lookahead(files.ascending(), unread)
    high_files = Lookahead(files.descending(), unread)
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
        if stale or counts[full].seated - sends.get(full, 0) <= 2:
            # Stale, or keeps its last two: never a sender again.
            if from_files:
                high_files.take()
            else:
                heapq.heappop(fullest)
            continue
        if size - low <= 1:
            break
        sends[full] = sends.get(full, 0) + 1
        paper[full], paper[short] = size - 1, low + 1
        if from_files:
            high_files.take()
        else:
            heapq.heappop(fullest)
        heapq.heappush(fullest, (1 - size, full))
        heapq.heappush(shortest, (low + 1, short))
    result.sends = {counts[rank].table: n for rank, n in sorted(sends.items())}
    return result


def place(tables: Iterable[TableCount], seats: int) -> str | None:
    """The table a player who just left goes to: the shortest with room, on paper
    (ties: the first table), or None if every table is full or breaking."""
    room = [t for t in tables if not t.breaking and t.on_paper < seats]
    if not room:
        return None
    return min(room, key=lambda t: (t.on_paper, t.rank_key)).table


@dataclass
class Order:
    """Tell ``table``: at your next round boundary send ``count`` players away
    (``None``: all of them, the table breaks). A later order replaces an earlier one."""

    table: str
    seq: int
    count: int | None


@dataclass
class Decisions:
    """What the director does after a report."""

    moves: list[tuple[str, str]] = field(default_factory=list)  # (player, table they go to)
    orders: list[Order] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)  # broken tables now empty


@dataclass
class Balancer:
    """The director's balancing bookkeeping for one tournament's tables (plain data).

    Feed it every table report with :meth:`boundary`; do what it returns. A report
    says how many players the table now seats, which order it carried out (by
    number), who left with it and how many of the players sent to it sat down.

    Beside the counts it keeps the tables that are not breaking filed by size
    (:class:`~dudo.director.sizes.SizeIndex`), refiled whenever a count changes, so
    a decision reads the ends of the files, not every table; and the tables under
    an order or breaking up, the only ones an unchanged plan may still order.
    """

    seats: int
    tables: dict[str, TableCount] = field(default_factory=dict)
    waiting: list[str] = field(default_factory=list)  # left their table, no seat yet
    last_seq: int = 0
    # Tables whose count changed (or closed) since the owner last took this set: a
    # director stores each table's count on its own and writes only these.
    touched: set[str] = field(default_factory=set, compare=False, repr=False)
    _files: SizeIndex = field(init=False, compare=False, repr=False)
    _rank: dict[str, int] = field(init=False, compare=False, repr=False)
    _by_rank: dict[int, TableCount] = field(init=False, compare=False, repr=False)
    _ordered: set[str] = field(init=False, compare=False, repr=False)  # breaking or under order

    def __post_init__(self) -> None:
        self._refile_all()

    def _refile_all(self) -> None:
        """Number the tables in opening order and file every one of them."""
        self._files, self._rank, self._by_rank, self._ordered = SizeIndex(), {}, {}, set()
        for rank, count in enumerate(sorted(self.tables.values(), key=_RANK)):
            self._rank[count.table] = rank
            self._by_rank[rank] = count
            self._refile(count)

    def _refile(self, count: TableCount) -> None:
        """``count`` changed: file it under its size on paper (out of the files while it
        breaks up) and note whether an order may concern it."""
        rank = self._rank[count.table]
        if count.breaking:
            self._files.drop(rank)
        else:
            self._files.file(rank, count.seated + count.arriving)
        if count.breaking or count.order_seq:
            self._ordered.add(count.table)
        else:
            self._ordered.discard(count.table)

    def open(self, table: str, seated: int) -> None:
        count = self.tables[table] = TableCount(table, seated)
        self.touched.add(table)
        last = self._by_rank[max(self._by_rank)] if self._by_rank else None
        if last is not None and last.rank_key >= count.rank_key:
            self._refile_all()  # opened out of order (never, by the director): renumber
            return
        rank = self._rank[table] = len(self._rank)
        self._by_rank[rank] = count
        self._refile(count)

    def spread(self) -> int:
        """The largest difference in players on paper between two tables that play on
        (not breaking up, more than one player: :func:`imbalance` of those)."""
        return self._files.spread(smallest=2)

    def boundary(
        self, table: str, seated: int, done: int, left: Iterable[str] = (), joined: int = 0
    ) -> Decisions:
        """Take one report and decide at once (:meth:`record` then :meth:`decide`)."""
        decisions = Decisions()
        self.record(table, seated, done, left, joined, decisions)
        self.decide(decisions)
        return decisions

    def record(
        self,
        table: str,
        seated: int,
        done: int,
        left: Iterable[str],
        joined: int,
        decisions: Decisions | None = None,
    ) -> bool:
        """Take one report into the counts without deciding anything; True if it may
        change a decision (so a director can take a whole batch of reports, then
        :meth:`decide` once: most reports, rounds where nobody went out, change nothing)."""
        count = self.tables[table]
        self.touched.add(table)
        gone = list(left)
        changed = bool(gone or joined) or count.seated != seated
        count.seated = seated
        count.arriving -= joined
        if done and done == count.order_seq:
            count.order, count.order_seq = 0, 0
            changed = True
        if count.breaking and seated == 0 and count.arriving == 0:
            del self.tables[table]
            self._files.drop(self._rank[table])
            self._ordered.discard(table)
            del self._by_rank[self._rank[table]]
            if decisions is not None:
                decisions.closed.append(table)
        elif changed:
            self._refile(count)
        self.waiting.extend(gone)
        return changed

    def decide(self, decisions: Decisions) -> None:
        """Seat whoever is waiting, then plan again and order what changed."""
        self._seat_waiting(decisions)
        self._replan(decisions)
        self._seat_waiting(decisions)

    def _seat_waiting(self, decisions: Decisions) -> None:
        """Each waiting player, in turn, to the shortest table with room, on paper
        (ties: the first opened; the one :func:`place` would pick)."""
        while self.waiting:
            rank = self._files.first_below(self.seats)
            if rank is None:
                return
            count = self._by_rank[rank]
            count.arriving += 1
            self.touched.add(count.table)
            self._refile(count)
            decisions.moves.append((self.waiting.pop(0), count.table))

    def _replan(self, decisions: Decisions) -> None:
        pending = len(self.waiting) + sum(
            self.tables[name].seated for name in self._ordered if self.tables[name].breaking
        )
        decided = plan_filed(self._files, self._by_rank, self.seats, pending)
        for name in decided.breaks:
            self.tables[name].breaking = True
            self.touched.add(name)
            self._refile(self.tables[name])
        sends = decided.sends
        # Only a table breaking, under an order or now to send can get a new order
        # (in opening order: the orders are numbered so).
        for name in sorted(self._ordered | sends.keys(), key=self._rank.__getitem__):
            count = self.tables[name]
            if count.breaking:
                wanted: int | None = None
                if count.order_seq and count.order == -1:
                    continue  # already told to break
            else:
                wanted = sends.get(name, 0)
                if wanted == (count.order if count.order_seq else 0):
                    continue
            self.last_seq += 1
            count.order = -1 if wanted is None else wanted
            count.order_seq = self.last_seq
            self.touched.add(name)
            self._refile(count)
            decisions.orders.append(Order(name, self.last_seq, wanted))

    def check_files(self) -> None:
        """Raise AssertionError unless the files are what the counts say (for tests)."""
        assert self._files.filed() == {
            self._rank[t.table]: t.seated + t.arriving
            for t in self.tables.values()
            if not t.breaking
        }
        assert self._ordered == {n for n, t in self.tables.items() if t.breaking or t.order_seq}
        assert {t.table for t in self._by_rank.values()} == set(self.tables)


def imbalance(sizes: Iterable[int]) -> int:
    """The largest difference in players between two tables (0 for one table)."""
    values = list(sizes)
    return max(values) - min(values) if len(values) > 1 else 0


def first_seating(players: int, seats: int) -> list[int]:
    """Table sizes for ``players`` at the start: as few tables as possible, sizes within one.

    Heats reseat their survivors the same way."""
    tables = tables_needed(players, seats)
    base, extra = divmod(players, tables)
    return [base + 1 if i < extra else base for i in range(tables)]


# Tables in the order they were opened, as a sort key that costs no Python call per table.
_RANK = attrgetter("rank_key")
