"""Property tests: hundreds of random games per preset, every option, every invariant.

Hypothesis draws the rules (a preset plus random overrides of every option),
the number of seats and a seed; the seed drives one whole random game. At every
step the invariants below are checked. 400 games per preset run in CI (2,000 until
2026-12-04, 1,000 until 2026-12-06, 600 until 2026-12-07: the suite had to make room
under CI's 15 minutes, for the Matrix tests, issue 50's attacks, then issue 55's
tournament seeds; `DUDO_PROPERTY_GAMES=20000` runs more, as before a release).
"""

from __future__ import annotations

import os
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dudo.engine import (
    OVER,
    Calza,
    Dudo,
    RuleError,
    Rules,
    State,
    all_views,
    commitment,
    from_bytes,
    new_game,
    roll,
    seat_view,
    spectator_view,
    to_bytes,
)

from .helpers import any_action, legal_moves, pick

GAMES_PER_PRESET = int(os.environ.get("DUDO_PROPERTY_GAMES", "400"))
MAX_ACTIONS = 3000


@st.composite
def tables(draw: st.DrawFn, preset_name: str) -> tuple[Rules, int, int]:
    """Random rules on top of ``preset_name``, a legal seat count and a game seed."""
    overrides: dict[str, object] = {"preset": preset_name}
    if draw(st.booleans()):
        overrides["start_dice"] = draw(st.integers(1, 5))
    if draw(st.booleans()):
        overrides["wild_ones"] = draw(st.booleans())
    if draw(st.booleans()):
        overrides["opening_ones"] = draw(st.sampled_from(["never", "single_die", "always"]))
    if draw(st.booleans()):
        overrides["calza"] = draw(st.sampled_from(["off", "turn", "anyone"]))
    if draw(st.booleans()):
        overrides["palifico"] = draw(st.booleans())
    overrides["loser_chooses_direction"] = draw(st.booleans())
    overrides["assisted"] = draw(st.booleans())
    base = Rules.from_dict(overrides)
    if base.calza != "off" and draw(st.booleans()):
        overrides["calza_needs_lost_die"] = True
    if base.palifico and base.wild_ones and draw(st.booleans()):
        overrides["palifico_wild_ones"] = True
    if draw(st.booleans()):
        overrides["max_dice"] = base.start_dice + draw(st.integers(0, 2))
    rules = Rules.from_dict(overrides)
    seats = draw(st.integers(rules.min_players, rules.max_players))
    return rules, seats, draw(st.integers(0, 2**32))


def play_checked(rules: Rules, seats: int, seed: int) -> State:
    """Play one random game to its end, checking every invariant at every step."""
    rng = random.Random(seed)
    state = new_game(rules, seats, rng.randbytes(32), opener=rng.randrange(seats))
    for _ in range(MAX_ACTIONS):
        if state.phase == OVER:
            return state
        check_views_hide_hidden_dice(state, rng)
        check_round_trip(state)
        check_illegal_attempt_changes_nothing(state, rng)
        moves = legal_moves(state)
        assert moves, "a live game always offers someone an action"
        seat, action = pick(rng, moves)
        assert state.counts[seat] > 0, "a seat with no dice never acts"
        apply_checked(state, seat, action)
    raise AssertionError(f"no winner after {MAX_ACTIONS} actions")


def apply_checked(state: State, seat: int, action: object) -> None:
    before_counts = list(state.counts)
    before_round = state.round_no
    before_version = state.version
    hands, promised, counts = list(state.hands), state.commitment, list(state.counts)
    events = state.apply(seat, action)  # type: ignore[arg-type]
    assert state.version == before_version + 1
    if not isinstance(action, (Dudo, Calza)):
        assert state.counts == before_counts and state.round_no == before_round
        return
    # A resolved round: exactly one die lost or won back, except an exact Calza
    # by a seat already at max_dice, which changes nothing.
    delta = sum(state.counts) - sum(before_counts)
    reveal = next(e for e in events if e["type"] == "reveal")
    at_cap = (
        isinstance(action, Calza)
        and reveal["count"] == reveal["bid"][1]
        and before_counts[seat] >= state.rules.max_dice
    )
    if at_cap:
        assert delta == 0 and reveal["loser"] is None and reveal["gainer"] is None
    else:
        assert abs(delta) == 1
        assert (reveal["loser"] is None) != (reveal["gainer"] is None)
    # The reveal shows exactly the dice that were in the cups, and the seed
    # behind the commitment every view showed since the round began.
    assert [tuple(h) for h in reveal["dice"]] == hands
    seed = bytes.fromhex(reveal["seed"])
    assert commitment(seed) == promised
    assert roll(seed, counts) == hands
    if state.phase == OVER:
        assert sum(1 for c in state.counts if c > 0) == 1
        assert state.winner is not None and state.counts[state.winner] > 0
        assert events[-1]["type"] == "game_over"
    else:
        assert state.round_no == before_round + 1
        assert state.counts[state.opener] > 0


def check_views_hide_hidden_dice(state: State, rng: random.Random) -> None:
    """Re-deal every hidden hand: no view but the owner's may change."""
    spectator, views = all_views(state)
    other = from_bytes(to_bytes(state))
    rerolled = [tuple(sorted(rng.randint(1, 6) for _ in h)) for h in state.hands]
    other.hands = list(rerolled)
    assert spectator_view(other) == spectator
    for seat in range(state.seats):
        other.hands[seat] = state.hands[seat]
        assert seat_view(other, seat) == views[seat], f"seat {seat}'s view leaks other dice"
        other.hands[seat] = rerolled[seat]
        # A seat's own hand, or no hand at all once it is out.
        assert views[seat].get("dice", []) == list(state.hands[seat])
        assert ("dice" in views[seat]) == (state.counts[seat] > 0)


def check_round_trip(state: State) -> None:
    blob = to_bytes(state)
    again = from_bytes(blob)
    assert to_bytes(again) == blob
    assert all_views(again) == all_views(state)


def check_illegal_attempt_changes_nothing(state: State, rng: random.Random) -> None:
    """Try a random action from the whole space; if refused, the bytes must not move."""
    seat, action = any_action(rng, state)
    legal = 0 <= seat < state.seats and action in state.legal_actions(seat)
    if legal:
        return
    before = to_bytes(state)
    try:
        state.apply(seat, action)
    except RuleError:
        assert to_bytes(state) == before
    else:
        raise AssertionError(f"illegal {action} by seat {seat} was applied")


_SETTINGS = settings(
    max_examples=GAMES_PER_PRESET,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@_SETTINGS
@given(tables("classic"))
def test_random_games_classic(table: tuple[Rules, int, int]) -> None:
    play_checked(*table)


@_SETTINGS
@given(tables("lizumo"))
def test_random_games_lizumo(table: tuple[Rules, int, int]) -> None:
    play_checked(*table)


@_SETTINGS
@given(tables("cacho"))
def test_random_games_cacho(table: tuple[Rules, int, int]) -> None:
    play_checked(*table)


@_SETTINGS
@given(tables("liars-dice"))
def test_random_games_liars_dice(table: tuple[Rules, int, int]) -> None:
    play_checked(*table)
