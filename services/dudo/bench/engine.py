"""``dudo bench engine``: random games in process, a view for every seat after each action.

The figure this prints is the engine's ceiling: a worker can never apply
actions faster than this, whatever Redis does. Every applied action is
followed by building the spectator view and every seat's view, as a worker
must before it delivers them.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import time
from typing import Any

from ..engine import Action, Bid, Calza, Direction, Dudo, all_views, new_game
from ..engine import preset as make_rules


def random_action(legal: dict[str, Any], rng: random.Random) -> Action:
    """A uniformly random kind of legal action, then a random instance of it."""
    kinds = []
    faces = [face for face, floor in enumerate(legal["bid"], 1) if floor is not None]
    if faces:
        kinds.append("bid")
    if legal["dudo"]:
        kinds.append("dudo")
    if legal["calza"]:
        kinds.append("calza")
    if legal["direction"]:
        kinds.append("direction")
    kind = rng.choice(kinds)
    if kind == "bid":
        face = rng.choice(faces)
        floor = legal["bid"][face - 1]
        # Mostly modest raises, as people make; sometimes a jump.
        top = legal["max_quantity"] if rng.random() < 0.1 else min(legal["max_quantity"], floor + 1)
        return Bid(rng.randint(floor, top), face)
    if kind == "dudo":
        return Dudo()
    if kind == "calza":
        return Calza()
    return Direction(rng.choice((1, -1)))


def run(
    seconds: float = 5.0,
    *,
    preset: str = "classic",
    seats: int = 4,
    seed: int = 1,
    samples: int = 5,
) -> dict[str, Any]:
    """Play random games for about ``seconds``; report the median rate of ``samples`` slices."""
    rules = make_rules(preset)
    rng = random.Random(seed)
    rates: list[float] = []
    total_actions = 0
    games = 0
    state = new_game(rules, seats, rng.randbytes(32))
    _, views = all_views(state)
    for _ in range(samples):
        actions = 0
        start = time.perf_counter()
        deadline = start + seconds / samples
        while time.perf_counter() < deadline:
            for _ in range(200):
                if state.winner is not None:
                    games += 1
                    state = new_game(rules, seats, rng.randbytes(32))
                    _, views = all_views(state)
                # The seat in turn decides from its own view, as a bot client would.
                seat = state.turn
                state.apply(seat, random_action(views[seat]["legal"], rng))
                _, views = all_views(state)  # what a worker builds before delivering
                actions += 1
        rates.append(actions / (time.perf_counter() - start))
        total_actions += actions
    return {
        "bench": "engine",
        "preset": rules.preset,
        "seats": seats,
        "actions": total_actions,
        "games": games,
        "actions_per_s": round(statistics.median(rates)),
        "actions_per_s_samples": [round(r) for r in rates],
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
