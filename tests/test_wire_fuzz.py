"""Fuzzing the codecs: arbitrary msgpack values in every field never escape as anything
but a typed error.

A worker decodes every inbox entry with :func:`dudo.wire.decode`, a gateway every
client message with :func:`dudo.gateway.messages.validate_client`, and both check
rules with :meth:`Rules.from_dict`. Any exception other than the typed ones would
take the reading process down (issue 10, defect 2: a ``create`` whose
``rules.preset`` was a list stopped every worker in turn).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dudo import wire
from dudo.engine import Rules, RulesConfigError
from dudo.gateway.messages import validate_client

EXAMPLES = Path(__file__).resolve().parents[1] / "protocol" / "examples"
INBOX = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(EXAMPLES.glob("in-*.json"))]
CLIENT = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(EXAMPLES.glob("ws-in-*.json"))]

# Everything msgpack can carry (msgspec decodes the same set).
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=True)
    | st.text(max_size=80)
    | st.binary(max_size=40)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.dictionaries(st.text(max_size=12) | st.integers(-5, 5), inner, max_size=6)
    ),
    max_leaves=20,
)
RULE_KEYS = ["preset", *(f for f in Rules.__dataclass_fields__ if f != "preset"), "nope"]


def _mutate(base: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    """The example with one to three fields (or nested rule fields) replaced or added."""
    message = json.loads(json.dumps(base))
    for _ in range(data.draw(st.integers(1, 3))):
        key = data.draw(st.sampled_from([*message, "extra", "rules.preset", "rules.any"]))
        if key.startswith("rules."):
            rules = message.setdefault("rules", {})
            if not isinstance(rules, dict):
                rules = message["rules"] = {}
            field = data.draw(st.sampled_from(RULE_KEYS)) if key == "rules.any" else "preset"
            rules[field] = data.draw(values)
        else:
            message[key] = data.draw(values)
    return message


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(INBOX), st.data())
def test_stream_decode_turns_any_value_into_a_typed_error(
    base: dict[str, Any], data: st.DataObject
) -> None:
    message = _mutate(base, data)
    raw = msgpack.packb(message, use_bin_type=True)
    try:
        decoded = wire.decode(raw)
    except wire.WireError as exc:
        assert exc.code in wire.DECODE_ERROR_CODES
        for key, value in exc.known.items():  # whatever is echoed back is safe to route by
            assert wire._plausible(key, value)
    else:
        assert decoded["type"] in wire.INBOX_TYPES
        wire.encode(decoded)  # what passed can be written again


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200))
def test_stream_decode_of_arbitrary_bytes_is_a_typed_error(raw: bytes) -> None:
    try:
        wire.decode(raw)
    except wire.WireError as exc:
        assert exc.code in wire.DECODE_ERROR_CODES


@settings(max_examples=500, deadline=None)
@given(values)
def test_stream_decode_of_any_top_level_value_is_a_typed_error(value: Any) -> None:
    try:
        wire.decode(msgpack.packb(value, use_bin_type=True))
    except wire.WireError as exc:
        assert exc.code in wire.DECODE_ERROR_CODES


@settings(max_examples=800, deadline=None)
@given(st.sampled_from(CLIENT), st.data())
def test_client_messages_turn_any_value_into_a_typed_error(
    base: dict[str, Any], data: st.DataObject
) -> None:
    message = _mutate(base, data)
    try:
        validate_client(message)
    except wire.WireError as exc:
        assert exc.code in wire.DECODE_ERROR_CODES


@settings(max_examples=1500, deadline=None)
@given(
    st.dictionaries(st.sampled_from(RULE_KEYS) | st.text(max_size=8) | st.integers(), values)
    | values
)
def test_rules_from_any_value_are_rules_or_a_config_error(value: Any) -> None:
    try:
        rules = Rules.from_dict(value)
    except RulesConfigError as exc:
        assert isinstance(exc.field, str) and exc.message  # names the field, says why
    else:
        assert Rules.from_dict(rules.to_dict()) == rules


def test_the_reported_cases_are_typed_errors() -> None:
    """The values seen taking workers down, and their neighbours."""
    base = next(m for m in INBOX if m["type"] == "create")
    for bad in ([], {}, [1], {"a": 1}, b"classic", 1.5, True):
        message = {**base, "rules": {"preset": bad}}
        try:
            wire.decode(msgpack.packb(message, use_bin_type=True))
        except wire.WireError as exc:
            assert exc.code == wire.BAD_RULES, bad
            assert exc.known["id"] == base["id"]  # the error still reaches its sender
        else:
            raise AssertionError(f"preset {bad!r} was accepted")
    for name in ("abc\n", "t1\n"):  # `$` matches before a final newline; ids must not
        message = {**base, "table": name}
        try:
            wire.decode(msgpack.packb(message))
        except wire.WireError as exc:
            assert exc.code == wire.BAD_MESSAGE
        else:
            raise AssertionError(f"id {name!r} was accepted")
