"""Where a message goes and how it is refused, said in one place each: the table's and
the director's message → handler tables cover exactly the protocol's types, and every
refusal is one tree (DudoError: RuleError, WireError, Refusal)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dudo import wire
from dudo.auth.authority import read_token
from dudo.director import tournament
from dudo.engine import Bid, DudoError, RuleError, RulesConfigError, new_game, preset
from dudo.link.tokens import TokenError, Tokens
from dudo.table import table

SERVICES = Path(__file__).resolve().parents[1] / "services" / "dudo"


def test_the_table_handles_exactly_the_inbox_types() -> None:
    assert set(table.HANDLERS).isdisjoint(table.UNTRACKED)
    assert set(table.HANDLERS) | table.UNTRACKED == wire.INBOX_TYPES


def test_the_director_handles_exactly_the_director_types() -> None:
    assert set(tournament.HANDLERS).isdisjoint(tournament.UNTRACKED)
    assert set(tournament.HANDLERS) | tournament.UNTRACKED == wire.DIRECTOR_TYPES


@pytest.mark.parametrize("module", [table, tournament])
def test_every_handler_is_a_method_of_the_entity(module: object) -> None:
    entity = module.Table if module is table else module.Tournament  # type: ignore[attr-defined]
    for kind, handler in module.HANDLERS.items():  # type: ignore[attr-defined]
        assert getattr(entity, handler.__name__) is handler, kind
        assert handler.__name__ == f"_on_{kind}", f"{kind} goes to {handler.__name__}"


def test_the_handlers_are_found_by_their_names_not_built_at_run_time() -> None:
    """"Find usages" of a handler finds the table that names it."""
    for path in SERVICES.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr":
                name = node.args[1] if len(node.args) > 1 else None
                assert not (
                    isinstance(name, ast.JoinedStr)
                    and any(
                        isinstance(v, ast.Constant) and str(v.value).startswith("_on_")
                        for v in name.values
                    )
                ), f"{path.name}:{node.lineno} finds a handler by a built name"


def test_every_refusal_is_a_dudo_error_with_a_code_and_a_message() -> None:
    state = new_game(preset("classic"), 2, b"s" * 32)
    refusals: list[DudoError] = []
    with pytest.raises(DudoError) as rule:
        state.apply(1 - state.turn, Bid(1, 2))
    refusals.append(rule.value)
    with pytest.raises(DudoError) as decode:
        wire.decode(b"\xc1")
    refusals.append(decode.value)
    with pytest.raises(DudoError) as forged:
        read_token("x.y", b"k" * 32)
    refusals.append(forged.value)
    with pytest.raises(DudoError) as token:
        Tokens(b"s" * 32).check("nonsense")
    refusals.append(token.value)
    kinds = [type(r) for r in refusals]
    assert kinds == [RuleError, wire.WireError, wire.Refusal, TokenError]
    for refusal in refusals:
        assert refusal.code and refusal.message
        assert str(refusal) == f"{refusal.code}: {refusal.message}"
    assert rule.value.code == "not_your_turn"
    assert decode.value.code == wire.BAD_MESSAGE
    assert forged.value.code == token.value.code == wire.UNAUTHORIZED


def test_a_refusal_carries_a_published_code_only() -> None:
    with pytest.raises(AssertionError):
        wire.Refusal("made_up", "no such code")
    with pytest.raises(AssertionError):
        RuleError("bad_message", "a protocol code is not a rule code")


def test_a_rules_configuration_error_is_a_value_error_not_a_refusal() -> None:
    """A rules configuration that cannot be played is the caller's mistake in building
    rules; the table turns it into the `bad_rules` refusal of the create it came in."""
    assert issubclass(RulesConfigError, ValueError)
    assert not issubclass(RulesConfigError, DudoError)


def test_tables_and_directors_refuse_with_refusals_never_the_codecs_error() -> None:
    for folder in ("table", "director", "auth"):
        for path in (SERVICES / folder).glob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "raise WireError(" not in text and "raise wire.WireError(" not in text, (
                f"{folder}/{path.name} raises the codec's error: raise Refusal"
            )
