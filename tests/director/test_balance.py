"""Balancing decisions (dudo.director.balance): pure functions, checked on whole simulated
tournaments where tables play on while the director's orders are on their way."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dudo.director.balance import (
    Balancer,
    Decisions,
    Order,
    TableCount,
    first_seating,
    imbalance,
    place,
    plan,
    tables_needed,
)
from dudo.director.sizes import SizeIndex

from .reference_plan import reference_plan


def test_first_seating_uses_as_few_tables_as_possible_within_one() -> None:
    assert first_seating(13, 6) == [5, 4, 4]
    assert first_seating(6, 6) == [6]
    assert first_seating(7, 6) == [4, 3]
    assert first_seating(1000, 6) == [6] * 165 + [5, 5]  # 167 tables, not 166 and a 4
    for players in range(2, 200):
        sizes = first_seating(players, 5)
        assert sum(sizes) == players and imbalance(sizes) <= 1
        assert len(sizes) == tables_needed(players, 5) and max(sizes) <= 5



def test_ties_go_to_the_table_opened_first_whatever_its_tag() -> None:
    """A tournament's tables are <tournament>-<keyed tag>-<n>: ties between them are
    broken by n, the order they were opened, not by the random tag (the balancer once
    sorted them by length, then text: 'cup-Ab-2' before 'cup-Zq-1')."""
    tables = [TableCount("cup-Zq-1", 3), TableCount("cup-Ab-2", 3), TableCount("cup-aa-10", 3)]
    assert place(tables, seats=6) == "cup-Zq-1"
    assert place(tables[1:], seats=6) == "cup-Ab-2"  # 2 before 10
    balancer = Balancer(seats=6, tables={t.table: t for t in tables})
    balancer.waiting.append("ana")
    decisions = Decisions()
    balancer.decide(decisions)
    assert decisions.moves == [("ana", "cup-Zq-1")]


def test_fullest_table_sends_to_the_shortest() -> None:
    tables = [TableCount("t1", 6), TableCount("t2", 3), TableCount("t3", 5)]
    decided = plan(tables, seats=6)
    assert decided.breaks == []
    assert decided.sends == {"t1": 1}  # 6,3,5 -> 5,4,5


def test_smallest_table_breaks_when_the_others_can_seat_its_players() -> None:
    tables = [TableCount("t1", 5), TableCount("t2", 2), TableCount("t3", 4)]
    decided = plan(tables, seats=6)
    assert decided.breaks == ["t2"]  # 11 players fit two tables of six
    assert decided.sends == {}


def test_final_table_when_everyone_fits_one() -> None:
    tables = [TableCount("t1", 3), TableCount("t2", 2), TableCount("t3", 1)]
    decided = plan(tables, seats=6)
    assert sorted(decided.breaks) == ["t2", "t3"]


def test_table_down_to_one_player_breaks_unless_players_are_coming() -> None:
    assert plan([TableCount("t1", 4), TableCount("t2", 1), TableCount("t3", 4)], 4).breaks == ["t2"]
    waiting = [TableCount("t1", 4), TableCount("t2", 1, arriving=1), TableCount("t3", 4)]
    assert plan(waiting, 4).breaks == []


def test_a_sender_keeps_two_players() -> None:
    # t1 seats 2 with 3 on the way: it is full on paper, but cannot send anyone.
    decided = plan([TableCount("t1", 2, arriving=3), TableCount("t2", 2)], seats=6)
    assert decided.sends == {}


def test_place_takes_the_shortest_table_with_room() -> None:
    tables = [TableCount("t1", 5), TableCount("t2", 4, arriving=1), TableCount("t3", 4)]
    assert place(tables, 6) == "t3"
    assert place([TableCount("t1", 6), TableCount("t2", 1, breaking=True)], 6) is None


def test_a_player_sent_away_does_not_go_back_to_the_table_it_left() -> None:
    """Issue 31, item 5: an elimination at the sending table in the same step made it
    the shortest, and the player it sent away was placed back there ("Moved to table
    1" from table 1, seconds without views). It goes to the next shortest; back only
    where no other table has room."""
    b = Balancer(6)
    for name, n in (("t1", 6), ("t2", 4), ("t3", 5)):
        b.open(name, n)
    decided = Decisions()
    b.decide(decided)
    [order] = decided.orders
    assert (order.table, order.count) == ("t1", 1)
    # t1's round ends: "p" leaves by the order and someone else is out there.
    after = b.boundary("t1", seated=4, done=order.seq, left=["p"])
    assert after.moves == [("p", "t2")]
    b.check_files()

    full = Balancer(3)  # the only table with room is the one it left: back it goes
    full.open("a", 3)
    full.open("b", 3)
    assert full.boundary("a", seated=2, done=0, left=["q"]).moves == [("q", "a")]


# -- whole tournaments, simulated ---------------------------------------------------


@dataclass
class SimTable:
    """A table as the worker runs it: it plays on; orders and arrivals wait for a boundary."""

    name: str
    players: dict[str, int]  # player -> dice
    order: tuple[int, int | None] | None = None
    joins: list[tuple[str, int]] = field(default_factory=list)

    @property
    def halted(self) -> bool:
        return len(self.players) < 2


@dataclass
class Sim:
    seats: int
    rng: random.Random
    start_dice: int = 2
    tables: dict[str, SimTable] = field(default_factory=dict)
    mail: list[tuple[str, object]] = field(default_factory=list)  # (table, order or join)
    out: list[str] = field(default_factory=list)
    dice: dict[str, int] = field(default_factory=dict)
    worst: int = 0  # largest imbalance seen between playing tables at a boundary
    boundaries: int = 0

    def __post_init__(self) -> None:
        self.balancer = Balancer(self.seats)

    def start(self, players: int) -> None:
        names = iter(f"p{i}" for i in range(players))
        for i, size in enumerate(first_seating(players, self.seats)):
            table = SimTable(f"t{i + 1}", {next(names): self.start_dice for _ in range(size)})
            self.tables[table.name] = table
            self.balancer.open(table.name, size)

    def everyone(self) -> list[str]:
        seated = [p for t in self.tables.values() for p in t.players]
        joining = [p for t in self.tables.values() for p, _ in t.joins]
        mailed = [m[0] for _, m in self.mail if isinstance(m, tuple)]
        return seated + joining + mailed + self.balancer.waiting + self.out

    def boundary(self, table: SimTable, eliminations: bool) -> None:
        """A round ends at ``table`` (someone loses a die), then the seating changes."""
        if eliminations and not table.halted:
            loser = self.rng.choice(sorted(table.players))
            table.players[loser] -= 1
            if table.players[loser] == 0:
                del table.players[loser]
                self.out.append(loser)
        done, left = 0, []
        if table.order is not None:
            done, count = table.order
            table.order = None
            alive = sorted(table.players)
            k = len(alive) if count is None else max(0, min(count, len(alive) - 2))
            for player in alive[len(alive) - k :]:
                self.dice[player] = table.players.pop(player)
                left.append(player)
        joined = len(table.joins)
        for player, dice in table.joins:
            table.players[player] = dice
        table.joins = []
        assert len(table.players) <= self.seats
        self.boundaries += 1
        # Measured before the director hears of it, over the tables that play on (a
        # table being broken up is leaving); a player on the way to a table counts
        # there (told "moved to table N", they wait for its round to end to sit down).
        counts = self.balancer.tables
        coming = [name for name, m in self.mail if isinstance(m, tuple)]
        playing = [
            len(t.players) + len(t.joins) + coming.count(t.name)
            for t in self.tables.values()
            if not t.halted and not counts[t.name].breaking
        ]
        self.worst = max(self.worst, imbalance(playing))
        before = {name: replace(count) for name, count in counts.items()}
        self.balancer.touched.clear()
        decisions = self.balancer.boundary(table.name, len(table.players), done, left, joined)
        # A director stores only the tables the balancer says it touched: every
        # table whose count changed, opened or closed must be among them.
        changed = {
            name for name in before.keys() | counts.keys() if before.get(name) != counts.get(name)
        }
        assert changed <= self.balancer.touched
        # The tables filed by size (what decisions read) are what the counts say.
        self.balancer.check_files()
        for name in decisions.closed:
            assert not self.tables.pop(name).players
        for player, target in decisions.moves:
            self.mail.append((target, (player, self.dice.pop(player))))
        for order in decisions.orders:
            self.mail.append((order.table, order))

    def deliver(self, index: int) -> None:
        name, message = self.mail.pop(index)
        table = self.tables.get(name)
        if table is None:  # closed since: only an order can still be on its way there
            assert isinstance(message, Order)
            return
        if isinstance(message, Order):
            if table.order is None or table.order[0] < message.seq:
                table.order = (message.seq, message.count)
        else:
            assert isinstance(message, tuple)
            table.joins.append(message)
        if table.halted:  # between rounds for good: the change happens now
            self.boundary(table, eliminations=False)

    def step(self, eliminations: bool = True) -> bool:
        playing = [t for t in self.tables.values() if not t.halted]
        if not eliminations:  # only tables with something to do reach a boundary
            playing = [t for t in playing if t.order or t.joins]
        if self.mail and (not playing or self.rng.random() < 0.5):
            # Each table's messages come in order (one inbox stream); tables at random.
            name = self.rng.choice(sorted({name for name, _ in self.mail}))
            self.deliver(next(i for i, (n, _) in enumerate(self.mail) if n == name))
            return True
        if playing:
            self.boundary(self.rng.choice(playing), eliminations)
            return True
        return False


@settings(max_examples=60, deadline=None)
@given(
    players=st.integers(2, 90),
    seats=st.integers(3, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_whole_tournament_balances_and_places_everyone_once(
    players: int, seats: int, seed: int
) -> None:
    sim = Sim(seats, random.Random(seed))
    sim.start(players)
    for _ in range(players * 40):
        assert sorted(sim.everyone()) == sorted(f"p{i}" for i in range(players))
        if len(sim.out) == players - 1 and not sim.mail:
            break
        assert sim.step()
    assert len(sim.out) == players - 1, "the tournament did not finish"
    # One table is left: the final one, holding the winner.
    assert [len(t.players) for t in sim.tables.values() if t.players] == [1]


def test_tables_stay_close_while_orders_wait_for_round_ends() -> None:
    """Tables play on while the director's orders wait for their round to end, so
    between rounds two tables can be more than one player apart for a while (an
    elimination here, players still on their way there). Over 100 whole simulated
    tournaments (fixed seeds, 2..200 players, 3..6 seats) the worst ever seen is
    recorded here and in docs/tournaments.md; quiescent, they settle within one
    (test above)."""
    worst = []
    for seed in range(100):
        rng = random.Random(seed)
        players = rng.randint(2, 200)
        sim = Sim(rng.randint(3, 6), rng)
        sim.start(players)
        while len(sim.out) < players - 1 or sim.mail:
            assert sim.step()
        worst.append(sim.worst)
    assert max(worst) <= 4
    assert sum(w <= 2 for w in worst) >= 50


@pytest.mark.parametrize("seed", range(20))
def test_with_no_eliminations_the_orders_settle_within_one_player(seed: int) -> None:
    """Quiescent: once every order and arrival has been carried out, the tables are
    as few as the players need and differ by at most one."""
    rng = random.Random(seed)
    seats = rng.randint(3, 6)
    sim = Sim(seats, rng)
    names = iter(f"p{i}" for i in range(500))
    for i in range(rng.randint(2, 8)):  # deliberately unbalanced: 2..seats each
        size = rng.randint(2, seats)
        sim.tables[f"t{i + 1}"] = SimTable(f"t{i + 1}", {next(names): 2 for _ in range(size)})
        sim.balancer.open(f"t{i + 1}", size)
    total = sum(len(t.players) for t in sim.tables.values())
    for table in list(sim.tables.values()):  # each reports once, as after its first round
        sim.boundary(table, eliminations=False)
    for _ in range(2000):
        if not sim.step(eliminations=False):
            break
    sizes = [len(t.players) for t in sim.tables.values()]
    assert not sim.mail and sum(sizes) == total
    assert len(sizes) == tables_needed(total, seats)
    assert imbalance(sizes) <= 1


def assert_plans_agree(rows: list[tuple[int, int, bool]], seats: int, waiting: int) -> None:
    """plan() and the plain reference plan decide alike over tables of (seated, arriving,
    breaking) rows."""
    tables = [
        TableCount(f"t{i + 1}", min(seated, seats), arriving, breaking)
        for i, (seated, arriving, breaking) in enumerate(rows)
    ]
    fast, plain = plan(tables, seats, waiting), reference_plan(tables, seats, waiting)
    assert (sorted(fast.breaks), fast.sends) == (sorted(plain.breaks), plain.sends)


@settings(max_examples=400, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 3), st.booleans()), min_size=1, max_size=30
    ),
    seats=st.integers(3, 6),
    waiting=st.integers(0, 8),
)
def test_the_fast_plan_decides_exactly_as_the_plain_one(
    rows: list[tuple[int, int, bool]], seats: int, waiting: int
) -> None:
    assert_plans_agree(rows, seats, waiting)


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(st.tuples(st.integers(0, 15), st.integers(-1, 8)), min_size=1, max_size=60),
)
def test_size_files_read_as_a_sorted_model(steps: list[tuple[int, int]]) -> None:
    """SizeIndex against a plain dict: after any filing and dropping, the shortest-first
    and fullest-first readings, the first table with room and the spread are what
    sorting the dict gives."""
    files, model = SizeIndex(), {}
    for rank, size in steps:
        if size < 0:
            files.drop(rank)
            model.pop(rank, None)
        else:
            files.file(rank, size)
            model[rank] = size
        assert files.filed() == model and len(files) == len(model)
        assert files.total == sum(model.values())
        assert list(files.ascending()) == sorted((s, r) for r, s in model.items())
        assert list(files.descending()) == sorted(
            ((s, r) for r, s in model.items()), key=lambda e: (-e[0], e[1])
        )
        for limit in (0, 3, 6):
            room = sorted((s, r) for r, s in model.items() if s < limit)
            assert files.first_below(limit) == (room[0][1] if room else None)
        big = [s for s in model.values() if s >= 2]
        assert files.spread(2) == imbalance(big)


def test_a_balancer_restored_from_its_counts_files_them_in_opening_order() -> None:
    """A director that takes a tournament over builds its balancer from the stored
    counts (in any order): it files them as the one that stored them did."""
    counts = {
        name: TableCount(name, seated, arriving, breaking)
        for name, seated, arriving, breaking in [
            ("t10", 5, 0, False), ("t2", 3, 1, False), ("t1", 6, 0, False), ("t3", 2, 0, True)
        ]
    }  # fmt: skip
    restored = Balancer(6, counts, ["p9"], 4)
    restored.check_files()
    assert restored.spread() == 2  # 6 and 4 on paper; t3 is breaking up
    decisions = restored.boundary("t2", 3, 0)
    # p9 takes t2, the shortest; on paper t3's two players then fill t2 and t10: 6, 6, 6.
    assert decisions.moves == [("p9", "t2")]
    assert plan(restored.tables.values(), 6, 0).sends == {}
    restored.check_files()


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 3), st.booleans()), min_size=1, max_size=60
    ),
    seats=st.integers(3, 6),
    waiting=st.integers(0, 200),
)
def test_many_players_leaving_are_placed_as_one_at_a_time_would(
    rows: list[tuple[int, int, bool]], seats: int, waiting: int
) -> None:
    """Players leaving fill the shortest tables on paper by water filling (planning._fill):
    with many of them and many tables breaking, the plain version's one-at-a-time answers."""
    assert_plans_agree(rows, seats, waiting)


def test_tables_opened_out_of_order_are_renumbered_in_opening_order() -> None:
    """Ties go to the table opened first by name order (t2 before t10), whatever order
    open() was called in: a table opened out of that order renumbers them all."""
    b = Balancer(6)
    for name, seated in (("t10", 3), ("t2", 3), ("t1", 5)):
        b.open(name, seated)
        b.check_files()
    decisions = Decisions()
    b.waiting = ["p"]
    b.decide(decisions)
    assert decisions.moves == [("p", "t2")]  # t2 and t10 both seat 3: t2 opened first
