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
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter


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
    every report, and orders change only where the answer changed.

    Ties are broken by the order tables were opened (``rank_key``); heaps keep
    it O((tables + moves) log tables): a 10,000-player tournament has 1,667.
    """
    result = Plan()
    everything = list(tables)
    # Tables by their index in opening order: plain ints in the heaps (ties break by
    # the index, as by the order tables opened), lists instead of dicts by name.
    live = sorted((t for t in everything if not t.breaking), key=_RANK)
    paper = [t.seated + t.arriving for t in live]
    pending = waiting + sum(t.seated for t in everything if t.breaking)
    total = sum(paper) + pending
    broken = [False] * len(live)
    alive = len(live)

    def break_table(i: int) -> None:
        nonlocal pending, alive
        result.breaks.append(live[i].table)
        pending += paper[i]
        broken[i] = True
        alive -= 1

    for i in [i for i, t in enumerate(live) if t.seated < 2 and t.arriving == 0]:
        if alive > 1:
            break_table(i)
    needed = tables_needed(total, seats)
    if alive > needed:
        # The fewest players first (ties: the table opened last), never one with
        # players on their way.
        candidates = sorted(
            (i for i, t in enumerate(live) if not broken[i] and t.arriving == 0),
            key=lambda i: (paper[i], -i),
        )
        for i in candidates[: alive - needed]:
            break_table(i)
    keep = [i for i, gone in enumerate(broken) if not gone] if alive < len(live) else range(alive)

    # Everyone who is leaving takes the shortest table, on paper.
    if pending:
        room = [(paper[i], i) for i in keep if paper[i] < seats]
        heapq.heapify(room)
        for _ in range(pending):
            if not room:
                break
            size, i = heapq.heappop(room)
            paper[i] = size + 1
            if size + 1 < seats:
                heapq.heappush(room, (size + 1, i))

    # Then the fullest tables send one player at a time to the shortest, never
    # leaving fewer than two of their own (ties: the shortest opened first, the
    # fullest opened first).
    if len(keep) < 2:
        return result
    sends = [0] * len(live)
    shortest = [(paper[i], i) for i in keep]
    fullest = [(-paper[i], i) for i in keep]
    heapq.heapify(shortest)
    heapq.heapify(fullest)
    while fullest:
        while shortest[0][0] != paper[shortest[0][1]]:  # stale: its size changed since
            heapq.heappop(shortest)
        low, short = shortest[0]
        size, full = fullest[0]
        if -size != paper[full] or live[full].seated - sends[full] <= 2:
            heapq.heappop(fullest)  # stale, or keeps its last two: never a sender again
            continue
        if paper[full] - low <= 1:
            break
        sends[full] += 1
        paper[full] -= 1
        paper[short] += 1
        heapq.heapreplace(fullest, (-paper[full], full))
        heapq.heappush(shortest, (paper[short], short))
    result.sends = {live[i].table: n for i, n in enumerate(sends) if n}
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
    """

    seats: int
    tables: dict[str, TableCount] = field(default_factory=dict)
    waiting: list[str] = field(default_factory=list)  # left their table, no seat yet
    last_seq: int = 0
    # Tables whose count changed (or closed) since the owner last took this set: a
    # director stores each table's count on its own and writes only these.
    touched: set[str] = field(default_factory=set, compare=False, repr=False)

    def open(self, table: str, seated: int) -> None:
        self.tables[table] = TableCount(table, seated)
        self.touched.add(table)

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
            if decisions is not None:
                decisions.closed.append(table)
        self.waiting.extend(gone)
        return changed

    def decide(self, decisions: Decisions) -> None:
        """Seat whoever is waiting, then plan again and order what changed."""
        self._seat_waiting(decisions)
        self._replan(decisions)
        self._seat_waiting(decisions)

    def _seat_waiting(self, decisions: Decisions) -> None:
        """Each waiting player, in turn, to the table :func:`place` would pick."""
        if not self.waiting:
            return
        room = [
            (t.on_paper, t.rank_key, t.table)
            for t in self.tables.values()
            if not t.breaking and t.on_paper < self.seats
        ]
        heapq.heapify(room)
        while self.waiting and room:
            size, order, name = heapq.heappop(room)
            self.tables[name].arriving += 1
            self.touched.add(name)
            decisions.moves.append((self.waiting.pop(0), name))
            if size + 1 < self.seats:
                heapq.heappush(room, (size + 1, order, name))

    def _replan(self, decisions: Decisions) -> None:
        decided = plan(self.tables.values(), self.seats, len(self.waiting))
        for name in decided.breaks:
            self.tables[name].breaking = True
            self.touched.add(name)
        sends = decided.sends
        # Only a table breaking, under an order or now to send can get a new order.
        for name, count in [
            (name, count)
            for name, count in self.tables.items()
            if count.breaking or count.order_seq or name in sends
        ]:
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
            decisions.orders.append(Order(name, self.last_seq, wanted))


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
