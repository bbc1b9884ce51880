"""The arena: duplicate deals, the Wilson interval, and the published fields."""

from __future__ import annotations

import json

import pytest

from dudo.bots.arena import lineups, run, wilson
from dudo.cli import main


def test_wilson_interval_known_values() -> None:
    low, high = wilson(50, 100)
    assert (round(low, 4), round(high, 4)) == (0.4038, 0.5962)
    low, high = wilson(0, 10)
    assert low == 0.0 and round(high, 4) == 0.2775
    assert wilson(0, 0) == (0.0, 1.0)


def test_lineups_put_a_in_every_seat_once() -> None:
    assert lineups("a", "b", 3) == [["a", "b", "b"], ["b", "a", "b"], ["b", "b", "a"]]


def test_a_mirror_match_on_duplicate_deals_is_exactly_even() -> None:
    result = run("baseline", "baseline", seats=2, games=200, seed=5, workers=1)
    assert result["games"] == 200 and result["win_rate_a"] == 0.5
    assert sum(s["games"] for s in result["per_seat"]) == 200
    assert sum(s["wins_a"] for s in result["per_seat"]) == result["wins_a"]


def test_arena_is_reproducible_and_reports_the_fields(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "arena",
        "--a",
        "baseline",
        "--b",
        "random",
        "--seats",
        "3",
        "--games",
        "30",
        "--seed",
        "2",
        "--workers",
        "1",
        "--json",
    ]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    second = json.loads(capsys.readouterr().out)
    first.pop("seconds"), second.pop("seconds")
    for side in ("a", "b"):
        for key in ("decision_ms_median", "decision_ms_p99"):
            first[side].pop(key), second[side].pop(key)
    assert first == second
    for key in ("games", "win_rate_a", "ci95_low", "ci95_high", "per_seat"):
        assert key in first
    assert first["a"]["dice_lost_per_round"] is not None
    assert 0 <= first["a"]["challenge_accuracy"] <= 1
    assert first["ci95_low"] <= first["win_rate_a"] <= first["ci95_high"]


def test_rule_overrides_reach_the_games() -> None:
    result = run("random", "baseline", seats=2, games=10, rules={"start_dice": 1}, workers=1)
    assert result["arena"]["rules"]["start_dice"] == 1


def test_normal_bots_bid_where_the_baseline_called_at_once() -> None:
    """Issue 34, item 4: a table of "normal" bots (the Play now default) ended 66% of
    its rounds after one bid (the baseline opens with the strongest bid at 50%, 8 or 9
    of a face among 20 dice, and the next seat calls it). The normal bot opens low and
    raises by small steps: real bidding, and no weaker for it."""
    from dudo.bots.arena import run

    table = run("normal", "normal", seats=4, games=200, seed=1, workers=1)["rounds"]
    before = run("baseline", "baseline", seats=4, games=200, seed=1, workers=1)["rounds"]
    assert before["one_bid_share"] > 0.5 and before["bids_per_round"] < 1.6, before
    assert table["one_bid_share"] < 0.25 and table["bids_per_round"] >= 3, table
    assert run("normal", "random", seats=2, games=200, seed=1, workers=1)["win_rate_a"] >= 0.9
    assert run("normal", "baseline", seats=2, games=200, seed=1, workers=1)["win_rate_a"] > 0.6
