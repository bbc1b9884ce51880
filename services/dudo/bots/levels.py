"""The registry of bot policies by name, and what each bot level plays.

Apart from :mod:`dudo.bots.policies` because the hard policy builds on that module's
helpers: a registry there would import :mod:`dudo.bots.hard`, which imports it back.
"""

from __future__ import annotations

from .hard import hard, hard_blind
from .policies import Policy, baseline, normal, random_policy

__all__ = ["HOUSE_POLICY", "LEVELS", "POLICIES"]

POLICIES: dict[str, Policy] = {
    "random": random_policy,
    "baseline": baseline,
    "normal": normal,
    "hard": hard,
    "hard-blind": hard_blind,  # an ablation for docs/bots.md: hard without inference
}

# What plays a seat whose player is away (the table's house bot).
HOUSE_POLICY: Policy = baseline

# What each bot level plays (the bot service's seats, and a tournament's bots the
# table plays itself).
LEVELS: dict[str, Policy] = {
    "easy": POLICIES["random"],
    "normal": POLICIES["normal"],
    "hard": POLICIES["hard"],
}
