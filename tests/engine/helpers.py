"""Helpers shared by the engine tests: building positions and playing random games."""

from __future__ import annotations

import random
from typing import Any

from dudo.engine import (
    Action,
    Bid,
    Calza,
    Direction,
    Dudo,
    Rules,
    State,
    from_bytes,
    new_game,
    preset,
    to_bytes,
)

SECRET = bytes(range(32))


def game(
    rules: Rules | str = "classic",
    seats: int = 3,
    dice: list[list[int]] | None = None,
    **start: Any,
) -> State:
    """A game at its first round, optionally with dealt dice and a starting position."""
    if isinstance(rules, str):
        rules = preset(rules)
    state = new_game(rules, seats, SECRET, **start)
    if dice is not None:
        state.deal(dice)
    return state


def copy(state: State) -> State:
    return from_bytes(to_bytes(state))


def any_action(rng: random.Random, state: State) -> tuple[int, Action]:
    """A random seat and a random action from the whole action space, legal or not."""
    seat = rng.randrange(-1, state.seats + 1)
    roll = rng.random()
    action: Action
    if roll < 0.6:
        action = Bid(rng.randint(-1, state.dice_in_play + 2), rng.randint(0, 7))
    elif roll < 0.75:
        action = Dudo()
    elif roll < 0.9:
        action = Calza()
    else:
        action = Direction(rng.choice((1, -1, 0, 2)))
    return seat, action


def legal_moves(state: State) -> list[tuple[int, Action]]:
    """Every (seat, action) pair that is legal now, over all seats."""
    return [(seat, a) for seat in range(state.seats) for a in state.legal_actions(seat)]


def pick(rng: random.Random, moves: list[tuple[int, Action]]) -> tuple[int, Action]:
    """A random legal move that favours small raises, so games look like real play."""
    bids = [m for m in moves if isinstance(m[1], Bid)]
    others = [m for m in moves if not isinstance(m[1], Bid)]
    if bids and (not others or rng.random() < 0.7):
        low = min(m[1].quantity for m in bids)
        modest = [m for m in bids if m[1].quantity <= low + 1]
        return rng.choice(modest if rng.random() < 0.9 else bids)
    return rng.choice(others)
