"""Seats coming and going between rounds (dudo.engine.seating), as tournaments need."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dudo.engine import (
    DIRECTION,
    OVER,
    RuleError,
    Rules,
    all_views,
    forfeit,
    from_bytes,
    leavers,
    preset,
    reseat,
    roll,
    to_bytes,
)

from .helpers import game, legal_moves, pick


def test_staying_seats_keep_their_dice_and_the_commitment_holds() -> None:
    state = game("classic", seats=4)
    before = list(state.hands)
    commit, round_no = state.commitment, state.round_no
    events = reseat(state, leave=[1], join=[])
    assert events == [{"type": "seat_out", "seat": 1, "dice": 5}]
    assert state.hands[0] == before[0] and state.hands[2:] == before[2:]
    assert state.hands[1] == ()
    assert (state.commitment, state.round_no) == (commit, round_no)
    # A client checking the reveal recomputes the dice from the seed and today's counts.
    assert state.seed is not None and roll(state.seed, state.counts) == state.hands
    assert state.eliminated == [] and state.dice_in_play == 15


def test_joiner_gets_dice_from_the_round_seed_and_the_version_moves_once() -> None:
    state = game("lizumo", seats=3, dice_counts=[3, 0, 2])
    version = state.version
    assert state.eliminated == [1]
    events = reseat(state, join=[(1, 2)])
    assert events == [{"type": "seat_in", "seat": 1, "dice": 2}]
    assert len(state.hands[1]) == 2 and state.eliminated == []
    assert state.version == version + 1
    assert state.seed is not None and roll(state.seed, [3, 2, 2]) == state.hands


def test_refusals_change_nothing() -> None:
    state = game("classic", seats=3)
    state.apply(state.turn or 0, state.legal_actions(state.turn or 0)[0])
    blob = to_bytes(state)
    with pytest.raises(RuleError) as err:
        reseat(state, leave=[2])
    assert err.value.code == "not_between_rounds"
    fresh = game("classic", seats=3)
    blob = to_bytes(fresh)
    for leave, join, opener in [
        ([0, 0], [], None),  # leaving twice: the second has no dice
        ([], [(0, 3)], None),
        ([1], [(1, 6)], None),  # more than max_dice
        ([1], [(1, True)], None),
        ([True], [], None),
        ([], [], 7),
    ]:
        with pytest.raises(RuleError) as err:
            reseat(fresh, leave=leave, join=join, opener=opener)
        assert err.value.code == "bad_action"
        assert to_bytes(fresh) == blob


def test_a_seat_can_leave_and_be_taken_in_one_change() -> None:
    state = game("classic", seats=3, dice_counts=[5, 2, 4])
    reseat(state, leave=[1], join=[(1, 3)])
    assert state.counts == [5, 3, 4]


def test_halted_table_has_no_turn_and_no_dice_and_views_show_nothing_secret() -> None:
    state = game("classic", seats=3)
    events = reseat(state, leave=[0, 1])
    assert events[-1] == {"type": "halted", "dice_counts": [0, 0, 5]}
    assert (state.phase, state.turn, state.winner, state.commitment) == (OVER, None, None, None)
    assert state.hands == [(), (), ()]
    spectator, seats = all_views(state)
    # The seats that left are out: a spectator's view; the one left has an empty hand.
    assert [view.get("dice") for view in seats] == [None, None, []]
    assert spectator["winner"] is None
    # Brought back, it plays a new round with a new seed.
    events = reseat(state, join=[(0, 2)])
    assert events[-1]["type"] == "round_start" and state.round_no == 2
    assert state.opener == 0 and state.commitment is not None


def test_loser_chooses_direction_round_is_open_until_the_choice() -> None:
    rules = Rules.from_dict({"preset": "classic", "loser_chooses_direction": True})
    state = game(rules, seats=3, opener=1)
    assert state.phase == DIRECTION and state.between_rounds
    reseat(state, leave=[1])
    assert state.phase == DIRECTION and state.opener == 2
    state.apply(2, state.legal_actions(2)[-1])
    assert not state.between_rounds


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(["classic", "lizumo", "cacho"]))
def test_random_play_with_seats_moving_between_rounds_keeps_every_invariant(
    seed: int, name: str
) -> None:
    """A table of a tournament in miniature: random play, and at every round boundary
    random seats leave (with their dice) and arrive (with theirs). Dice are conserved
    by the moves themselves, nobody has more than max_dice, the state survives its
    bytes, and a refused reseat changes nothing."""
    rng = random.Random(seed)
    rules = preset(name)
    seats = max(rules.min_players, 4)
    state = game(rules, seats=seats)
    outside: list[int] = []  # dice counts of players waiting to sit here
    for _ in range(400):
        if state.between_rounds and rng.random() < 0.5:
            alive = [s for s, c in enumerate(state.counts) if c > 0]
            free = [s for s, c in enumerate(state.counts) if c == 0]
            leave = rng.sample(alive, rng.randint(0, min(2, len(alive))))
            free += leave
            join = []
            for seat in rng.sample(free, min(len(free), len(outside), rng.randint(0, 2))):
                join.append((seat, outside.pop()))
            left = [state.counts[s] for s in leave]
            dice_before = state.dice_in_play + sum(d for _, d in join)
            reseat(state, leave=leave, join=join)
            outside.extend(left)
            assert state.dice_in_play + sum(left) == dice_before
            assert all(0 <= c <= rules.max_dice for c in state.counts)
            assert from_bytes(to_bytes(state)).counts == state.counts
            if state.seed is not None:
                assert roll(state.seed, state.counts) == state.hands
        if state.phase == OVER:
            if not outside:
                break
            continue
        if not state.between_rounds:
            blob = to_bytes(state)
            with pytest.raises(RuleError):
                reseat(state, leave=[s for s, c in enumerate(state.counts) if c][:1])
            assert to_bytes(state) == blob
        seat, action = pick(rng, legal_moves(state))
        state.apply(seat, action)
        assert sum(1 for c in state.counts if c > 0) >= (1 if state.phase == OVER else 2)


def test_leavers_are_the_seats_that_would_act_last() -> None:
    state = game("classic", seats=5, dice_counts=[2, 0, 3, 1, 4], opener=3)
    # Play order from the opener: 3, 4, 0, 2 (seat 1 is out).
    assert leavers(state, 1) == [2]
    assert leavers(state, 2) == [0, 2]
    assert leavers(state, 3) == [0, 2, 4]
    assert leavers(state, 4) == leavers(state, 9) == [0, 2, 3, 4]
    assert leavers(state, 0) == []
    backwards = game("classic", seats=5, dice_counts=[2, 0, 3, 1, 4], opener=3, direction=-1)
    # Play order: 3, 2, 0, 4.
    assert leavers(backwards, 1) == [4]
    assert leavers(backwards, 2) == [0, 4]


def test_a_forfeit_places_the_seat_out_and_the_round_goes_on_or_the_last_one_wins() -> None:
    """An idle person taken out between rounds (a table's idle policy): eliminated and
    placed, not vacant; the others keep their dice and the commitment holds; with one
    seat left it wins."""
    state = game("classic", seats=3)
    before, commit = list(state.hands), state.commitment
    events = forfeit(state, [0])
    assert events == [{"type": "eliminated", "seat": 0}]
    assert state.eliminated == [0] and state.counts[0] == 0 and state.hands[0] == ()
    assert state.hands[1:] == before[1:] and state.commitment == commit
    assert state.turn != 0 and state.phase != OVER
    events = forfeit(state, [1])
    assert events[0] == {"type": "eliminated", "seat": 1} and events[-1]["type"] == "game_over"
    assert state.phase == OVER and state.winner == 2 and state.standings() == [2, 1, 0]


def test_a_forfeit_is_refused_mid_round_and_if_nobody_would_be_left() -> None:
    state = game("classic", seats=2)
    blob = to_bytes(state)
    with pytest.raises(RuleError) as err:
        forfeit(state, [0, 1])
    assert err.value.code == "bad_action" and to_bytes(state) == blob
    state.apply(state.turn or 0, state.legal_actions(state.turn or 0)[0])
    blob = to_bytes(state)
    with pytest.raises(RuleError) as err:
        forfeit(state, [0])
    assert err.value.code == "not_between_rounds" and to_bytes(state) == blob
