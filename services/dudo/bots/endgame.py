"""Heads-up endgames solved: one die each and two dice against one exactly, two dice each
in an abstraction, for the table's rules.

When two players are left with one die each and the rules make that round the last
(no Calza that could win a die back), the hard bot plays the equilibrium of that
round (:mod:`dudo.bots.solver`: the tree from the engine, CFR+), for whatever rules
the table has: solved once per distinct set of rules (and palifico or not), then
looked up. The tree is the table's own round: its start count (a player at one die
has lost dice, which may allow a Calza) and, when the rules have it, the palifico
round that follows a drop to one die; rounds where a Calza could win a die back do
not decide the game, and there the heuristic plays. With two dice against one the
round where the two-dice seat loses a die goes on as the one-die round, valued by that
round's equilibrium (:func:`round_tree`). Two dice each (33 M public nodes) is solved
in an abstraction where the bot's seat bids at most three times in a round and then
only calls (:data:`BIDS_MAX`; the other seat's whole game is in the tree), its lost die
valued by the round of two against one. A solve takes
a few seconds for one die each, a minute or more for two against one, several minutes
for two each, so it runs in the background (the bot plays its
heuristic until the answer is there) unless the caller waits for it (the arena, the
benchmark); the bot
service starts one for each preset as it starts. A solve runs in a process of its own,
one at a time: in a thread it would share the interpreter's lock with the bot that
plays meanwhile, and each of its many small numpy steps would wait for it: decisions
slowed several times over, and so did the solves
(docs/benchmarks.md, "Measurements behind the code").

Only what the seat's view shows is used: the dice counts, the opener, the bids of
this round and its own dice.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
import structlog

from ..engine import PLAY_OPTIONS, PRESETS, Bid, Rules, preset
from . import solver
from .tree import decode, walk

log = structlog.get_logger("dudo.bots")

# The rounds solved (the dice of the larger hand first), and CFR+ iterations for each:
# NashConv ~1e-4 for one die each; the others: docs/bots.md.
ROUNDS: tuple[tuple[int, int], ...] = ((1, 1), (2, 1), (2, 2))
ITERATIONS = {(1, 1): 400, (2, 1): 100, (2, 2): 200}
# The larger rounds in float32: half the memory and time (a million edges x 21 hands).
DTYPE: dict[tuple[int, int], Any] = {(1, 1): np.float64, (2, 1): np.float32, (2, 2): np.float32}
# Solved rounds remembered, per size: two against one is ~110 MB a rule set, so a few.
KEEP = {(1, 1): 16, (2, 1): 4, (2, 2): 4}
# Two dice each is solved in an abstraction (docs/bots.md, "Two dice each"): the bot's
# seat (the tree's seat 0) bids at most 3 times in the round, then only calls; so the
# other seat can bid at most 4 times, its whole game (719,716 public nodes, not 33 M).
BIDS_MAX: dict[tuple[int, int], tuple[int, int]] = {(2, 2): (3, 4)}
# Solves waiting for their turn, at most: tables with ever new rules (anyone may make
# them) would otherwise keep a core busy for hours; past it the heuristic plays, and the
# solve is asked for again at the next such round. The presets' solves, asked for at
# launch (:meth:`Endgames.warm`), are a known few and do not count.
WAITING_MAX = 8
RETRY_AFTER_S = 60.0  # a solve that failed (its process killed, say) is tried again then
# What changes the game of a round (the rules' options declared ``play``); the rest
# (clocks, stakes, seats) does not.
GAME_FIELDS = PLAY_OPTIONS


@dataclass
class Solved:
    """One solved round: its equilibrium and what is needed to read it (the hands, each
    node's edges and their actions), small enough to pass from the solving process.
    Tree seat 0 holds ``counts[0]`` dice; with equal counts it is the opener."""

    counts: tuple[int, int]
    hands: list[list[tuple[int, ...]]]  # per seat of the tree
    roots: list[int]  # per opener
    node_player: np.ndarray
    node_first: np.ndarray
    node_edges: np.ndarray
    edge_code: np.ndarray
    edge_child: np.ndarray
    strategy: np.ndarray  # float32: half the memory, and still 1e-7 of a probability
    # The tree's seat 0 is the seat that asks (its bids capped, BIDS_MAX), whoever opens.
    asker_first: bool = False

    @classmethod
    def of(cls, tree: solver.Tree, strategy: np.ndarray) -> Solved:
        return cls(
            tree.counts, tree.hands, tree.roots, tree.node_player, tree.node_first,
            tree.node_edges, tree.edge_code, tree.edge_child, strategy.astype(np.float32),
            asker_first=tree.counts in BIDS_MAX,
        )  # fmt: skip

    def distribution(self, game: dict[str, Any], seat: int) -> list[tuple[dict[str, Any], float]]:
        """The equilibrium's move for ``seat``'s view of this round."""
        opener = game["opener"]
        other = _other(game, opener)
        if self.asker_first:
            rel = {seat: 0, _other(game, seat): 1}
        elif self.counts[0] == self.counts[1]:
            rel = {opener: 0, other: 1}
        else:  # the tree's seats are by dice
            rel = {s: self.counts.index(game["dice_counts"][s]) for s in (opener, other)}
        moves = [Bid(quantity, face) for _, quantity, face in game["bids"]]
        node = walk(self.node_first, self.node_edges, self.edge_code, self.edge_child,
                    self.roots[rel[opener]], moves)  # fmt: skip
        tree_seat = rel[seat]
        if node is None or int(self.node_player[node]) != tree_seat:
            return []
        h = self.hands[tree_seat].index(tuple(sorted(game["dice"])))
        first, size = int(self.node_first[node]), int(self.node_edges[node])
        out = []
        for e in range(first, first + size):
            p = float(self.strategy[e, h])
            if p > 1e-6:
                out.append((decode(int(self.edge_code[e])).to_dict(), p))
        if not all(_allowed(action, game["legal"]) for action, _ in out):
            # Not this round after all (a rule the key missed): never an illegal move.
            log.warning("endgame_mismatch", bids=game["bids"], phase=game["phase"])
            return []
        total = sum(p for _, p in out) or 1.0
        return [(a, p / total) for a, p in out]


def _allowed(action: dict[str, Any], legal: dict[str, Any]) -> bool:
    if action["type"] == "bid":
        floor = legal["bid"][action["face"] - 1]
        return floor is not None and floor <= action["quantity"] <= legal["max_quantity"]
    return bool(legal.get(action["type"]))


def _other(game: dict[str, Any], opener: int) -> int:
    return next(s for s, c in enumerate(game["dice_counts"]) if c > 0 and s != opener)


class Endgames:
    """Solved rounds by rules: looked up at once, solved in the background (or waited for)."""

    def __init__(self, iterations: dict[tuple[int, int], int] | None = None) -> None:
        self.iterations = {**ITERATIONS, **(iterations or {})}  # CFR+ iterations per size
        # Wait for a solve rather than play the heuristic meanwhile (the arena and the
        # benchmark: their results must not depend on timing).
        self.wait = False
        self._solved: OrderedDict[tuple[Any, ...], Solved | None] = OrderedDict()
        self._running: dict[tuple[Any, ...], threading.Event] = {}
        self._presets: set[tuple[Any, ...]] = set()  # running solves warm() asked for
        self.warm_asked = self.warm_done = 0  # the presets' solves: asked at launch, done
        self._warm_started = 0.0
        self._lock = threading.Lock()
        # Solves queue, one core at most, in the order they were asked for (a lock is not
        # fair: its waiters take it in any order): a ticket each, served in turn.
        self._turn = threading.Condition()
        self._tickets = itertools.count()
        self._serving = 0
        self._failed: dict[tuple[Any, ...], float] = {}  # key -> when to try again
        self.solving: set[multiprocessing.process.BaseProcess] = set()  # the child at work
        os.register_at_fork(after_in_child=self._forgotten_in_a_fork)

    def _forgotten_in_a_fork(self) -> None:
        """A forked child (the arena's pool) has none of the solving threads: the solves
        they were running never finish there, and their locks may be held forever."""
        self._running = {}
        self._presets = set()
        self._lock = threading.Lock()
        self._turn = threading.Condition()
        self._tickets = itertools.count()
        self._serving = 0
        self.solving = set()  # its parent's children, not its own

    def busy(self) -> bool:
        """Is a solve under way (or waiting for its turn)?"""
        with self._lock:
            return bool(self._running)

    @staticmethod
    def applies(game: dict[str, Any]) -> tuple[int, int] | None:
        """The dice of this view's round if it is a heads-up round we solve (one die
        each, two against one or two each: :data:`ROUNDS`), else None."""
        counts = tuple(sorted((c for c in game["dice_counts"] if c > 0), reverse=True))
        return counts if counts in ROUNDS and game["phase"] != "over" else None  # type: ignore[return-value]

    def get(
        self, rules: dict[str, Any], *, palifico: bool = False, wait: bool | None = None,
        counts: tuple[int, int] = (1, 1), bounded: bool = True,
    ) -> Solved | None:  # fmt: skip
        """The solved round with these dice for these rules (a palifico round or not):
        None while it is being solved (started now if nobody asked before), or when
        the game does not come down to rounds we can solve there. ``bounded`` False: a
        preset's, queued whatever else waits (:data:`WAITING_MAX`)."""
        palifico = bool(palifico and rules.get("palifico"))
        key = (*(rules.get(name) for name in GAME_FIELDS), palifico, counts)
        with self._lock:
            if key in self._solved:
                self._solved.move_to_end(key)
                return self._solved[key]
            if time.monotonic() < self._failed.get(key, 0.0):
                return None  # the heuristic plays until it is tried again
            running = self._running.get(key)
            if running is None:
                if bounded and len(self._running) - len(self._presets) >= WAITING_MAX:
                    return None
                if not bounded:
                    self._presets.add(key)
                running = self._running[key] = threading.Event()
                threading.Thread(
                    target=self._solve,
                    args=(key, rules, palifico, counts, running, next(self._tickets)),
                    name="endgame",
                    daemon=True,
                ).start()
        if self.wait if wait is None else wait:
            running.wait()
            with self._lock:
                return self._solved.get(key)
        return None

    def _solve(
        self, key: tuple[Any, ...], rules: dict[str, Any], palifico: bool,
        counts: tuple[int, int], done: threading.Event, ticket: int,
    ) -> None:  # fmt: skip
        solved: Solved | None = None
        failed = False
        with self._turn:
            self._turn.wait_for(lambda: self._serving == ticket)
        try:
            # A process of pool workers (the arena's) may not start children: there
            # the caller waits for the answer anyway, so it is solved here.
            started = time.monotonic()
            if multiprocessing.current_process().daemon:
                solved, outcome = solve_round(rules, palifico, counts, self.iterations)
            else:
                solved, outcome = _in_a_process(
                    rules, palifico, counts, self.iterations, self.solving
                )
            where = {"rules": _game_fields(rules), "palifico": palifico, "dice": list(counts)}
            if solved is None:  # one round does not decide the game under these rules
                log.info("endgame_unsolvable", **where, why=outcome)
            else:
                seconds = round(time.monotonic() - started, 1)
                log.info("endgame_solved", **where, nash_conv=outcome, seconds=seconds)
        except Exception:
            log.exception("endgame_failed", retry_s=RETRY_AFTER_S)
            failed = True
        finally:
            with self._lock:
                if failed:
                    self._failed[key] = time.monotonic() + RETRY_AFTER_S
                else:
                    self._failed.pop(key, None)
                    self._solved[key] = solved
                    size = [k for k in self._solved if k[-1] == counts]
                    for old in size[: max(0, len(size) - KEEP[counts])]:  # the oldest
                        del self._solved[old]
                self._running.pop(key, None)
                if key in self._presets:
                    self._presets.discard(key)
                    self._warm_progress()
            with self._turn:  # the next in the queue (after this one is kept: in order)
                self._serving += 1
                self._turn.notify_all()
            done.set()

    def warm(self) -> int:
        """Start solving each preset's round (the bot service does, as it starts), and
        say so: minutes of a core and up to ~1 GB of a child process that an operator
        should not have to guess at (issue 53, item 21). How many solves were asked."""
        from ..engine import rules_dict

        every = [rules_dict(preset(name)) for name in PRESETS]
        asked = len(ROUNDS) * sum(2 if rules.get("palifico") else 1 for rules in every)
        with self._lock:  # counted before any starts: a quick one may end meanwhile
            self.warm_asked += asked
        self._warm_started = time.monotonic()
        log.info(
            "endgame_solves_started", solves=asked,
            note="the presets' heads-up endgames, one at a time in a child process: a few "
            "minutes of one core and up to ~1 GB; the hard bot plays its heuristic in such "
            "a round until its solve is done (--no-endgame-solves skips them)",
        )  # fmt: skip
        for counts in ROUNDS:  # the small rounds first: the larger ones stand on them
            for rules in every:
                self.every_round(rules, counts=(counts,), bounded=False)
        return asked

    def _warm_progress(self) -> None:
        """One of the presets' solves ended (under the lock): progress, and the end."""
        self.warm_done += 1
        log.info("endgame_solves_progress", done=self.warm_done, of=self.warm_asked)
        if self.warm_done == self.warm_asked:
            seconds = round(time.monotonic() - self._warm_started, 1)
            log.info("endgame_solves_done", solves=self.warm_done, seconds=seconds)

    def every_round(
        self, rules: dict[str, Any], *, counts: tuple[tuple[int, int], ...] = ROUNDS,
        wait: bool = False, bounded: bool = True,
    ) -> None:  # fmt: skip
        """Ask for every round solved for these rules (palifico or not), smallest first:
        waiting for each, a process about to fork a pool (the arena) hands them down."""
        for size in counts:
            for palifico in (False, True) if rules.get("palifico") else (False,):
                self.get(rules, palifico=palifico, counts=size, wait=wait, bounded=bounded)


def _game_fields(rules: dict[str, Any]) -> dict[str, Any]:
    """The rules of ``rules`` that change the round (what a solve is keyed by)."""
    return {name: rules[name] for name in GAME_FIELDS if name in rules}


def solve_round(
    rules: dict[str, Any], palifico: bool, counts: tuple[int, int] = (1, 1),
    iterations: dict[tuple[int, int], int] | None = None,
) -> tuple[Solved | None, Any]:  # fmt: skip
    """Solve the heads-up round with these dice under these rules: (the solved round,
    its NashConv), or (None, why) when the game does not come down to rounds we solve.
    A larger round: the smaller rounds it may lead to are solved first, and their
    equilibrium values are its leaves (two dice each: the NashConv is the abstraction's,
    :data:`BIDS_MAX`)."""
    game_rules = Rules.from_dict({"preset": rules.get("preset", "classic"), **_game_fields(rules)})
    iterations = {**ITERATIONS, **(iterations or {})}
    try:
        tree = round_tree(game_rules, counts, palifico, iterations)
    except ValueError as exc:
        return None, str(exc)
    strategy = solver.solve(tree, iterations[counts], dtype=DTYPE[counts])
    return Solved.of(tree, strategy), solver.nash_conv(tree, strategy)


def round_tree(
    rules: Rules, counts: tuple[int, int], palifico: bool, iterations: dict[tuple[int, int], int]
) -> solver.Tree:
    """The round's tree; a round that may go on gets the smaller rounds' values: each
    solved first (here, again: a child process starts from nothing), its equilibrium's
    value for whoever opens it."""
    if counts == (1, 1):
        return solver.build(rules, counts, palifico=palifico)
    values: dict[tuple[tuple[int, int], bool], list[float]] = {}

    def leaf(after: tuple[int, int], opener: int, next_palifico: bool) -> float:
        size = (max(after), min(after))  # the smaller tree's seat 0 holds more dice
        if size not in ROUNDS or size == counts:
            raise ValueError(f"no solved round for dice {after}")
        if (size, next_palifico) not in values:
            smaller = round_tree(rules, size, next_palifico, iterations)
            strategy = solver.solve(smaller, iterations[size], dtype=DTYPE[size])
            values[(size, next_palifico)] = solver.root_values(smaller, strategy.astype(float))
            del smaller, strategy
        value = values[(size, next_palifico)]
        # Seat 0 here is the smaller tree's seat 0 when it keeps more dice (or as many).
        return value[opener] if after == size else -value[1 - opener]

    return solver.build(rules, counts, palifico=palifico, leaf=leaf, bids_max=BIDS_MAX.get(counts))


def _in_a_process(
    rules: dict[str, Any], palifico: bool, counts: tuple[int, int],
    iterations: dict[tuple[int, int], int], solving: set[Any],
) -> tuple[Solved | None, Any]:  # fmt: skip
    """:func:`solve_round` in a child process (spawned: this one has threads), its
    answer sent back through a pipe; ``solving`` holds the child while it runs. A child
    that dies raises EOFError here."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(
        target=_child, args=(sender, rules, palifico, counts, iterations), name="dudo-endgame",
        daemon=True,
    )
    child.start()
    solving.add(child)
    sender.close()  # the child holds the other end: EOF when it is gone
    try:
        ok, answer = receiver.recv()
    finally:
        receiver.close()
        child.join(5)
        solving.discard(child)
    if not ok:
        raise RuntimeError(f"the endgame solver failed: {answer}")
    return answer


def _child(
    sender: Any, rules: dict[str, Any], palifico: bool, counts: tuple[int, int],
    iterations: dict[tuple[int, int], int],
) -> None:  # fmt: skip
    # A solve outlives nobody: its bot killed, it stops too. (The parent's id, from the
    # parent: a child still starting when its parent dies would read init's.)
    parent = multiprocessing.parent_process()

    def orphaned() -> None:
        if parent is not None:
            parent.join()  # its sentinel: ready when the parent is gone
        os._exit(1)

    threading.Thread(target=orphaned, name="orphaned", daemon=True).start()
    try:
        sender.send((True, solve_round(rules, palifico, counts, iterations)))
    except Exception as exc:  # the parent logs it
        sender.send((False, repr(exc)))
    finally:
        sender.close()


ENDGAMES = Endgames()
