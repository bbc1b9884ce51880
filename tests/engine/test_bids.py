"""Bid ordering: the one function that says what raises what."""

from __future__ import annotations

import pytest

from dudo.engine.bids import count_matching, min_quantity


@pytest.mark.parametrize(
    ("previous", "face", "wild", "expected"),
    [
        ((4, 5), 6, True, 4),  # same quantity, higher face
        ((4, 5), 5, True, 5),  # same face needs more
        ((4, 5), 2, True, 5),  # lower face needs more
        ((7, 4), 1, True, 4),  # to ones: half rounded up (seed 002)
        ((6, 4), 1, True, 3),  # seed 001
        ((5, 4), 1, True, 3),  # seed 001
        ((8, 3), 1, True, 4),  # seed 003
        ((1, 6), 1, True, 1),
        ((3, 1), 5, True, 7),  # from ones: twice plus one (seed 002)
        ((4, 1), 2, True, 9),  # seed 003
        ((3, 1), 1, True, 4),  # ones to ones: more
        ((3, 6), 1, False, 4),  # plain ones are the lowest face
        ((3, 1), 2, False, 3),
        ((3, 1), 1, False, 4),
    ],
)
def test_min_quantity(previous: tuple[int, int], face: int, wild: bool, expected: int) -> None:
    assert min_quantity(previous, face, wild) == expected


def test_count_with_and_without_wild_ones() -> None:
    hands = [(1, 1, 5), (5, 6), ()]
    assert count_matching(hands, 5, True) == 4
    assert count_matching(hands, 5, False) == 2
    assert count_matching(hands, 1, True) == 2  # a bid on ones counts only ones
    assert count_matching(hands, 6, True) == 3
