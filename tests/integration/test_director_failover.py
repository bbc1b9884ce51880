"""kill -9 of the director running a tournament, mid-tournament: another director takes
its partition over from Redis, and the tournament ends with every entrant placed once,
every chip accounted for and no player ever at two tables."""

from __future__ import annotations

import signal
import time

import redis

from dudo import wire
from dudo.bench.tournament import (
    DIRECTOR_PARTITIONS,
    TOURNAMENT,
    create_bot_tournament,
    load_tournament,
    players_at_two_tables,
)
from dudo.director.state import OVER, RUNNING
from dudo.wire import keys

from .procs import FAST, P, Workers, wait_for

# Enough tables that every partition holds many of them (167 at the start, on P = 8), so
# a kill finds reports, orders and arrivals in flight; 3,000 proved nothing more and
# cost the suite a minute and a half of CPU (three whole tournaments).
PLAYERS = 1000


def start_director(workers: Workers, name: str) -> None:
    workers.spawn(
        name, "director", "--redis", workers.url, "--partitions", str(DIRECTOR_PARTITIONS),
        "--table-partitions", str(P), "--id", name, "--log-level", "info", *FAST,
    )  # fmt: skip


def lease_owner(client: redis.Redis) -> str:
    part = keys.partition_of(TOURNAMENT, DIRECTOR_PARTITIONS)
    raw = client.get(keys.TOURNAMENTS.lease(part))
    return raw.decode().split("|")[1] if raw else ""


def under_way(workers: Workers, client: redis.Redis, directors: int) -> None:
    """Two workers and ``directors`` directors, and a bot tournament 100 eliminations in."""
    workers.start("w1")
    workers.start("w2")
    for i in range(directors):
        start_director(workers, f"d{i + 1}")
    wait_for(lambda: client.zcard(keys.DIRECTORS) == directors, 30, "the directors")
    wait_for(lambda: client.zcard(keys.WORKERS) == 2, 30, "two workers")
    create_bot_tournament(client, PLAYERS, 6, "elimination", "classic")

    def started() -> bool:
        state = load_tournament(client)
        return state is not None and state.status == RUNNING and state.out >= 100

    wait_for(started, 60, "the tournament to be under way")


def to_the_end(client: redis.Redis, out_at_kill: int) -> None:
    """The tournament ends with nobody ever at two tables, every entrant placed once,
    every chip paid out, no dead letter, and it was killed mid-way."""
    clashes, deadline = 0, time.monotonic() + 180
    while (state := load_tournament(client)) is None or state.status != OVER:
        assert time.monotonic() < deadline, "the tournament did not finish"
        clashes += players_at_two_tables(client)
        time.sleep(0.2)
    assert clashes == 0 and out_at_kill < PLAYERS - 1
    entrants = list(state.entrants.values())
    assert sorted(e.place for e in entrants) == list(range(1, PLAYERS + 1))
    assert sum(e.paid for e in entrants) == sum(e.won for e in entrants) == PLAYERS * 10
    dead = sum(client.xlen(keys.dead_letters(p)) for p in range(P))
    dead += sum(client.xlen(keys.TOURNAMENTS.dead_letters(p)) for p in range(DIRECTOR_PARTITIONS))
    assert dead == 0


def test_a_director_killed_mid_tournament_is_replaced_and_nothing_is_lost(
    workers: Workers, real_redis: redis.Redis
) -> None:
    under_way(workers, real_redis, directors=2)
    victim = lease_owner(real_redis)
    assert victim in ("d1", "d2")
    workers.kill(victim)
    to_the_end(real_redis, load_tournament(real_redis).out)  # type: ignore[union-attr]
    survivor = "d2" if victim == "d1" else "d1"
    assert lease_owner(real_redis) in (survivor, "")  # it took over (or let go at the end)


def test_a_table_worker_killed_mid_tournament_loses_nothing(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """The tables' side of the same promise: a worker dies with reports and moves in
    flight; its partitions move, and every report, order and arrival still arrives
    exactly once (nobody lost, nobody at two tables, every entrant placed once)."""
    under_way(workers, real_redis, directors=1)
    workers.kill("w1")
    out_at_kill = load_tournament(real_redis).out  # type: ignore[union-attr]
    workers.start("w3")  # as an orchestrator would
    to_the_end(real_redis, out_at_kill)


def test_a_director_stops_on_sigterm_and_hands_its_partitions_back(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """Graceful stop: both of its loops (tournaments and ratings) release their leases at
    once, so another director takes over without waiting for them to expire."""
    start_director(workers, "d1")
    wait_for(lambda: real_redis.zcard(keys.DIRECTORS) == 1, 30, "the director")
    wait_for(lambda: real_redis.zcard(keys.RATERS) == 1, 30, "the ratings keeper")
    wait_for(lambda: lease_owner(real_redis) == "d1", 30, "its tournament lease")
    proc = workers.procs["d1"]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 0
    held = [
        real_redis.get(space.lease(p))
        for space, count in ((keys.TOURNAMENTS, DIRECTOR_PARTITIONS), (keys.RATINGS, 1))
        for p in range(count)
    ]
    assert all(raw is None or raw.decode().split("|")[1] == "" for raw in held), held
    assert real_redis.zcard(keys.DIRECTORS) == 0 and real_redis.zcard(keys.RATERS) == 0


def test_a_pause_outlives_a_killed_director_and_the_tournament_resumes(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """Issue 31, the organizer's pause under failure: the host pauses a running
    tournament; the director holding it is killed with kill -9 while its tables stop.
    The other director takes over from Redis: still paused (no table plays a move, no
    place is given), the resume it then takes starts every table again, and the
    tournament ends with every invariant."""
    from dudo.infra.keyring import internal_key
    from dudo.table import Table
    from dudo.table.state import PAUSED_NOW
    from dudo.wire.signing import entry_fields

    under_way(workers, real_redis, directors=2)
    inbox = keys.TOURNAMENTS.inbox(keys.partition_of(TOURNAMENT, DIRECTOR_PARTITIONS))

    def organize(action: str) -> None:  # the deployment's own host ("bench")
        body = wire.message("organize", id=f"o-{action}", tournament=TOURNAMENT,
                            gateway="bench", player="bench", action=action)  # fmt: skip
        wire.validate(body)
        real_redis.xadd(inbox, entry_fields(internal_key(real_redis), wire.encode(body)))

    def live_tables() -> list[Table]:
        """The tables playing on (not breaking up: those finish their round and close)."""
        state = load_tournament(real_redis)
        assert state is not None and state.balancer is not None
        found = []
        for name, count in state.balancer.tables.items():
            blob = real_redis.hget(keys.table_of(name, P), "s")
            if blob is not None and not count.breaking:
                table = Table.from_bytes(blob)
                if table.game is not None and table.status == "playing":
                    found.append(table)
        return found

    def bids() -> int:
        return sum(len(t.game.bids) for t in live_tables() if t.game is not None)

    organize("pause")
    wait_for(lambda: (s := load_tournament(real_redis)) is not None and s.paused, 30, "paused")
    victim = lease_owner(real_redis)
    workers.kill(victim)
    wait_for(lambda: all(t.paused == PAUSED_NOW for t in live_tables()), 60, "tables stopped")
    # The survivor takes the partition over and the reports of the rounds that ended
    # before each table stopped (the victim's backlog): then nothing changes any more.
    last: list[int] = []

    def settled() -> bool:
        last.append(load_tournament(real_redis).out)  # type: ignore[union-attr]
        return lease_owner(real_redis) not in (victim, "") and last[-6:] == [last[-1]] * 6

    wait_for(lambda: settled() or time.sleep(0.5), 60, "the survivor caught up")
    out, bid = last[-1], bids()
    time.sleep(3)  # paused: no bid is made, nobody goes out (no clock runs)
    assert load_tournament(real_redis).out == out  # type: ignore[union-attr]
    assert bids() == bid
    organize("resume")
    to_the_end(real_redis, out)
    survivor = "d2" if victim == "d1" else "d1"
    assert lease_owner(real_redis) in (survivor, "")
