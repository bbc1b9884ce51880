"""Stateless table workers: own partitions, apply inbox entries, commit, deliver views."""

from .loop import Worker, WorkerSettings
from .quota import AppQuotas
from .scripts import (
    Scripts,
    Section,
    Stream,
    Write,
    commit_call,
    commit_groups,
    commit_section,
    read_call,
    read_groups,
)

__all__ = [
    "AppQuotas",
    "Scripts",
    "Section",
    "Stream",
    "Worker",
    "WorkerSettings",
    "Write",
    "commit_call",
    "commit_groups",
    "commit_section",
    "read_call",
    "read_groups",
]
