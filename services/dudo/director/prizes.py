"""Buy-ins and payouts in chips, as pure functions: chips are never made or lost.

Every entrant pays the buy-in into the prize pool; when the tournament ends the
pool is split by finishing place. :func:`split_pool` always hands out exactly
the pool, so the sum of all balances plus all pools stays constant (the
invariant the tests and ``dudo bench tournament`` check).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence


class PayoutError(ValueError):
    """A payout table that cannot be paid out fairly."""


def check_payouts(percents: Sequence[int]) -> list[int]:
    """A payout table: whole percentages for places 1, 2, ..., summing to 100,
    each place earning no more than the one above it."""
    table = list(percents)
    if not table or len(table) > 100:
        raise PayoutError("payouts list 1..100 places")
    if any(not isinstance(p, int) or isinstance(p, bool) or p <= 0 for p in table):
        raise PayoutError("payouts are whole, positive percentages")
    if sum(table) != 100:
        raise PayoutError(f"payouts must add up to 100, not {sum(table)}")
    if any(later > earlier for earlier, later in itertools.pairwise(table)):
        raise PayoutError("a lower place may not earn more than a higher one")
    return table


def split_pool(pool: int, percents: Sequence[int], entrants: int) -> list[int]:
    """Chips for places 1..n (n = paid places that exist), summing to exactly ``pool``.

    Each place gets its percentage rounded down; what rounding leaves, and the
    shares of places nobody reached (fewer entrants than paid places), go to
    the winner.
    """
    if pool < 0 or entrants < 1:
        raise PayoutError("a pool is split among at least one entrant")
    paid = list(percents[:entrants])
    amounts = [pool * share // 100 for share in paid]
    amounts[0] += pool - sum(amounts)
    return amounts
