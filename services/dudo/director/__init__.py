"""Tournaments and ratings: the entities a director's partition loop hosts.

:class:`Tournament` (its state declared once in :mod:`.state`; seating by the balancing
rules of :mod:`.balance` and :mod:`.planning`, pure functions; chips by :mod:`.prizes`;
standings), and :class:`Ratings`, the one entity of the ratings' key space. Gateways read
none of their records: they read what these publish (lobby entries) and ask the rest
(``standings``)."""

from .prizes import split_pool
from .ratings import Ratings, RatingsContext
from .state import OVER, RUNNING, Context
from .tournament import Tournament

__all__ = [
    "OVER",
    "RUNNING",
    "Context",
    "Ratings",
    "RatingsContext",
    "Tournament",
    "split_pool",
]
