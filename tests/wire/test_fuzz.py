"""Fuzzing the codecs: arbitrary msgpack values in every field never escape as anything
but a typed error.

A worker decodes every inbox entry with :func:`dudo.wire.decode`, a gateway every
client message with :func:`dudo.wire.client.validate_client`, and both check
rules with :meth:`Rules.from_dict`. Any exception other than the typed ones would
take the reading process down (issue 10, defect 2: a ``create`` whose
``rules.preset`` was a list stopped every worker in turn).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import msgpack
import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dudo import wire
from dudo.engine import Rules, RulesConfigError
from dudo.wire.client import validate_client

EXAMPLES = Path(__file__).resolve().parents[2] / "protocol" / "examples"
INBOX = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(EXAMPLES.glob("in-*.json"))]
CLIENT = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(EXAMPLES.glob("ws-in-*.json"))]
OUTBOX = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(EXAMPLES.glob("out-*.json"))]
DIRECTOR = [
    json.loads(p.read_text(encoding="utf-8")) for p in sorted(EXAMPLES.glob("director-*.json"))
]

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


@settings(max_examples=750, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
            assert wire.plausible(key, value)
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


@settings(max_examples=750, deadline=None)
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


# -- the fast path (msgspec's typed decoders) gives the checker's answers ---------


def _answer(decode: Any, data: bytes) -> tuple[str, Any]:
    try:  # compared as bytes: a NaN inside is not equal to itself
        return "ok", msgpack.packb(decode(data), use_bin_type=True)
    except wire.WireError as exc:
        return "refused", (exc.code, exc.message, exc.known)
    except Exception as exc:  # not msgpack / not JSON at all
        return "undecodable", type(exc).__name__


def _slow_msgpack(data: bytes) -> dict[str, Any]:
    return wire.validate(wire.unpack(data))


def _slow_json(data: bytes) -> dict[str, Any]:
    # msgspec parses JSON as RFC 8259 says (no NaN or Infinity), as the gateway does
    return validate_client(msgspec.json.decode(data))


EDGES = st.sampled_from(
    ["", "a\n", "\n", "x" * 65, "x" * 64, "ñ", True, False, 0, -1, 2**63, 2**63 - 1, -(2**63),
     1.0, None, [], {}, [None], {"type": "bid"}, {"extra": 1}]
)  # fmt: skip


def _edge_mutate(base: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    """The example with fields set to the values at the edges of what fields allow, at
    the top level or one level down (an action's or a seat spec's fields)."""
    message = json.loads(json.dumps(base))
    for _ in range(data.draw(st.integers(1, 3))):
        target = message
        nested = [k for k, v in message.items() if isinstance(v, dict)]
        if nested and data.draw(st.booleans()):
            target = message[data.draw(st.sampled_from(nested))]
        key = data.draw(st.sampled_from([*target, "extra"]))
        if data.draw(st.integers(0, 4)) == 0:
            target.pop(key, None)
        else:
            target[key] = copy.deepcopy(data.draw(EDGES | values))  # constants stay intact
    return message


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(INBOX + OUTBOX + DIRECTOR), st.data())
def test_the_fast_stream_decoder_answers_as_the_checker(
    base: dict[str, Any], data: st.DataObject
) -> None:
    message = _edge_mutate(base, data) if data.draw(st.booleans()) else _mutate(base, data)
    raw = msgpack.packb(message, use_bin_type=True)
    assert _answer(wire.fast_check.msgpack, raw) == _answer(_slow_msgpack, raw)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CLIENT), st.data())
def test_the_fast_client_decoder_answers_as_the_checker(
    base: dict[str, Any], data: st.DataObject
) -> None:
    from dudo.wire.client import fast_client

    message = _edge_mutate(base, data) if data.draw(st.booleans()) else _mutate(base, data)
    try:
        raw = json.dumps(message).encode()
    except (TypeError, ValueError):
        return  # bytes have no JSON form
    assert _answer(fast_client.json, raw) == _answer(_slow_json, raw)


def test_the_fast_decoders_refuse_what_only_a_full_match_refuses() -> None:
    """Cases a searching pattern, a first-of-duplicates rule or a loose type would let
    through: the fast path must refuse each as the checker does."""
    act = next(m for m in INBOX if m["type"] == "act")
    cases = [
        {**act, "id": "a1\n"},
        {**act, "table": "t\n"},
        {**act, "seat": True},
        {**act, "seat": 1.0},
        {**act, "seat": 6},
        {**act, "v": 2},
        {**act, "extra": 1},
        {**act, "action": {**act["action"], "extra": 1}},
    ]
    for message in cases:
        raw = msgpack.packb(message, use_bin_type=True)
        verdict, _ = _answer(wire.fast_check.msgpack, raw)
        assert verdict == "refused" and _answer(wire.fast_check.msgpack, raw) == _answer(
            _slow_msgpack, raw
        ), message
    # a map with a key twice: the last one counts, and both must pass
    good, bad = msgpack.packb(act["seat"]), msgpack.packb("x")
    body = msgpack.packb({k: v for k, v in act.items() if k != "seat"})
    for first, last in ((good, bad), (bad, good)):
        n = len(act)  # the fields of act, one of them (seat) twice
        raw = bytes([0xDE]) + (n + 1).to_bytes(2, "big") + body[1:]
        raw += msgpack.packb("seat") + first + msgpack.packb("seat") + last
        assert _answer(wire.fast_check.msgpack, raw) == _answer(_slow_msgpack, raw)


@settings(max_examples=1000, deadline=None)
@given(
    st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40)
    | st.text(alphabet=" \t\n\u00a0\u200bab", max_size=8)
    | st.text(max_size=40)
)
def test_a_display_name_is_judged_clean_exactly_as_clean_name_leaves_it(text: str) -> None:
    """A display name in an entry must be one clean_name leaves unchanged; plain ASCII
    is judged without the Unicode tables (wire.is_clean_name): the same answers."""
    try:
        expected = wire.clean_name(text) == text
    except wire.WireError:
        expected = False
    assert wire.is_clean_name(text) is expected


NAME_EDGES = ["ana", "Ana María", "Zoë", "a  b", " a", "a ", "a\tb", "x" * 32, "x" * 33,
              "\u202eab", "ｗｉｄｅ", "e\u0301", "", "a b c", "~!", "a\u00a0b"]  # fmt: skip
NAMES = (
    st.sampled_from(NAME_EDGES)
    | st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40)
    | st.text(max_size=40)
)


def _name_slots(message: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths to every `name` field in a message, at any depth."""
    if isinstance(message, dict):
        here = [(*path, "name")] if isinstance(message.get("name"), str) else []
        return here + [p for k, v in message.items() for p in _name_slots(v, (*path, k))]
    if isinstance(message, list):
        return [p for i, v in enumerate(message) for p in _name_slots(v, (*path, i))]
    return []


@settings(max_examples=750, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([m for m in INBOX + OUTBOX + DIRECTOR if _name_slots(m)]),
    st.data(),
)
def test_display_names_at_any_depth_get_the_checkers_answer(
    base: dict[str, Any], data: st.DataObject
) -> None:
    """Display names sit at the top of a message (`join`) or deep inside it (a report's
    players who left): the fast path types clean ASCII names in msgspec and asks about
    any other name after; either way the checker's answer, name for name."""
    message = copy.deepcopy(base)
    for path in data.draw(st.lists(st.sampled_from(_name_slots(message)), min_size=1, max_size=3)):
        target = message
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = data.draw(NAMES)
    raw = msgpack.packb(message, use_bin_type=True)
    assert _answer(wire.fast_check.msgpack, raw) == _answer(_slow_msgpack, raw)


def _as_own(message: dict[str, Any]) -> dict[str, Any]:
    """A checked message as decode_own gives it: a `reports`' items as TableReport."""
    if message["type"] != "reports":
        return message
    return {**message, "reports": [wire.TableReport.of(r) for r in message["reports"]]}


def _direction_of(message: dict[str, Any]) -> str:
    kind = message.get("type")
    return next((d for d, types in wire.TYPES_OF.items() if kind in types), "in")


@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(INBOX + DIRECTOR), st.data())
def test_an_entry_of_ours_is_decoded_as_any_other_or_refused_by_its_shape(
    base: dict[str, Any], data: st.DataObject
) -> None:
    """decode_own (entries our processes signed) checks only the top of a message: what
    decode accepts, it returns alike; what it refuses is a typed error or a message of
    the direction's types whose required fields are there (the ids a worker routes by
    strings): never anything that could stop a worker before a handler is reached."""
    unchanged = data.draw(st.booleans())
    message = (
        base
        if unchanged
        else _edge_mutate(base, data)
        if data.draw(st.booleans())
        else _mutate(base, data)
    )
    direction = _direction_of(base)
    raw = msgpack.packb(message, use_bin_type=True)
    try:
        checked: Any = wire.decode(raw, direction=direction)
    except wire.WireError as exc:
        checked = exc
    try:
        own = wire.decode_own(raw, direction=direction)
    except wire.WireError as exc:
        assert exc.code in wire.DECODE_ERROR_CODES
        assert isinstance(checked, wire.WireError) and exc.code == checked.code
        return
    if unchanged or not isinstance(checked, wire.WireError):
        assert own == _as_own(checked)
    kind = own["type"]
    assert kind in wire.TYPES_OF[direction] and own["v"] == wire.PROTOCOL_VERSION
    for key, spec in wire.MESSAGES[kind].fields.items():
        if spec.required:
            assert key in own
            if spec.kind == "string" and not spec.nullable:
                assert isinstance(own[key], str)


@settings(max_examples=300, deadline=None)
@given(values | st.binary(max_size=200).map(lambda b: ("raw", b)))
def test_an_entry_of_ours_that_is_no_message_is_a_typed_error(value: Any) -> None:
    raw = value[1] if isinstance(value, tuple) else msgpack.packb(value, use_bin_type=True)
    try:
        wire.decode_own(raw, direction="director")
    except wire.WireError as exc:
        assert exc.code in wire.DECODE_ERROR_CODES
