"""The text clients' words (play_text.py) in English, Spanish and German: the same
sentences with the same placeholders in each, the whole table in each, and commands
and face names of every language understood whichever the player reads."""

from __future__ import annotations

import copy
import string
from typing import Any

import pytest

from dudo.text.lines import (
    FACE,
    FACES,
    LANGS,
    WORDS,
    event_line,
    odds_text,
    parse,
    render,
    reveal_text,
    say,
    summary_line,
    turn_text,
)

VIEW: dict[str, Any] = {
    "table": "t1",
    "seat": 0,
    "version": 3,
    "status": "playing",
    "players": [
        {"name": "Tess", "bot": None, "away": False},
        {"name": "Hugo", "bot": "normal", "away": False},
    ],
    "game": {
        "round": 2,
        "rules": {"palifico_wild_ones": False},
        "dice_in_play": 4,
        "palifico": True,
        "phase": "bidding",
        "dice_counts": [2, 2],
        "turn": 0,
        "dice": [3, 5],
        "bids": [[1, 1, 5]],
        "winner": None,
        "odds": {"bid_true": 0.42},
        "legal": {
            "bid": [1, 2, 2, 2, 1, 1],
            "max_quantity": 4,
            "dudo": True,
            "calza": True,
            "direction": False,
        },
        "last_round": {
            "call": "dudo",
            "caller": 1,
            "bid": [0, 3, 4],
            "dice": [[1, 4], [4, 6]],
            "count": 3,
            "loser": 1,
            "gainer": None,
        },
    },
}


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_language_has_every_sentence_with_the_same_placeholders() -> None:
    for lang in LANGS:
        assert WORDS[lang].keys() == WORDS["en"].keys(), lang
        for key, template in WORDS["en"].items():
            assert fields(WORDS[lang][key]) == fields(template), (lang, key)
        assert len(FACE[lang]) == len(FACES[lang]) == 6


@pytest.mark.parametrize("lang", ["es", "de"])
def test_the_whole_table_reads_in_each_language(lang: str) -> None:
    view = copy.deepcopy(VIEW)
    lines = [
        render(view, lang),
        turn_text(view, lang),
        reveal_text(view, lang),
        event_line(view, {"type": "bid", "seat": 1, "quantity": 3, "face": 6}, lang) or "",
        event_line(view, {"type": "dudo", "seat": 0}, lang) or "",
        event_line(view, {"type": "house_bot", "seat": 1}, lang) or "",
        event_line(view, {"type": "eliminated", "seat": 1}, lang) or "",
        say("help", lang),
    ]
    text = "\n".join(lines)
    english = {"Your", "turn", "Table", "round", "dice", "bids", "Legal", "Suggestion",
               "counted", "loses", "clock", "house", "commands"}  # fmt: skip
    assert not english & set(text.replace(".", " ").replace(":", " ").split()), text
    assert FACES[lang][5] in lines[3]  # the bid's face named in the language
    assert "Tess" in lines[0] and "Hugo" in lines[0] and "42%" in lines[1]


USAGE_BID = {"command": "usage", "of": "bid"}


def test_commands_and_faces_of_every_language_are_understood() -> None:
    bid = {"type": "bid", "quantity": 3, "face": 5}
    for typed in ("3 5", "3 fives", "3 five", "3 quinas", "3 Fünfer", "3 funfer", "3 x 5"):
        assert parse(typed) == bid, typed
    assert parse("2 ases") == parse("2 Pacos") == parse("2 ones") == {
        "type": "bid", "quantity": 2, "face": 1,
    }  # fmt: skip
    for typed, meant in (("izquierda", -1), ("links", -1), ("rechts", 1), ("derecha", 1)):
        assert parse(typed) == {"type": "direction", "value": meant}
    assert parse("ayuda") == parse("hilfe") == "help"
    assert parse("salir") == parse("beenden") == "quit"
    assert parse("empezar") == parse("starten") == "start"
    assert parse("3 dragons") == USAGE_BID and parse("") is None
    assert parse("!dados") == parse("!würfel") == parse("!dice") == "dice"


def test_the_english_text_piece_by_piece() -> None:
    assert parse("3 5") == {"type": "bid", "quantity": 3, "face": 5}
    assert parse("  DUDO ") == {"type": "dudo"}
    assert parse("left") == {"type": "direction", "value": -1}
    # Quantities and faces in everyday words, in every language (issue 54, item 6) ...
    for typed, bid in (("three fives", (3, 5)), ("5 treses", (5, 3)), ("5 doses", (5, 2)),
                       ("tres treses", (3, 3)), ("drei Fünfer", (3, 5)),
                       ("zwei Sechsen", (2, 6)), ("ein Paco", (1, 1)), ("veinte cenas", (20, 6)),
                       ("!bid twelve sixes", (12, 6)), ("a two", (1, 2))):  # fmt: skip
        assert parse(typed) == {"type": "bid", "quantity": bid[0], "face": bid[1]}, typed
    assert parse("three little") == {"command": "unknown", "word": "three"}
    # ... and a face no die has is said to be one (item 5: "4 7" was sent as a bid).
    for typed in ("4 7", "4 0", "4 12", "!bid 4 9", "seven 8"):
        assert parse(typed) == {"command": "usage", "of": "face"}, typed
    view = copy.deepcopy(VIEW)
    view["game"]["palifico"] = False
    text = render(view)
    assert "Your dice: [3] [5]" in text and "Hugo (bot) 1×5" in text
    assert "1. Tess (you)" in text and "2. Hugo [bot normal]" in text  # seats from 1
    turn = turn_text(view)
    assert turn.startswith("Your turn. To beat: 1 × five (Hugo).")
    assert "Legal: bid 1..4×1, 2..4×2" in turn and "dudo | calza" in turn
    assert "Suggestion: 1 5." in turn and "true 42%" in turn
    assert event_line(view, {"type": "bid", "seat": 1, "quantity": 3, "face": 6}) == (
        "Hugo (bot) bids 3 × sixes"  # a bot says it is one (issue 54, item 9)
    )
    assert event_line(view, {"type": "house_bot", "seat": 0}) == (
        "(the clock ran out: the house plays for you)"
    )
    assert event_line(view, {"type": "dudo", "seat": 0}) == "You call Dudo!"
    assert reveal_text(view).splitlines()[-1] == "    3 counted; Hugo (bot) loses a die"
    view["game"]["palifico"] = True
    assert "PALIFICO: the face is locked, ones are not wild" in render(view)
    view["game"]["rules"]["palifico_wild_ones"] = True
    assert "ones stay wild" in render(view)


def test_chat_commands_of_every_language_with_or_without_the_bang() -> None:
    bid = {"type": "bid", "quantity": 3, "face": 5}
    for typed in ("!bid 3 5", "bid 3 5", "!puja 3 quinas", "!gebot 3 Fünfer", "! 3 5"):
        assert parse(typed) == bid, typed
    assert parse("!dudo") == {"type": "dudo"} and parse("!calza") == {"type": "calza"}
    for typed, meant in (("!dir +", 1), ("!dir -", -1), ("!richtung links", -1), ("+", 1)):
        assert parse(typed) == {"type": "direction", "value": meant}, typed
    assert parse("!dir up") == {"command": "usage", "of": "dir"}
    assert parse("!bid 3") == parse("!3") == USAGE_BID  # a usage line, not the help
    assert parse("!frobnicate") == {"command": "unknown", "word": "frobnicate"}
    for words, meant in (
        (("!join", "!unirse", "!mitspielen"), "join"),
        (("!odds", "!probabilidad", "!chancen"), "odds"),
        (("!table", "!mesa", "!tisch"), "table"),
        (("!leave", "!dejar", "!verlassen"), "leave"),
        (("!start", "!empezar", "!starten"), "start"),
    ):
        assert {parse(w) for w in words} == {meant}, words
    new = {"command": "new", "preset": None, "bots": 0, "dice": None, "clock": None,
           "odds": False, "dir": False}  # fmt: skip
    assert parse("!new") == new
    assert parse("!new lizumo bots 2") == {**new, "preset": "lizumo", "bots": 2}
    assert parse("!nueva 3 bots 2 dados") == {**new, "bots": 3, "dice": 2}
    assert parse("!neu cacho würfel 3") == {**new, "preset": "cacho", "dice": 3}
    assert parse("!new liars-dice bots 1") == {**new, "preset": "liars-dice", "bots": 1}
    assert parse("!new lizumo clock 30 odds dir") == {
        **new, "preset": "lizumo", "clock": 30, "odds": True, "dir": True,
    }  # fmt: skip
    assert parse("!nueva reloj 45 probabilidad") == {**new, "clock": 45, "odds": True}
    usage_new = {"command": "usage", "of": "new"}
    assert parse("!new classic lizumo") == parse("!new bots") == parse("!new 3") == usage_new
    assert parse("!new bots 999") == parse("!new " + "x" * 40) == usage_new  # not counts, names
    assert parse("!new clock 1000") == usage_new
    assert parse("3000 5") == parse("3 ٥") == parse("3 9x") == USAGE_BID  # plain, short numbers
    assert parse("!idioma es") == {"command": "lang", "lang": "es"}
    assert parse("!lang xx") == parse("!lang") == {"command": "usage", "of": "lang"}
    assert parse("!") is None


def test_a_round_in_one_public_line_and_a_seats_odds() -> None:
    view = copy.deepcopy(VIEW)
    line = summary_line(view)
    assert line.startswith("Round 2 · 4 dice: Tess (you) 2 ←, Hugo (bot) 2")
    assert "PALIFICO" in line and "[3]" not in line  # public: no dice
    assert summary_line(view, "de").startswith("Runde 2 · 4 Würfel")
    assert odds_text(view) == "Odds: 1 × five is true 42%"
    assert odds_text(view, "es") == "Probabilidad: 1 × quina es cierta 42%"
    view["game"]["bids"] = []
    assert odds_text(view) == "There is no bid to beat yet"
    del view["game"]["odds"]  # a table without assisted mode: none made up
    assert odds_text(view) == "This table plays without odds (assisted is off)"


def test_a_reaction_typed_and_shown_in_every_language() -> None:
    """``react haha``, a picture, or a language's own word for it; shown as a line with
    the picture (the terminal and the chat gateways alike)."""
    for typed in ("react haha", "!react 😂", "reaccion haha", "!reagieren 😂", "reaktion haha"):
        assert parse(typed) == {"command": "react", "emote": "haha"}, typed
    assert parse("!react") == parse("react lol") == {"command": "usage", "of": "react"}
    view = {"seat": 0, "players": [{"name": "Ana"}, {"name": "Bea"}], "game": None}
    event = {"type": "reaction", "seat": 1, "emote": "clap"}
    assert [event_line(view, event, lang) for lang in ("en", "es", "de")] == ["Bea: 👏"] * 3
