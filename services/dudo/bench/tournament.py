"""``dudo bench tournament``: a whole tournament of bots through the streams, timed and audited.

It starts (or uses) a Redis, ``--workers`` table workers and one director, each a
real process, then creates a tournament of ``--players`` bots (the tables play
them: no gateway, no browser) and waits for the end. It prints:

- ``players``, ``tables_at_start``, ``moves`` (actions the tables applied),
  ``wall_s`` and ``moves_per_s``;
- ``director_cpu_us_per_move`` and ``director_cpu_share``: the director's CPU
  against the tables' (workers + Redis), over the whole run;
- ``max_imbalance``: the largest difference in players between two tables the
  director saw at a report (players on their way counted at their table);
- ``invariants``: each checked, true or false: chips conserved (paid = won, the
  pool empty), every entrant placed exactly once (places 1..N), no player with
  dice at two tables at once (sampled from Redis while it runs), and every seat
  change between rounds (a change inside a round raises in the worker, which
  dead-letters the entry: none may exist).

Entries are signed as in a deployment whose gateways have users of their own (what
``deploy/`` sets up: workers and directors check who wrote every entry); ``--unsigned``
measures a Redis without keys, where every entry is checked field by field.
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path
from typing import Any

from .. import wire
from ..director import OVER, Tournament, split_pool
from ..infra import create_groups, ensure_partitions, internal_key, is_cluster, start_signing
from ..ops import Fleet, fresh_redis, temporary_folder
from ..table import Table
from ..wire import entry_fields, keys
from .path import process_cpu

DIRECTOR_PARTITIONS = 4
TOURNAMENT = "bench"


def run(
    *,
    players: int = 1000,
    seats: int = 6,
    workers: int = 2,
    fmt: str = "elimination",
    preset: str = "classic",
    redis_url: str | None = None,
    partitions: int = keys.DEFAULT_PARTITIONS,
    flush: bool = False,
    folder: str | None = None,
    timeout: float = 3600.0,
    sample_every: float = 0.5,
    signed: bool = True,
) -> dict[str, Any]:
    fleet = Fleet(
        Path(folder) if folder else temporary_folder(), partitions=partitions, redis_url=redis_url
    )
    try:
        url = fleet.start_redis()
        client = fresh_redis(url, partitions, flush=flush, bench="tournament")
        if signed:  # as deployed (deploy/: gateways have users): every entry signed
            start_signing(client, wait_s=0)
        ensure_partitions(client, DIRECTOR_PARTITIONS, keys.TOURNAMENTS)
        create_groups(client, DIRECTOR_PARTITIONS, space=keys.TOURNAMENTS)
        names = [fleet.start_worker() for _ in range(workers)]
        director = fleet.start_director()
        tables_pids = [fleet.procs[n].pid for n in names]
        if fleet.redis_server is not None and fleet.redis_server.proc is not None:
            tables_pids.append(fleet.redis_server.proc.pid)
        director_pid = fleet.procs[director].pid
        wait_registered(client, workers)  # started up (imports are not the run's cost)
        cpu0 = (process_cpu(director_pid), sum(process_cpu(p) for p in tables_pids))
        started = time.monotonic()
        create_bot_tournament(client, players, seats, fmt, preset)
        clashes, samples = 0, 0
        next_sample = started
        while True:
            if time.monotonic() - started > timeout:
                raise SystemExit(f"the tournament did not finish within {timeout:.0f} s")
            if tournament_status(client) == OVER:
                break
            if time.monotonic() >= next_sample:
                clashes += players_at_two_tables(client)
                samples += 1
                next_sample = time.monotonic() + sample_every
            time.sleep(0.1)
        wall = time.monotonic() - started
        director_cpu = process_cpu(director_pid) - cpu0[0]
        tables_cpu = sum(process_cpu(p) for p in tables_pids) - cpu0[1]
        time.sleep(1.0)  # the final table closes
        state = load_tournament(client)
        assert state is not None
        moves = _moves(client) - state.reseats
        dead = sum(client.xlen(keys.dead_letters(p)) for p in range(partitions)) + sum(
            client.xlen(keys.TOURNAMENTS.dead_letters(p)) for p in range(DIRECTOR_PARTITIONS)
        )
    finally:
        fleet.stop()
    entrants = list(state.entrants.values())
    return {
        "bench": "tournament",
        "format": fmt,
        "preset": preset,
        "players": len(entrants),
        "seats": seats,
        "workers": workers,
        "tables_at_start": state.tables_at_start,
        "moves": moves,
        "wall_s": round(wall, 1),
        "moves_per_s": round(moves / wall, 1),
        "director_cpu_us_per_move": round(director_cpu / moves * 1e6, 1) if moves else None,
        "tables_cpu_us_per_move": round(tables_cpu / moves * 1e6, 1) if moves else None,
        "director_cpu_share": round(director_cpu / tables_cpu, 4) if tables_cpu else None,
        # Heats do not balance inside a heat (tables shrink to `advance` by design).
        "max_imbalance": state.max_imbalance if fmt == "elimination" else None,
        "seat_changes": state.reseats,
        "signed": signed,
        "invariants": {
            **result_invariants(state),
            "never_at_two_tables": clashes == 0 and samples > 0,
            "seat_changes_between_rounds_only": dead == 0,
        },
        "samples": samples,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def result_invariants(state: Tournament) -> dict[str, bool]:
    """What a finished tournament's record must show: every chip paid in won back (the
    pool empty), the prizes by place as the payouts split the pool, and every entrant
    placed exactly once (places 1..N)."""
    entrants = list(state.entrants.values())
    places = sorted(e.place or 0 for e in entrants)
    paid, won = sum(e.paid for e in entrants), sum(e.won for e in entrants)
    by_place = sorted(entrants, key=lambda e: e.place or 0)
    expected = split_pool(paid, state.config["payouts"], len(entrants))
    return {
        "chips_conserved": paid == won and state.pool == 0,
        "payouts_by_place": [e.won for e in by_place[: len(expected)]] == expected,
        "every_entrant_placed_once": places == list(range(1, len(entrants) + 1)),
    }


def wait_registered(client: Any, workers: int, timeout: float = 60.0) -> None:
    """Until every worker and the director have taken their partitions."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.zcard(keys.WORKERS) >= workers and client.zcard(keys.DIRECTORS) >= 1:
            time.sleep(1.0)  # a heartbeat or two: leases taken, the first reads done
            return
        time.sleep(0.1)
    raise SystemExit("the workers and the director did not start")


def create_bot_tournament(
    client: Any,
    players: int,
    seats: int,
    fmt: str,
    preset: str,
    start_dice: int | None = None,
    *,
    tournament: str = TOURNAMENT,
    director_partitions: int = DIRECTOR_PARTITIONS,
    people: tuple[str, ...] = (),
    turn_seconds: int | None = None,
) -> None:
    """Create and begin a tournament of ``players`` bots the tables play themselves
    (after ``people``, registered first: nobody acts for them, the turn clock does)."""
    rules: dict[str, Any] = {"preset": preset}
    if turn_seconds is not None:  # else the tournament's own clock (a table never has none)
        rules["turn_seconds"] = turn_seconds
    if start_dice is not None:
        rules["start_dice"] = start_dice
    registrations = [
        wire.message("register", id=f"r-{person}", tournament=tournament, gateway="bench",
                     player=person, name=person, bot=None)
        for person in people
    ]  # fmt: skip
    inbox = keys.TOURNAMENTS.inbox(keys.partition_of(tournament, director_partitions))
    signer = internal_key(client)  # an admin tool: it signs as the deployment
    for body in (
        wire.message(
            "tournament_create",
            id="c",
            tournament=tournament,
            gateway="bench",
            host="bench",
            name="Bench",
            rules=rules,
            seats=seats,
            format=fmt,
            advance=None,
            start_players=players,
            start_at=None,
            max_players=players,
            buy_in=10,
            payouts=[50, 30, 20],
            bots="normal",
        ),
        *registrations,
        wire.message("begin", id="b", tournament=tournament, gateway="bench", player="bench"),
    ):
        wire.validate(body)
        client.xadd(inbox, entry_fields(signer, wire.encode(body)))


def load_tournament(client: Any) -> Tournament | None:
    return Tournament.from_hash(client.hgetall(keys.tournament_of(TOURNAMENT, DIRECTOR_PARTITIONS)))


def tournament_status(client: Any) -> str | None:
    """The tournament's status, from its record's own field only: polled ten times a
    second, reading every entrant's row (HGETALL) would be Redis work counted in the
    tables' CPU (thousands of rows: a few milliseconds each time)."""
    blob = client.hget(keys.tournament_of(TOURNAMENT, DIRECTOR_PARTITIONS), "s")
    return None if blob is None else Tournament.from_bytes(blob).status


def table_records(client: Any) -> list[Table]:
    """Every table record, read in one MULTI/EXEC on one Redis: a consistent snapshot (a
    player who left one table and sat at another in between can never be seen at both).
    A Redis Cluster has no transaction across slots: there the records are read node by
    node, and :func:`players_at_two_tables` confirms what it finds."""
    names = list(client.scan_iter(match=keys.TABLES.records_pattern(), count=1000))
    pipe = client.pipeline(transaction=not is_cluster(client))
    for name in names:
        pipe.hget(name, "s")
    return [Table.from_bytes(blob) for blob in pipe.execute() if blob]


def _clashes(tables: list[Table]) -> set[tuple[str, frozenset[str]]]:
    """(player, the tables) for each player with dice at more than one table."""
    where: dict[str, set[str]] = {}
    for table in tables:
        game = table.game
        for i, seat in enumerate(table.seats):
            if seat.player and game is not None and game.counts[i] > 0:
                where.setdefault(seat.player, set()).add(table.id)
    return {(player, frozenset(at)) for player, at in where.items() if len(at) > 1}


def players_at_two_tables(client: Any) -> int:
    """Players with dice at two tables in what Redis holds now (0 when all is well). On a
    cluster, where a snapshot is not one moment, a clash counts only when a second read,
    a moment later, finds the same player at the same tables: a move between two reads
    of one snapshot shows once, a real clash lasts (dice at two tables stay until a
    round at one of them is lost)."""
    found = _clashes(table_records(client))
    if found and is_cluster(client):
        time.sleep(0.2)
        found &= _clashes(table_records(client))
    return len(found)


def _moves(client: Any) -> int:
    """Engine steps at every table of the run (actions plus seat changes)."""
    return sum(t.game.version for t in table_records(client) if t.game is not None)
