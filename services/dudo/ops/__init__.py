"""Operator tools over a running deployment: users and keys (:mod:`.admin`), inspection
(:mod:`.inspect`), and a whole deployment on one machine (:mod:`.fleet`) for bench,
chaos and the conformance kits."""

from . import admin, fleet, inspect
from .cluster import LocalCluster
from .fleet import ONE_ADDRESS, Fleet, fresh_redis, stop, temporary_folder, wait_ready
from .sandbox import run

__all__ = [
    "ONE_ADDRESS",
    "Fleet",
    "LocalCluster",
    "admin",
    "fleet",
    "fresh_redis",
    "inspect",
    "run",
    "stop",
    "temporary_folder",
    "wait_ready",
]
