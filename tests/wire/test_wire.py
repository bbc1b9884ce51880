"""The stream protocol: codec, generated schemas, examples, and their agreement."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import msgpack
import pytest
from jsonschema import Draft202012Validator

from dudo import wire
from dudo.cli import main
from dudo.engine import Bid, new_game, preset, private_view, public_view, seat_view, spectator_view
from dudo.wire.client import CLIENT_MESSAGES, validate_client

from ..http_schemas import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "protocol" / "schemas"
# The messages' examples (a gateway's refused stream is plain fields: tested below).
EXAMPLES = sorted(
    p
    for p in (ROOT / "protocol" / "examples").glob("*.json")
    if not p.stem.startswith(("ws-", "gateway-"))
)
CLIENT_EXAMPLES = sorted((ROOT / "protocol" / "examples").glob("ws-*.json"))


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(load(SCHEMAS / name), registry=REGISTRY)


def schema_name(message: dict[str, Any], path: Path | None = None) -> str:
    if path is not None and path.stem.startswith("ws-"):
        direction = CLIENT_MESSAGES[message["type"]].direction
    else:
        direction = wire.MESSAGES[message["type"]].direction
    return f"{direction}-{message['type']}.schema.json"


def test_generated_schemas_are_committed_and_current(tmp_path: Path) -> None:
    assert main(["schemas", "check", str(SCHEMAS)]) == 0, "run: dudo schemas write"
    for name in wire.json_schemas():
        Draft202012Validator.check_schema(load(SCHEMAS / name))


def test_every_message_type_has_an_example() -> None:
    types = {load(p)["type"] for p in EXAMPLES}
    assert types == set(wire.MESSAGES)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_matches_schema_and_round_trips(path: Path) -> None:
    example = load(path)
    assert path.stem.startswith(schema_name(example).removesuffix(".schema.json"))
    validator(schema_name(example)).validate(example)
    assert wire.validate(example) is example
    data = wire.encode(example)
    direction = wire.MESSAGES[example["type"]].direction
    if direction in ("in", "director", "ratings"):
        assert wire.decode(data, direction=direction) == example
    else:
        assert wire.unpack_batch(wire.pack_batch([data])) == [example]
    if example["type"] == "view":  # what a gateway makes of it is a valid client view
        for snapshot in [*wire.seat_views(example), wire.spectator_view(example)]:
            if snapshot["game"] is not None:
                validator("game-view.schema.json").validate(snapshot["game"])


def mutations(example: dict[str, Any]) -> list[dict[str, Any]]:
    """Small changes that a strict codec and a strict schema must judge alike."""
    out = []
    for key in list(example):
        if key in ("v", "type"):
            continue
        dropped = copy.deepcopy(example)
        del dropped[key]
        out.append(dropped)
        for bad in (None, 7, -1, "", "x" * 70, True, [], {}, "bad id!"):
            changed = copy.deepcopy(example)
            changed[key] = bad
            out.append(changed)
    extra = copy.deepcopy(example)
    extra["surprise"] = 1
    out.append(extra)
    wrong_version = copy.deepcopy(example)
    wrong_version["v"] = 2
    out.append(wrong_version)
    return out


@pytest.mark.parametrize(
    "path", [p for p in EXAMPLES if p.stem.startswith("in-")], ids=lambda p: p.stem
)
def test_codec_and_schema_agree_on_mutated_messages(path: Path) -> None:
    example = load(path)
    check = validator(schema_name(example))
    for mutated in mutations(example):
        schema_ok = check.is_valid(mutated)
        try:
            wire.validate(mutated)
            codec_ok = True
        except wire.WireError:
            codec_ok = False
        assert codec_ok == schema_ok, mutated


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"\xc1", wire.BAD_MESSAGE),  # not msgpack
        (b"\x93\x01\x02\x03", wire.BAD_MESSAGE),  # an array, not a map
        (msgpack.packb({"v": 1, "type": "fly", "table": "t"}), wire.BAD_MESSAGE),
        (msgpack.packb({"v": 2, "type": "act"}), wire.UNSUPPORTED_VERSION),
        (msgpack.packb({"v": 1, "type": "view", "table": "t"}), wire.BAD_MESSAGE),
        (b"\x81\xa1v" + b"\x01" * 20000, wire.TOO_LARGE),
        (
            msgpack.packb(
                {
                    "v": 1,
                    "type": "watch",
                    "id": "i",
                    "table": "t",
                    "gateway": "g",
                    "on": True,
                    "x": b"bin",
                }
            ),
            wire.BAD_MESSAGE,
        ),
    ],
)
def test_malformed_bytes_get_typed_errors(data: bytes, code: str) -> None:
    with pytest.raises(wire.WireError) as info:
        wire.decode(data)
    assert info.value.code == code


def test_bad_rules_are_their_own_code_and_known_fields_are_kept_for_routing() -> None:
    msg = load(ROOT / "protocol/examples/in-create.json")
    msg["rules"] = {"preset": "classic", "start_dice": 0}
    with pytest.raises(wire.WireError) as info:
        wire.decode(wire.encode(msg))
    assert info.value.code == wire.BAD_RULES and "start_dice" in info.value.message
    assert info.value.known == {"id": "c-7f3a", "table": "k2n8q4", "gateway": "web-1"}


def test_unsafe_fields_are_not_echoed() -> None:
    with pytest.raises(wire.WireError) as info:
        wire.validate({"v": 1, "type": "act", "gateway": "evil gateway!", "id": "ok-1", "seat": 9})
    assert info.value.known == {"id": "ok-1"}


def test_action_shapes_are_checked_by_the_codec() -> None:
    msg = load(ROOT / "protocol/examples/in-act-bid.json")
    msg["action"] = {"type": "bid", "quantity": "4", "face": 5}
    with pytest.raises(wire.WireError, match="integer"):
        wire.validate(msg)


@pytest.mark.parametrize("n", [0, 1, 15, 16, 300, 70000])
def test_pack_batch_is_a_msgpack_array(n: int) -> None:
    items = [wire.encode({"i": i}) for i in range(n)]
    assert wire.unpack_batch(wire.pack_batch(items)) == [{"i": i} for i in range(n)]


def test_engine_views_match_the_published_game_view_schema() -> None:
    check = validator("game-view.schema.json")
    public_check = Draft202012Validator(
        {"$ref": "game-view.schema.json#/$defs/public"}, registry=REGISTRY
    )
    private_check = Draft202012Validator(
        {"$ref": "game-view.schema.json#/$defs/private"}, registry=REGISTRY
    )
    rng = random.Random(4)
    for name in ("classic", "lizumo", "cacho", "liars-dice"):
        rules = preset(name, assisted=True, loser_chooses_direction=name == "lizumo")
        state = new_game(rules, 4, rng.randbytes(32))
        for step in range(300):
            if state.phase == "over":
                break
            # Every seat's view at every other step, and seat 0's at each (the whole
            # validation of every view at every step was most of a minute of the suite).
            for seat in range(4) if step % 2 == 0 else (0,):
                check.validate(seat_view(state, seat))
                private_check.validate(private_view(state, seat))
            check.validate(spectator_view(state))
            public_check.validate(public_view(state))
            assert not public_check.is_valid(seat_view(state, 0))  # no private field leaks in
            moves = [(s, a) for s in range(4) for a in state.legal_actions(s)]
            small = [m for m in moves if not isinstance(m[1], Bid) or m[1].quantity < 4]
            state.apply(*rng.choice(small or moves))
        check.validate(seat_view(state, 0))


@pytest.mark.parametrize("path", CLIENT_EXAMPLES, ids=lambda p: p.stem)
def test_client_example_matches_schema(path: Path) -> None:
    example = load(path)
    name = schema_name(example, path)
    assert path.stem.startswith(name.removesuffix(".schema.json"))
    validator(name).validate(example)
    if CLIENT_MESSAGES[example["type"]].direction == "ws-in":
        assert validate_client(example) is example


def test_every_client_message_type_has_an_example() -> None:
    assert {load(p)["type"] for p in CLIENT_EXAMPLES} == set(CLIENT_MESSAGES)


def test_a_version_of_true_is_not_version_1() -> None:
    """msgpack's true is Python's True, and True == 1: the check once let it through."""
    with pytest.raises(wire.WireError) as info:
        wire.decode(msgpack.packb({"v": True, "type": "watch", "id": "i", "table": "t",
                                   "gateway": "g", "on": True}))  # fmt: skip
    assert info.value.code == wire.UNSUPPORTED_VERSION


def test_the_refused_streams_example_fits_its_schema_and_the_workers_fields() -> None:
    from dudo.worker import commit

    example = load(ROOT / "protocol" / "examples" / "gateway-refusal.json")
    validator("gateway-refusal.schema.json").validate(example)
    source = Path(commit.__file__).read_text(encoding="utf-8")
    for name in example:  # each field the schema promises is one the worker writes
        assert f'"{name}":' in source, name
