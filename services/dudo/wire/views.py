"""Views as gateways hand them on: a seat's snapshot (its own private part only), a
spectator's, and the public handle that names a player to others."""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from typing import Any

# Fields of a stream `view` for the gateway alone: `holders` (player ids, to route each
# private part) and `applied` (the gateway's act ids, which hold player ids). No client
# ever sees them.
GATEWAY_ONLY = ("seats", "holders", "applied")


def seat_views(view: dict[str, Any]) -> list[dict[str, Any]]:
    """A ``view`` message as the snapshots its seats get, one per private part."""
    return [seat_snapshot(view, private) for private in view["seats"]]


def seat_snapshot(view: dict[str, Any], private: dict[str, Any]) -> dict[str, Any]:
    """One seat's snapshot from a ``view`` message: the wrapper, ``seat``, and ``game`` =
    the public part merged with that seat's private part (and nothing of other seats)."""
    snapshot = dict(view)  # the wrapper (a C-level copy: this runs for every seat's view)
    for key in GATEWAY_ONLY:
        snapshot.pop(key, None)
    public = snapshot.pop("game")
    snapshot["seat"] = private["seat"]
    snapshot["game"] = {**public, **private} if public else None
    return snapshot


def spectator_view(view: dict[str, Any]) -> dict[str, Any]:
    """A ``view`` message as a spectator's snapshot: the public part, ``seat`` null."""
    snapshot = dict(view)
    for key in GATEWAY_ONLY:
        snapshot.pop(key, None)
    public = snapshot.pop("game")
    snapshot["seat"] = None
    snapshot["game"] = {**public, "seat": None} if public else None
    return snapshot


HANDLE_RE = re.compile(r"[A-Za-z0-9_-]{16}")  # what public_id makes


@functools.lru_cache(maxsize=65536)  # every view names its host and players: hash once
def public_id(player: str) -> str:
    """The handle under which a player is shown to others: ``host`` in views and the
    lobby, ``player`` in ``welcome`` and the HTTP answers.

    A player id is the deployment's own name for a player and never leaves it
    (docs/security.md): gateways and clients see only this handle, which grants
    nothing. It is one-way: base64url of SHA-256("dudo-player/1:" + id), first
    16 characters. A client compares it with the ``player`` of its ``welcome``
    to know whether it is the host.
    """
    digest = hashlib.sha256(f"dudo-player/1:{player}".encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()[:16]
