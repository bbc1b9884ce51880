"""Each extension point is one declaration plus its own logic (docs/architecture.md,
"Where to add..."); where a copy of a declaration must exist elsewhere (another
language, another layer, a stored record), these tests fail when it drifts."""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any

import pytest

from dudo import wire
from dudo.bots.endgame import GAME_FIELDS
from dudo.bots.levels import LEVELS
from dudo.chat import TRANSPORTS, ChatGateway, ChatSettings, Transport
from dudo.cli import build_parser
from dudo.engine import Rules, RulesConfigError
from dudo.engine.rules import PLAY_OPTIONS, options, preset
from dudo.text import LANGS, LEVEL, render

from .e2e.test_page_words import module

# -- a bot level: wire.BOT_LEVELS ------------------------------------------------------


def test_every_bot_level_is_played_by_a_policy() -> None:
    assert tuple(LEVELS) == wire.BOT_LEVELS
    assert wire.DEFAULT_BOT_LEVEL in wire.BOT_LEVELS


def test_the_page_offers_every_bot_level_with_a_word_in_every_language() -> None:
    assert module("presets.js", "m.BOT_LEVELS") == list(wire.BOT_LEVELS)
    words = module("words.js", "m.WORDS")
    for lang in words:
        missing = [level for level in wire.BOT_LEVELS if not words[lang].get(level)]
        assert missing == [], (lang, missing)


def test_the_chat_names_every_bot_level_in_every_language() -> None:
    for lang in LANGS:
        assert set(LEVEL[lang]) == set(wire.BOT_LEVELS), lang
    view = {
        "table": "t1", "seat": 0, "game": None,
        "players": [{"name": "ana", "bot": None}, {"name": "Bot", "bot": "hard"}],
    }
    game = {
        "round": 1, "dice_in_play": 10, "palifico": False, "phase": "bidding", "turn": 0,
        "dice_counts": [5, 5], "dice": [1, 2, 3, 4, 5], "bids": [], "direction": 1,
    }
    said = render({**view, "game": game}, lang="es")
    assert "[bot difícil]" in said, said


# -- a rule option: a field of engine.rules.Rules --------------------------------------

# The options in the order a record stores them, as released. A new option is added
# after these, never among them: a stored tuple is read by position.
STORED = (
    "preset", "start_dice", "max_dice", "min_players", "max_players", "wild_ones",
    "opening_ones", "calza", "calza_needs_lost_die", "palifico", "palifico_wild_ones",
    "loser_chooses_direction", "turn_seconds", "assisted", "bots_fill", "stake",
)  # fmt: skip


def test_options_are_only_ever_added_at_the_end() -> None:
    names = tuple(option.name for option in options())
    assert names[: len(STORED)] == STORED


def test_a_record_stored_before_an_option_existed_reads_it_at_its_default() -> None:
    rules = preset("cacho", turn_seconds=30, assisted=True, palifico=True)
    stored = rules.to_tuple()
    assert Rules.from_tuple(stored) == rules
    defaults = {option.name: option.default for option in options()}
    for size in range(1, len(stored)):
        missing = {name: defaults[name] for name in STORED[size:]}
        assert Rules.from_tuple(stored[:size]) == replace(rules, **missing), size
    with pytest.raises(RulesConfigError):  # a newer server's record: not guessed at
        Rules.from_tuple((*stored, True))
    with pytest.raises(RulesConfigError):
        Rules.from_tuple(())


def _with(name: str, value: Any) -> dict[str, Any]:
    """A rules object that sets ``name`` and whatever it needs to be playable."""
    needs = {"max_dice": {"start_dice": 1}}.get(name, {})
    return {**needs, name: value}


@pytest.mark.parametrize(
    "option", [o for o in options() if o.name != "preset"], ids=lambda o: o.name
)
def test_each_options_published_bounds_are_the_ones_the_engine_checks(option: Any) -> None:
    name, meta = option.name, option.metadata
    assert Rules.from_dict({name: option.default}) is not None  # its default plays
    if meta["choices"]:
        for choice in meta["choices"]:
            assert getattr(Rules.from_dict(_with(name, choice)), name) == choice
        refused = ["nope"]
    elif meta["minimum"] is not None:
        for edge in (meta["minimum"], meta["maximum"]):
            assert getattr(Rules.from_dict(_with(name, edge)), name) == edge
        refused = [meta["minimum"] - 1, meta["maximum"] + 1]
    else:
        assert isinstance(option.default, bool), name  # neither bounded nor chosen: a yes/no
        refused = [1]  # a number is not a yes
    for value in refused:
        with pytest.raises(RulesConfigError) as caught:
            Rules.from_dict(_with(name, value))
        assert caught.value.field == name, value


def test_the_endgame_is_keyed_by_every_option_that_changes_play() -> None:
    assert GAME_FIELDS == PLAY_OPTIONS
    assert "stake" not in PLAY_OPTIONS and "turn_seconds" not in PLAY_OPTIONS
    assert {"wild_ones", "calza", "palifico", "start_dice"} <= set(PLAY_OPTIONS)


# -- a chat network: chat.transports.TRANSPORTS ----------------------------------------


@pytest.mark.parametrize("name", list(TRANSPORTS))
def test_every_chat_transport_keeps_the_contract(name: str) -> None:
    """What the gateway calls of a transport, each has, with the contract's parameters;
    and the command line starts a gateway on it (``dudo <name>``)."""
    settings = ChatSettings(
        transport=name, homeserver="http://127.0.0.1:9", user_id="@dudo:localhost"
    )
    gateway = ChatGateway(settings)
    assert isinstance(gateway.chat, Transport)
    for member, declared in vars(Transport).items():
        if callable(declared) and not member.startswith("_"):
            mine = getattr(type(gateway.chat), member)
            assert _parameters(mine) == _parameters(declared), (name, member)
    gateway.chat.board("#dudo", "Round 3: ana 2 dice", 3)
    waiting = len(gateway.chat.queue) + len(getattr(gateway.chat, "boards_due", {}))
    assert waiting == 1  # said (IRC cannot edit a message), or due as an edit (Matrix)
    assert gateway.registry.get_sample_value(f"dudo_{name}_connected") == 0.0
    command = build_parser().parse_args(_command_line(name))
    assert command.command == name


def _parameters(method: Any) -> list[str]:
    return list(inspect.signature(method).parameters)


def _command_line(name: str) -> list[str]:
    """The fewest arguments ``dudo <name>`` starts with."""
    needs = {"matrix": ["--homeserver", "http://x", "--user", "@d:x", "--room", "#d:x"]}
    return [name, *needs.get(name, [])]
