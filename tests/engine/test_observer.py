"""Redacted views: each seat sees its own dice and nothing of anyone else's until the reveal."""

from __future__ import annotations

import json

from dudo.engine import Bid, Dudo, Rules, all_views, preset, seat_view, spectator_view

from .helpers import copy, game

HANDS = [[1, 2, 2, 3, 6], [4, 4, 4, 5, 5], [1, 1, 6, 6, 6]]


def test_seat_sees_own_dice_counts_and_bids_not_other_hands() -> None:
    s = game("classic", 3, dice=HANDS)
    s.apply(0, Bid(3, 4))
    view = seat_view(s, 1)
    assert view["seat"] == 1 and view["dice"] == [4, 4, 4, 5, 5]
    assert view["dice_counts"] == [5, 5, 5] and view["dice_in_play"] == 15
    assert view["bids"] == [[0, 3, 4]] and view["turn"] == 1
    assert view["legal"]["dudo"] is True
    assert "hands" not in view and "secret" not in view and "seed" not in view


def test_view_does_not_depend_on_other_seats_hidden_dice() -> None:
    a = game("classic", 3, dice=HANDS)
    b = copy(a)
    b.deal([[5, 5, 5, 5, 5], HANDS[1], [2, 2, 2, 2, 2]])
    b.commitment = a.commitment  # same public commitment; only hidden dice differ
    assert seat_view(a, 1) == seat_view(b, 1)
    assert spectator_view(a) == spectator_view(b)


def test_spectator_sees_no_die_before_the_reveal() -> None:
    s = game("classic", 3, dice=HANDS)
    view = spectator_view(s)
    assert view["seat"] is None and "dice" not in view and "legal" not in view
    assert view["last_round"] is None


def test_reveal_shows_every_die_to_everyone() -> None:
    s = game("classic", 3, dice=HANDS)
    s.apply(0, Bid(3, 4))
    s.apply(1, Dudo())
    spectator, views = all_views(s)
    for view in [spectator, *views]:
        last = view["last_round"]
        assert last["dice"] == HANDS
        assert (last["count"], last["loser"], last["bid"]) == (6, 1, [0, 3, 4])


def test_eliminated_seat_sees_what_a_spectator_sees() -> None:
    s = game("classic", 3, dice=[[2, 3], [], [4, 5]], dice_counts=[2, 0, 2])
    view = seat_view(s, 1)
    spectator = spectator_view(s)
    # Exactly the spectator's view, with its seat number: no hand, nothing to do.
    assert view == {**spectator, "seat": 1}
    assert "dice" not in view and "legal" not in view and "odds" not in view
    assert "dice" in seat_view(s, 0) and "legal" in seat_view(s, 0)


def test_views_are_json_plain_data_and_independent_of_the_state() -> None:
    s = game("classic", 3, dice=HANDS)
    s.apply(0, Bid(3, 4))
    s.apply(1, Dudo())
    spectator, views = all_views(s)
    json.dumps([spectator, *views])
    views[0]["last_round"]["dice"][1].append(6)
    views[0]["dice_counts"][0] = 0
    assert s.last_round["dice"][1] == HANDS[1]
    assert s.counts[0] == 5


def test_assisted_mode_adds_odds_to_seat_views_only() -> None:
    s = game(preset("classic", assisted=True), 3, dice=HANDS)
    s.apply(0, Bid(3, 4))
    view = seat_view(s, 1)
    odds = view["odds"]
    assert odds["unseen"] == 10
    # seat 1 holds three 4s: the bid of three 4s is certain, a Calza needs zero more
    assert odds["bid_true"] == 1.0
    assert odds["calza_exact"] == round((2 / 3) ** 10, 4)
    floors = view["legal"]["bid"]
    for face, probs in enumerate(odds["raises"], 1):
        if floors[face - 1] is None:
            assert probs is None
        else:
            assert len(probs) == 15 - floors[face - 1] + 1
            assert probs == sorted(probs, reverse=True)
    assert "odds" not in spectator_view(s)
    assert "odds" not in seat_view(game("classic", 3, dice=HANDS), 1)


def test_game_over_view() -> None:
    s = game("classic", 2, dice=[[5], [5]], dice_counts=[1, 1])
    s.apply(0, Bid(1, 5))
    s.apply(1, Dudo())
    view = seat_view(s, 0)
    assert view["phase"] == "over" and view["winner"] == 0 and view["standings"] == [0, 1]
    assert view["dice"] == [] and view["turn"] is None
    assert view["last_round"]["dice"] == [[5], [5]]


def test_the_opener_choosing_the_direction_sees_the_odds_of_its_opening_bids() -> None:
    """Assisted mode: odds while the direction is chosen too (the opener's next move is
    the opening bid); the other seats get no odds then (nothing to bid on yet)."""
    rules = Rules.from_dict(
        {"preset": "classic", "assisted": True, "loser_chooses_direction": True}
    )
    s = game(rules, 3, dice=HANDS)
    assert s.phase == "direction"
    opener = s.turn
    odds = seat_view(s, opener)["odds"]
    assert odds["bid_true"] is None and odds["unseen"] == 10
    floors = s.opening_floors()
    assert [r is not None for r in odds["raises"]] == [f is not None for f in floors]
    face = 4
    assert len(odds["raises"][face - 1]) == s.dice_in_play - floors[face - 1] + 1
    others = [seat for seat in range(3) if seat != opener]
    assert all("odds" not in seat_view(s, seat) for seat in others)
