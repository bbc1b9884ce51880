"""Heads-up Dudo rounds solved exactly: CFR+, best responses, exploitability, on the
public tree of a round built from the engine (:mod:`dudo.bots.tree`).

- **CFR+** (regret matching+, alternating updates, linear averaging), vectorized
  over hands and over every edge of one depth at a time (numpy): each iteration
  is a handful of array operations per depth, and one matrix product per kind of
  terminal.
- **Best responses** to any strategy, exactly (no sampling): the best responder
  knows its hand and the bids, never the other hand. A strategy's
  *exploitability* is what a best responder gains per game against it, over what
  the equilibrium would give it, on average over the two seats (half the
  *NashConv*, the sum of both seats' gains, 0 at an equilibrium). With one die each
  the seats are symmetric once the opener is drawn and the game's value is 0: then
  it is simply what a best responder wins.

One die each, one round decides the game (4,096 bid sequences per opener). With two
dice against one (262,144 per opener) the round where the two-dice seat loses a die
goes on as the one-die round, valued by that round's own equilibrium (the tree's
``leaf``: :mod:`dudo.bots.endgame` solves the smaller round first).

A strategy is an array: for every edge (a node and one of its actions) and every
hand of the seat acting there, the probability of that action. :func:`policy_strategy`
builds it from any bot policy (which sees exactly a seat's view).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine import Bid, seat_view
from .tree import Leaf, Tree, build, hands_of

__all__ = [
    "Leaf", "Policy", "Tree", "best_response_roots", "best_response_value", "build",
    "exploitability", "hands_of", "nash_conv", "normalize", "policy_strategy", "root_values",
    "solve", "uniform", "value",
]  # fmt: skip

Policy = Callable[[dict[str, Any]], dict[Any, float]]  # view -> action dict -> probability


# -- strategies --------------------------------------------------------------------------


def uniform(tree: Tree) -> np.ndarray:
    return (1.0 / tree.node_edges[tree.edge_node])[:, None] * np.ones((tree.edges, tree.n))


def normalize(tree: Tree, weights: np.ndarray) -> np.ndarray:
    """Per node and hand, weights made probabilities (uniform where all are 0)."""
    return _probabilities(weights, tree.node_first, tree.node_edges)


def _probabilities(weights: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The edges' ``weights`` made probabilities per node (its edges from ``starts``, of
    ``sizes``) and hand; 1 / its edges where all are 0."""
    sums = np.add.reduceat(weights, starts, axis=0)  # (nodes, n)
    none = sums <= 0
    sums[none] = np.broadcast_to(sizes[:, None], sums.shape)[none]
    out = weights + np.repeat(none.astype(weights.dtype), sizes, axis=0)
    out /= np.repeat(sums, sizes, axis=0)
    return out


def _reach(tree: Tree, strategy: np.ndarray, seat: int) -> np.ndarray:
    """``seat``'s own reach probability at every node, per hand."""
    reach = np.ones((tree.nodes, tree.n), dtype=strategy.dtype)
    for block in tree.blocks:
        if block.kids is None:
            continue
        through = reach[block.inner_parent]
        if block.player == seat:
            through *= strategy[block.inner]
        reach[block.kids] = through
    return reach


def _values(
    tree: Tree, strategy: np.ndarray, other_reach: np.ndarray, seat: int, best: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Counterfactual values of ``seat`` (per hand) at every node and on every edge:
    against ``strategy`` for the other seat (whose reach is ``other_reach``); for
    ``seat`` itself, its own ``strategy``, or with ``best`` the best action in every
    information set."""
    other = 1 - seat
    node_v = np.empty((tree.nodes, tree.n), dtype=strategy.dtype)  # every row set below
    edge_v = np.empty((tree.edges, tree.n), dtype=strategy.dtype)
    term, kinds = tree.terminals
    # The other seat's reach at the terminal: through the edge if it made the call.
    at_term = other_reach[tree.edge_node[term]]
    called = tree.node_player[tree.edge_node[term]] == other
    at_term[called] *= strategy[term[called]]
    values = np.empty_like(at_term)
    for kind, part in kinds:  # the terminals of one kind share one payoff matrix
        u = tree.kind_u[kind].astype(strategy.dtype)
        values[part] = at_term[part] @ u.T if seat == 0 else -(at_term[part] @ u)
    edge_v[term] = values
    for block in reversed(tree.blocks):
        if block.kids is not None:
            edge_v[block.inner] = node_v[block.kids]
        here = edge_v[block.edges]
        if block.player != seat:
            node_v[block.nodes] = np.add.reduceat(here, block.starts, axis=0)
        elif best:
            node_v[block.nodes] = np.maximum.reduceat(here, block.starts, axis=0)
        else:
            mixed = here * strategy[block.edges]
            node_v[block.nodes] = np.add.reduceat(mixed, block.starts, axis=0)
    return node_v, edge_v


def solve(tree: Tree, iterations: int = 1000, dtype: Any = np.float64) -> np.ndarray:
    """CFR+: the average strategy after ``iterations`` (alternating updates, regrets
    floored at 0, the average weighted by iteration). ``dtype`` float32 halves the
    memory and the time of a large tree."""
    regrets = np.zeros((tree.edges, tree.n), dtype=dtype)
    average = np.zeros((tree.edges, tree.n), dtype=dtype)
    strategy = normalize(tree, regrets)
    for t in range(1, iterations + 1):
        for seat in (0, 1):
            other_reach = _reach(tree, strategy, 1 - seat)
            node_v, edge_v = _values(tree, strategy, other_reach, seat)
            del other_reach
            own_reach = _reach(tree, strategy, seat)
            for block in tree.blocks:
                if block.player != seat:
                    continue
                edges = block.edges
                gain = edge_v[edges] - np.repeat(node_v[block.nodes], block.sizes, axis=0)
                np.maximum(regrets[edges] + gain, 0.0, out=regrets[edges])
                reach = np.repeat(own_reach[block.nodes], block.sizes, axis=0)
                average[edges] += t * reach * strategy[edges]
                # Its new strategy, for the other seat's turn (nothing else changed).
                strategy[edges] = _probabilities(regrets[edges], block.starts, block.sizes)
    return normalize(tree, average)


def best_response_value(tree: Tree, strategy: np.ndarray, seat: int) -> float:
    """What ``seat`` wins per game, playing its best against ``strategy`` for the other
    seat (the chance of the opener and of the hands included)."""
    return sum(best_response_roots(tree, strategy, seat)) / 2


def best_response_roots(tree: Tree, strategy: np.ndarray, seat: int) -> list[float]:
    """What ``seat`` wins playing its best against ``strategy``, in the round each seat
    opens (``[opener 0, opener 1]``): what the round is worth to a best responder once
    its opener is known (a larger round's leaf values, against a bot that plays
    ``strategy`` in this one). Each root holds half the chance."""
    other_reach = _reach(tree, strategy, 1 - seat)
    node_v, _ = _values(tree, strategy, other_reach, seat, best=True)
    return [2.0 * float(node_v[root].sum()) for root in tree.roots]


def value(tree: Tree, strategy0: np.ndarray, strategy1: np.ndarray) -> float:
    """Seat 0's expected payoff when it plays ``strategy0`` and seat 1 ``strategy1``."""
    return sum(root_values(tree, _mixed(tree, strategy0, strategy1))) / 2


def _mixed(tree: Tree, strategy0: np.ndarray, strategy1: np.ndarray) -> np.ndarray:
    return np.where((tree.node_player[tree.edge_node] == 0)[:, None], strategy0, strategy1)


def root_values(tree: Tree, strategy: np.ndarray) -> list[float]:
    """Seat 0's expected payoff in the round each seat opens (``[opener 0, opener 1]``)
    when both seats play ``strategy``: what the round is worth once its opener is known
    (a larger round's leaf values). Each root holds half the chance."""
    node_v, _ = _values(tree, strategy, _reach(tree, strategy, 1), 0)
    return [2.0 * float(node_v[root].sum()) for root in tree.roots]


def nash_conv(tree: Tree, strategy: np.ndarray) -> float:
    """Both seats' best-response gains against ``strategy``: 0 at an equilibrium."""
    return best_response_value(tree, strategy, 0) + best_response_value(tree, strategy, 1)


def exploitability(tree: Tree, strategy: np.ndarray) -> float:
    """What a best responder gains per game against ``strategy`` over the game's value,
    on average over the seat it plays: half the NashConv. With one die each (the game
    fair) it is what a best responder wins."""
    return nash_conv(tree, strategy) / 2


# -- bots as strategies ------------------------------------------------------------------


def policy_strategy(tree: Tree, policy: Policy) -> np.ndarray:
    """A bot's strategy in the tree: at every information set, the probabilities it
    gives each action, from the seat's view as the engine shows it (nothing else)."""
    strategy = np.zeros((tree.edges, tree.n))
    for node in range(tree.nodes):
        state, seat = tree.state(node), int(tree.node_player[node])
        first, size = int(tree.node_first[node]), int(tree.node_edges[node])
        index = {_key(tree.action(e)): e for e in range(first, first + size)}
        for h, hand in enumerate(tree.hands[seat]):
            dealt = copy.copy(state)
            dealt.hands = [hand if s == seat else state.hands[s] for s in (0, 1)]
            view = {"seat": seat, "game": seat_view(dealt, seat)}  # what a bot is given
            for action, p in policy(view).items():
                strategy[index[_key(action)], h] += p
    return strategy


def _key(action: Any) -> tuple[Any, ...]:
    if isinstance(action, Bid):
        return ("bid", action.quantity, action.face)
    if isinstance(action, dict):
        if action["type"] == "bid":
            return ("bid", action["quantity"], action["face"])
        return (action["type"],)
    return (type(action).__name__.lower(),)
