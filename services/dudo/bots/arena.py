"""``dudo arena``: measure one policy against another with duplicate deals.

A *deal* is a game secret (so every round's dice seeds) and a first opener.
Each deal is played once per seat rotation: the line-up ``a, b, b, ...`` is
rotated so that ``a`` sits in every seat once, with the same deal. Luck of the
dice then falls on every seat equally, and what remains is skill.

Games are played in process through the engine, each policy deciding from its
seat's view exactly as a bot client would. The result is plain data:
``games``, ``win_rate_a`` with its Wilson 95% interval (``ci95_low``,
``ci95_high``), results per seat of ``a``, dice lost per round and challenge
accuracy per policy, and decision times.
"""

from __future__ import annotations

import math
import multiprocessing
import random
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..engine import OVER, Rules, action_from_dict, new_game, rules_dict, seat_view
from .endgame import ENDGAMES
from .levels import LEVELS, POLICIES
from .policies import Policy

MAX_ACTIONS = 5000


def policy_named(name: str) -> Policy:
    """A policy by its name (random, baseline, hard) or level (easy, normal, hard)."""
    if name in POLICIES:
        return POLICIES[name]
    if name in LEVELS:
        return LEVELS[name]
    raise SystemExit(f"unknown policy {name!r}; try one of {sorted({*POLICIES, *LEVELS})}")


@dataclass
class Tally:
    """What happened to one policy over many games."""

    games: int = 0
    wins: int = 0
    rounds: int = 0  # rounds it played with dice
    dice_lost: int = 0
    calls: int = 0  # dudo + calza
    calls_right: int = 0
    dudos: int = 0
    dudos_right: int = 0
    calzas: int = 0
    calzas_right: int = 0
    decision_s: list[float] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in (
            "games",
            "wins",
            "rounds",
            "dice_lost",
            "calls",
            "calls_right",
            "dudos",
            "dudos_right",
            "calzas",
            "calzas_right",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.decision_s.extend(other.decision_s)


def play(rules: Rules, lineup: list[str], secret: bytes, opener: int, seed: str) -> dict[str, Any]:
    """One game; returns the winning seat and a tally per seat."""
    n = len(lineup)
    policies = [policy_named(name) for name in lineup]
    rngs = [random.Random(f"{seed}:{seat}") for seat in range(n)]
    state = new_game(rules, n, secret, opener=opener)
    tallies = [Tally(games=1) for _ in range(n)]
    round_no = 0
    bids = 0  # in the round being played
    round_bids: list[int] = []  # bids made in each round of the game, to its call
    for _ in range(MAX_ACTIONS):
        if state.phase == OVER:
            break
        if state.round_no != round_no:
            round_no = state.round_no
            for seat in range(n):
                if state.counts[seat]:
                    tallies[seat].rounds += 1
        seat = state.turn
        assert seat is not None
        view = {"seat": seat, "game": seat_view(state, seat)}
        started = time.perf_counter()
        decision = policies[seat](view, rngs[seat])
        tallies[seat].decision_s.append(time.perf_counter() - started)
        events = state.apply(seat, action_from_dict(decision))
        bids += decision["type"] == "bid"
        for event in events:
            if event["type"] == "reveal":
                round_bids.append(bids)
                bids = 0
                right = (
                    (event["loser"] != event["caller"])
                    if event["call"] == "dudo"
                    else (event["loser"] is None)
                )
                t = tallies[event["caller"]]
                t.calls += 1
                t.calls_right += right
                if event["call"] == "dudo":
                    t.dudos += 1
                    t.dudos_right += right
                else:
                    t.calzas += 1
                    t.calzas_right += right
            elif event["type"] == "lose_die":
                tallies[event["seat"]].dice_lost += 1
    else:
        raise RuntimeError(f"no winner after {MAX_ACTIONS} actions: {lineup}")
    assert state.winner is not None
    tallies[state.winner].wins = 1
    return {"winner": state.winner, "tallies": tallies, "round_bids": round_bids}


def lineups(a: str, b: str, seats: int) -> list[list[str]]:
    """``a`` in each seat in turn, ``b`` in all the others."""
    return [[a if s == rotation else b for s in range(seats)] for rotation in range(seats)]


def _deal_task(args: tuple[Rules, str, str, int, int, int]) -> list[dict[str, Any]]:
    rules, a, b, seats, seed, deal = args
    deal_rng = random.Random(f"deal:{seed}:{deal}")
    secret = deal_rng.randbytes(32)
    opener = deal_rng.randrange(seats)
    out = []
    for rotation, lineup in enumerate(lineups(a, b, seats)):
        result = play(rules, lineup, secret, opener, f"{seed}:{deal}:{rotation}")
        out.append({"rotation": rotation, "lineup": lineup, **result})
    return out


def wilson(wins: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default)."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def run(
    a: str,
    b: str,
    *,
    seats: int = 2,
    games: int = 1000,
    preset: str = "classic",
    seed: int = 1,
    rules: dict[str, Any] | None = None,
    workers: int | None = None,
) -> dict[str, Any]:
    policy_named(a), policy_named(b)  # fail early on a bad name
    # The hard bot plays solved endgames: wait for each solve rather than play its
    # heuristic meanwhile, so the result does not depend on timing (reproducible).
    ENDGAMES.wait = True
    table_rules = Rules.from_dict({"preset": preset, **(rules or {})})
    if not table_rules.seats_allowed(seats):
        raise SystemExit(f"{preset} seats {table_rules.min_players}..{table_rules.max_players}")
    if "hard" in (a + b):  # solved before the pool forks: its workers inherit them
        ENDGAMES.every_round(rules_dict(table_rules), wait=True)
    deals = math.ceil(games / seats)
    tasks = [(table_rules, a, b, seats, seed, d) for d in range(deals)]
    started = time.perf_counter()
    workers = workers or min(2, multiprocessing.cpu_count())
    if workers > 1:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results = [g for chunk in pool.imap(_deal_task, tasks, chunksize=8) for g in chunk]
    else:
        results = [g for task in tasks for g in _deal_task(task)]
    elapsed = time.perf_counter() - started
    by_policy: dict[str, Tally] = defaultdict(Tally)
    seat_games = [0] * seats
    seat_wins = [0] * seats
    wins_a = 0
    for game in results:
        a_seat = game["rotation"]
        seat_games[a_seat] += 1
        if game["winner"] == a_seat:
            wins_a += 1
            seat_wins[a_seat] += 1
        for seat, tally in enumerate(game["tallies"]):
            by_policy["a" if seat == a_seat else "b"].add(tally)
    n = len(results)
    low, high = wilson(wins_a, n)
    rounds = [b for game in results for b in game["round_bids"]]

    def summary(t: Tally) -> dict[str, Any]:
        ms = [x * 1000 for x in t.decision_s]
        return {
            "dice_lost_per_round": round(t.dice_lost / t.rounds, 4) if t.rounds else None,
            "challenge_accuracy": round(t.calls_right / t.calls, 4) if t.calls else None,
            "dudo_accuracy": round(t.dudos_right / t.dudos, 4) if t.dudos else None,
            "calza_accuracy": round(t.calzas_right / t.calzas, 4) if t.calzas else None,
            "calls": t.calls,
            "decisions": len(ms),
            "decision_ms_median": round(statistics.median(ms), 3) if ms else None,
            "decision_ms_p99": round(sorted(ms)[int(len(ms) * 0.99)], 3) if ms else None,
        }

    return {
        "arena": {
            "a": a,
            "b": b,
            "seats": seats,
            "preset": preset,
            "seed": seed,
            "rules": table_rules.to_dict(),
        },
        "games": n,
        "deals": deals,
        "wins_a": wins_a,
        "win_rate_a": round(wins_a / n, 4),
        "ci95_low": round(low, 4),
        "ci95_high": round(high, 4),
        "chance": round(1 / seats, 4),
        "per_seat": [
            {
                "seat": s,
                "games": seat_games[s],
                "wins_a": seat_wins[s],
                "win_rate_a": round(seat_wins[s] / seat_games[s], 4) if seat_games[s] else None,
            }
            for s in range(seats)
        ],
        # How much bidding a round sees before its call (every seat's bids): a table
        # whose rounds end after one bid gives a person one decision and no bidding.
        "rounds": {
            "count": len(rounds),
            "one_bid_share": round(rounds.count(1) / len(rounds), 4) if rounds else None,
            "bids_per_round": round(statistics.fmean(rounds), 2) if rounds else None,
        },
        "a": summary(by_policy["a"]),
        "b": summary(by_policy["b"]),
        "seconds": round(elapsed, 1),
    }
