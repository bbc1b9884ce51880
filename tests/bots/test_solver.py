"""The exact solver of heads-up rounds (dudo.bots.solver): checked on a game whose value is
known (Kuhn poker: -1/18 for the first player), on the engine's own settlement, and on
the smallest Dudo games, where it reproduces the figures issue 17 gives for our bots."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from dudo.bots import solver
from dudo.bots.levels import POLICIES
from dudo.engine import new_game, preset
from dudo.engine.actions import Bid
from dudo.engine.state import State


def kuhn() -> solver.Tree:
    """Kuhn poker as a public tree: cards J, Q, K dealt without replacement, an ante of
    1 each; player 0 checks or bets 1, player 1 answers, player 0 answers a bet after a
    check. Chance (1/6 per deal) sits in the payoffs, as in the Dudo trees."""
    # nodes: 0 = p0 first; 1 = p1 after check; 2 = p1 after bet; 3 = p0 after check-bet
    node_player = np.array([0, 1, 1, 0])
    node_depth = np.array([0, 1, 1, 2])
    # edges grouped by node: (node, child, terminal)
    edges = [
        (0, 1, -1), (0, 2, -1),  # check, bet
        (1, -1, 0), (1, 3, -1),  # check (showdown 1), bet
        (2, -1, 1), (2, -1, 2),  # fold (p0 wins 1), call (showdown 2)
        (3, -1, 3), (3, -1, 4),  # fold (p1 wins 1), call (showdown 2)
    ]  # fmt: skip
    show = np.array([[0, -1, -1], [1, 0, -1], [1, 1, 0]], dtype=float)  # card i vs j
    deal = (np.ones((3, 3)) - np.eye(3)) / 6
    terminals = np.array([show * deal, deal, 2 * show * deal, -deal, 2 * show * deal])
    return solver.Tree(
        rules=preset("classic"),
        counts=(1, 1),
        hands=[[(1,), (2,), (3,)], [(1,), (2,), (3,)]],
        prior=[np.full(3, 1 / 3), np.full(3, 1 / 3)],
        n=3,
        node_player=node_player,
        node_depth=node_depth,
        node_first=np.array([0, 2, 4, 6]),
        node_edges=np.array([2, 2, 2, 2]),
        edge_node=np.array([e[0] for e in edges]),
        edge_child=np.array([e[1] for e in edges]),
        edge_term=np.array([e[2] for e in edges]),
        edge_code=np.zeros(len(edges), dtype=np.int32),
        term_kind=np.arange(len(terminals)),  # each terminal a kind of its own
        kind_u=terminals,
        roots=[0],
    )


def test_cfr_plus_finds_kuhn_pokers_value() -> None:
    tree = kuhn()
    strategy = solver.solve(tree, 3000)
    assert solver.value(tree, strategy, strategy) == pytest.approx(-1 / 18, abs=2e-3)
    assert solver.nash_conv(tree, strategy) < 2e-3
    # Best responses are exact. Against a player 0 who always bets (and calls), player
    # 1 calls with the K (+2), calls with the Q (J or K behind: +2 or -2, 0 on average,
    # better than folding's -1) and folds the J (-1): (2 + 0 - 1) / 3.
    always = np.zeros((tree.edges, tree.n))
    always[[1, 3, 5, 7]] = 1.0  # bet, bet, call, call
    assert solver.best_response_value(tree, always, 1) == pytest.approx(1 / 3, abs=1e-12)


def replayed(tree: solver.Tree, edge: int, i: int, j: int) -> State:
    """The engine's game after the moves to ``edge`` and its call, seat 0 dealt its
    hand ``i`` and seat 1 its hand ``j``."""
    node = int(tree.edge_node[edge])
    state = tree.state(node)
    game = new_game(tree.rules, 2, b"\0" * 32, opener=state.opener,
                    dice_counts=list(tree.counts))  # fmt: skip
    game.deal([tree.hands[0][i], tree.hands[1][j]])
    for seat, q, f in state.bids:
        game.apply(seat, Bid(q, f))
    game.apply(int(tree.node_player[node]), tree.action(edge))
    return game


def test_the_tree_settles_every_call_as_the_engine_does() -> None:
    """Every terminal's payoff is what State.apply decides for those hands."""
    rules = preset("lizumo", start_dice=1)
    tree = solver.build(rules)
    rng = random.Random(4)
    terms = [e for e in range(tree.edges) if tree.edge_term[e] >= 0]
    for e in rng.sample(terms, 40):
        for i, j in ((0, 0), (2, 5), (5, 0)):
            winner = replayed(tree, e, i, j).winner
            expected = 1.0 if winner == 0 else -1.0
            chance = 0.5 * tree.prior[0][i] * tree.prior[1][j]
            u = tree.kind_u[tree.term_kind[tree.edge_term[e]]]
            assert u[i, j] == pytest.approx(expected * chance)


def test_the_smallest_dudo_games_solved_and_our_bots_measured_exactly() -> None:
    """One die each, heads-up: the game is fair (value 0: the opener is drawn), CFR+
    converges, and the bots of before issue 17 are as exploitable as it says."""
    tree = solver.build(preset("liars-dice", start_dice=1))
    assert tree.nodes == 2 * 4096  # every rising sequence of the 12 bids, per opener
    strategy = solver.solve(tree, 300)
    assert abs(solver.value(tree, strategy, strategy)) < 1e-3
    assert solver.nash_conv(tree, strategy) < 2e-3
    uniform = solver.uniform(tree)
    assert solver.nash_conv(tree, uniform) > 1.0

    class Key(dict):
        def __hash__(self) -> int:  # type: ignore[override]
            return hash(tuple(sorted(self.items())))

    def deterministic(name: str) -> Any:
        return lambda view: {Key(POLICIES[name](view, random.Random(0))): 1.0}

    baseline = solver.policy_strategy(tree, deterministic("baseline"))
    assert solver.exploitability(tree, baseline) == pytest.approx(1 / 6, abs=1e-3)
    assert solver.value(tree, baseline, strategy) == pytest.approx(-0.13, abs=0.01)


def test_a_game_one_round_does_not_decide_is_refused() -> None:
    with pytest.raises(ValueError, match="one round"):
        solver.build(preset("classic", start_dice=1))  # a right Calza: nobody loses a die
    with pytest.raises(ValueError, match="one round"):
        solver.build(preset("liars-dice", start_dice=2), (2, 1))  # one die lost, one left


def test_two_dice_against_one_settles_and_goes_on_as_the_engine_does(
    two_against_one: solver.Tree,
) -> None:
    """Issue 35: the round of two dice against one. Where the two-dice seat loses a die
    the game goes on as a one-die round, worth what ``leaf`` says for the next opener
    (and palifico): every sampled terminal against State.apply, and every node found
    again from its moves."""
    tree = two_against_one  # its leaf: 0.25 when seat 0 opens the next round, else -0.5
    assert tree.nodes == 2 * 2**18  # every rising sequence of the 18 bids on 3 dice
    assert [len(h) for h in tree.hands] == [21, 6]
    rng = random.Random(5)
    terms = np.flatnonzero(tree.edge_term >= 0)
    for e in rng.sample(terms.tolist(), 30):
        node = int(tree.edge_node[e])
        u = tree.kind_u[tree.term_kind[tree.edge_term[e]]]
        for i, j in ((0, 0), (20, 5), (7, 2)):
            game = replayed(tree, e, i, j)
            if game.winner is not None:
                expected = 1.0 if game.winner == 0 else -1.0
            else:
                assert game.counts == [1, 1]
                expected = 0.25 if game.opener == 0 else -0.5
            chance = 0.5 * tree.prior[0][i] * tree.prior[1][j]
            assert u[i, j] == pytest.approx(expected * chance)
        edges = tree.path(node)
        root = int(tree.edge_node[edges[0]]) if edges else node
        assert tree.find(tree.roots.index(root), [tree.action(edge) for edge in edges]) == node
