"""The state machine: apply, refusals, events, rounds, the end of the game."""

from __future__ import annotations

import pytest

from dudo.engine import (
    BIDDING,
    DIRECTION,
    OVER,
    Bid,
    Calza,
    Direction,
    Dudo,
    RuleError,
    commitment,
    new_game,
    preset,
    roll,
    to_bytes,
)
from dudo.engine.dice import round_seed

from .helpers import SECRET, game


def test_new_game_rolls_round_one_from_the_secret() -> None:
    s = game("classic", 4)
    seed = round_seed(SECRET, 1)
    assert s.round_no == 1 and s.version == 0 and s.phase == BIDDING
    assert s.hands == roll(seed, [5, 5, 5, 5])
    assert s.commitment == commitment(seed)
    assert all(len(h) == 5 and all(1 <= d <= 6 for d in h) for h in s.hands)


def test_each_round_gets_a_new_seed() -> None:
    s = game("classic", 2)
    first = s.commitment
    s.apply(0, Bid(1, 2))
    s.apply(1, Dudo())
    assert s.round_no == 2
    assert s.commitment == commitment(round_seed(SECRET, 2)) != first


def test_every_applied_action_bumps_the_version_by_one() -> None:
    s = game(preset("classic", loser_chooses_direction=True), 2)
    assert s.phase == DIRECTION
    versions = [s.version]
    s.apply(0, Direction(1))
    versions.append(s.version)
    s.apply(0, Bid(1, 3))
    versions.append(s.version)
    s.apply(1, Dudo())
    versions.append(s.version)
    assert versions == [0, 1, 2, 3]


def test_refused_action_changes_nothing_and_names_the_code() -> None:
    s = game("classic", 3, dice=[[2, 3, 4, 5, 6]] * 3)
    s.apply(0, Bid(3, 4))
    before = to_bytes(s)
    for seat, action, code in [
        (2, Bid(4, 4), "not_your_turn"),
        (1, Bid(3, 3), "bid_not_higher"),
        (1, Bid(16, 3), "bid_out_of_range"),
        (2, Calza(), "not_your_turn"),
        (0, Direction(1), "bad_action"),
        (7, Dudo(), "bad_action"),
    ]:
        with pytest.raises(RuleError) as info:
            s.apply(seat, action)
        assert info.value.code == code
        assert to_bytes(s) == before


def test_events_of_a_dudo_round() -> None:
    s = game("classic", 2, dice=[[2, 5, 5, 6, 6], [1, 3, 4, 4, 6]])
    assert s.apply(0, Bid(3, 5)) == [{"type": "bid", "seat": 0, "quantity": 3, "face": 5}]
    events = s.apply(1, Dudo())
    kinds = [e["type"] for e in events]
    assert kinds == ["dudo", "reveal", "lose_die", "round_start"]
    reveal = events[1]
    assert reveal["dice"] == [[2, 5, 5, 6, 6], [1, 3, 4, 4, 6]]
    assert (reveal["count"], reveal["loser"], reveal["gainer"]) == (3, 1, None)
    assert reveal["bid"] == [0, 3, 5] and reveal["call"] == "dudo" and reveal["caller"] == 1
    assert events[2] == {"type": "lose_die", "seat": 1, "dice": 4}
    start = events[3]
    assert start["round"] == 2 and start["opener"] == 1 and start["dice_counts"] == [5, 4]
    assert start["commitment"] == s.commitment


def test_reveal_publishes_the_seed_that_matches_the_commitment() -> None:
    s = game("classic", 3)
    promised, hands, counts = s.commitment, s.hands, list(s.counts)
    s.apply(0, Bid(1, 2))
    reveal = next(e for e in s.apply(1, Dudo()) if e["type"] == "reveal")
    seed = bytes.fromhex(reveal["seed"])
    assert commitment(seed) == promised == reveal["commitment"]
    assert [tuple(h) for h in reveal["dice"]] == hands == roll(seed, counts)


def test_dealt_round_has_no_commitment_or_seed() -> None:
    s = game("classic", 2, dice=[[1, 2, 3, 4, 5], [2, 3, 4, 5, 6]])
    assert s.commitment is None
    s.apply(0, Bid(1, 2))
    reveal = next(e for e in s.apply(1, Dudo()) if e["type"] == "reveal")
    assert reveal["seed"] is None and reveal["commitment"] is None


def test_gain_and_elimination_events() -> None:
    s = game(
        "classic", 3, dice=[[2, 3, 4, 5, 6], [1, 4, 6], [3, 4, 4, 5, 6]], dice_counts=[5, 3, 5]
    )
    s.apply(0, Bid(5, 4))
    events = s.apply(1, Calza())
    assert {"type": "gain_die", "seat": 1, "dice": 4} in events
    s = game("classic", 3, dice=[[3], [4, 4], [1, 5]], dice_counts=[1, 2, 2])
    s.apply(0, Bid(3, 3))
    events = s.apply(1, Dudo())
    assert {"type": "eliminated", "seat": 0} in events
    assert s.eliminated == [0] and s.opener == 1


def test_game_over_standings_and_chips() -> None:
    s = game("cacho", 3, dice=[[2], [], [3]], dice_counts=[1, 0, 1])
    s.apply(0, Bid(1, 3))
    events = s.apply(2, Dudo())
    over = events[-1]
    assert over["type"] == "game_over" and over["winner"] == 0
    assert over["standings"] == [0, 2, 1]
    stake = preset("cacho").stake
    assert over["chips"] == [2 * stake, -stake, -stake]
    assert sum(over["chips"]) == 0
    assert s.phase == OVER and s.turn is None and s.hands == [(), (), ()]
    with pytest.raises(RuleError, match="game_over"):
        s.apply(0, Bid(1, 2))


def test_no_chips_without_a_stake() -> None:
    s = game("classic", 2, dice=[[2], [3]], dice_counts=[1, 1])
    s.apply(0, Bid(1, 3))
    assert s.apply(1, Dudo())[-1]["chips"] is None


def test_legal_actions_agree_with_apply() -> None:
    s = game("classic", 3, dice=[[1, 2, 3, 4, 5]] * 3)
    s.apply(0, Bid(4, 3))
    legal = set(s.legal_actions(1))
    assert Bid(4, 3) not in legal and Bid(4, 4) in legal and Bid(2, 1) in legal
    assert Bid(1, 1) not in legal and Dudo() in legal and Calza() in legal
    assert s.legal_actions(2) == []  # not in turn, calza in turn only
    space = [Bid(q, f) for q in range(0, 17) for f in range(0, 8)] + [
        Dudo(),
        Calza(),
        Direction(1),
        Direction(-1),
    ]
    for action in space:
        trial = game("classic", 3, dice=[[1, 2, 3, 4, 5]] * 3)
        trial.apply(0, Bid(4, 3))
        try:
            trial.apply(1, action)
            ok = True
        except RuleError:
            ok = False
        assert ok == (action in legal), action


def test_legal_summary_lists_lowest_raise_per_face() -> None:
    s = game("classic", 2, dice=[[2, 3, 4, 5, 6]] * 2)
    assert s.legal(0)["bid"] == [None, 1, 1, 1, 1, 1]  # no opening on ones
    s.apply(0, Bid(5, 4))
    summary = s.legal(1)
    assert summary["bid"] == [3, 6, 6, 6, 5, 5]
    assert summary["max_quantity"] == 10 and summary["dudo"] and summary["calza"]
    assert not summary["direction"]


def test_new_game_validation() -> None:
    rules = preset("cacho")
    with pytest.raises(ValueError, match=r"3\.\.6"):
        new_game(rules, 2, SECRET)
    with pytest.raises(ValueError, match="16 bytes"):
        new_game(preset("classic"), 2, b"short")
    with pytest.raises(ValueError, match="two seats"):
        new_game(preset("classic"), 2, SECRET, dice_counts=[5, 0])
    with pytest.raises(ValueError, match="opener"):
        new_game(preset("classic"), 3, SECRET, dice_counts=[0, 5, 5], opener=0)
    with pytest.raises(ValueError, match="direction"):
        new_game(preset("classic"), 2, SECRET, direction=0)
    with pytest.raises(ValueError, match=r"0\.\.5"):
        new_game(preset("classic"), 2, SECRET, dice_counts=[6, 5])


def test_deal_validation() -> None:
    s = game("classic", 2)
    with pytest.raises(ValueError, match="2 hands"):
        s.deal([[1, 2, 3, 4, 5]])
    with pytest.raises(ValueError, match="has 5 dice"):
        s.deal([[1, 2, 3, 4, 5], [1, 2]])
    with pytest.raises(ValueError, match=r"1\.\.6"):
        s.deal([[1, 2, 3, 4, 7], [1, 2, 3, 4, 5]])
    s.apply(0, Bid(1, 2))
    with pytest.raises(ValueError, match="before"):
        s.deal([[1, 2, 3, 4, 5]] * 2)


def test_opener_with_one_die_may_open_on_ones_only_in_cacho_mode() -> None:
    s = game("cacho", 3, dice=[[1], [2, 3], [4, 5]], dice_counts=[1, 2, 2])
    assert s.legal(0)["bid"][0] == 1
    s = game("classic", 3, dice=[[1], [2, 3], [4, 5]], dice_counts=[1, 2, 2])
    assert s.legal(0)["bid"][0] is None
