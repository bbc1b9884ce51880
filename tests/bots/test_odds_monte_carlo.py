"""Assisted-mode odds in a seat's view, checked against Monte Carlo simulation."""

from __future__ import annotations

import math
import random

from dudo.engine import Bid, new_game, preset, seat_view

SAMPLES = 20_000


def simulate(view: dict, quantity: int, face: int, rng: random.Random) -> tuple[float, float]:
    """Deal the unseen dice at random many times: P(at least) and P(exactly)."""
    game = view
    wild = game["rules"]["wild_ones"] and not game["palifico"] and face != 1
    mine = sum(1 for d in game["dice"] if d == face or (wild and d == 1))
    unseen = game["dice_in_play"] - len(game["dice"])
    at_least = exactly = 0
    for _ in range(SAMPLES):
        hits = mine + sum(
            1 for _ in range(unseen) if (d := rng.randint(1, 6)) == face or (wild and d == 1)
        )
        at_least += hits >= quantity
        exactly += hits == quantity
    return at_least / SAMPLES, exactly / SAMPLES


def close(p: float, estimate: float) -> bool:
    # 5 standard errors: a false alarm has probability ~1e-6 (and the RNG is seeded).
    return abs(p - estimate) <= 5 * math.sqrt(max(p * (1 - p), 1e-4) / SAMPLES) + 1e-3


def test_assisted_odds_agree_with_monte_carlo() -> None:
    rng = random.Random(12345)
    for name, seats in (("classic", 3), ("liars-dice", 2), ("cacho", 4)):
        state = new_game(preset(name, assisted=True), seats, rng.randbytes(32))
        state.apply(state.turn, Bid(3, 4))
        seat = state.turn
        view = seat_view(state, seat)
        odds = view["odds"]
        p_true, p_exact = simulate(view, 3, 4, rng)
        assert close(odds["bid_true"], p_true), (name, odds["bid_true"], p_true)
        assert close(odds["calza_exact"], p_exact), (name, odds["calza_exact"], p_exact)
        for face, row in enumerate(odds["raises"], 1):
            if row is None:
                continue
            floor = view["legal"]["bid"][face - 1]
            for quantity in (floor, floor + 1):
                p, _ = simulate(view, quantity, face, rng)
                assert close(row[quantity - floor], p), (name, face, quantity, row, p)
