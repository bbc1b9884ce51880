"""The four things a seat can do, as small immutable values, and their plain-data form.

``{"type": "bid", "quantity": 7, "face": 4}``, ``{"type": "dudo"}``,
``{"type": "calza"}`` and ``{"type": "direction", "value": -1}`` are the forms
used by the conformance vectors and the wire protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import BAD_ACTION, RuleError


@dataclass(frozen=True, slots=True)
class Bid:
    """At least ``quantity`` dice on the whole table show ``face`` (ones may be wild)."""

    quantity: int
    face: int

    def to_dict(self) -> dict[str, Any]:
        return {"type": "bid", "quantity": self.quantity, "face": self.face}


@dataclass(frozen=True, slots=True)
class Dudo:
    """ "I doubt it": the standing bid is too high."""

    def to_dict(self) -> dict[str, Any]:
        return {"type": "dudo"}


@dataclass(frozen=True, slots=True)
class Calza:
    """The standing bid is exactly right."""

    def to_dict(self) -> dict[str, Any]:
        return {"type": "calza"}


@dataclass(frozen=True, slots=True)
class Direction:
    """The opener's choice of direction: 1 = increasing seat numbers, -1 = decreasing."""

    value: int

    def to_dict(self) -> dict[str, Any]:
        return {"type": "direction", "value": self.value}


Action = Bid | Dudo | Calza | Direction

DUDO = Dudo()
CALZA = Calza()


ACTION_FIELDS = {  # the fields each kind of action has, all required (integers but `type`)
    "bid": frozenset({"type", "quantity", "face"}),
    "dudo": frozenset({"type"}),
    "calza": frozenset({"type"}),
    "direction": frozenset({"type", "value"}),
}


def _strict_int(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RuleError(BAD_ACTION, f"{key} must be an integer, got {value!r}")
    return value


def action_from_dict(data: Any) -> Action:
    """Parse the plain-data form; anything malformed is a ``bad_action`` RuleError.

    Ranges (face 1..6, quantity within the dice in play, direction ±1) are rule
    checks made by the state, which knows the table.
    """
    if not isinstance(data, dict):
        raise RuleError(BAD_ACTION, "an action must be an object with a 'type'")
    kind = data.get("type")
    if kind == "bid":
        action: Action = Bid(_strict_int(data, "quantity"), _strict_int(data, "face"))
    elif kind == "dudo":
        action = DUDO
    elif kind == "calza":
        action = CALZA
    elif kind == "direction":
        action = Direction(_strict_int(data, "value"))
    else:
        raise RuleError(BAD_ACTION, f"unknown action type {kind!r}")
    allowed = ACTION_FIELDS[kind]
    # Every allowed field was read above, so as many keys as allowed fields means no others.
    if len(data) != len(allowed):
        extra = ", ".join(sorted(str(key) for key in data if key not in allowed))
        raise RuleError(BAD_ACTION, f"unexpected field(s) for {kind}: {extra}")
    return action
