"""``dudo director``: the worker's loop, run over tournament partitions.

A director is exactly a worker (:class:`~dudo.worker.Worker`: leases with fencing,
the fenced commit script, timers, dead letters, health, retries) given the
tournament key space and :class:`~dudo.director.tournament.Tournament` as the
entity it hosts. Run as many as you like: they share the director partitions as
workers share table partitions, and a director killed mid-tournament is replaced
by another that takes its partitions over from Redis.
"""

from __future__ import annotations

from dataclasses import replace

from .. import keys
from ..connection import Client
from ..worker import Worker, WorkerSettings
from .tournament import Context, Tournament


def director(
    settings: WorkerSettings, table_partitions: int, client: Client | None = None
) -> Worker:
    """A director's loop: ``settings.partitions`` counts director partitions;
    ``table_partitions`` is the deployment's table partition count."""
    settings = replace(settings, space=keys.TOURNAMENTS, table_partitions=table_partitions)
    context = Context(table_partitions=table_partitions, director_partitions=settings.partitions)
    return Worker(settings, client, entity=Tournament, limits=context)
