"""Whole tournaments through a real worker and a real director (the same loop over
tournament partitions), played by the tables' own bots: every invariant the issue
names holds at the end."""

from __future__ import annotations

import time
from typing import Any

import pytest

from dudo import keys, wire
from dudo.director.prizes import split_pool
from dudo.director.run import director
from dudo.director.tournament import OVER, Tournament
from dudo.table import Table
from dudo.worker import WorkerSettings

from .test_worker import P, make_worker

D = 2


def send(client: Any, **fields: Any) -> None:
    body = wire.message(fields.pop("type"), **fields)
    wire.validate(body)
    inbox = keys.TOURNAMENTS.inbox(keys.partition_of(body["tournament"], D))
    client.xadd(inbox, {wire.ENTRY_FIELD: wire.encode(body)})


def load(client: Any, tid: str) -> Tournament:
    return Tournament.from_bytes(client.hget(keys.tournament_of(tid, D), "s"))


def run_tournament(client: Any, tid: str, players: int, fmt: str, seats: int) -> Tournament:
    worker = make_worker(client, seed=11)
    loop = director(WorkerSettings(partitions=D, worker_id="d1", seed=5), P, client)
    loop.setup()
    loop.heartbeat()
    send(
        client,
        type="tournament_create",
        id="c1",
        tournament=tid,
        gateway="gw-1",
        host="host",
        name="Cup",
        rules={"preset": "lizumo", "start_dice": 2},
        seats=seats,
        format=fmt,
        advance=None,
        start_players=players,
        start_at=None,
        max_players=players,
        buy_in=10,
        payouts=[50, 30, 20],
        bots="normal",
    )
    send(client, type="begin", id="b1", tournament=tid, gateway="gw-1", player="host")
    deadline = time.monotonic() + 120
    cycles = 0
    while True:
        assert time.monotonic() < deadline, "the tournament did not finish in time"
        loop.run_once()
        worker.run_once()
        worker.fire_timers()
        cycles += 1
        if cycles % 5 == 0:
            at_one_table_at_most(client)
        state = load(client, tid)
        if state.status == OVER:
            break
    # Let the final table close.
    for _ in range(5):
        loop.run_once()
        worker.run_once()
    return state


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


def at_one_table_at_most(client: Any) -> None:
    """No player has dice at two tables at once (checked over what Redis holds)."""
    where: dict[str, str] = {}
    for key in client.scan_iter(match="dudo:{p*}:t:*"):
        table = Table.from_bytes(client.hget(key, "s"))
        for i, seat in enumerate(table.seats):
            if seat.player and table.game and table.game.counts[i] > 0:
                assert seat.player not in where, f"{seat.player} at {where.get(seat.player)}"
                where[seat.player] = table.id
