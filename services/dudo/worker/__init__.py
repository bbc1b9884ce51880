"""Stateless table workers: own partitions, apply inbox entries, commit, deliver views."""

from .loop import Worker, WorkerSettings

__all__ = ["Worker", "WorkerSettings"]
