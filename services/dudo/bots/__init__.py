"""Bot policies: functions from a seat's view (plain data) to an action (plain data).

Bots are clients: they see exactly what a person in that seat sees, and act
through the same protocol. The house bot that plays for a seat whose clock ran
out uses the same policies.
"""

from .levels import HOUSE_POLICY, LEVELS, POLICIES
from .policies import baseline, random_policy

__all__ = [
    "HOUSE_POLICY", "LEVELS", "POLICIES", "baseline", "random_policy",
]
