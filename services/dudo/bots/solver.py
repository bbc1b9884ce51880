"""Heads-up Dudo solved exactly where one round decides the game: the tree from the
engine, CFR+, best responses, exploitability.

The smallest games the engine plays — two players, one die each — end with the
first call: the loser's only die is gone. Their whole tree is small (the bids on
two dice rise through at most twelve values: 4,096 bid sequences per opener), so
it is built from the engine itself (:meth:`State.legal_actions`,
:meth:`State.apply`) and solved exactly:

- **The game.** The opener is drawn (one half each); each seat is dealt one hand
  of its dice (every multiset, with its multinomial weight). A *public node* is a
  bid sequence; at it, the seat to act knows its own hand and the sequence: one
  information set per (node, hand). Payoffs are +1 for the winner, -1 for the
  loser; a round that decides nothing (a right Calza where dice can be won back)
  is refused: not this kind of game.
- **CFR+** (regret matching+, alternating updates, linear averaging), vectorized
  over hands and over every edge of one depth at a time (numpy): each iteration
  is a handful of array operations per depth.
- **Best responses** to any strategy, exactly (no sampling): the best responder
  knows its hand and the bids, never the other hand. A strategy's
  *exploitability* is what a best responder wins per game against it (the game's
  value is 0: seats are symmetric once the opener is drawn); *NashConv* is the
  sum of both seats' best-response gains, 0 at an equilibrium.

A strategy is an array: for every edge (a node and one of its actions) and every
hand of the seat acting there, the probability of that action. :func:`policy_strategy`
builds it from any bot policy (which sees exactly a seat's view).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine import Rules, new_game, odds, seat_view
from ..engine.actions import Action, Bid, Calza, Dudo
from ..engine.bids import count_matching
from ..engine.state import State

Policy = Callable[[dict[str, Any]], dict[Any, float]]  # view -> action dict -> probability


def hands_of(dice: int) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every hand of ``dice`` dice (sorted faces) and its probability."""
    every = odds.hands(dice)
    return [hand for hand, _ in every], np.array([p for _, p in every])


@dataclass
class Tree:
    """The public tree of a heads-up round: nodes, their edges, terminal payoffs."""

    rules: Rules
    counts: tuple[int, int]
    hands: list[list[tuple[int, ...]]]  # per seat
    prior: list[np.ndarray]  # per seat
    n: int  # hands per seat, padded to the larger (a padded hand has weight 0)
    node_player: np.ndarray = field(repr=False)  # seat acting at each node
    node_depth: np.ndarray = field(repr=False)
    node_first: np.ndarray = field(repr=False)  # its first edge (edges are grouped by node)
    node_edges: np.ndarray = field(repr=False)  # how many
    edge_node: np.ndarray = field(repr=False)  # the node an edge leaves
    edge_child: np.ndarray = field(repr=False)  # the node it leads to, or -1: terminal
    edge_term: np.ndarray = field(repr=False)  # its terminal's index, or -1
    edge_action: list[Action] = field(repr=False)
    terminal_u: np.ndarray = field(repr=False)  # (terminals, n, n): seat 0's payoff x chance
    states: list[State] = field(repr=False)  # the engine's state at each node
    roots: list[int] = field(repr=False)

    @property
    def nodes(self) -> int:
        return len(self.node_player)

    @property
    def edges(self) -> int:
        return len(self.edge_node)


def build(rules: Rules, counts: tuple[int, int] = (1, 1), *, palifico: bool = False) -> Tree:
    """The tree of one round with these dice, every move as the engine allows it
    (``palifico``: the round is a palifico round, as the one after a drop to one die)."""
    hands: list[list[tuple[int, ...]]] = []
    priors: list[np.ndarray] = []
    for dice in counts:
        h, p = hands_of(dice)
        hands.append(h)
        priors.append(p)
    n = max(len(h) for h in hands)
    prior = [np.pad(p, (0, n - len(p))) for p in priors]
    chance = np.outer(prior[0], prior[1])
    players, depths, firsts, sizes, states = [], [], [], [], []
    e_node, e_child, e_term, e_action = [], [], [], []
    terminals: list[np.ndarray] = []
    roots = []

    def add(state: State, depth: int) -> int:
        index = len(players)
        players.append(state.turn)
        depths.append(depth)
        states.append(state)
        firsts.append(0)
        sizes.append(0)
        return index

    pending: list[tuple[int, State]] = []
    for opener in (0, 1):
        state = new_game(
            rules, 2, b"\0" * 32, opener=opener, dice_counts=list(counts), palifico=palifico
        )
        pending.append((add(state, 0), state))
        roots.append(len(players) - 1)
    while pending:  # breadth first: an edge's child comes after every edge of its depth
        next_level: list[tuple[int, State]] = []
        for index, state in pending:
            seat = state.turn
            assert seat is not None
            actions = state.legal_actions(seat)
            firsts[index], sizes[index] = len(e_node), len(actions)
            for action in actions:
                e_node.append(index)
                e_action.append(action)
                if isinstance(action, Dudo | Calza):
                    e_child.append(-1)
                    e_term.append(len(terminals))
                    terminals.append(0.5 * chance * _payoffs(state, seat, action, hands, n))
                else:
                    child = copy.deepcopy(state)
                    child.apply(seat, action)
                    e_child.append(add(child, depths[index] + 1))
                    e_term.append(-1)
                    next_level.append((e_child[-1], child))
        pending = next_level
    return Tree(
        rules=rules,
        counts=counts,
        hands=hands,
        prior=prior,
        n=n,
        node_player=np.array(players),
        node_depth=np.array(depths),
        node_first=np.array(firsts),
        node_edges=np.array(sizes),
        edge_node=np.array(e_node),
        edge_child=np.array(e_child),
        edge_term=np.array(e_term),
        edge_action=e_action,
        terminal_u=np.array(terminals),
        states=states,
        roots=roots,
    )


def _payoffs(
    state: State, caller: int, call: Action, hands: list[list[tuple[int, ...]]], n: int
) -> np.ndarray:
    """Seat 0's payoff for every pair of hands when ``caller`` makes ``call``: the
    engine's own count (count_matching) and settlement rule."""
    bidder, quantity, face = state.bids[-1]
    wild = state.ones_wild
    out = np.zeros((n, n))
    for i, h0 in enumerate(hands[0]):
        for j, h1 in enumerate(hands[1]):
            count = count_matching([h0, h1], face, wild)
            if isinstance(call, Dudo):
                loser = caller if count >= quantity else bidder
            elif count != quantity:
                loser = caller
            else:  # a right Calza: a die won back, or nobody loses one
                raise ValueError(
                    "a right Calza costs nobody a die under these rules: one round does not "
                    "decide the game (calza=off makes it a one-round game)"
                )
            if state.counts[loser] > 1:
                raise ValueError("a lost die does not end the game: one round does not decide")
            out[i, j] = 1.0 if loser == 1 else -1.0
    return out


# -- strategies --------------------------------------------------------------------------


def uniform(tree: Tree) -> np.ndarray:
    return (1.0 / tree.node_edges[tree.edge_node])[:, None] * np.ones((tree.edges, tree.n))


def _normalize(tree: Tree, weights: np.ndarray) -> np.ndarray:
    """Per node and hand, weights made probabilities (uniform where all are 0)."""
    sums = np.add.reduceat(weights, tree.node_first, axis=0)  # (nodes, n)
    per_edge = sums[tree.edge_node]
    fallback = (1.0 / tree.node_edges[tree.edge_node])[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(per_edge > 0, weights / per_edge, fallback)


def _levels(tree: Tree) -> list[tuple[slice, slice]]:
    """Per depth, the nodes and the edges leaving them (breadth-first order keeps both
    contiguous)."""
    found = []
    for depth in range(int(tree.node_depth.max()) + 1):
        nodes = np.nonzero(tree.node_depth == depth)[0]
        lo, hi = int(nodes[0]), int(nodes[-1]) + 1
        first = int(tree.node_first[lo])
        last = int(tree.node_first[hi - 1] + tree.node_edges[hi - 1])
        found.append((slice(lo, hi), slice(first, last)))
    return found


def _reach(tree: Tree, strategy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each seat's own reach probability at every node, per hand."""
    reach = (np.ones((tree.nodes, tree.n)), np.ones((tree.nodes, tree.n)))
    actor = tree.node_player[tree.edge_node]
    for _, edges in _levels(tree):
        kids = tree.edge_child[edges]
        inner = kids >= 0
        parents = tree.edge_node[edges][inner]
        acting = actor[edges][inner]
        for seat in (0, 1):
            through = np.where((acting == seat)[:, None], strategy[edges][inner], 1.0)
            reach[seat][kids[inner]] = reach[seat][parents] * through
    return reach


def _values(
    tree: Tree, strategy: np.ndarray, reach: tuple[np.ndarray, np.ndarray], seat: int,
    best: bool = False,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Counterfactual values of ``seat`` (per hand) at every node and on every edge:
    against ``strategy`` for the other seat; for ``seat`` itself, its own ``strategy``,
    or with ``best`` the best action in every information set."""
    other = 1 - seat
    actor = tree.node_player[tree.edge_node]
    node_v = np.zeros((tree.nodes, tree.n))
    edge_v = np.zeros((tree.edges, tree.n))
    term = tree.edge_term >= 0
    parents = tree.edge_node[term]
    # The other seat's reach at the terminal: through the edge if it made the call.
    other_reach = reach[other][parents] * np.where(
        (actor[term] == other)[:, None], strategy[term], 1.0
    )
    u = tree.terminal_u[tree.edge_term[term]]
    if seat == 0:
        edge_v[term] = np.einsum("tij,tj->ti", u, other_reach)
    else:
        edge_v[term] = -np.einsum("tij,ti->tj", u, other_reach)
    for nodes, edges in reversed(_levels(tree)):
        kids = tree.edge_child[edges]
        inner = np.nonzero(kids >= 0)[0] + edges.start
        edge_v[inner] = node_v[tree.edge_child[inner]]
        starts = tree.node_first[nodes] - edges.start
        own = (tree.node_player[nodes] == seat)[:, None]
        if best:
            maxed = np.maximum.reduceat(edge_v[edges], starts, axis=0)
            summed = np.add.reduceat(edge_v[edges], starts, axis=0)
            node_v[nodes] = np.where(own, maxed, summed)
        else:
            weighted = np.where(
                (actor[edges] == seat)[:, None], strategy[edges] * edge_v[edges], edge_v[edges]
            )
            node_v[nodes] = np.add.reduceat(weighted, starts, axis=0)
    return node_v, edge_v


def solve(tree: Tree, iterations: int = 1000) -> np.ndarray:
    """CFR+: the average strategy after ``iterations`` (alternating updates, regrets
    floored at 0, the average weighted by iteration)."""
    regrets = np.zeros((tree.edges, tree.n))
    average = np.zeros((tree.edges, tree.n))
    for t in range(1, iterations + 1):
        for seat in (0, 1):
            strategy = _normalize(tree, regrets)
            reach = _reach(tree, strategy)
            node_v, edge_v = _values(tree, strategy, reach, seat)
            mine = tree.node_player[tree.edge_node] == seat
            gain = edge_v - node_v[tree.edge_node]
            regrets[mine] = np.maximum(regrets[mine] + gain[mine], 0.0)
            average[mine] += t * reach[seat][tree.edge_node][mine] * strategy[mine]
    return _normalize(tree, average)


def best_response_value(tree: Tree, strategy: np.ndarray, seat: int) -> float:
    """What ``seat`` wins per game, playing its best against ``strategy`` for the other
    seat (the chance of the opener and of the hands included)."""
    reach = _reach(tree, strategy)
    node_v, _ = _values(tree, strategy, reach, seat, best=True)
    return float(sum(node_v[root].sum() for root in tree.roots))


def value(tree: Tree, strategy0: np.ndarray, strategy1: np.ndarray) -> float:
    """Seat 0's expected payoff when it plays ``strategy0`` and seat 1 ``strategy1``."""
    mixed = np.where((tree.node_player[tree.edge_node] == 0)[:, None], strategy0, strategy1)
    reach = _reach(tree, mixed)
    node_v, _ = _values(tree, mixed, reach, 0)
    return float(sum(node_v[root].sum() for root in tree.roots))


def nash_conv(tree: Tree, strategy: np.ndarray) -> float:
    """Both seats' best-response gains against ``strategy``: 0 at an equilibrium."""
    return best_response_value(tree, strategy, 0) + best_response_value(tree, strategy, 1)


def exploitability(tree: Tree, strategy: np.ndarray) -> float:
    """What a best responder wins per game against ``strategy`` (it plays one seat, the
    strategy the other; the seats are symmetric, so either)."""
    return best_response_value(tree, strategy, 0)


# -- bots as strategies ------------------------------------------------------------------


def policy_strategy(tree: Tree, policy: Policy) -> np.ndarray:
    """A bot's strategy in the tree: at every information set, the probabilities it
    gives each action, from the seat's view as the engine shows it (nothing else)."""
    strategy = np.zeros((tree.edges, tree.n))
    for node in range(tree.nodes):
        state, seat = tree.states[node], int(tree.node_player[node])
        first, size = int(tree.node_first[node]), int(tree.node_edges[node])
        index = {_key(tree.edge_action[e]): e for e in range(first, first + size)}
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
