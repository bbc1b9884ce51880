"""The peer harnesses' policy, as the path benchmark plays it: their rule, and always legal."""

from __future__ import annotations

import random

import pytest

from dudo.bench.players import peer_policy
from dudo.engine import Rules, action_from_dict, new_game, preset, seat_view
from dudo.engine.state import OVER

from .test_policies import RULE_SETS


@pytest.mark.parametrize("rules_name", sorted(RULE_SETS))
def test_peer_policy_plays_legal_games_to_the_end(rules_name: str) -> None:
    rules = Rules.from_dict(RULE_SETS[rules_name])
    for game in range(3):
        rng = random.Random(f"{rules_name}:{game}")
        state = new_game(rules, 4, rng.randbytes(32), opener=game % 4)
        for _ in range(5000):
            if state.phase == OVER:
                break
            seat = state.turn
            assert seat is not None
            view = {"seat": seat, "game": seat_view(state, seat)}
            state.apply(seat, action_from_dict(peer_policy(view, rng)))  # illegal: raises
        assert state.phase == OVER


def _view(dice: list[list[int]], bids: list[tuple[int, int, int]], seat: int) -> dict:
    state = new_game(preset("classic"), len(dice), bytes(32))
    state.deal(dice)
    for bidder, quantity, face in bids:
        state.apply(bidder, action_from_dict({"type": "bid", "quantity": quantity, "face": face}))
    return {"seat": seat, "game": seat_view(state, seat)}


def test_peer_policy_is_the_peers_rule() -> None:
    hands = [[2, 2, 3, 4, 5], [1, 3, 3, 6, 6], [4, 4, 5, 5, 6], [2, 3, 4, 5, 6]]
    # opening: one die of its most common face (ones count as wild)
    assert peer_policy(_view(hands, [], 0), random.Random()) == {
        "type": "bid", "quantity": 1, "face": 2,
    }  # fmt: skip
    # 15 others' dice: 7 threes = 15/3 + its 2 threes (+1 wild one) → raise; 9 → dudo
    assert peer_policy(_view(hands, [(0, 7, 3)], 1), random.Random()) == {
        "type": "bid", "quantity": 7, "face": 4,
    }  # fmt: skip
    assert peer_policy(_view(hands, [(0, 9, 3)], 1), random.Random()) == {"type": "dudo"}
    # past sixes: one more of twos
    assert peer_policy(_view(hands, [(0, 3, 6)], 1), random.Random()) == {
        "type": "bid", "quantity": 4, "face": 2,
    }  # fmt: skip
