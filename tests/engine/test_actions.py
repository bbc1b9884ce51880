"""The plain-data form of actions: what parses, and the ``bad_action`` refusals."""

from __future__ import annotations

from typing import Any

import pytest

from dudo.engine import RuleError, action_from_dict
from dudo.engine.actions import Bid, Calza, Direction, Dudo


@pytest.mark.parametrize(
    ("data", "action"),
    [
        ({"type": "bid", "quantity": 3, "face": 4}, Bid(3, 4)),
        ({"type": "dudo"}, Dudo()),
        ({"type": "calza"}, Calza()),
        ({"type": "direction", "value": -1}, Direction(-1)),
    ],
)
def test_each_action_parses(data: dict[str, Any], action: object) -> None:
    assert action_from_dict(data) == action


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"type": "bid", "quantity": 3, "face": 4, "seat": 1}, "unexpected field(s) for bid: seat"),
        ({"type": "dudo", "b": 1, "a": 2}, "unexpected field(s) for dudo: a, b"),
        ({"type": "calza", 7: 1}, "unexpected field(s) for calza: 7"),
        ({"type": "direction", "value": 1, "face": 2}, "for direction: face"),
        ({"type": "bid", "quantity": 3}, "face must be an integer"),
        ({"type": "bid", "quantity": True, "face": 2}, "quantity must be an integer"),
        ({"type": "direction"}, "value must be an integer"),
        ({"type": "pass"}, "unknown action type 'pass'"),
        ({}, "unknown action type None"),
        (["bid", 3, 4], "must be an object"),
    ],
)
def test_malformed_actions_are_bad_action(data: Any, words: str) -> None:
    with pytest.raises(RuleError) as info:
        action_from_dict(data)
    assert info.value.code == "bad_action"
    assert words in info.value.message
