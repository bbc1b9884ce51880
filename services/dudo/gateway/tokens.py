"""Seat and spectator tokens: who may play (or watch) what, signed by the gateways.

A token is ``<payload>.<signature>``: the payload is base64url JSON
``{"t": table, "p": player, "n": name, "k": "seat"|"watch", "e": expiry}``, the
signature HMAC-SHA256 over it with the deployment's gateway secret. Every gateway
instance of a deployment shares the secret, so a player can reconnect through any
of them. A token names a table and a player, never a seat number: the seat comes
from the table (it can change when the host starts early), so a token can only
ever act for its own player at its own table.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass

# seat: play a seat at a table; watch: watch a table; entrant: play in a tournament
# (``t`` is then the tournament: the player's table changes as the director moves them).
KINDS = ("seat", "watch", "entrant")


class TokenError(Exception):
    """Forged, damaged or expired."""


@dataclass(frozen=True)
class Grant:
    table: str
    player: str | None  # None for a spectator
    name: str | None
    kind: str  # "seat" or "watch"
    expires: int


def b64(data: bytes) -> str:
    """base64url without padding (tokens and identity assertions)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def signature(secret: bytes, payload: str) -> str:
    """base64url HMAC-SHA256 of ``payload`` under ``secret``."""
    return b64(hmac.new(secret, payload.encode(), hashlib.sha256).digest())


class Tokens:
    def __init__(self, secret: bytes, ttl_seconds: int = 7 * 24 * 3600) -> None:
        if len(secret) < 16:
            raise ValueError("the gateway secret must be at least 16 bytes")
        self.secret = secret
        self.ttl = ttl_seconds

    def _sign(self, payload: str) -> str:
        return signature(self.secret, payload)

    def derive(self, *parts: str) -> str:
        """A base64url HMAC of ``parts`` under the secret: the same on every gateway of
        the deployment, unguessable without the secret."""
        return self._sign("\0".join(parts))

    def issue(self, table: str, player: str | None, name: str | None, kind: str = "seat") -> str:
        body = {"t": table, "p": player, "n": name, "k": kind, "e": int(time.time()) + self.ttl}
        # UTF-8, not \u escapes: a name of 32 emoji once made a token too long for hello.
        payload = b64(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())
        return f"{payload}.{self._sign(payload)}"

    def check(self, token: str) -> Grant:
        payload, _, signature = token.partition(".")
        if not payload or not hmac.compare_digest(signature, self._sign(payload)):
            raise TokenError("bad token signature")
        try:
            body = json.loads(unb64(payload))
            grant = Grant(body["t"], body["p"], body["n"], body["k"], int(body["e"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise TokenError("malformed token") from exc
        if grant.expires < time.time():
            raise TokenError("expired token")
        if grant.kind not in KINDS:
            raise TokenError("unknown token kind")
        return grant
