"""Bot policies: functions from a seat's view (plain data) to an action (plain data).

Bots are clients: they see exactly what a person in that seat sees, and act
through the same protocol. The house bot that plays for a seat whose clock ran
out uses the same policies.
"""

from .arena import run
from .endgame import ENDGAMES, ITERATIONS, ROUNDS, Endgames, round_tree
from .hard import distribution
from .levels import HOUSE_POLICY, LEVELS, POLICIES
from .names import NAMES, bot_name
from .policies import (
    baseline,
    my_turn,
    normal_distribution,
    ones_wild,
    random_distribution,
    random_policy,
)
from .tree import Leaf, hands_of, payoffs

__all__ = [
    "ENDGAMES",
    "HOUSE_POLICY",
    "ITERATIONS",
    "LEVELS",
    "NAMES",
    "POLICIES",
    "ROUNDS",
    "Endgames",
    "Leaf",
    "baseline",
    "bot_name",
    "distribution",
    "hands_of",
    "my_turn",
    "normal_distribution",
    "ones_wild",
    "payoffs",
    "random_distribution",
    "random_policy",
    "round_tree",
    "run",
    "solver",
]
