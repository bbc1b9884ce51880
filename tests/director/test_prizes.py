"""Payouts (dudo.director.prizes): exact, conserved, validated."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dudo.director.prizes import PayoutError, check_payouts, split_pool


def test_split_follows_the_table_and_rounding_goes_to_the_winner() -> None:
    assert split_pool(1000, [50, 30, 20], 9) == [500, 300, 200]
    assert split_pool(101, [50, 30, 20], 9) == [51, 30, 20]
    assert split_pool(1000, [50, 30, 20], 2) == [700, 300]
    assert split_pool(0, [100], 1) == [0]


@given(
    pool=st.integers(0, 10**9),
    cuts=st.lists(st.integers(1, 99), max_size=6, unique=True),
    entrants=st.integers(1, 50),
)
def test_every_chip_of_the_pool_is_paid_and_none_more(
    pool: int, cuts: list[int], entrants: int
) -> None:
    edges = [0, *sorted(cuts), 100]
    shares = sorted((b - a for a, b in itertools.pairwise(edges)), reverse=True)
    amounts = split_pool(pool, check_payouts(shares), entrants)
    assert sum(amounts) == pool
    assert len(amounts) == min(len(shares), entrants)
    assert all(a >= 0 for a in amounts)
    assert amounts == sorted(amounts, reverse=True)


@pytest.mark.parametrize(
    "table", [[], [50, 30], [60, 30, 20], [30, 70], [50, 50.0], [100, 0], [True] * 100]
)
def test_bad_payout_tables_are_refused(table: list) -> None:
    with pytest.raises(PayoutError):
        check_payouts(table)
