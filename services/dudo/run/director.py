"""``dudo director``: the worker's loop, run over tournament partitions.

A director is exactly a worker (:class:`~dudo.worker.Worker`: leases with fencing,
the fenced commit script, timers, dead letters, health, retries) given the
tournament key space and :class:`~dudo.director.tournament.Tournament` as the
entity it hosts. Run as many as you like: they share the director partitions as
workers share table partitions, and a director killed mid-tournament is replaced
by another that takes its partitions over from Redis.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from ..director import Context, Ratings, RatingsContext, Tournament
from ..infra import Client, retry_until_ready
from ..wire import keys
from ..worker import AppQuotas, Worker, WorkerSettings

# A director's cycles are at least this long when busy: reports batch up (its orders
# wait for rounds' ends anyway), and its CPU per move falls (docs/tournaments.md).
DIRECTOR_PACE_MS = 50.0
# Tournament timers are start times, and the ratings have none: scanning for them as
# often as a worker does for turn clocks was a large share of a director's CPU
# (docs/benchmarks.md, "Measurements behind the code"). A start may come this much late.
DIRECTOR_TIMER_S = 0.5
# Neither waits for a turn clock, so an idle wait need not end every 50 ms as a
# worker's does (it still ends at once when an entry comes, and for every timer scan
# and heartbeat): fewer wake-ups of an idle director (docs/tournaments.md).
DIRECTOR_IDLE_BLOCK_MS = 500
RATINGS_TIMER_S = 3600.0


def director(
    settings: WorkerSettings,
    table_partitions: int,
    client: Client | None = None,
    pace_ms: float = DIRECTOR_PACE_MS,
    quotas: AppQuotas | None = None,
) -> Worker:
    """A director's loop: ``settings.partitions`` counts director partitions;
    ``table_partitions`` is the deployment's table partition count."""
    settings = replace(
        settings,
        space=keys.TOURNAMENTS,
        table_partitions=table_partitions,
        pace_ms=pace_ms,
        timer_interval=max(settings.timer_interval, DIRECTOR_TIMER_S),
        idle_block_ms=max(settings.idle_block_ms, DIRECTOR_IDLE_BLOCK_MS),
        batch=max(settings.batch, 1024),
    )
    context = Context(
        table_partitions=table_partitions,
        director_partitions=settings.partitions,
        quotas=quotas or AppQuotas(),
    )
    return Worker(settings, client, entity=Tournament, limits=context)


def ratings_keeper(
    settings: WorkerSettings, client: Client | None = None, *, director_partitions: int
) -> Worker:
    """The loop that keeps the ratings: one partition, so one holder at a time among the
    directors (each runs one; the others stand by and take over if it dies). Its
    answers to tournaments' results (`rated`) go to their directors' inboxes, among
    ``director_partitions``."""
    context = RatingsContext(director_partitions=director_partitions)
    settings = replace(
        settings,
        space=keys.RATINGS,
        partitions=1,
        table_partitions=None,
        # Ratings never set a timer (Ratings.timeout refuses): scan for none.
        timer_interval=RATINGS_TIMER_S,
        idle_block_ms=max(settings.idle_block_ms, DIRECTOR_IDLE_BLOCK_MS),
    )
    return Worker(settings, client, entity=Ratings, limits=context)


def run(
    settings: WorkerSettings,
    table_partitions: int,
    health_port: int | None = None,
    quotas: AppQuotas | None = None,
) -> None:
    """``dudo director``: the tournament loop, and the ratings loop beside it in a thread,
    until SIGTERM/SIGINT (both then hand their partitions back)."""
    loops: list[Worker] = []
    retry_until_ready(
        lambda: loops.append(director(settings, table_partitions, quotas=quotas))
    )
    tournaments = loops[0]
    keeper = ratings_keeper(settings, director_partitions=settings.partitions)

    def keep() -> None:
        if retry_until_ready(keeper.setup, stopping=lambda: keeper.stopping, log=keeper.log):
            keeper.run_forever()

    thread = threading.Thread(target=keep, name="ratings", daemon=True)
    thread.start()
    try:
        tournaments.run(health_port=health_port)
    finally:
        keeper.stop()
        thread.join(timeout=10)
