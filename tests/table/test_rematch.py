"""A rematch (issue 34): after the game's end a seat proposes the table it made; every later
view of the finished table names it, for the others to join; the first proposal stays."""

from __future__ import annotations

from dudo.table.table import Table

from .test_log import _play
from .test_table import Run, errors, h


def _over() -> Run:
    run = Run({"preset": "classic", "start_dice": 1}, seats=3)
    run.seat_all()
    run.send("watch", "gw-watch", on=True)
    _play(run)
    assert run.table.status == "over"
    return run


def test_before_the_end_a_rematch_is_refused() -> None:
    run = Run({"preset": "classic", "start_dice": 1}, seats=3)
    run.seat_all()
    out = run.send("rematch", player=h("p0"), seat=0, next="t2")
    assert errors(out) == ["game_not_over"] and run.table.rematch is None


def test_the_first_proposal_is_every_views_and_a_second_is_refused() -> None:
    run = _over()
    out = run.send("rematch", player=h("p1"), seat=1, next="t2")
    assert errors(out) == []
    views = [m for m in out if m["type"] == "view"]
    assert {m["_to"] for m in views} >= {"gw-a", "gw-watch"}  # the seats and spectators
    assert all(m["rematch"] == {"table": "t2", "by": 1} for m in views)
    # The same proposal again (a repeat after a reconnect) changes nothing; another table
    # is refused, and the views keep the first.
    assert errors(run.send("rematch", player=h("p1"), seat=1, next="t2")) == []
    assert errors(run.send("rematch", player=h("p2"), seat=2, next="t3")) == ["table_exists"]
    again = Table.from_bytes(run.table.to_bytes())  # kept in the record
    assert again.rematch == {"table": "t2", "by": 1}
    late = run.send("resync", "gw-late")
    assert late[-1]["rematch"] == {"table": "t2", "by": 1}


def test_only_a_seat_of_the_game_proposes() -> None:
    run = _over()
    out = run.send("rematch", player=h("p9"), seat=0, next="t2")
    assert errors(out) == ["not_seated"] and run.table.rematch is None
