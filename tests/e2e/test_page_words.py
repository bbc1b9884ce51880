"""The page's words and rules, read from its own modules with Node: every language has
every word and a translation of every error code the server may send, and the presets
the create form shows are the engine's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from dudo import wire
from dudo.engine import RULE_ERROR_CODES
from dudo.engine.rules import PRESETS_ORDER, Rules, rules_dict

from ..servers import require_binary

STATIC = Path(__file__).resolve().parents[2] / "services" / "dudo" / "gateway" / "static"


def module(name: str, expression: str) -> Any:
    """``expression`` evaluated over the named exports of ``static/<name>`` (as ``m``)."""
    node = require_binary("node")
    script = f"import * as m from {json.dumps((STATIC / name).as_uri())};"
    script += f"console.log(JSON.stringify({expression}));"
    done = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def words() -> dict[str, dict[str, str]]:
    return module("words.js", "m.WORDS")  # type: ignore[no-any-return]


def _forms(text: str | dict[str, str]) -> list[str]:
    """A word's texts: itself, or each of its plural forms ({one, other}: i18n.js)."""
    return [text] if isinstance(text, str) else list(text.values())


def _placeholders(text: str | dict[str, str]) -> set[str]:
    return {p.split("}")[0] for form in _forms(text) for p in form.split("{")[1:]}


def test_every_language_has_every_word(words: dict[str, dict[str, str]]) -> None:
    english = set(words["en"])
    assert len(english) > 150
    for code in ("es", "de"):
        assert set(words[code]) == english, english ^ set(words[code])
        # The same placeholders in every language (a missing {name} shows as "{name}").
        for key, text in words["en"].items():
            assert _placeholders(words[code][key]) == _placeholders(text), (code, key)
            for form in _forms(words[code][key]):  # every plural form says it
                assert _placeholders(form) == _placeholders(text), (code, key, form)
            if not isinstance(text, str):  # a plural word has the form "other" everywhere
                assert "other" in text and "other" in _plural(words[code][key]), (code, key)


def _plural(text: str | dict[str, str]) -> dict[str, str]:
    return {"other": text} if isinstance(text, str) else text


def test_every_error_code_is_translated_in_every_language() -> None:
    errors = module("i18n.js", "m.ERRORS")
    codes = set(wire.PROTOCOL_ERROR_CODES) | set(RULE_ERROR_CODES)
    for code in ("en", "es", "de"):
        assert codes <= set(errors[code]), (code, codes - set(errors[code]))


def test_the_forms_presets_are_the_engines() -> None:
    presets = module("presets.js", "m.PRESETS")
    assert list(presets) == list(PRESETS_ORDER)
    for name in PRESETS_ORDER:
        assert presets[name] == rules_dict(Rules.from_dict({"preset": name})), name


def test_every_option_the_form_offers_has_its_words(words: dict[str, dict[str, str]]) -> None:
    options = module("presets.js", "m.OPTIONS")
    names = {option["name"] for option in options}
    assert names <= set(rules_dict(Rules.from_dict({})))  # options the engine has
    for name in names:
        assert f"opt_{name}" in words["en"] and f"help_{name}" in words["en"], name
    for name in PRESETS_ORDER:
        assert f"preset_{name}" in words["en"], name


def test_the_odds_calculator_of_the_help_page() -> None:
    """P(at least k of n) for a few known cases: it is the binomial tail."""
    got = module(
        "odds.js",
        "[m.atLeast(0, 5, 1/3), m.atLeast(1, 1, 1/6), m.atLeast(2, 2, 1/3), m.atLeast(5, 15, 1/3),"
        " m.atLeast(16, 15, 1/3)]",
    )
    assert got[0] == pytest.approx(1.0)
    assert got[1] == pytest.approx(1 / 6)
    assert got[2] == pytest.approx(1 / 9)
    assert got[3] == pytest.approx(0.595935, abs=1e-6)  # sum C(15,i) (1/3)^i (2/3)^(15-i), i>=5
    assert got[4] == pytest.approx(0.0)


def test_no_word_is_written_twice_in_a_language() -> None:
    """An object literal keeps the last of two equal keys, silently: a new word under an
    old key replaced it everywhere ("history" once named the round's bids and the game's
    rounds both)."""
    import re

    source = (STATIC / "words.js").read_text(encoding="utf-8")
    blocks = re.split(r"\n  (en|es|de): \{\n", source)[1:]
    for lang, body in zip(blocks[::2], blocks[1::2], strict=True):
        block = body.split("\n  },")[0]
        keys = re.findall(r"(?:^|[\s,{])([A-Za-z_][A-Za-z0-9_]*): [\"'`]", block)
        keys = [k for k in keys if k not in ("one", "other")]  # a plural word's forms
        keys += re.findall(r"(?:^|[\s,])([A-Za-z_][A-Za-z0-9_]*): \{ one: ", block)  # the word
        twice = sorted({k for k in keys if keys.count(k) > 1})
        assert twice == [], f"{lang}: {twice}"

