"""A game's log (issue 34, game log and replay): the table keeps every round as it ends
(its bids, the call, every die, who lost) through its record, and gives it whole in the
views once the game is over, to every seat and spectator alike; never before the end."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from dudo import wire
from dudo.table import table as table_module
from dudo.table.table import Table

from .test_table import Run


def _play(run: Run, *, reload: bool = True) -> list[dict[str, Any]]:
    """Play the game out (bid up once or twice a round, then doubt), the table taken
    from its record before every move as a worker would; every view the gateway got."""
    moves = 0
    while run.table.status == "playing":
        if reload:
            run.table = Table.from_bytes(run.table.to_bytes())
        seat = run.turn()
        game = run.table.game
        assert game is not None
        legal = game.legal(seat)
        standing = game.bids[-1] if game.bids else None
        if legal["dudo"] and (len(game.bids) >= 2 or moves % 3 == 0):
            action: dict[str, Any] = {"type": "dudo"}
        else:
            quantity = standing[1] + 1 if standing else 1
            action = {"type": "bid", "quantity": quantity, "face": 3}
        run.move(action)
        moves += 1
    return [m for m in run.inbox["gw-a"] if m["type"] == "view" and m["game"] is not None]


def _rounds_from_events(views: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a client that saw every event could have written down itself."""
    rounds, bids, seen = [], [], set()
    for view in views:
        if view["version"] in seen:  # a view per seat: each event once
            continue
        seen.add(view["version"])
        for event in view["events"]:
            if event["type"] == "bid":
                bids.append([event["seat"], event["quantity"], event["face"]])
            elif event["type"] == "reveal":
                ended = {k: v for k, v in event.items() if k != "type"}
                rounds.append({**ended, "bids": bids, "names": ["P0", "P1", "P2"]})
                bids = []
    return rounds


def test_the_finished_games_log_is_every_round_and_nothing_before_the_end() -> None:
    run = Run({"preset": "classic", "start_dice": 2}, seats=3)
    run.seat_all()
    run.send("watch", "gw-watch", on=True)
    views = _play(run)
    over = [v for v in views if v["game"]["phase"] == "over"]
    assert over and all("log" not in v["game"] for v in views if v not in over)
    log = over[-1]["game"]["log"]
    assert log == _rounds_from_events(views)
    assert len(log) >= 5  # three players of two dice: five dice lost at least
    assert [r["round"] for r in log] == list(range(1, len(log) + 1))
    assert all(r["bids"] and r["bids"][-1] == r["bid"] for r in log)
    # The same log for a spectator (the public part): nothing in it is anyone's secret.
    watched = [m for m in run.inbox["gw-watch"] if m["type"] == "view"][-1]  # (started)
    assert watched["seat"] is None and watched["game"]["log"] == log
    # A view asked for after the end (a replay opening the finished table) has it too.
    again = run.send("resync", "gw-late")
    assert again[-1]["game"]["log"] == log


def test_a_record_from_before_the_log_is_read_with_an_empty_one() -> None:
    run = Run({"preset": "classic", "start_dice": 2}, seats=3)
    run.seat_all()
    run.move({"type": "bid", "quantity": 1, "face": 3})
    raw = msgpack.unpackb(run.table.to_bytes(), raw=False)
    assert raw[0] == table_module.FORMAT == 8
    old = Table.from_bytes(wire.encode([5, *raw[1:-8]]))
    assert old.log == [] and old.round_bids == [] and old.rematch is None
    assert old.game is not None and old.game.bids == run.table.game.bids
    # Format 6, before apps were told apart in the lobby: nobody's app.
    six = Table.from_bytes(wire.encode([6, *raw[1:-4]]))
    assert six.app is None and six.log == run.table.log


def test_a_games_log_keeps_its_first_rounds_up_to_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table_module, "LOG_ROUNDS", 2)
    run = Run({"preset": "classic", "start_dice": 2}, seats=3)
    run.seat_all()
    views = _play(run, reload=False)
    assert [r["round"] for r in views[-1]["game"]["log"]] == [1, 2]


def test_a_finished_games_result_tallies_each_persons_win_and_calls() -> None:
    """The statistics of identity users (docs/tournaments.md, "Statistics"): the table's
    `result` counts each person's Dudo calls, right or not, and who won, as the reveals
    showed them to every client."""
    run = Run({"preset": "classic", "start_dice": 2}, seats=3)
    run.seat_all()
    views = _play(run, reload=True)
    [result] = [
        wire.decode(data, direction="ratings")
        for _, data in run.last.sends
        if wire.unpack(data)["type"] == "result"
    ]
    rounds = _rounds_from_events(views)
    expected = []
    for seat in range(3):
        mine = [r for r in rounds if r["caller"] == seat]
        dudo = [r for r in mine if r["call"] == "dudo"]
        right = sum(r["loser"] != seat for r in dudo)
        won = int(views[-1]["game"]["winner"] == seat)
        expected.append([f"p{seat}", won, len(dudo), right, 0, 0])
    assert sorted(result["tallies"]) == sorted(expected)
    assert sum(row[1] for row in result["tallies"]) == 1  # one winner
    assert sum(row[2] for row in result["tallies"]) == len(rounds)  # every call, once
    assert {p for p, _ in result["ranking"]} == {row[0] for row in result["tallies"]}


def test_calls_by_seat_counts_calza_right_when_nobody_loses_a_die() -> None:
    from dudo.table.log import calls_by_seat, packed_round

    def ended(call: str, caller: int, loser: int | None) -> list[Any]:
        event = {"round": 1, "palifico": False, "call": call, "caller": caller,
                 "bid": [0, 2, 3], "dice": [[1, 3], [3, 5]], "count": 2, "loser": loser,
                 "gainer": caller if loser is None else None, "seed": None}  # fmt: skip
        return packed_round(event, [[0, 2, 3]], ["A", "B"])

    rounds = [ended("calza", 1, None), ended("calza", 1, 1), ended("dudo", 1, 0),
              ended("dudo", 0, 0), ended("dudo", 7, 0)]  # fmt: skip (a seat out of range)
    assert calls_by_seat(rounds, 2) == [[1, 0, 0, 0], [1, 1, 2, 1]]
