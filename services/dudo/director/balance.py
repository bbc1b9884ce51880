"""Table balancing for multi-table tournaments, as pure functions (no Redis, no clock).

The director keeps, per table, what the table last reported and what it has
ordered since (:class:`TableCount`). Tables play on while the director thinks,
so every order takes effect at the table's *next* round boundary: a table told
to send ``k`` players away gives up, when its round ends, the ``k`` seats that
would act last (:func:`dudo.engine.leavers`); each player who leaves is then
placed by :func:`place` at the table that is shortest *at that moment*. So the
director decides how many leave where, never mid-round, and where each goes
only once they are actually up.

:func:`~dudo.director.planning.plan` decides after every batch of reports. On paper
(every order carried out), it brings the tables to the poker rules of a
multi-table tournament:

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

from collections.abc import Iterable
from dataclasses import dataclass, field

from .planning import OPENING_ORDER, Plan, TableCount, plan, plan_filed, tables_needed
from .sizes import SizeIndex

__all__ = [
    "Balancer", "Decisions", "Order", "Plan", "TableCount", "first_seating", "imbalance",
    "place", "plan", "plan_filed", "tables_needed",
]  # fmt: skip


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
    # Tables an order may still change: under an order, or breaking and not told yet.
    _ordered: set[str] = field(init=False, compare=False, repr=False)
    _breaking: set[str] = field(init=False, compare=False, repr=False)
    _last_key: tuple[int, str] | None = field(init=False, compare=False, repr=False)
    # The table each waiting player left (not stored: a director that restarts while
    # one waits may seat it back where it came from, as before this was kept)
    _came_from: dict[str, str] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        self._refile_all()

    def _refile_all(self) -> None:
        """Number the tables in opening order and file every one of them."""
        self._files, self._rank, self._by_rank = SizeIndex(), {}, {}
        self._ordered, self._breaking = set(), set()
        self._last_key = None
        for rank, count in enumerate(sorted(self.tables.values(), key=OPENING_ORDER)):
            self._rank[count.table] = rank
            self._by_rank[rank] = count
            self._refile(count)
            self._last_key = count.rank_key

    def _refile(self, count: TableCount) -> None:
        """``count`` changed: file it under its size on paper (out of the files while it
        breaks up) and note whether an order may concern it (a table never stops
        breaking up)."""
        name = count.table
        if count.breaking:
            self._files.drop(self._rank[name])
            self._breaking.add(name)
            if count.order_seq and count.order == -1:  # told to break: nothing to add
                self._ordered.discard(name)
            else:
                self._ordered.add(name)
        else:
            self._files.file(self._rank[name], count.seated + count.arriving)
            if count.order_seq:
                self._ordered.add(name)
            else:
                self._ordered.discard(name)

    def open(self, table: str, seated: int) -> None:
        count = self.tables[table] = TableCount(table, seated)
        self.touched.add(table)
        if self._last_key is not None and self._last_key >= count.rank_key:
            self._refile_all()  # opened out of order (never, by the director): renumber
            return
        self._last_key = count.rank_key
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
        gone = left if isinstance(left, list) else list(left)
        changed = bool(gone or joined) or count.seated != seated
        count.seated = seated
        if joined:
            count.arriving -= joined
        if done and done == count.order_seq:
            count.order, count.order_seq = 0, 0
            changed = True
        if count.breaking and seated == 0 and count.arriving == 0:
            del self.tables[table]
            self._files.drop(self._rank[table])
            self._ordered.discard(table)
            self._breaking.discard(table)
            del self._by_rank[self._rank[table]]
            if decisions is not None:
                decisions.closed.append(table)
        elif changed:
            self._refile(count)
        if gone:
            self.waiting.extend(gone)
            self._came_from.update(dict.fromkeys(gone, table))
        return changed

    def decide(self, decisions: Decisions) -> None:
        """Seat whoever is waiting, then plan again and order what changed."""
        self._seat_waiting(decisions)
        self._replan(decisions)
        self._seat_waiting(decisions)

    def _seat_waiting(self, decisions: Decisions) -> None:
        """Each waiting player, in turn, to the shortest table with room, on paper
        (ties: the first opened; the one :func:`place` would pick), but not back to
        the table it just left while another has room: an elimination there in the
        same step may have made it the shortest, and a move back is a move for nothing."""
        while self.waiting:
            source = self._came_from.get(self.waiting[0])
            rank = self._files.first_below(self.seats, avoid=self._rank.get(source or ""))
            if rank is None:
                return
            self._came_from.pop(self.waiting[0], None)
            count = self._by_rank[rank]
            count.arriving += 1
            self.touched.add(count.table)
            self._refile(count)
            decisions.moves.append((self.waiting.pop(0), count.table))

    def _replan(self, decisions: Decisions) -> None:
        pending = len(self.waiting) + sum(self.tables[name].seated for name in self._breaking)
        decided = plan_filed(self._files, self._by_rank, self.seats, pending)
        for name in decided.breaks:
            self.tables[name].breaking = True
            self.touched.add(name)
            self._refile(self.tables[name])
        sends = decided.sends
        # Only a table breaking (not told yet), under an order or now to send can get
        # a new order (in opening order: the orders are numbered so).
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
        told = {n for n, t in self.tables.items() if t.breaking and t.order_seq and t.order == -1}
        assert (
            self._ordered == {n for n, t in self.tables.items() if t.breaking or t.order_seq} - told
        )
        assert self._breaking == {n for n, t in self.tables.items() if t.breaking}
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
