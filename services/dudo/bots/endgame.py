"""Heads-up endgames played exactly: the one-die-each round, solved for the table's rules.

When two players are left with one die each and the rules make that round the last
(no Calza that could win a die back), the hard bot plays the equilibrium of that
round (:mod:`dudo.bots.solver`: the tree from the engine, CFR+), for whatever rules
the table has: solved once per distinct set of rules (and palifico or not), then
looked up. The tree is the table's own round: its start count (a player at one die
has lost dice, which may allow a Calza) and, when the rules have it, the palifico
round that follows a drop to one die; rounds where a Calza could win a die back do
not decide the game, and there the heuristic plays. A solve takes
a few seconds, so it runs in the background (the bot plays its heuristic until the
answer is there) unless the caller waits for it (the arena, the benchmark); the bot
service starts one for each preset as it starts. A solve runs in a process of its own,
one at a time: in a thread it would share the interpreter's lock with the bot that
plays meanwhile, and each of its many small numpy steps would wait for it: decisions
slowed several times over, and so did the solves
(docs/benchmarks.md, "Measurements behind the code").

Only what the seat's view shows is used: the dice counts, the opener, the bids of
this round and its own die.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
import structlog

from ..engine import PRESETS, Rules, preset
from . import solver

log = structlog.get_logger("dudo.bots")

ITERATIONS = 400  # CFR+ iterations: NashConv ~1e-4 for one die each (docs/bots.md)
KEEP = 16  # rule sets remembered
RETRY_AFTER_S = 60.0  # a solve that failed (its process killed, say) is tried again then
# What changes the game of a round; the rest (clocks, stakes, seats) does not.
GAME_FIELDS = (
    "wild_ones", "opening_ones", "calza", "calza_needs_lost_die", "palifico",
    "palifico_wild_ones", "start_dice", "max_dice", "loser_chooses_direction",
)  # fmt: skip


@dataclass
class Solved:
    """One solved round: its equilibrium and what is needed to read it (the hands, each
    node's edges and their actions), where each history sits; small enough to pass
    from the solving process."""

    hands: list[list[tuple[int, ...]]]  # per seat of the tree
    node_first: np.ndarray
    node_edges: np.ndarray
    edge_action: list[Any]
    strategy: np.ndarray
    nodes: dict[tuple[Any, ...], int]  # (phase, bids with seats relative to the opener)

    def distribution(self, game: dict[str, Any], seat: int) -> list[tuple[dict[str, Any], float]]:
        """The equilibrium's move for ``seat``'s view of this round (seats 0 and 1 of the
        tree are the opener and the other)."""
        opener = game["opener"]
        rel = {opener: 0, _other(game, opener): 1}
        key = (game["phase"], tuple((rel[s], q, f) for s, q, f in game["bids"]))
        node = self.nodes.get(key)
        if node is None:
            return []
        hand = tuple(sorted(game["dice"]))
        tree_seat = rel[seat]
        h = self.hands[tree_seat].index(hand)
        first, size = int(self.node_first[node]), int(self.node_edges[node])
        out = []
        for e in range(first, first + size):
            p = float(self.strategy[e, h])
            if p > 1e-6:
                out.append((_action(self.edge_action[e]), p))
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


def _action(action: Any) -> dict[str, Any]:
    return action.to_dict()


class Endgames:
    """Solved rounds by rules: looked up at once, solved in the background (or waited for)."""

    def __init__(self) -> None:
        # Wait for a solve rather than play the heuristic meanwhile (the arena and the
        # benchmark: their results must not depend on timing).
        self.wait = False
        self._solved: OrderedDict[tuple[Any, ...], Solved | None] = OrderedDict()
        self._running: dict[tuple[Any, ...], threading.Event] = {}
        self._lock = threading.Lock()
        self._one_at_a_time = threading.Lock()  # solves queue: one core at most
        self._failed: dict[tuple[Any, ...], float] = {}  # key -> when to try again
        self.solving: set[multiprocessing.process.BaseProcess] = set()  # the child at work
        os.register_at_fork(after_in_child=self._forgotten_in_a_fork)

    def _forgotten_in_a_fork(self) -> None:
        """A forked child (the arena's pool) has none of the solving threads: the solves
        they were running never finish there, and their locks may be held forever."""
        self._running = {}
        self._lock = threading.Lock()
        self._one_at_a_time = threading.Lock()
        self.solving = set()  # its parent's children, not its own

    @staticmethod
    def applies(game: dict[str, Any]) -> bool:
        """Is this view's round the one-die-each heads-up round?"""
        counts = [c for c in game["dice_counts"] if c > 0]
        return counts == [1, 1] and game["phase"] != "over"

    def get(
        self, rules: dict[str, Any], *, palifico: bool = False, wait: bool | None = None
    ) -> Solved | None:
        """The solved round for these rules (a palifico round or not): None while it is
        being solved (started now if nobody asked before), or when one round does not
        decide the game there."""
        palifico = bool(palifico and rules.get("palifico"))
        key = (*(rules.get(name) for name in GAME_FIELDS), palifico)
        with self._lock:
            if key in self._solved:
                self._solved.move_to_end(key)
                return self._solved[key]
            if time.monotonic() < self._failed.get(key, 0.0):
                return None  # the heuristic plays until it is tried again
            running = self._running.get(key)
            if running is None:
                running = self._running[key] = threading.Event()
                threading.Thread(
                    target=self._solve,
                    args=(key, rules, palifico, running),
                    name="endgame",
                    daemon=True,
                ).start()
        if self.wait if wait is None else wait:
            running.wait()
            with self._lock:
                return self._solved.get(key)
        return None

    def _solve(
        self, key: tuple[Any, ...], rules: dict[str, Any], palifico: bool, done: threading.Event
    ) -> None:
        solved: Solved | None = None
        failed = False
        try:
            with self._one_at_a_time:
                # A process of pool workers (the arena's) may not start children: there
                # the caller waits for the answer anyway, so it is solved here.
                if multiprocessing.current_process().daemon:
                    solved, outcome = solve_round(rules, palifico)
                else:
                    solved, outcome = _in_a_process(rules, palifico, self.solving)
            fields = _game_fields(rules)
            if solved is None:  # one round does not decide the game under these rules
                log.info("endgame_unsolvable", rules=fields, palifico=palifico, why=outcome)
            else:
                log.info("endgame_solved", rules=fields, palifico=palifico, nash_conv=outcome)
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
                    while len(self._solved) > KEEP:
                        self._solved.popitem(last=False)
                self._running.pop(key, None)
            done.set()

    def warm(self) -> None:
        """Start solving each preset's round (the bot service does, as it starts)."""
        from ..engine import rules_dict

        for name in PRESETS:
            rules = rules_dict(preset(name))
            self.get(rules)
            if rules["palifico"]:
                self.get(rules, palifico=True)


def _game_fields(rules: dict[str, Any]) -> dict[str, Any]:
    """The rules of ``rules`` that change the round (what a solve is keyed by)."""
    return {name: rules[name] for name in GAME_FIELDS if name in rules}


def solve_round(rules: dict[str, Any], palifico: bool) -> tuple[Solved | None, Any]:
    """Solve the one-die-each round of these rules: (the solved round, its NashConv), or
    (None, why) when one round does not decide the game under them."""
    game_rules = Rules.from_dict({"preset": rules.get("preset", "classic"), **_game_fields(rules)})
    try:
        tree = solver.build(game_rules, (1, 1), palifico=palifico)
    except ValueError as exc:
        return None, str(exc)
    strategy = solver.solve(tree, ITERATIONS)
    nodes = {}
    for index, state in enumerate(tree.states):
        if state.opener == 0:  # the opener is seat 0 of the tree; its twin mirrors
            nodes[(state.phase, tuple(state.bids))] = index
    solved = Solved(
        tree.hands, tree.node_first, tree.node_edges, tree.edge_action, strategy, nodes
    )
    return solved, solver.nash_conv(tree, strategy)


def _in_a_process(
    rules: dict[str, Any], palifico: bool, solving: set[Any]
) -> tuple[Solved | None, Any]:
    """:func:`solve_round` in a child process (spawned: this one has threads), its
    answer sent back through a pipe; ``solving`` holds the child while it runs. A child
    that dies raises EOFError here."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(
        target=_child, args=(sender, rules, palifico), name="dudo-endgame", daemon=True
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


def _child(sender: Any, rules: dict[str, Any], palifico: bool) -> None:
    try:
        sender.send((True, solve_round(rules, palifico)))
    except Exception as exc:  # the parent logs it
        sender.send((False, repr(exc)))
    finally:
        sender.close()


ENDGAMES = Endgames()
