"""Operator tools over a running deployment: users and keys (:mod:`.admin`), inspection
(:mod:`.inspect`), and a whole deployment on one machine (:mod:`.fleet`) for bench,
chaos and the conformance kits."""

from . import admin, fleet, inspect

__all__ = [
    "admin", "fleet", "inspect",
]
