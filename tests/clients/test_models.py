"""The Python package's message types (dudo_client.messages, generated from
protocol/schemas) against every published example message: each fits its type, and a
broken copy of each does not (so the check can fail)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dudo.wire.typings import pascal, root_name
from dudo_client import ErrorCode, messages

from .typed import problems

PROTOCOL = Path(__file__).resolve().parents[2] / "protocol"
EXAMPLES = sorted((PROTOCOL / "examples").glob("ws-*.json"))
EVENTS = json.loads((PROTOCOL / "schemas" / "event.schema.json").read_text(encoding="utf-8"))


def _type_of(path: Path) -> Any:
    """ws-out-view-spectator.json -> ViewMessage (the kind is the file's third part)."""
    direction, kind = ("ws-out", path.stem[7:]) if path.stem.startswith("ws-out-") else (
        "ws-in", path.stem[6:])
    for name in (kind, kind.rsplit("-", 1)[0]):
        try:
            return getattr(messages, root_name(f"{direction}-{name}.schema.json"))
        except AttributeError:
            continue
    raise AssertionError(f"no type for {path.name}")


def test_every_websocket_kind_has_an_example() -> None:
    kinds = {p.name.removesuffix(".schema.json") for p in (PROTOCOL / "schemas").glob("ws-*")}
    shown = {f"{p.stem.split('-')[0]}-{p.stem.split('-')[1]}-{_kind(p)}" for p in EXAMPLES}
    assert kinds <= shown, kinds - shown


def _kind(path: Path) -> str:
    return _type_of(path).__annotations__["type"].__args__[0]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_each_example_fits_its_type_and_a_broken_copy_does_not(path: Path) -> None:
    example = json.loads(path.read_text(encoding="utf-8"))
    tp = _type_of(path)
    assert problems(example, tp) == []
    assert problems(example, messages.ServerMessage if "-out-" in path.name
                    else messages.ClientMessage) == []
    broken = copy.deepcopy(example)
    broken["v"] = "1"  # a string where the protocol version is the number 1
    assert problems(broken, tp)
    missing = {k: v for k, v in example.items() if k != "type"}
    assert problems(missing, tp)
    extra = {**example, "not_a_field": 1}
    assert problems(extra, tp)


def test_every_event_example_fits_the_event_type_and_only_its_own_member() -> None:
    seen = 0
    for name, schema in EVENTS["$defs"].items():
        own = getattr(messages, pascal(name) + "Event")
        for example in schema.get("examples", []):
            assert problems(example, messages.Event) == [], name
            assert problems(example, own) == [], name
            assert problems({**example, "type": "dudo" if name == "bid" else "bid"}, own)
            seen += 1
    assert seen >= 19


def test_the_view_types_hold_a_seat_s_hand_and_its_legal_moves() -> None:
    view = json.loads((PROTOCOL / "examples" / "ws-out-view.json").read_text(encoding="utf-8"))
    game = view["game"]
    assert problems(game, messages.GameView) == []
    game["dice"] = ["six"]
    assert problems(game, messages.GameView) == ["$.dice[0]: 'six' is none of (1, 2, 3, 4, 5, 6)"]
    game["dice"], game["legal"]["bid"] = [6], [2, None, 3, 3, 3, "x"]
    assert problems(game, messages.GameView)


def test_error_codes_are_the_documented_ones() -> None:
    guide = (PROTOCOL.parent / "docs" / "protocol.md").read_text(encoding="utf-8")
    for code in ErrorCode:
        if code != "closed":  # the libraries' own: documented in their READMEs
            assert f"`{code.value}`" in guide, code
    assert ErrorCode.NOT_YOUR_TURN == "not_your_turn"


def test_quick_plays_options_are_its_request_but_the_name() -> None:
    """`join_or_create(name, **options)`: Python cannot derive a TypedDict from another,
    so the options are written out; they must stay the generated request's."""
    from typing import get_type_hints

    from dudo_client._http import QuickplayOptions

    request = get_type_hints(messages.QuickplayRequest)
    del request["name"]
    assert get_type_hints(QuickplayOptions) == request
    assert QuickplayOptions.__required_keys__ == frozenset()


def test_the_emotes_and_faces_are_the_protocols() -> None:
    from typing import get_args

    from dudo.wire.fields import EMOTES
    from dudo_client import FACES

    assert get_args(messages.Emote) == EMOTES
    assert FACES == get_args(messages.Die) == (1, 2, 3, 4, 5, 6)
