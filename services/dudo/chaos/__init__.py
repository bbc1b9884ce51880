"""``dudo chaos``: play through real gateways while workers, gateways, Redis and client
connections fail at random, then audit every table from Redis (docs/operations.md)."""

from .run import run

__all__ = ["run"]
