"""Bot policies: functions from a seat's view (plain data) to an action (plain data).

A policy sees exactly what a person in that seat sees (its own dice, every
dice count, the bids of this round), never more. Three levels:

- ``random`` (easy): a uniformly random kind of legal action, then a random
  instance of it.
- ``baseline`` (normal): the simple probabilistic player. From its own dice
  only, each unseen die matches a face with p = 1/3 (wild ones) or 1/6. It
  calls Calza when the exact count is the single most likely outcome; else it
  makes (or opens with) the strongest legal bid that is at least 50% likely;
  else Dudo.
- ``hard``: reasons about what the others' bids reveal (:mod:`dudo.bots.hard`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ..engine import at_least, exactly, most_needed, single_mode

View = dict[str, Any]
Policy = Callable[[View, random.Random], dict[str, Any]]


def ones_wild(game: View) -> bool:
    rules = game["rules"]
    return bool(rules["wild_ones"] and (not game["palifico"] or rules["palifico_wild_ones"]))


def strength(quantity: int, face: int, wild: bool) -> tuple[float, float]:
    """A key that orders bids as the raising rules do: a bid raises another only if its
    key is larger. With wild ones, n ones rank between 2n-1 and 2n+1 of another face."""
    if face == 1 and wild:
        return (2 * quantity, 6.5)
    return (quantity, face)


def _need(game: View, quantity: int, face: int) -> tuple[int, int, bool]:
    """(unseen matches needed, unseen dice, whether ones count) for a bid, from the view."""
    wild = ones_wild(game) and face != 1
    dice = game["dice"]
    mine = dice.count(face) + (dice.count(1) if wild else 0)
    return quantity - mine, game["dice_in_play"] - len(dice), wild


def bid_probability(game: View, quantity: int, face: int) -> float:
    """P(at least ``quantity`` dice show ``face``), from this seat's own dice."""
    need, unseen, wild = _need(game, quantity, face)
    return at_least(need, unseen, wild)


def exact_probability(game: View, quantity: int, face: int) -> float:
    need, unseen, wild = _need(game, quantity, face)
    return exactly(need, unseen, wild)


def legal_raises(game: View) -> list[tuple[int, int]]:
    """Every legal bid now, as (quantity, face)."""
    legal = game["legal"]
    top = legal["max_quantity"]
    return [
        (q, face)
        for face, floor in enumerate(legal["bid"], 1)
        if floor is not None
        for q in range(floor, top + 1)
    ]


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


def exact_is_most_likely(game: View, quantity: int, face: int) -> bool:
    """Is the bid's exact count the single most likely total, seen from this seat?"""
    need, unseen, wild = _need(game, quantity, face)
    return single_mode(unseen, wild) == need


def strongest_likely(game: View, wild: bool) -> tuple[int, int] | None:
    """The strongest legal bid at least 50% likely from this seat's dice, if any."""
    legal = game["legal"]
    top = legal["max_quantity"]
    best: tuple[int, int] | None = None
    for face, floor in enumerate(legal["bid"], 1):
        if floor is None:
            continue
        need, unseen, face_wild = _need(game, floor, face)
        # The likeliest quantity is the floor; the largest still at 50% is fixed by the tail.
        quantity = min(top, floor - need + most_needed(unseen, face_wild))
        if quantity >= floor and (
            best is None or strength(quantity, face, wild) > strength(*best, wild)
        ):
            best = (quantity, face)
    return best


def baseline(view: View, rng: random.Random) -> dict[str, Any]:
    game = view["game"]
    legal = game["legal"]
    if legal["direction"]:
        return {"type": "direction", "value": rng.choice((1, -1))}
    wild = ones_wild(game)
    standing = game["bids"][-1] if game["bids"] else None
    if standing is not None and legal["calza"]:
        _, quantity, face = standing
        if exact_is_most_likely(game, quantity, face):
            return {"type": "calza"}
    chosen = strongest_likely(game, wild)
    if chosen is None and legal["dudo"]:
        return {"type": "dudo"}
    if chosen is None:  # nothing at 50% and no Dudo: the likeliest bid
        _, quantity, face = best_raise(game)  # type: ignore[misc]
        chosen = (quantity, face)
    return {"type": "bid", "quantity": chosen[0], "face": chosen[1]}


OPENING_SURE = 0.9  # normal opens with a bid this likely from its own dice...
RAISE_SURE = 0.5  # ...and raises (the smallest step) while one is this likely


def normal(view: View, rng: random.Random) -> dict[str, Any]:
    """The normal bot: bids as people do. It opens below what it expects (a bid 90%
    likely from its own dice, one less three times in ten) and raises by the smallest
    step it believes (50%), reading the standing bid as its bidder holding one of that
    face; else Dudo (Calza half the time the exact count is the most likely). The
    baseline instead opened with the strongest bid at 50% (8 or 9 of a face among 20
    dice) and the next seat called it: 66% of its rounds had one bid."""
    return draw(normal_distribution(view), rng)


def normal_distribution(view: View) -> list[tuple[dict[str, Any], float]]:
    """:func:`normal`'s move as exact probabilities (the exploitability bench reads it)."""
    game = view["game"]
    legal = game["legal"]
    if legal["direction"]:
        return [({"type": "direction", "value": v}, 0.5) for v in (1, -1)]
    standing = game["bids"][-1] if game["bids"] else None
    if standing is None:
        return _opening(game)
    bidder, quantity, face = standing
    calza = legal["calza"] and exact_is_most_likely(game, quantity, face)
    best: tuple[float, int, int] | None = None
    for bid_face, floor in enumerate(legal["bid"], 1):
        if floor is None:
            continue
        need, unseen, wild = _need(game, floor, bid_face)
        if bid_face == face and game["dice_counts"][bidder]:  # the bidder's claimed die
            need, unseen = need - 1, unseen - 1
        p = at_least(need, unseen, wild)
        if best is None or p > best[0]:
            best = (p, floor, bid_face)
    if best is not None and (best[0] >= RAISE_SURE or not legal["dudo"]):
        move = {"type": "bid", "quantity": best[1], "face": best[2]}
    else:
        move = {"type": "dudo"}
    return [({"type": "calza"}, 0.5), (move, 0.5)] if calza else [(move, 1.0)]


def _opening(game: View) -> list[tuple[dict[str, Any], float]]:
    """The face it holds most of (ones counted with it when wild), at a quantity 90%
    likely, one less three times in ten; never below the rules' floor."""
    legal = game["legal"]
    options = []
    for face, floor in enumerate(legal["bid"], 1):
        if floor is None:
            continue
        need, unseen, wild = _need(game, 0, face)
        options.append((-need, face != 1, face, floor, unseen, wild))  # -need: held
    held, _, face, floor, unseen, wild = max(options)
    top = held + most_needed(unseen, wild, OPENING_SURE)
    out: dict[int, float] = {}
    for quantity, p in ((top, 0.7), (top - 1, 0.3)):
        quantity = max(floor, min(legal["max_quantity"], quantity))
        out[quantity] = out.get(quantity, 0.0) + p
    return [({"type": "bid", "quantity": q, "face": face}, p) for q, p in out.items()]


def random_policy(view: View, rng: random.Random) -> dict[str, Any]:
    """The easy bot: a uniformly random kind of legal action, then a random instance."""
    return draw(random_distribution(view), rng)


def random_distribution(view: View) -> list[tuple[dict[str, Any], float]]:
    """:func:`random_policy`'s move as exact probabilities: each kind of legal action
    alike, then each face alike, then each quantity alike."""
    legal = view["game"]["legal"]
    kinds = [k for k in ("dudo", "calza", "direction") if legal[k]]
    faces = [f for f, floor in enumerate(legal["bid"], 1) if floor is not None]
    if faces:
        kinds.append("bid")
    share = 1 / len(kinds)
    out: list[tuple[dict[str, Any], float]] = []
    for kind in kinds:
        if kind == "bid":
            for face in faces:
                floor = legal["bid"][face - 1]
                quantities = range(floor, legal["max_quantity"] + 1)
                for q in quantities:
                    out.append(({"type": "bid", "quantity": q, "face": face},
                                share / len(faces) / len(quantities)))  # fmt: skip
        elif kind == "direction":
            out += [({"type": "direction", "value": v}, share / 2) for v in (1, -1)]
        else:
            out.append(({"type": kind}, share))
    return out


def draw(choice: list[tuple[dict[str, Any], float]], rng: random.Random) -> dict[str, Any]:
    """One action from a distribution, with the bot's own RNG (one number per move)."""
    pick = rng.random()
    for action, p in choice:
        pick -= p
        if pick <= 0:
            return action
    return choice[-1][0]


def my_turn(view: View) -> bool:
    """Is it this seat's turn (to bid, call or choose the direction)?"""
    game = view.get("game")
    return bool(game) and game["phase"] != "over" and game["turn"] == view["seat"]
