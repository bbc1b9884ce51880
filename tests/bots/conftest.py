"""Fixtures of the bot tests: the round of two dice against one, built once per worker
(10 s), with a leaf that tells apart which seat opens the one-die round after it."""

from __future__ import annotations

import pytest

from dudo.bots import solver
from dudo.engine import preset


def leaf(after: tuple[int, int], opener: int, palifico: bool) -> float:
    """What the round of one die each is worth to the tree's seat 0 (holding two dice
    before it), by its opener."""
    assert after == (1, 1) and not palifico  # liars-dice has no palifico
    return 0.25 if opener == 0 else -0.5


@pytest.fixture(scope="session")
def two_against_one() -> solver.Tree:
    """liars-dice, two dice against one, the one-die round worth :func:`leaf`."""
    return solver.build(preset("liars-dice", start_dice=2), (2, 1), leaf=leaf)
