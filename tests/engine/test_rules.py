"""Rules configuration: presets from the seeds, overrides, and validation (docs/rules.md)."""

from __future__ import annotations

import pytest

from dudo.engine import PRESETS, Rules, RulesConfigError, preset


def test_four_presets_exist_in_published_order() -> None:
    assert PRESETS == ("classic", "lizumo", "cacho", "liars-dice")


def test_classic_follows_seeds_000_and_002() -> None:
    r = preset("classic")
    assert (r.start_dice, r.max_dice, r.min_players, r.max_players) == (5, 5, 2, 6)
    assert r.wild_ones and r.palifico and not r.palifico_wild_ones
    assert (r.opening_ones, r.calza) == ("never", "turn")


def test_lizumo_follows_seed_001() -> None:
    r = preset("lizumo")
    assert r.start_dice == 3 and r.wild_ones
    assert (r.calza, r.palifico, r.opening_ones) == ("off", False, "never")


def test_cacho_follows_seed_003() -> None:
    r = preset("cacho")
    assert (r.min_players, r.max_players) == (3, 6)
    assert (r.opening_ones, r.calza, r.palifico) == ("single_die", "turn", False)
    assert r.bots_fill and r.stake > 0


def test_liars_dice_has_plain_ones_and_no_calza() -> None:
    r = preset("liars-dice")
    assert (r.wild_ones, r.calza, r.palifico, r.opening_ones) == (False, "off", False, "always")


def test_overrides_apply_on_top_of_the_preset() -> None:
    r = Rules.from_dict({"preset": "lizumo", "start_dice": 5, "calza": "anyone"})
    assert (r.preset, r.start_dice, r.calza, r.palifico) == ("lizumo", 5, "anyone", False)


def test_max_dice_defaults_to_start_dice() -> None:
    assert preset("classic", start_dice=3).max_dice == 3
    assert preset("classic", start_dice=3, max_dice=5).max_dice == 5


def test_default_preset_is_classic() -> None:
    assert Rules.from_dict({}) == preset("classic")
    assert Rules.from_dict(None) == preset("classic")


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        ({"start_dice": 0}, "start_dice", "1..5"),
        ({"start_dice": 6}, "start_dice", "1..5"),
        ({"max_players": 7}, "max_players", "2..6"),
        ({"min_players": 1}, "min_players", "2..6"),
        ({"min_players": 5, "max_players": 4}, "min_players", "exceeds"),
        ({"start_dice": 4, "max_dice": 3}, "max_dice", "between"),
        ({"max_dice": 11}, "max_dice", "between"),
        ({"dice": 5}, "dice", "unknown field"),
        ({"preset": "perudo"}, "preset", "unknown preset"),
        ({"wild_ones": 1}, "wild_ones", "must be bool"),
        ({"start_dice": True}, "start_dice", "must be int"),
        ({"start_dice": "5"}, "start_dice", "must be int"),
        ({"opening_ones": "sometimes"}, "opening_ones", "one of"),
        ({"calza": True}, "calza", "must be str"),
        ({"calza": "maybe"}, "calza", "one of"),
        ({"preset": "lizumo", "calza_needs_lost_die": True}, "calza_needs_lost_die", "no effect"),
        ({"preset": "lizumo", "palifico_wild_ones": True}, "palifico_wild_ones", "palifico"),
        (
            {"preset": "liars-dice", "palifico": True, "palifico_wild_ones": True},
            "palifico_wild_ones",
            "wild_ones",
        ),
        ({"turn_seconds": -1}, "turn_seconds", "0..3600"),
        ({"stake": -5}, "stake", "0.."),
    ],
)
def test_impossible_settings_are_rejected_with_the_field_named(
    data: dict, field: str, words: str
) -> None:
    with pytest.raises(RulesConfigError) as info:
        Rules.from_dict(data)
    assert info.value.field == field
    assert words in str(info.value)


def test_rules_must_be_an_object() -> None:
    with pytest.raises(RulesConfigError, match="object"):
        Rules.from_dict(["classic"])


@pytest.mark.parametrize("name", PRESETS)
def test_dict_and_tuple_forms_round_trip(name: str) -> None:
    r = preset(name, turn_seconds=30, assisted=True)
    assert Rules.from_dict(r.to_dict()) == r
    assert Rules.from_tuple(r.to_tuple()) == r
