"""One table around the engine, hosted by the partition loop as an entity.

The state is declared once (:mod:`.state`); seating, clocks, a tournament's seats and
the output each add behaviour to it, and :class:`Table` (:mod:`.table`) puts them
together with the message → handler table."""

from .output import error_for
from .state import DEFAULT_LIMITS, DONE, OPEN, PLAYING, Limits, Seat, TableState
from .table import FORMAT, Table

__all__ = [
    "DEFAULT_LIMITS", "DONE", "FORMAT", "OPEN", "PLAYING", "Limits", "Seat", "Table",
    "TableState", "error_for",
]  # fmt: skip
