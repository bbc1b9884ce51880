"""How bids compare: the one place that knows what "higher" means.

Both the validator (which explains *why* a bid is refused) and the legal-action
listing (which tells a client the lowest legal quantity per face) call
:func:`min_quantity`, so they cannot disagree.

Raising (docs/rules.md, "Options"): a higher quantity of any face, or the same quantity of a
higher face. When ones are wild they are special: switching to ones needs at
least half the previous quantity rounded up, leaving ones needs at least twice
plus one, ones to ones needs a higher quantity. When ones are not wild they are
simply the lowest face. In a palifico round the opening face is locked.
"""

from __future__ import annotations

from functools import lru_cache

Bid = tuple[int, int]  # (quantity, face)

FACES = (1, 2, 3, 4, 5, 6)


def min_quantity(previous: Bid, face: int, ones_wild: bool) -> int:
    """The lowest quantity of ``face`` that raises ``previous``.

    ``ones_wild`` is whether ones count as any face this round (it changes how
    bids on ones rank). Face locking in palifico is the caller's concern.
    """
    quantity, prev_face = previous
    if ones_wild:
        if face == 1:
            return quantity + 1 if prev_face == 1 else -(-quantity // 2)
        if prev_face == 1:
            return 2 * quantity + 1
    return quantity if face > prev_face else quantity + 1


@lru_cache(maxsize=4096)
def raise_floors(previous: Bid, ones_wild: bool) -> tuple[int, ...]:
    """:func:`min_quantity` for faces 1..6 at once. Every view of every seat asks
    this after every bid, and the answers repeat, so they are remembered (a
    few hundred distinct bids occur in practice; the cache is bounded anyway)."""
    return tuple(min_quantity(previous, face, ones_wild) for face in FACES)


def count_matching(hands: list[tuple[int, ...]], face: int, ones_wild: bool) -> int:
    """How many dice on the table count for a bid on ``face``.

    Wild ones count as the bid face, except on a bid of ones, where only ones count.
    """
    wild = ones_wild and face != 1
    total = 0
    for hand in hands:
        for die in hand:
            if die == face or (wild and die == 1):
                total += 1
    return total
