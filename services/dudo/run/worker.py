"""A table worker: the partition loop (:mod:`dudo.worker`, which hosts any entity)
hosting tables (:mod:`dudo.table`), with the tables' limits. ``dudo worker`` and
``dudo serve`` start one; the director composes its own (:mod:`dudo.run.director`)."""

from __future__ import annotations

from ..infra import Client
from ..table import Limits, Table
from ..worker import Worker, WorkerSettings


def table_worker(
    settings: WorkerSettings, client: Client | None = None, limits: Limits | None = None
) -> Worker:
    """A worker over ``settings.partitions`` table partitions; ``limits``: the tables'
    time limits (the defaults where None), whose partition count is the settings'."""
    if limits is None:
        limits = Limits(partitions=settings.partitions)
    elif limits.partitions != settings.partitions:
        raise ValueError(
            f"the tables' limits address {limits.partitions} partitions, "
            f"the worker {settings.partitions}"
        )
    return Worker(settings, client, entity=Table, limits=limits)
