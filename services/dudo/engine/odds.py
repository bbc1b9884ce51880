"""Assisted mode: how likely is a bid, seen from one seat.

From the seat's own dice and the number of dice it cannot see, each unseen die
counts for a face with probability p = 1/3 when ones are wild and the face is
not one (the face itself or a one), and p = 1/6 for a bid on ones or when ones
are not wild. The number of unseen matches is Binomial(unseen, p).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations_with_replacement
from math import comb, factorial
from typing import TYPE_CHECKING, Any

from .bids import FACES, count_matching

if TYPE_CHECKING:
    from .state import State

_DIGITS = 4


@lru_cache(maxsize=16)
def hands(dice: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """Every hand of ``dice`` dice, as its faces in order, with its probability (the
    multinomial: a hand of distinct faces is more likely than one face repeated)."""
    out = []
    for hand in combinations_with_replacement(FACES, dice):
        ways = factorial(dice)
        for face in set(hand):
            ways //= factorial(hand.count(face))
        out.append((hand, ways / 6**dice))
    return tuple(out)


@lru_cache(maxsize=512)
def _pmf(n: int, wild: bool) -> tuple[float, ...]:
    """P(X = k) for k = 0..n, X ~ Binomial(n, 1/3 if wild else 1/6)."""
    p = 1 / 3 if wild else 1 / 6
    return tuple(comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1))


@lru_cache(maxsize=512)
def _tail(n: int, wild: bool) -> tuple[float, ...]:
    """P(X >= k) for k = 0..n+1."""
    pmf = _pmf(n, wild)
    tail = [0.0] * (n + 2)
    for k in range(n, -1, -1):
        tail[k] = tail[k + 1] + pmf[k]
    return tuple(min(1.0, t) for t in tail)


def at_least(need: int, unseen: int, wild: bool) -> float:
    """P(at least ``need`` of ``unseen`` dice match)."""
    if need <= 0:
        return 1.0
    if need > unseen:
        return 0.0
    return _tail(unseen, wild)[need]


@lru_cache(maxsize=512)
def most_needed(unseen: int, wild: bool, threshold: float = 0.5) -> int:
    """The largest ``need`` with P(at least ``need`` of ``unseen`` match) >= threshold.

    The tail only falls as ``need`` grows, so this one number answers "which
    quantities of a face are at least this likely" for every quantity at once.
    """
    tail = _tail(unseen, wild)
    need = 0
    while need + 1 <= unseen and tail[need + 1] >= threshold:
        need += 1
    return need


@lru_cache(maxsize=512)
def single_mode(unseen: int, wild: bool) -> int | None:
    """The one most likely number of matches among ``unseen`` dice, or None on a tie."""
    pmf = _pmf(unseen, wild)
    top = max(pmf)
    modes = [k for k, p in enumerate(pmf) if p == top]
    return modes[0] if len(modes) == 1 else None


def exactly(need: int, unseen: int, wild: bool) -> float:
    """P(exactly ``need`` of ``unseen`` dice match)."""
    if not 0 <= need <= unseen:
        return 0.0
    return _pmf(unseen, wild)[need]


def _need(state: State, seat: int, quantity: int, face: int) -> tuple[int, bool]:
    """How many unseen dice must match, and whether ones count, for this bid."""
    mine = count_matching([state.hands[seat]], face, state.ones_wild)
    return quantity - mine, state.ones_wild and face != 1


def bid_true(state: State, seat: int, quantity: int, face: int) -> float:
    """Probability, for ``seat``, that at least ``quantity`` dice show ``face``."""
    need, wild = _need(state, seat, quantity, face)
    return at_least(need, state.dice_in_play - state.counts[seat], wild)


def seat_odds(state: State, seat: int, legal: dict[str, Any]) -> dict[str, Any]:
    """The assisted-mode block of a seat's view.

    ``bid_true`` and ``calza_exact`` are about the standing bid (None before
    the first bid). ``raises`` lists, per face 1..6, the probability of each
    legal raise from the lowest legal quantity (``legal["bid"]``) up to the
    dice in play, or None where no bid on that face is legal.
    """
    unseen = state.dice_in_play - state.counts[seat]
    bid_p: float | None = None
    calza_p: float | None = None
    standing = state.standing_bid
    if standing is not None:
        need, wild = _need(state, seat, standing[1], standing[2])
        bid_p = round(at_least(need, unseen, wild), _DIGITS)
        calza_p = round(exactly(need, unseen, wild), _DIGITS)
    raises: list[list[float] | None] = [None] * 6
    top = legal["max_quantity"]
    for face, floor in zip(FACES, legal["bid"], strict=True):
        if floor is not None:
            need, wild = _need(state, seat, floor, face)
            raises[face - 1] = [
                round(at_least(need + extra, unseen, wild), _DIGITS)
                for extra in range(top - floor + 1)
            ]
    return {"unseen": unseen, "bid_true": bid_p, "calza_exact": calza_p, "raises": raises}
