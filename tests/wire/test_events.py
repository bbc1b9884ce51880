"""Every event a view can carry has a schema (protocol/schemas/event.schema.json), and
every event the engine and the tables emit is valid against it: random games under
every preset, seats moving between rounds, turn clocks and tables that close."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from dudo.engine import OVER, Rules, new_game, reseat

from ..engine.helpers import legal_moves, pick
from ..http_schemas import REGISTRY
from ..table.test_table import Run, h

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "protocol/schemas/event.schema.json").read_text()
)
VALIDATOR = Draft202012Validator(SCHEMA, registry=REGISTRY)  # a face is game-view's `die`


def check(events: list[dict[str, Any]], seen: set[str]) -> None:
    for event in events:
        errors = list(VALIDATOR.iter_errors(event))
        assert not errors, (event, [e.message for e in errors][:3])
        seen.add(event["type"])


def random_games(seen: set[str]) -> None:
    rng = random.Random(13)
    for preset in ("classic", "lizumo", "cacho", "liars-dice"):
        for extra in ({}, {"loser_chooses_direction": True, "stake": 10, "start_dice": 2}):
            rules = Rules.from_dict({"preset": preset, **extra})
            for _ in range(6):
                seats = rng.randint(max(2, rules.min_players), rules.max_players)
                state = new_game(rules, seats, rng.randbytes(32), opener=rng.randrange(seats))
                while state.phase != OVER:
                    seat, action = pick(rng, legal_moves(state))
                    check(state.apply(seat, action), seen)


def test_every_event_of_the_engine_and_the_tables_matches_its_schema() -> None:
    seen: set[str] = set()
    random_games(seen)

    # Seats moving between rounds (tournaments), down to a halted table.
    rng = random.Random(5)
    state = new_game(Rules.from_dict({"preset": "classic"}), 4, rng.randbytes(32), opener=0)
    while state.round_no == 1:  # to the end of the first round
        seat, action = pick(rng, legal_moves(state))
        state.apply(seat, action)
    check(reseat(state, leave=[1], join=[(1, 3)]), seen)
    check(reseat(state, leave=[0, 1, 2]), seen)

    # Tables: the start, the house playing a seat whose clock ran out, a table that
    # expired open (a spectator sees it go), a game nobody played to the end.
    run = Run({"preset": "classic", "turn_seconds": 20})
    run.seat_all()
    run.send("timeout", gateway=None, id="t:1", version=run.table.version)
    run.send("react", player=h("p1"), seat=1, emote="haha")
    expired = Run()
    expired.send("watch", "gw-s", on=True)
    expired.send("timeout", gateway=None, id="t:2", version=expired.table.version)
    abandoned = Run()
    abandoned.seat_all()
    abandoned.send("timeout", gateway=None, id="t:3", version=abandoned.table.version)
    closed = Run()
    closed.send("join", player="p0", name="Ana")
    closed.send("close", player=h("p0"))
    # A person whose turns the house played three times in a row, out at the round's end.
    from ..table.test_clocks import play_with_one_absent

    _, vacated = play_with_one_absent(3)
    check(vacated, seen)
    for table in (run, expired, abandoned, closed):
        for messages in table.inbox.values():
            for view in (m for m in messages if m["type"] == "view"):
                check(view["events"], seen)

    # The schema declares no event nobody sends, and every one sent is declared.
    assert seen == set(SCHEMA["$defs"]), set(SCHEMA["$defs"]) ^ seen
