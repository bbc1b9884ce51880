"""Ratings (dudo.director.ratings, dudo.entity.results): openskill over finished games and
tournaments, each result applied once, people only."""

from __future__ import annotations

import random
import time

import pytest

from dudo import wire
from dudo.director.ratings import Ratings
from dudo.director.tournament import Context, Tournament
from dudo.entity.results import ledger_send, result_send
from dudo.wire import keys, signing

from .test_tournament import Stored, create, send


def result(result_id: str, *players: str) -> dict:
    body = wire.message(
        "result", id=result_id, ratings="ratings", source="table",
        ranking=[[p, p.upper()] for p in players],
    )  # fmt: skip
    wire.validate(body)
    return body


def test_winners_rise_losers_fall_and_a_repeat_changes_nothing() -> None:
    ratings = Ratings.create(result("t:1", "ana", "bea", "ciro"), 0)
    ana, bea, ciro = (ratings.players[p] for p in ("ana", "bea", "ciro"))
    assert ana.mu > bea.mu > ciro.mu and ana.games == 1
    blob = ratings.to_bytes()
    ratings.handle(result("t:1", "ciro", "bea", "ana"), 0, random.Random())
    assert ratings.to_bytes() == blob  # the same result again: applied once
    ratings.handle(result("t:2", "ana", "dora"), 0, random.Random())
    assert ratings.players["ana"].games == 2 and ratings.version == 2
    again = Ratings.from_bytes(ratings.to_bytes())
    assert again.to_bytes() == ratings.to_bytes()
    again.handle(result("t:2", "dora", "ana"), 0, random.Random())  # remembered after a load
    assert again.version == 2
    board = ratings.leaderboard(3)
    assert [row["rank"] for row in board] == [1, 2, 3]
    assert board[0]["name"] == "ANA" and board[0]["handle"] == wire.public_id("ana")
    assert "ana" not in str(board)  # handles, never player ids
    assert [row["ordinal"] for row in board] == sorted((r["ordinal"] for r in board), reverse=True)


def test_a_ten_thousand_player_tournament_is_rated_quickly() -> None:
    ratings = Ratings()
    started = time.perf_counter()
    ratings.apply([[f"p{i}", f"P{i}"] for i in range(10_000)])
    assert time.perf_counter() - started < 5  # the partial-pairing model: linear
    assert ratings.players["p0"].mu > ratings.players["p9999"].mu


def test_results_leave_bots_out_and_need_two_people() -> None:
    assert result_send("table", "t1", [["u1", "A"]]) == []
    [(stream, data)] = result_send("table", "x" * 64, [["u1", "A"], ["u2", "B"]])
    assert stream == keys.RATINGS.inbox(0)
    body = wire.decode(data, direction="ratings")
    assert len(body["id"]) <= 64 and body["ranking"] == [["u1", "A"], ["u2", "B"]]
    # A tournament of two people and bots sends its people's places only.
    t = Tournament.create(create(max_players=6, start_players=6, bots="easy"), 0, Context())
    send(t, "register", id="r1", player="p1", name="P1", bot=None)
    send(t, "register", id="r2", player="p2", name="P2", bot=None)
    t.handle(wire.message("begin", id="b", tournament="cup", gateway="gw", player="h"), 0,
             random.Random(1))  # fmt: skip
    t.flush()
    for player in list(t.entrants):  # finish it by hand
        if player != "p1":
            t._eliminate(player)
    t._maybe_finish()
    sent = [
        wire.decode(data, direction="ratings")
        for stream, data in t.flush().sends
        if stream == keys.RATINGS.inbox(0)
    ]
    [result] = [m for m in sent if m["type"] == "result"]
    assert result["ranking"] == [["p1", "P1"], ["p2", "P2"]]
    # And the pool is paid out by double entry: the winner and the house share it.
    [payout] = [m for m in sent if m["type"] == "ledger"]
    assert sum(c for _, c in payout["transfers"]) == 0
    assert ["pool:cup", -t.config["buy_in"] * 6] in payout["transfers"]


def ledger(ledger_id: str, *moves: tuple[str, int]) -> dict:
    body = wire.message(
        "ledger", id=ledger_id, ratings="ratings", transfers=[list(m) for m in moves]
    )
    wire.validate(body)
    return body


def test_chips_move_by_double_entry_once_each() -> None:
    keeper = Ratings.create(ledger("lb:c:1", ("ana", -10), ("pool:c", 10)), 0)
    keeper.handle(ledger("lb:c:2", ("bea", -10), ("pool:c", 10)), 0, random.Random())
    keeper.handle(ledger("lb:c:2", ("bea", -10), ("pool:c", 10)), 0, random.Random())  # again
    keeper.handle(ledger("lp:c:9", ("pool:c", -20), ("ana", 20)), 0, random.Random())
    assert keeper.accounts == {"ana": 10, "bea": -10, "pool:c": 0}
    assert sum(keeper.accounts.values()) == 0
    again = Ratings.from_bytes(keeper.to_bytes())
    assert again.accounts == keeper.accounts
    with pytest.raises(ValueError):  # not double entry: our bug, never applied
        keeper.handle(ledger("lx:1", ("ana", 5), ("bea", -4)), 0, random.Random())


def test_ledger_sends_add_up_and_skip_nothing_moving() -> None:
    assert ledger_send("l:1", [["a", 0], ["b", 0]]) == []
    [(_, data)] = ledger_send("l:2", [["a", -3], ["house", 1], ["house", 2]])
    assert wire.decode(data, direction="ratings")["transfers"] == [["a", -3], ["house", 3]]
    with pytest.raises(ValueError):
        ledger_send("l:3", [["a", -3], ["b", 2]])


def test_a_finished_tournament_gets_its_rating_changes_in_its_results() -> None:
    """The ratings keeper answers a tournament's result with `rated` (chunked under the
    director inbox's cap) and the tournament's places show each person's change; a
    repeat changes nothing, and a stored tournament keeps them."""
    t = Tournament.create(create(max_players=400, start_players=None), 0, Context())
    people = [f"p{i:03}" for i in range(320)]  # more than two `rated` messages' worth
    for n, player in enumerate(people):
        send(t, "register", id=f"r{n}", player=player, name=player.upper(), bot=None)
    send(t, "begin", id="b", player="h")
    for player in people[1:]:
        t._eliminate(player)
    t._maybe_finish()
    [(_, data)] = [s for s in t.flush().sends if s[0] == keys.RATINGS.inbox(0)
                   and wire.unpack(s[1])["type"] == "result"]  # fmt: skip
    body = wire.decode(data, direction="ratings")
    assert body["tournament"] == "cup"
    keeper = Ratings.create(wire.message("result", id="rt:x", ratings="ratings",
                            source="table", ranking=[["p000", "A"], ["zed", "Z"]]), 0)  # fmt: skip
    before = keeper.players["p000"].ordinal
    keeper.handle(body, 0, random.Random())
    rated = [m for m in keeper.flush().sends if m[0] == keys.TOURNAMENTS.inbox(
        keys.partition_of("cup", keys.DEFAULT_DIRECTOR_PARTITIONS))]  # fmt: skip
    assert len(rated) == 3  # 320 entrants, at most RATED_MAX (150) a message
    messages = [wire.decode(data, direction="director") for _, data in rated]
    assert all(len(data) <= wire.MAX_INBOUND_BYTES for _, data in rated)
    assert len({m["id"] for m in messages}) == 3
    stored = Stored()
    stored.fields = t.to_record()  # as the finishing commit stored it
    t = Tournament.from_hash(stored.fields)
    assert t is not None and t.status == "over"
    for m in messages:
        t.handle(m, 0, random.Random())
    t.handle(messages[0], 0, random.Random())  # delivered again: taken once
    t = stored.commit(t)
    places = t.standings()["places"]
    assert len(places) == 320 and all("rating" in p for p in places)
    winner = places[0]
    assert winner["handle"] == wire.public_id("p000")
    assert winner["rating"] == round(keeper.players["p000"].ordinal, 3)
    assert winner["rating_change"] == pytest.approx(winner["rating"] - before, abs=0.002)
    assert winner["rating_change"] > 0 > places[-1]["rating_change"]
    # A newcomer started at 0 (mu 25, sigma 25/3): their change is their rating.
    assert places[-1]["rating_change"] == places[-1]["rating"]
    # Only the deployment writes `rated`: a gateway's is refused by the signing check.
    assert "rated" not in signing.GATEWAY_SENDS
