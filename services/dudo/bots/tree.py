"""The public tree of one heads-up round, built from the engine: what the solver solves.

Two players, any dice each (``counts``): the opener is drawn (one half each), each seat
is dealt one hand of its dice (every multiset, with its multinomial weight). A *public
node* is the round so far (the bids, and the direction chosen where the rules ask for
one); at it the seat to act knows its own hand and the node: one information set per
(node, hand). Every move is the engine's (:meth:`State.legal_actions` and
:meth:`State.apply` on one scratch state, so half a million nodes cost seconds, not
gigabytes of copied states).

A call ends the round. Where it ends the game (the loser's last die) the winner gets
+1 and the loser -1; where the loser keeps dice, the game goes on with a smaller round,
worth what ``leaf`` says it is worth to seat 0 (the equilibrium value of that round,
solved first: :mod:`dudo.bots.endgame`); without a ``leaf`` such a tree is refused, and
so is one where a right Calza costs nobody a die (dice won back: the game does not get
smaller). Payoffs depend on the hands only through the last bid and the call, so the
terminals share a few *kinds*, each one matrix over the two seats' hands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..engine import (
    Action,
    Bid,
    Calza,
    Direction,
    Dudo,
    Rules,
    State,
    count_matching,
    new_game,
    odds,
)

# What a round that goes on is worth to seat 0: (dice counts after it, the next round's
# opener, whether it is a palifico round) -> value in [-1, 1].
Leaf = Callable[[tuple[int, int], int, bool], float]

# Actions as integers in the tree's arrays: a bid is quantity * 8 + face (> 0).
DUDO, CALZA, CLOCKWISE, COUNTER = -1, -2, -3, -4


def encode(action: Action) -> int:
    if isinstance(action, Bid):
        return action.quantity * 8 + action.face
    if isinstance(action, Dudo):
        return DUDO
    if isinstance(action, Calza):
        return CALZA
    return CLOCKWISE if action.value == 1 else COUNTER


def decode(code: int) -> Action:
    if code > 0:
        return Bid(code // 8, code % 8)
    return {DUDO: Dudo(), CALZA: Calza(), CLOCKWISE: Direction(1), COUNTER: Direction(-1)}[code]


def hands_of(dice: int) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every hand of ``dice`` dice (sorted faces) and its probability."""
    every = odds.hands(dice)
    return [hand for hand, _ in every], np.array([p for _, p in every])


@dataclass(frozen=True)
class Block:
    """Nodes of one depth where one seat acts, and the edges leaving them."""

    player: int
    depth: int
    nodes: slice
    edges: slice
    starts: np.ndarray  # each node's first edge, from the block's first
    sizes: np.ndarray  # each node's edges
    inner: np.ndarray  # the edges that lead to a node (not a call)
    inner_parent: np.ndarray  # the node each of those leaves
    kids: slice | None  # the nodes they lead to, in order


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
    edge_code: np.ndarray = field(repr=False)  # its action (encode)
    term_kind: np.ndarray = field(repr=False)  # each terminal's kind
    kind_u: np.ndarray = field(repr=False)  # (kinds, n, n): seat 0's payoff x chance
    roots: list[int] = field(repr=False)  # roots[o]: the round opener o opens
    palifico: bool = False
    node_parent: np.ndarray | None = field(default=None, repr=False)  # edge into it; -1

    @property
    def nodes(self) -> int:
        return len(self.node_player)

    @property
    def edges(self) -> int:
        return len(self.edge_node)

    def action(self, edge: int) -> Action:
        return decode(int(self.edge_code[edge]))

    @cached_property
    def terminals(self) -> tuple[np.ndarray, list[tuple[int, slice]]]:
        """The terminal edges ordered by kind, and each kind's slice of them."""
        edges = np.nonzero(self.edge_term >= 0)[0]
        kinds = self.term_kind[self.edge_term[edges]]
        order = np.argsort(kinds, kind="stable")
        edges, kinds = edges[order], kinds[order]
        bounds = np.flatnonzero(np.diff(kinds)) + 1
        starts = [0, *bounds.tolist()]
        ends = [*bounds.tolist(), len(kinds)]
        return edges, [(int(kinds[s]), slice(s, e)) for s, e in zip(starts, ends, strict=True)]

    @cached_property
    def blocks(self) -> list[Block]:
        """The tree cut into runs of nodes of one depth where one seat acts, shallowest
        first: heads-up, each root's nodes of a depth share their seat, so a few dozen
        blocks of contiguous nodes and edges (slices: no copies) make the whole tree."""
        found = []
        bounds = np.flatnonzero(
            np.diff(self.node_depth.astype(np.int64)) | np.diff(self.node_player.astype(np.int64))
        )
        starts = [0, *(bounds + 1).tolist()]
        ends = [*(bounds + 1).tolist(), self.nodes]
        for lo, hi in zip(starts, ends, strict=True):
            first = int(self.node_first[lo])
            last = int(self.node_first[hi - 1] + self.node_edges[hi - 1])
            kids = self.edge_child[first:last]
            inner = np.flatnonzero(kids >= 0) + first
            children = self.edge_child[inner]
            if len(children) and not np.array_equal(
                children, np.arange(children[0], children[0] + len(children))
            ):
                raise AssertionError("a block's children are not contiguous")
            found.append(
                Block(
                    player=int(self.node_player[lo]),
                    depth=int(self.node_depth[lo]),
                    nodes=slice(lo, hi),
                    edges=slice(first, last),
                    starts=self.node_first[lo:hi] - first,
                    sizes=self.node_edges[lo:hi],
                    inner=inner,
                    inner_parent=self.edge_node[inner],
                    kids=slice(int(children[0]), int(children[-1]) + 1) if len(children) else None,
                )
            )
        return sorted(found, key=lambda b: b.depth)

    def path(self, node: int) -> list[int]:
        """The edges from its root to ``node``."""
        assert self.node_parent is not None, "a tree made by build() knows its paths"
        edges = []
        while self.node_parent[node] >= 0:
            edge = int(self.node_parent[node])
            edges.append(edge)
            node = int(self.edge_node[edge])
        return edges[::-1]

    def state(self, node: int) -> State:
        """The engine's state at ``node`` (replayed from its root; no hands dealt)."""
        path = self.path(node)
        root = int(self.edge_node[path[0]]) if path else node
        state = _start(self.rules, self.counts, self.roots.index(root), self.palifico)
        for edge in path:
            state.apply(int(self.node_player[self.edge_node[edge]]), self.action(edge))
        return state

    def find(self, opener: int, moves: list[Action]) -> int | None:
        """The node after these moves of the round opened by tree seat ``opener``."""
        return walk(self.node_first, self.node_edges, self.edge_code, self.edge_child,
                    self.roots[opener], moves)  # fmt: skip


def walk(
    node_first: np.ndarray, node_edges: np.ndarray, edge_code: np.ndarray,
    edge_child: np.ndarray, root: int, moves: list[Action],
) -> int | None:  # fmt: skip
    """The node after ``moves`` from ``root``: None if one is not there. A direction
    choice is passed through (heads-up, either way is the same round), so the bids
    alone say where a round is."""
    node = root
    for move in [*moves, None]:
        first, size = int(node_first[node]), int(node_edges[node])
        if size and int(edge_code[first]) in (CLOCKWISE, COUNTER):
            node = int(edge_child[first])
            first, size = int(node_first[node]), int(node_edges[node])
        if move is None:
            return node
        hit = np.flatnonzero(edge_code[first : first + size] == encode(move))
        if len(hit) == 0 or int(edge_child[first + int(hit[0])]) < 0:
            return None
        node = int(edge_child[first + int(hit[0])])
    return node


def _start(rules: Rules, counts: tuple[int, int], opener: int, palifico: bool) -> State:
    return new_game(rules, 2, b"\0" * 32, opener=opener, dice_counts=list(counts),
                    palifico=palifico)  # fmt: skip


def build(
    rules: Rules, counts: tuple[int, int] = (1, 1), *, palifico: bool = False,
    leaf: Leaf | None = None, bids_max: tuple[int, int] | None = None,
) -> Tree:  # fmt: skip
    """The tree of one round with these dice, every move as the engine allows it
    (``palifico``: the round is a palifico round, as the one after a drop to one die).
    ``bids_max``: per seat, a seat that has bid this many times in the round may only
    call (an abstraction of a round too large to solve whole)."""
    hands: list[list[tuple[int, ...]]] = []
    priors: list[np.ndarray] = []
    for dice in counts:
        h, p = hands_of(dice)
        hands.append(h)
        priors.append(p)
    n = max(len(h) for h in hands)
    prior = [np.pad(p, (0, n - len(p))) for p in priors]
    chance = 0.5 * np.outer(prior[0], prior[1])
    players: list[int] = []
    depths: list[int] = []
    firsts: list[int] = []
    sizes: list[int] = []
    parents: list[int] = []
    e_node: list[int] = []
    e_child: list[int] = []
    e_term: list[int] = []
    e_code: list[int] = []
    t_kind: list[int] = []
    kinds: dict[tuple[Any, ...], int] = {}
    matrices: list[np.ndarray] = []
    roots = []
    # A node's round so far: (bids, turn, phase, direction); set on one scratch state.
    Round = tuple[tuple[tuple[int, int, int], ...], int, str, int]

    def add(depth: int, turn: int, parent: int) -> int:
        players.append(turn)
        depths.append(depth)
        firsts.append(0)
        sizes.append(0)
        parents.append(parent)
        return len(players) - 1

    pending: list[tuple[int, State, Round]] = []
    for opener in (0, 1):
        start = _start(rules, counts, opener, palifico)
        assert start.turn is not None
        roots.append(add(0, start.turn, -1))
        here = (tuple(start.bids), start.turn, start.phase, start.direction)
        pending.append((roots[-1], start, here))
    while pending:  # breadth first: an edge's child comes after every edge of its depth
        next_level: list[tuple[int, State, Round]] = []
        for index, scratch, (bids, turn, phase, direction) in pending:
            _set(scratch, bids, turn, phase, direction)
            actions = scratch.legal_actions(turn)
            if bids_max is not None and sum(b[0] == turn for b in bids) >= bids_max[turn]:
                actions = [a for a in actions if isinstance(a, Dudo | Calza)]
            firsts[index], sizes[index] = len(e_node), len(actions)
            for action in actions:
                e_node.append(index)
                e_code.append(encode(action))
                if isinstance(action, Dudo | Calza):
                    _set(scratch, bids, turn, phase, direction)
                    key = (scratch.bids[-1], turn, type(action).__name__)
                    if key not in kinds:
                        kinds[key] = len(matrices)
                        payoff = payoffs(scratch, turn, action, hands, n, leaf)
                        matrices.append(chance * payoff)
                    e_child.append(-1)
                    e_term.append(len(t_kind))
                    t_kind.append(kinds[key])
                else:
                    _set(scratch, bids, turn, phase, direction)
                    scratch.apply(turn, action)
                    assert scratch.turn is not None
                    child = add(depths[index] + 1, scratch.turn, len(e_node) - 1)
                    e_child.append(child)
                    e_term.append(-1)
                    after = (tuple(scratch.bids), scratch.turn, scratch.phase, scratch.direction)
                    next_level.append((child, scratch, after))
        pending = next_level
    return Tree(
        rules=rules,
        counts=counts,
        hands=hands,
        prior=prior,
        n=n,
        node_player=np.array(players, dtype=np.int8),
        node_depth=np.array(depths, dtype=np.int16),
        node_first=np.array(firsts, dtype=np.int64),
        node_edges=np.array(sizes, dtype=np.int64),
        edge_node=np.array(e_node, dtype=np.int64),
        edge_child=np.array(e_child, dtype=np.int64),
        edge_term=np.array(e_term, dtype=np.int64),
        edge_code=np.array(e_code, dtype=np.int32),
        term_kind=np.array(t_kind, dtype=np.int32),
        kind_u=np.array(matrices),
        roots=roots,
        palifico=palifico,
        node_parent=np.array(parents, dtype=np.int64),
    )


def _set(state: State, bids: tuple[Any, ...], turn: int, phase: str, direction: int) -> None:
    state.bids = list(bids)
    state.turn = turn
    state.phase = phase
    state.direction = direction


def outcome(
    state: State, caller: int, call: Action, count: int
) -> tuple[int | None, int | None, int]:
    """What a call settles, as :meth:`State._resolve` does: (the loser or None, the
    gainer or None, who opens the next round)."""
    bidder, quantity, _ = state.bids[-1]
    loser = gainer = None
    if isinstance(call, Dudo):
        loser = caller if count >= quantity else bidder
    elif count == quantity:
        if state.counts[caller] < state.rules.max_dice:
            gainer = caller
    else:
        loser = caller
    return loser, gainer, loser if isinstance(call, Dudo) else caller


def payoffs(
    state: State, caller: int, call: Action, hands: list[list[tuple[int, ...]]], n: int,
    leaf: Leaf | None,
) -> np.ndarray:  # fmt: skip
    """Seat 0's payoff for every pair of hands when ``caller`` makes ``call``: the
    engine's own count (count_matching) and settlement rule; a round that goes on is
    worth what ``leaf`` says."""
    _, _, face = state.bids[-1]
    wild = state.ones_wild
    out = np.zeros((n, n))
    for i, h0 in enumerate(hands[0]):
        for j, h1 in enumerate(hands[1]):
            loser, _, opener = outcome(state, caller, call, count_matching([h0, h1], face, wild))
            if loser is None:  # a right Calza: a die won back, or nobody loses one
                raise ValueError(
                    "a right Calza costs nobody a die under these rules: one round does not "
                    "decide the game (calza=off makes it a one-round game)"
                )
            if state.counts[loser] == 1:
                out[i, j] = 1.0 if loser == 1 else -1.0
                continue
            if leaf is None:
                raise ValueError("a lost die does not end the game: one round does not decide")
            after = list(state.counts)
            after[loser] -= 1
            palifico = state.rules.palifico and after[loser] == 1
            out[i, j] = leaf((after[0], after[1]), opener, palifico)
    return out


__all__ = [
    "Block", "Leaf", "Tree", "build", "decode", "encode", "hands_of", "outcome", "payoffs", "walk",
]  # fmt: skip
