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
service starts one for each preset as it starts.

Only what the seat's view shows is used: the dice counts, the opener, the bids of
this round and its own die.
"""

from __future__ import annotations

import threading
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
# What changes the game of a round; the rest (clocks, stakes, seats) does not.
GAME_FIELDS = (
    "wild_ones", "opening_ones", "calza", "calza_needs_lost_die", "palifico",
    "palifico_wild_ones", "start_dice", "max_dice", "loser_chooses_direction",
)  # fmt: skip


@dataclass
class Solved:
    """One solved round: the tree, its equilibrium, and where each history sits."""

    tree: solver.Tree
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
        h = self.tree.hands[tree_seat].index(hand)
        first, size = int(self.tree.node_first[node]), int(self.tree.node_edges[node])
        out = []
        for e in range(first, first + size):
            p = float(self.strategy[e, h])
            if p > 1e-6:
                out.append((_action(self.tree.edge_action[e]), p))
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
        try:
            fields = {name: rules[name] for name in GAME_FIELDS if name in rules}
            game_rules = Rules.from_dict({"preset": rules.get("preset", "classic"), **fields})
            tree = solver.build(game_rules, (1, 1), palifico=palifico)
            strategy = solver.solve(tree, ITERATIONS)
            nodes = {}
            for index, state in enumerate(tree.states):
                if state.opener == 0:  # the opener is seat 0 of the tree; its twin mirrors
                    nodes[(state.phase, tuple(state.bids))] = index
            solved = Solved(tree, strategy, nodes)
            log.info(
                "endgame_solved",
                rules=fields,
                palifico=palifico,
                nash_conv=solver.nash_conv(tree, strategy),
            )
        except ValueError as exc:  # one round does not decide the game under these rules
            log.info("endgame_unsolvable", why=str(exc))
            solved = None
        except Exception:
            log.exception("endgame_failed")
        finally:
            with self._lock:
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


ENDGAMES = Endgames()
