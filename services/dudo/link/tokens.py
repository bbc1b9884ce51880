"""The tokens a gateway handles: the deployment's, which it relays, and its own two kinds.

A seat or entrant token is the deployment's (:mod:`dudo.auth.authority`): minted by the
worker that seated the player (the director that registered the entrant), checked
by the worker whenever a gateway presents it. A gateway holds no key to make or check
one; it reads its payload (``t`` table or tournament, ``p`` the player's handle) to know
where to send the client's hello, and the worker's answer says whether it holds.

A gateway makes two kinds itself, signed with its app's secret (``DUDO_GATEWAY_SECRET``,
shared by that app's instances): a spectator's (``watch``: the public view of a table,
which grants nothing more) and a ``claim``, handed out when a join's answer did not
come in time: it carries the request key of that join, and saying hello with it sends
the join again (the same request key names the same player: it finds its seat, or
takes one if the first join never happened).
"""

from __future__ import annotations

import hashlib
import hmac
import time

from .. import wire
from ..auth import DEPLOYMENT_KINDS, Grant, make_token, read_token
from ..auth import b64 as b64
from ..auth import unb64 as unb64
from ..wire import DudoError, Refusal

__all__ = ["KINDS", "Grant", "TokenError", "Tokens", "b64", "signature", "unb64"]

# seat, entrant: the deployment's; watch, claim: the gateway's own.
KINDS = (*DEPLOYMENT_KINDS, "watch", "claim")


class TokenError(Refusal):
    """Forged, damaged, expired, or of no kind a gateway takes: ``unauthorized``."""

    def __init__(self, message: str) -> None:
        super().__init__(wire.UNAUTHORIZED, message)


def signature(secret: bytes, payload: str) -> str:
    """base64url HMAC-SHA256 of ``payload`` under ``secret``."""
    return b64(hmac.new(secret, payload.encode(), hashlib.sha256).digest())


class Tokens:
    """A gateway's own tokens, and reading the deployment's."""

    def __init__(self, secret: bytes, ttl_seconds: int = 7 * 24 * 3600) -> None:
        if len(secret) < 16:
            raise ValueError("the gateway secret must be at least 16 bytes")
        self.secret = secret
        self.ttl = ttl_seconds

    def derive(self, *parts: str) -> str:
        """A base64url HMAC of ``parts`` under the secret: the same on every gateway of
        the app, unguessable without the secret (a table id from a request key)."""
        return signature(self.secret, "\0".join(parts))

    def _issue(self, body: dict[str, object]) -> str:
        return make_token(self.secret, {**body, "e": int(time.time()) + self.ttl})

    def watch(self, table: str) -> str:
        """A spectator's token for ``table``."""
        return self._issue({"t": table, "p": None, "n": None, "k": "watch"})

    def claim(self, table: str, request: str, name: str | None) -> str:
        """A token that sends a join again: the join under request key ``request``."""
        return self._issue({"t": table, "p": None, "n": name, "k": "claim", "r": request})

    def check(self, token: str) -> Grant:
        """What a token grants: our own kinds checked with our secret; the deployment's
        read only (the worker checks them when the gateway presents them)."""
        try:
            grant = read_token(token)
            if grant.kind in ("watch", "claim"):
                grant = read_token(token, self.secret)
                if grant.kind == "claim" and not grant.request:
                    raise TokenError("malformed token")
            elif grant.kind not in DEPLOYMENT_KINDS or grant.player is None:
                raise TokenError("unknown token kind")
        except DudoError as exc:
            raise TokenError(exc.message) from exc
        return grant
