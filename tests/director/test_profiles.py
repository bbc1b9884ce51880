"""An identity user's statistics (dudo.director.profiles), kept by the ratings keeper from
the tables' and tournaments' results and published by handle: counted once per result,
for identity users only, never under a player id."""

from __future__ import annotations

import random
from typing import Any

import msgpack
import pytest

from dudo import wire
from dudo.director.ratings import Ratings
from dudo.entity.results import result_send
from dudo.wire import keys


def table_result(result_id: str, ranking: list[str], tallies: list[list[Any]]) -> dict:
    [(_, data)] = result_send("table", result_id, [[p, p.upper()] for p in ranking], tallies)
    return wire.decode(data, direction="ratings")


def published(ratings: Ratings) -> dict[str, dict[str, Any]]:
    flush = ratings.flush()
    return {name: entry for name, entry in flush.listing}


def test_identity_users_games_wins_runs_and_calls_add_up_once_each() -> None:
    tallies = [["u-ana", 1, 3, 2, 1, 1], ["a-bob", 0, 4, 1, 0, 0]]
    ratings = Ratings.create(table_result("t1", ["u-ana", "a-bob"], tallies), 0)
    ratings.handle(table_result("t2", ["u-ana"], [["u-ana", 1, 1, 1, 2, 0]]), 0, random.Random())
    again = table_result("t2", ["u-ana"], [["u-ana", 1, 1, 1, 2, 0]])
    ratings.handle(again, 0, random.Random())  # delivered twice: counted once
    ratings.handle(table_result("t3", ["a-bob", "u-ana"], [["u-ana", 0, 0, 0, 0, 0],
                                                          ["a-bob", 1, 0, 0, 0, 0]]),
                   0, random.Random())  # fmt: skip
    ana = ratings.played["u-ana"]
    assert (ana.games, ana.wins, ana.run, ana.best_run) == (3, 2, 0, 2)
    assert (ana.dudo, ana.dudo_right, ana.calza, ana.calza_right) == (4, 3, 3, 1)
    assert "a-bob" not in ratings.played  # anonymous: counted on their device only
    # A game of one person against bots counts, and is not rated.
    assert ratings.players["u-ana"].games == 2
    profile = published(ratings)[keys.profile_field(wire.public_id("u-ana"))]
    assert profile["games"] == 3 and profile["dudo"] == [3, 4] and profile["calza"] == [1, 3]
    assert profile["rating"]["games"] == 2 and profile["name"] == "U-ANA"
    assert "u-ana" not in str(profile)  # by handle: never the player id
    assert published(ratings) == {}  # published once per change


def test_a_tournament_counts_entered_and_won_and_not_its_games() -> None:
    [(_, data)] = result_send("tournament", "cup", [["u-cy", "Cy"], ["u-ana", "Ana"], ["bot", "B"]])
    ratings = Ratings.create(wire.decode(data, direction="ratings"), 0)
    cy, ana = ratings.played["u-cy"], ratings.played["u-ana"]
    assert (cy.tournaments, cy.tournament_wins, cy.games) == (1, 1, 0)
    assert (ana.tournaments, ana.tournament_wins) == (1, 0)
    assert set(published(ratings)) == {
        keys.profile_field(wire.public_id(p)) for p in ("u-cy", "u-ana")
    }


def test_chips_moving_publish_the_users_profile_again() -> None:
    ratings = Ratings.create(table_result("t1", ["u-ana"], [["u-ana", 1, 0, 0, 0, 0]]), 0)
    ratings.flush()
    ledger = wire.message("ledger", id="l1", ratings="ratings",
                          transfers=[["u-ana", 40], ["house", -40]])  # fmt: skip
    ratings.handle(ledger, 0, random.Random())
    [(name, profile)] = published(ratings).items()
    assert name == keys.profile_field(wire.public_id("u-ana")) and profile["chips"] == 40


def test_the_record_keeps_the_counts_and_reads_the_format_before_them() -> None:
    ratings = Ratings.create(table_result("t1", ["u-ana"], [["u-ana", 1, 2, 1, 0, 0]]), 0)
    again = Ratings.from_bytes(ratings.to_bytes())
    assert again.played == ratings.played and again.to_bytes() == ratings.to_bytes()
    raw = msgpack.unpackb(ratings.to_bytes(), raw=False)
    old = Ratings.from_bytes(wire.encode([2, *raw[1:5]]))  # a record from before
    assert old.played == {} and old.version == ratings.version


def test_a_tally_that_is_not_counts_changes_nothing() -> None:
    ratings = Ratings.create(table_result("t1", ["u-ana"], [["u-ana", 1, 2, 1, 0, 0]]), 0)
    blob = ratings.to_bytes()
    tallies = [["u-bo", 0, 1, 1, 0, 0], ["u-ana", 0, -5, 0, 0, 0]]
    bad = table_result("t2", ["u-ana", "u-bo"], tallies)
    with pytest.raises(ValueError):
        Ratings.from_bytes(blob).handle(bad, 0, random.Random())
    fresh = Ratings.from_bytes(blob)
    with pytest.raises(ValueError):
        fresh.handle(bad, 0, random.Random())
    assert fresh.played == Ratings.from_bytes(blob).played  # u-bo was not counted first
