"""Bot policies that decide from a seat view alone.

``baseline``: the simple probabilistic player. It knows its own dice and how
many it cannot see; each unseen die matches a face with p = 1/3 (wild ones) or
1/6. It raises with the legal bid most likely to be true when that is at least
even odds, calls Calza when the exact count is the single most likely outcome,
and otherwise calls Dudo.

``random``: a uniformly random kind of legal action, then a random instance.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ..engine.odds import at_least, exactly

View = dict[str, Any]
Policy = Callable[[View, random.Random], dict[str, Any]]


def ones_wild(game: View) -> bool:
    rules = game["rules"]
    return bool(rules["wild_ones"] and (not game["palifico"] or rules["palifico_wild_ones"]))


def _need(game: View, quantity: int, face: int) -> tuple[int, int, bool]:
    """(unseen matches needed, unseen dice, whether ones count) for a bid, from the view."""
    wild = ones_wild(game) and face != 1
    dice = game["dice"]
    mine = dice.count(face) + (dice.count(1) if wild else 0)
    return quantity - mine, game["dice_in_play"] - len(dice), wild


def bid_probability(game: View, quantity: int, face: int) -> float:
    need, unseen, wild = _need(game, quantity, face)
    return at_least(need, unseen, wild)


def exact_probability(game: View, quantity: int, face: int) -> float:
    need, unseen, wild = _need(game, quantity, face)
    return exactly(need, unseen, wild)


def best_raise(game: View) -> tuple[float, int, int] | None:
    """The legal raise most likely to be true: (probability, quantity, face)."""
    legal = game["legal"]
    best: tuple[float, int, int] | None = None
    for face, floor in enumerate(legal["bid"], 1):
        if floor is None:
            continue
        # For a face, the lowest legal quantity is always the most likely one.
        p = bid_probability(game, floor, face)
        if best is None or p > best[0] or (p == best[0] and (floor, face) < best[1:]):
            best = (p, floor, face)
    return best


def baseline(view: View, rng: random.Random) -> dict[str, Any]:
    game = view["game"]
    legal = game["legal"]
    if legal["direction"]:
        return {"type": "direction", "value": rng.choice((1, -1))}
    standing = game["bids"][-1] if game["bids"] else None
    raise_ = best_raise(game)
    if standing is not None:
        _, quantity, face = standing
        if legal["calza"]:
            need, unseen, wild = _need(game, quantity, face)
            p = 1 / 3 if wild else 1 / 6
            mode = int((unseen + 1) * p)
            if need >= 0 and need == mode and exact_probability(game, quantity, face) > 0:
                return {"type": "calza"}
        if legal["dudo"] and (raise_ is None or raise_[0] < 0.5):
            return {"type": "dudo"}
    if raise_ is not None:
        return {"type": "bid", "quantity": raise_[1], "face": raise_[2]}
    if legal["dudo"]:
        return {"type": "dudo"}
    return {"type": "calza"}


def random_policy(view: View, rng: random.Random) -> dict[str, Any]:
    legal = view["game"]["legal"]
    kinds = [k for k in ("dudo", "calza", "direction") if legal[k]]
    faces = [f for f, floor in enumerate(legal["bid"], 1) if floor is not None]
    if faces:
        kinds.append("bid")
    kind = rng.choice(kinds)
    if kind == "bid":
        face = rng.choice(faces)
        floor = legal["bid"][face - 1]
        return {"type": "bid", "quantity": rng.randint(floor, legal["max_quantity"]), "face": face}
    if kind == "direction":
        return {"type": "direction", "value": rng.choice((1, -1))}
    return {"type": kind}


POLICIES: dict[str, Policy] = {"baseline": baseline, "random": random_policy}
HOUSE_POLICY: Policy = baseline


def my_turn(view: View) -> bool:
    """Is it this seat's turn (to bid, call or choose the direction)?"""
    game = view.get("game")
    return bool(game) and game["phase"] != "over" and game["turn"] == view["seat"]
