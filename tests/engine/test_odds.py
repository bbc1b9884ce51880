"""Assisted-mode odds against exact enumeration of the unseen dice."""

from __future__ import annotations

import itertools

import pytest

from dudo.engine import Bid, preset
from dudo.engine.odds import at_least, bid_true, exactly

from .helpers import game


def brute(need: int, unseen: int, wild: bool, exact: bool = False) -> float:
    """Enumerate every outcome of ``unseen`` six-sided dice."""
    hits = 0
    for dice in itertools.product(range(1, 7), repeat=unseen):
        match = sum(1 for d in dice if d == 5 or (wild and d == 1))
        hits += (match == need) if exact else (match >= need)
    return hits / 6**unseen


@pytest.mark.parametrize("unseen", [0, 1, 3, 5])
@pytest.mark.parametrize("wild", [True, False])
def test_binomial_matches_enumeration(unseen: int, wild: bool) -> None:
    for need in range(-1, unseen + 2):
        assert at_least(need, unseen, wild) == pytest.approx(brute(need, unseen, wild))
        if need >= 0:
            assert exactly(need, unseen, wild) == pytest.approx(brute(need, unseen, wild, True))


def test_bid_true_uses_own_dice_and_wildness() -> None:
    s = game("classic", 2, dice=[[1, 5, 5, 2, 3], [2, 2, 2, 2, 2]])
    # seat 0 sees three 5s (ace wild); 5 unseen dice
    assert bid_true(s, 0, 3, 5) == 1.0
    assert bid_true(s, 0, 4, 5) == pytest.approx(1 - (2 / 3) ** 5)
    # a bid on ones: only its own ace counts, p = 1/6
    assert bid_true(s, 0, 2, 1) == pytest.approx(1 - (5 / 6) ** 5)
    plain = game(preset("liars-dice"), 2, dice=[[1, 5, 5, 2, 3], [2, 2, 2, 2, 2]])
    assert bid_true(plain, 0, 3, 5) == pytest.approx(1 - (5 / 6) ** 5)


def test_palifico_makes_ones_plain() -> None:
    s = game("classic", 2, dice=[[1], [2, 2, 2, 2, 2]], dice_counts=[1, 5], palifico=True)
    s.apply(0, Bid(1, 5))
    assert bid_true(s, 0, 1, 5) == pytest.approx(1 - (5 / 6) ** 5)
