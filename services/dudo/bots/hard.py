"""The hard policy: a belief over every opponent's hidden dice, updated from their bids.

The baseline judges a bid from its own dice alone, as if the others' dice were
uniformly random. But a bid says something about the bidder's hand: people
(and bots) bid faces they hold, and rarely bid what their own hand makes
unlikely. This policy keeps that belief exactly:

1. **Hands.** An opponent with k dice holds one of the multisets of k faces
   (252 for five dice), each with its multinomial prior probability.
2. **Update.** Each bid (q, f) that opponent made this round multiplies the
   weight of every hand h by the likelihood of that bid from h, under a model
   of a reasonable bidder: it picks face f with probability proportional to
   ``exp(beta * support_f(h))`` (support: the dice of h that count for f), and
   it makes a bid it believes with probability ``sigmoid(alpha * (P_h - tau))``,
   where P_h is how likely the bid is from h's point of view; a small epsilon
   keeps every hand possible (bluffs happen).
3. **Counts.** Each opponent's posterior gives a distribution of how many of
   their dice count for a face; convolving them with this seat's own dice gives
   the distribution of the total, hence P(bid true) and P(exactly right) for
   every bid, exactly, with no sampling.
4. **Scores.** How likely each action keeps this seat's dice: Dudo scores
   P(standing bid false), Calza P(exact), a raise the legal bid most likely true
   (raising passes the risk on, so a raise gets a small bonus). Calza that can
   win a die back gets a small bonus too.
5. **Mixing and bluffs.** A bot that always takes the best score shows its hand
   and can be read: a best responder beats it most of the time (docs/benchmarks.md,
   "Measurements behind the code"). So the move is a distribution: actions scoring
   alike share the probability (a softmax), and part of a raise's share goes to bids on
   faces it does not hold. The opponent model expects bluffs in return (epsilon).
6. **Solved endgames.** Heads-up with one die each, and with two dice against one,
   where the game comes down to those rounds, it plays the round's equilibrium; with
   two dice each, the equilibrium of that round with at most three bids a seat
   (:mod:`dudo.bots.endgame`).

Everything is computed from the seat's view: its dice, the dice counts and
this round's bids. See docs/bots.md for the measured strength.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache
from typing import Any

from ..engine import at_least, odds
from .endgame import ENDGAMES
from .policies import View, draw, legal_raises, ones_wild, strength

ALPHA = 8.0  # how sharply a bidder avoids bids it does not believe
TAU = 0.35  # the belief below which a bid counts as a bluff
BETA = 0.9  # how strongly a bidder prefers faces it holds
EPSILON = 0.3  # room for bluffs: no hand is ever ruled out, and bluffers are expected
RAISE_BONUS = 0.04  # a raise is not always challenged: it is worth a little more
CALZA_BONUS = 0.05  # a right Calza can win a die back
TEMPERATURE = 0.04  # scores this close share the probability (near-ties are mixed)
BLUFF_OPEN = 0.3  # openings on a face this seat does not hold (the hand is not shown)
BLUFF_RAISE = 0.1  # raises on a face it does not hold...
BLUFF_MARGIN = 0.15  # ...when that raise is this nearly as likely true as the best


@lru_cache(maxsize=16)
def hands(k: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """Every hand of k dice as (counts of faces 1..6, prior probability)."""
    return tuple(
        (tuple(hand.count(face) for face in range(1, 7)), p) for hand, p in odds.hands(k)
    )


def _support(counts: tuple[int, ...], face: int, wild: bool) -> int:
    return counts[face - 1] + (counts[0] if wild and face != 1 else 0)


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def posterior(
    k: int,
    bids: list[tuple[int, int]],
    dice_in_play: int,
    wild: bool,
    locked: bool,
) -> list[tuple[tuple[int, ...], float]]:
    """The weights of an opponent's possible hands after its bids of this round.

    ``bids`` are its own bids in order; ``locked``: a palifico round, where
    only the opening bid chose its face.
    """
    unseen_for_them = dice_in_play - k
    weighted = []
    for counts, prior in hands(k):
        weight = prior
        for i, (quantity, face) in enumerate(bids):
            face_wild = wild and face != 1
            support = _support(counts, face, wild)
            belief = at_least(quantity - support, unseen_for_them, face_wild)
            likely = EPSILON + (1 - EPSILON) * _sigmoid(ALPHA * (belief - TAU))
            if not (locked and i > 0):
                scores = [math.exp(BETA * _support(counts, f, wild)) for f in range(1, 7)]
                likely *= scores[face - 1] / sum(scores)
            weight *= likely
        weighted.append((counts, weight))
    total = sum(w for _, w in weighted) or 1.0
    return [(counts, w / total) for counts, w in weighted]


def count_distribution(
    beliefs: list[list[tuple[tuple[int, ...], float]]], face: int, wild: bool
) -> list[float]:
    """P(the opponents together hold exactly x dice counting for ``face``), x = 0, 1, ..."""
    total = [1.0]
    for belief in beliefs:
        own = [0.0] * (max((sum(c) for c, _ in belief), default=0) + 1)
        for counts, weight in belief:
            own[_support(counts, face, wild)] += weight
        merged = [0.0] * (len(total) + len(own) - 1)
        for i, p in enumerate(total):
            if p:
                for j, q in enumerate(own):
                    merged[i + j] += p * q
        total = merged
    return total


class Belief:
    """P(bid true) and P(exact) for every bid, from this seat's view.

    ``update`` False ignores what the bids reveal (every hand keeps its prior):
    the ablation ``hard-blind`` that shows what the inference is worth.
    """

    def __init__(self, game: View, update: bool = True) -> None:
        self.game = game
        self.wild = ones_wild(game)
        me = game["seat"]
        bids_by_seat: dict[int, list[tuple[int, int]]] = {}
        for seat, quantity, face in game["bids"]:
            bids_by_seat.setdefault(seat, []).append((quantity, face))
        locked = bool(game["palifico"])
        self.beliefs = [
            posterior(
                count,
                bids_by_seat.get(seat, []) if update else [],
                game["dice_in_play"],
                self.wild,
                locked,
            )
            for seat, count in enumerate(game["dice_counts"])
            if seat != me and count > 0
        ]
        self.dice = game["dice"]
        self._tails: dict[int, tuple[list[float], list[float]]] = {}

    def _for_face(self, face: int) -> tuple[list[float], list[float]]:
        """(P(total == x), P(total >= x)) for x = 0..dice in play."""
        if face not in self._tails:
            mine = self.mine(face)
            others = count_distribution(self.beliefs, face, self.wild)
            exact = [0.0] * (mine + len(others))
            for x, p in enumerate(others):
                exact[mine + x] = p
            tail = [0.0] * (len(exact) + 1)
            for x in range(len(exact) - 1, -1, -1):
                tail[x] = tail[x + 1] + exact[x]
            self._tails[face] = (exact, tail)
        return self._tails[face]

    def mine(self, face: int) -> int:
        """This seat's own dice that count for ``face`` (its ones too, where wild)."""
        return self.dice.count(face) + (self.dice.count(1) if self.wild and face != 1 else 0)

    def true(self, quantity: int, face: int) -> float:
        _, tail = self._for_face(face)
        return tail[quantity] if 0 <= quantity < len(tail) else (1.0 if quantity < 0 else 0.0)

    def exact(self, quantity: int, face: int) -> float:
        exact, _ = self._for_face(face)
        return exact[quantity] if 0 <= quantity < len(exact) else 0.0


Choice = list[tuple[dict[str, Any], float]]  # actions and their probabilities


def distribution(view: View, *, update: bool = True, endgame: bool = True) -> Choice:
    """The hard bot's move as probabilities (:func:`hard` draws from them).

    Heads-up with one die each, two against one or two each, where the game comes down
    to those rounds, it plays the round's solve (:mod:`dudo.bots.endgame`). Elsewhere, the
    belief's scores (as in the module's docstring), mixed: actions scoring alike share the
    probability (a softmax at ``TEMPERATURE``), and a raise is sometimes a bluff on a
    face this seat does not hold (``BLUFF_OPEN`` of openings, ``BLUFF_RAISE`` of
    raises), among the raises nearly as safe as the best, so its bids do not show
    its hand."""
    game = {**view["game"], "seat": view["seat"]}
    legal = game["legal"]
    if legal["direction"]:
        return [({"type": "direction", "value": _direction(game)}, 1.0)]
    counts = ENDGAMES.applies(game) if endgame else None
    if counts is not None:
        solved = ENDGAMES.get(game["rules"], palifico=game["palifico"], counts=counts)
        if solved is not None:
            found = solved.distribution(game, view["seat"])
            if found:
                return found
    belief = Belief(game, update)
    standing = game["bids"][-1] if game["bids"] else None
    options = _calls(game, belief, standing)
    best, lowest = _raises(game, belief)
    raise_at = len(options)
    if best is not None:
        (p, _), quantity, face = best
        options.append((p + RAISE_BONUS, {"type": "bid", "quantity": quantity, "face": face}))
    top = max(score for score, _ in options)
    weights = [math.exp((score - top) / TEMPERATURE) for score, _ in options]
    total = sum(weights)
    choice: Choice = [(action, w / total) for (_, action), w in zip(options, weights, strict=True)]
    if best is None:
        return choice
    bluffs = _bluffs(belief, best, lowest, opening=standing is None)
    if not bluffs:
        return choice
    action, share = choice[raise_at]
    rate = BLUFF_OPEN if standing is None else BLUFF_RAISE
    choice[raise_at] = (action, share * (1 - rate))
    choice += [(bluff, share * rate / len(bluffs)) for bluff in bluffs]
    return choice


Best = tuple[tuple[float, tuple[float, float]], int, int]  # ((P(true), strength), q, face)


def _calls(game: View, belief: Belief, standing: list[int] | None) -> list[tuple[float, View]]:
    """Dudo and Calza, where legal, each with its score: how likely it is right (a
    Calza that may win a die back scores ``CALZA_BONUS`` more)."""
    options: list[tuple[float, View]] = []
    if standing is None:
        return options
    legal = game["legal"]
    _, quantity, face = standing
    if legal["dudo"]:
        options.append((1 - belief.true(quantity, face), {"type": "dudo"}))
    if legal["calza"]:
        can_gain = game["dice_counts"][game["seat"]] < game["rules"]["max_dice"]
        score = belief.exact(quantity, face) + (CALZA_BONUS if can_gain else 0.0)
        options.append((score, {"type": "calza"}))
    return options


def _raises(game: View, belief: Belief) -> tuple[Best | None, dict[int, tuple[float, int]]]:
    """The best raise (the likeliest true; among equally safe ones the stronger: it
    passes more pressure on), and per face the floor of its legal raises:
    ``(P(true), quantity)``."""
    best: Best | None = None
    lowest: dict[int, tuple[float, int]] = {}
    for quantity, face in legal_raises(game):
        p = belief.true(quantity, face)
        key = (p, strength(quantity, face, belief.wild))
        if best is None or key > best[0]:
            best = (key, quantity, face)
        if face not in lowest:
            lowest[face] = (p, quantity)
    return best, lowest


def _bluffs(
    belief: Belief, best: Best, lowest: dict[int, tuple[float, int]], *, opening: bool
) -> list[View]:
    """Where the raise's share partly goes: faces this seat holds none of, at their
    lowest legal quantity, when that is nearly as safe as the best raise. Openings:
    the two lowest faces weaker in its hand than the best one, at their floor (as the
    equilibrium of the smallest games does: cheap bids that leave room, and say nothing
    of the hand)."""
    (p_best, _), _, best_face = best
    support = belief.mine
    if opening:
        return [
            {"type": "bid", "quantity": quantity, "face": f}
            for f, (_, quantity) in sorted(lowest.items())
            if f != best_face and support(f) < support(best_face)
        ][:2]
    held = {f for f in range(1, 7) if support(f)}
    return [
        {"type": "bid", "quantity": quantity, "face": f}
        for f, (p, quantity) in lowest.items()
        if f not in held and f != best_face and p >= p_best - BLUFF_MARGIN
    ]


def hard(view: View, rng: random.Random, *, update: bool = True) -> dict[str, Any]:
    """The hard bot's move: drawn from :func:`distribution` with the bot's own RNG."""
    return draw(distribution(view, update=update), rng)


def _direction(game: View) -> int:
    """Pass the first decision to the neighbour with fewer dice (less able to raise)."""
    counts, me, n = game["dice_counts"], game["seat"], len(game["dice_counts"])

    def neighbour(step: int) -> int:
        seat = (me + step) % n
        while counts[seat] == 0:
            seat = (seat + step) % n
        return seat

    return 1 if counts[neighbour(1)] <= counts[neighbour(-1)] else -1


def hard_blind(view: View, rng: random.Random) -> dict[str, Any]:
    """The same decisions from the prior alone: what ``hard`` would do without inference."""
    return hard(view, rng, update=False)
