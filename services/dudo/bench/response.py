"""Best responses by search, where a round's tree is too large to read a bot at every
information set.

:func:`dudo.bots.solver.best_response_value` reads a strategy at every information set
of the round's tree. With two dice each that tree has 33 million public nodes and
about 700 million information sets, and a heuristic bot (the hard bot: about 0.1 ms a
move) cannot be asked at all of them. A best responder needs the bot only where the
bot's own play goes, though: this search walks the round depth first from its two
roots (either seat opens, one half each), the responder trying each of its moves, the
bot only the moves its policy gives some hand it may still hold (the policy asked once
per hand at each such node, from that seat's view as the engine shows it). Along the
way it carries the bot's reach per hand (prior times the probability of its moves so
far), so every terminal is one matrix product, and at each of its own nodes the
responder takes, per hand, the best move (it knows its hand and the bids, never the
bot's). A call that costs a die the loser can spare goes on as a smaller round, worth
what ``leaf`` says (as in the tree: :data:`dudo.bots.tree.Leaf`).

Two limits bound the time, and with either the answer stays a **lower bound** on what a
best responder wins: a responder kept from some moves can only win less, and a pruned
branch is counted as lost.

- ``raises``: the responder bids at most this many times in a round; after that it
  can only call (Dudo, or Calza where the rules have it).
- ``prune``: a bot move whose reach (summed over the bot's hands, prior included) is
  below this is not searched; it counts as lost (the payoff's floor, -1), and the same
  search with it counted as won (+1) gives ``pruning_gap``, the most the pruning
  can have cost.

With neither (``raises=None``, ``prune=0``) it is the exact best response.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bots import Leaf, hands_of, payoffs
from ..engine import (
    Action,
    Calza,
    Direction,
    Dudo,
    Rules,
    State,
    action_from_dict,
    new_game,
    public_view,
    seat_view,
)

# A bot's move as probabilities, from a seat's view ({"seat", "game"}), as
# :func:`dudo.bots.hard.distribution` gives it.
Choose = Callable[[dict[str, Any]], list[tuple[dict[str, Any], float]]]

RESPONDER, BOT = 0, 1  # engine seats in the searched round


@dataclass
class Response:
    """What the search found: the responder's value per game (the opener drawn), per
    opener, and what it cost."""

    value: float  # the responder's expected payoff; a lower bound with either limit
    responder_opens: float
    bot_opens: float
    # How much more each might be without the pruning (0 without), per opener as above
    # and on average; from game_response, the pruning of the rounds after it included.
    opener_gaps: tuple[float, float]
    pruning_gap: float
    bot_nodes: int  # where the bot was asked
    policy_calls: int
    seconds: float


@dataclass
class _Search:
    rules: Rules
    counts: tuple[int, int]  # (the responder's dice, the bot's)
    choose: Choose
    raises: int | None
    prune: float
    leaf: Leaf | None
    palifico: bool = False
    bot_nodes: int = 0
    policy_calls: int = 0

    def __post_init__(self) -> None:
        dealt = [hands_of(c) for c in self.counts]
        self.hands = [h for h, _ in dealt]
        self.prior = [p for _, p in dealt]
        self.terminal: dict[tuple[Any, ...], np.ndarray] = {}

    def start(self, opener: int) -> State:
        return new_game(self.rules, 2, b"\0" * 32, opener=opener, dice_counts=list(self.counts),
                        palifico=self.palifico)  # fmt: skip

    def after(self, opener: int, moves: list[tuple[int, Action]]) -> State:
        state = self.start(opener)
        for seat, action in moves:
            state.apply(seat, action)
        return state

    def called(self, state: State, caller: int, call: Action, reach: np.ndarray) -> np.ndarray:
        """The responder's value per hand of ``caller``'s call, against the bot's
        ``reach`` per hand: one payoff matrix per (standing bid, caller, call)."""
        key = (state.bids[-1], caller, type(call))
        if key not in self.terminal:
            n = max(len(h) for h in self.hands)
            full = payoffs(state, caller, call, self.hands, n, self.leaf)
            self.terminal[key] = full[: len(self.hands[0]), : len(self.hands[1])]
        return self.terminal[key] @ reach

    def value(
        self, opener: int, moves: list[tuple[int, Action]], reach: np.ndarray, left: int | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The responder's (pessimistic, optimistic) value per hand at this node."""
        state = self.after(opener, moves)
        turn = state.turn
        assert turn is not None
        actions = state.legal_actions(turn)
        if actions and isinstance(actions[0], Direction):  # heads-up: the same round
            return self.value(opener, [*moves, (turn, actions[0])], reach, left)
        if turn == RESPONDER:
            return self.respond(state, opener, moves, actions, reach, left)
        return self.bot(state, opener, moves, reach, left)

    def respond(
        self, state: State, opener: int, moves: list[tuple[int, Action]],
        actions: list[Action], reach: np.ndarray, left: int | None,
    ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        low = high = None
        for action in actions:
            if isinstance(action, Dudo | Calza):
                v = self.called(state, RESPONDER, action, reach)
                lo, hi = v, v
            elif left is None or left > 0:
                lo, hi = self.value(
                    opener, [*moves, (RESPONDER, action)], reach, None if left is None else left - 1
                )
            else:
                continue
            low = lo if low is None else np.maximum(low, lo)
            high = hi if high is None else np.maximum(high, hi)
        assert low is not None and high is not None, "an opening with no bid left"
        return low, high

    def bot(
        self, state: State, opener: int, moves: list[tuple[int, Action]], reach: np.ndarray,
        left: int | None,
    ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        self.bot_nodes += 1
        public = public_view(state)
        mine = len(self.hands[BOT])
        moves_of: dict[Action, np.ndarray] = {}
        for h, hand in enumerate(self.hands[BOT]):
            if reach[h] <= 0:
                continue
            state.hands = [(1,) * self.counts[RESPONDER], hand]  # the bot's view shows its own
            view = {"seat": BOT, "game": seat_view(state, BOT, public)}
            self.policy_calls += 1
            for said, p in self.choose(view):
                action = action_from_dict(said)
                moves_of.setdefault(action, np.zeros(mine))[h] += p
        low = np.zeros(len(self.hands[RESPONDER]))
        high = low.copy()
        for action, probability in moves_of.items():
            through = reach * probability
            mass = float(through.sum())
            if mass <= 0:
                continue
            if mass < self.prune:
                low -= mass
                high += mass
            elif isinstance(action, Dudo | Calza):
                v = self.called(state, BOT, action, through)
                low += v
                high += v
            else:
                lo, hi = self.value(opener, [*moves, (BOT, action)], through, left)
                low += lo
                high += hi
        return low, high


def best_response(
    rules: Rules, counts: tuple[int, int], choose: Choose, *, raises: int | None = None,
    prune: float = 0.0, leaf: Leaf | None = None, palifico: bool = False,
) -> Response:  # fmt: skip
    """What a best responder holding ``counts[0]`` dice wins against ``choose`` holding
    ``counts[1]``, in one heads-up round whose opener is drawn (the module docstring
    says how, and when it is a lower bound). ``leaf``: what a round that goes on is
    worth to the responder (engine seat 0), as :func:`dudo.bots.tree.build` takes it."""
    if raises is not None and raises < 1:
        raise ValueError("the responder must be let bid at least once: it may open")
    started = time.perf_counter()
    search = _Search(rules, counts, choose, raises, prune, leaf, palifico)
    found = []
    for opener in (RESPONDER, BOT):
        low, high = search.value(opener, [], search.prior[BOT].copy(), raises)
        weights = search.prior[RESPONDER]
        found.append((float(weights @ low), float(weights @ high)))
    (opens_low, opens_high), (other_low, other_high) = found
    gaps = (opens_high - opens_low, other_high - other_low)
    return Response(
        value=(opens_low + other_low) / 2,
        responder_opens=opens_low,
        bot_opens=other_low,
        opener_gaps=gaps,
        pruning_gap=sum(gaps) / 2,
        bot_nodes=search.bot_nodes,
        policy_calls=search.policy_calls,
        seconds=time.perf_counter() - started,
    )


def game_response(
    rules: Rules, counts: tuple[int, int], choose: Choose, *, raises: int | None = None,
    prune: float = 0.0, palifico: bool = False,
    found: dict[tuple[tuple[int, int], bool], Response] | None = None,
) -> dict[tuple[tuple[int, int], bool], Response]:  # fmt: skip
    """A best responder against ``choose`` for the rest of a heads-up game from these
    dice (the responder's, the bot's): each round searched by :func:`best_response`, a
    round that goes on worth what the best responder wins in the next one, against the
    same bot (searched first: smaller rounds are fresh deals, so the game's best
    response is each round's, given the next round's values). Every round searched, by
    (dice, palifico); ``found[(counts, palifico)]`` is the whole game's. A round's
    pruning gap includes the largest of the rounds after it (a value changes by no
    more than the leaves under it)."""
    found = {} if found is None else found
    key = (counts, palifico)
    if key in found:
        return found
    after_gap = 0.0

    def leaf(after: tuple[int, int], opener: int, next_palifico: bool) -> float:
        nonlocal after_gap
        game_response(rules, after, choose, raises=raises, prune=prune,
                      palifico=next_palifico, found=found)  # fmt: skip
        smaller = found[(after, next_palifico)]
        after_gap = max(after_gap, *smaller.opener_gaps)
        return smaller.responder_opens if opener == RESPONDER else smaller.bot_opens

    response = best_response(rules, counts, choose, raises=raises, prune=prune, leaf=leaf,
                             palifico=palifico)  # fmt: skip
    response.opener_gaps = (response.opener_gaps[0] + after_gap,
                            response.opener_gaps[1] + after_gap)  # fmt: skip
    response.pruning_gap = sum(response.opener_gaps) / 2
    found[key] = response
    return found


__all__ = ["BOT", "RESPONDER", "Choose", "Response", "best_response", "game_response"]
