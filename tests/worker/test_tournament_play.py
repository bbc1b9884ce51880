"""Whole tournaments through a real worker and a real director (the same loop over
tournament partitions), played by the tables' own bots: every invariant the issue
names holds at the end."""

from __future__ import annotations

import time
from typing import Any

import pytest

from dudo import wire
from dudo.auth.authority import new_secrets
from dudo.bench.tournament import create_bot_tournament, players_at_two_tables
from dudo.director.prizes import split_pool
from dudo.director.ratings import Ratings
from dudo.director.state import OVER
from dudo.director.tournament import Tournament
from dudo.engine.fairness import verify
from dudo.run.director import director, ratings_keeper
from dudo.table import Table
from dudo.wire import keys, signing
from dudo.worker import WorkerSettings

from .test_worker import P, make_worker

D = 2


def send(client: Any, **fields: Any) -> None:
    body = wire.message(fields.pop("type"), **fields)
    wire.validate(body)
    inbox = keys.TOURNAMENTS.inbox(keys.partition_of(body["tournament"], D))
    client.xadd(inbox, {wire.ENTRY_FIELD: wire.encode(body)})


def load(client: Any, tid: str) -> Tournament:
    state = Tournament.from_hash(client.hgetall(keys.tournament_of(tid, D)))
    assert state is not None
    return state


def run_tournament(
    client: Any,
    tid: str,
    players: int,
    fmt: str,
    seats: int,
    people: tuple[str, ...] = (),
    start_dice: int = 2,
    signed: bool = False,
) -> Tournament:
    if signed:  # as once an app was admitted: every entry's writer is checked
        client.hset(keys.GATEWAY_KEYS, mapping={signing.INTERNAL: "ab" * 32, signing.CHECKING: 1})
    # The deployment's keys fixed: its tables' ids (keyed by them) and so their dice are
    # the same at every run, as the seeds below make the rest. (With fresh keys each run
    # plays another tournament: in about one in fifty, a player told to leave a table
    # sits down at it again, because every other table broke meanwhile, as balancing
    # allows: director/balance.py, Balancer._seat_waiting.)
    client.hset(keys.SECRETS, mapping=dict.fromkeys(new_secrets(), "cd" * 32))
    worker = make_worker(client, seed=11)
    # No pacing: this test alternates the two loops in one thread.
    loop = director(WorkerSettings(partitions=D, worker_id="d1", seed=5), P, client, pace_ms=0)
    loop.settings.idle_block_ms = 2  # it idles long (its CPU): not while this test drives it
    loop.setup()
    loop.heartbeat()
    keeper = ratings_keeper(WorkerSettings(worker_id="k1"), client, director_partitions=D)
    keeper.settings.idle_block_ms = 2
    keeper.setup()
    keeper.heartbeat()
    create_bot_tournament(
        client, players, seats, fmt, "lizumo", start_dice, tournament=tid,
        director_partitions=D, people=people, turn_seconds=1 if people else None,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    cycles = 0
    while True:
        assert time.monotonic() < deadline, "the tournament did not finish in time"
        loop.run_once()
        worker.run_once()
        worker.fire_timers()
        keeper.run_once()
        cycles += 1
        if cycles % 5 == 0:
            assert players_at_two_tables(client) == 0
        state = load(client, tid)
        # A batch stores only the rows that changed: what Redis holds is still, field
        # for field, the tournament the director has in memory (what a director
        # taking over would start from).
        held = loop.partitions[keys.partition_of(tid, D)].entities.get(tid)
        if held is not None:
            assert state.to_record() == held.to_record()  # type: ignore[attr-defined]
        if state.status == OVER:
            break
    # Let the final table close, and the last chips reach the ledger.
    for _ in range(5):
        loop.run_once()
        worker.run_once()
        keeper.run_once()
    return state


def ledger(client: Any) -> dict[str, int]:
    return Ratings.from_bytes(client.hget(keys.RATINGS.record(0, keys.RATINGS_ID), "s")).accounts


@pytest.mark.parametrize(("fmt", "players", "seats"), [("elimination", 23, 4), ("heats", 19, 5)])
def test_a_whole_tournament_places_everyone_once_and_conserves_chips(
    client: Any, fmt: str, players: int, seats: int
) -> None:
    state = run_tournament(client, "cup", players, fmt, seats)
    assert len(state.entrants) == players
    places = sorted(e.place for e in state.entrants.values())
    assert places == list(range(1, players + 1))  # every entrant placed exactly once
    paid = sum(e.paid for e in state.entrants.values())
    won = sum(e.won for e in state.entrants.values())
    assert paid == players * 10 == won and state.pool == 0  # chips conserved
    by_place = sorted(state.entrants.values(), key=lambda e: e.place or 0)
    assert [e.won for e in by_place] == [*split_pool(players * 10, [50, 30, 20], players)] + [0] * (
        players - 3
    )
    # Every table closed once its players were gone.
    tables = [Table.from_bytes(client.hget(k, "s")) for k in client.scan_iter("dudo:{p*}:t:*")]
    assert tables and all(t.status == "over" for t in tables)
    assert_histories_tell_every_seat_change(load(client, "cup"), {t.id for t in tables})
    assert_every_table_verifies_from_the_results(load(client, "cup"), tables)
    assert_nothing_left_pending(client)


def assert_every_table_verifies_from_the_results(state: Tournament, tables: list[Table]) -> None:
    """The results keep what every closed table's dice came from (issue 55, item 5):
    with the rounds the table logged, every round checks, against the server seed the
    table committed to when it was made."""
    assert set(state.table_seeds) == {t.id for t in tables}
    for table in tables:
        seeds = state.table_seeds[table.id]
        assert table.server_seed is not None and seeds["server_seed"] == table.server_seed.hex()
        verdict = verify({"table": table.id, "rounds": table.rounds(), **seeds})
        assert verdict.ok and verdict.seeded and verdict.rounds > 0, verdict.problems


def assert_nothing_left_pending(client: Any) -> None:
    """Every entry of every inbox (the tables', the tournaments' and the ratings') was
    acknowledged in its own consumer group: none is pending for ever. (Issue 51: the
    director's and the ratings keeper's commits acknowledged with the tables' group name,
    so after a 200-player tournament 335 entries stayed pending in `directors`.)"""
    pending: dict[str, int] = {}
    groups: set[str] = set()
    for key in client.scan_iter("dudo:{*}:in*", _type="stream"):
        for group in client.xinfo_groups(key):
            name = keys.as_text(group["name"])
            groups.add(name)
            if group["pending"]:
                pending[f"{keys.as_text(key)} {name}"] = group["pending"]
    assert {keys.TABLES.group, keys.TOURNAMENTS.group, keys.RATINGS.group} <= groups
    assert pending == {}


def assert_histories_tell_every_seat_change(state: Tournament, tables: set[str]) -> None:
    """Every closed table's history (sent by the table when it closed) accounts for every
    entrant: each sat down first at the start, every move is a leave at one table and a
    seat at another with the same dice (elimination), everyone but the winner went out
    exactly once, and the winner left the final table when it closed."""
    assert set(state.histories) == tables
    events: dict[str, list[tuple[int, int, str, str, int]]] = {p: [] for p in state.entrants}
    for table, rows in state.histories.items():
        assert [r[:2] for r in rows] == sorted(r[:2] for r in rows)  # by round, in time
        for _, at, joined, left, out in rows:
            for player, dice in joined:  # (after a leave in the same millisecond)
                events[player].append((at, 1, "joined", table, dice))
            for player, dice in left:
                events[player].append((at, 0, "left", table, dice))
            for player in out:
                events[player].append((at, 0, "out", table, 0))
    for seen in events.values():
        seen.sort()
    winner = next(p for p, e in state.entrants.items() if e.place == 1)
    for player, seen in events.items():
        kinds = [kind for _, _, kind, _, _ in seen]
        # The winner leaves the final table too: it closes at the end.
        stays = 0 if player == winner else 1
        assert kinds.count("joined") == kinds.count("left") + stays, (player, seen)
        assert kinds.count("out") == stays, (player, seen)
        assert kinds[-1] == ("left" if player == winner else "out"), (player, seen)
        if state.config["format"] == "elimination":
            # A move: left one table with some dice, sat down at another with as many.
            moves = [(t, d) for _, _, kind, t, d in seen if kind == "left"]
            seats = [(t, d) for _, _, kind, t, d in seen if kind == "joined"][1:]
            if player == winner:
                moves = moves[:-1]  # the final table's close
            assert [d for _, d in moves] == [d for _, d in seats], (player, seen)
            assert all(a != b for (a, _), (b, _) in zip(moves, seats, strict=True)), (
                player, seen)


@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_chips_move_by_double_entry_for_people_bots_and_the_pool(
    client: Any, signed: bool
) -> None:
    """Two people among bots (their turn clocks play for them): across the whole system
    every account adds up to 0, the pool ends empty, each person has what they won
    minus what they paid, the house (every bot) the rest."""
    state = run_tournament(
        client, "cup", 6, "elimination", 3, ("ana", "bea"), start_dice=1, signed=signed
    )
    dead = [
        (space.tag, p, client.xrange(space.dead_letters(p)))
        for space, count in ((keys.TABLES, P), (keys.TOURNAMENTS, D), (keys.RATINGS, 1))
        for p in range(count)
    ]
    assert [d for d in dead if d[2]] == []  # signed: every entry of ours bore its signature
    accounts = ledger(client)
    assert sum(accounts.values()) == 0 and accounts.get("pool:cup", 0) == 0
    for e in state.entrants.values():
        if e.bot is None:
            assert accounts.get(e.player, 0) == e.won - e.paid
    bots = sum(e.won - e.paid for e in state.entrants.values() if e.bot is not None)
    assert accounts.get("house", 0) == bots
    assert {"ana", "bea"} <= set(accounts)
    # The keeper rated the result and answered the director (`rated`, signed like every
    # entry of ours): the stored results show each person's rating change, no bot's.
    rated = load(client, "cup")
    board = Ratings.from_bytes(client.hget(keys.RATINGS.record(0, keys.RATINGS_ID), "s"))
    for e in rated.entrants.values():
        if e.bot is None:
            assert e.rating == round(board.players[e.player].ordinal, 3)
            assert e.rating_change is not None and e.rating_change != 0
        else:
            assert e.rating is None and e.rating_change is None
    winner, second = sorted((e for e in rated.entrants.values() if e.bot is None),
                            key=lambda e: e.place or 0)  # fmt: skip
    assert winner.rating_change > second.rating_change  # type: ignore[operator]
