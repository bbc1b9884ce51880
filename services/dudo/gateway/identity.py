"""Who a player is when an app says so: identity assertions signed by the app.

Without one a player is anonymous: every seat (or tournament entry) gets a new
player id, rated only as long as its token lives. An app hosted by the
deployment gets a name and a secret from the operator (``DUDO_APPS`` on every
gateway: ``web=<secret>,chat=<secret>``). Its backend signs, for one of its
users, an assertion ``<payload>.<signature>``: the payload base64url JSON
``{"a": app, "u": user id, "e": expiry in unix seconds}``, the signature
base64url HMAC-SHA256 of the payload text under the app's secret
(:func:`sign_identity`, or ``dudo identity``). A client passes it as
``identity`` when it creates or joins a table or registers for a tournament;
the gateway then plays that user as :func:`player_of` ``(app, user)``: the same
player at every table and tournament (one rating across all of them), and
another for the same user id of another app (ids are namespaced by app).

The player id is a hash: it reveals neither app nor user, and it does not depend
on any secret, so rotating a secret does not rename anyone (docs/protocol.md).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time

from .tokens import b64, signature, unb64

APP_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
USER_MAX = 128
ASSERTION_MAX = 2048
SECRET_MIN = 16


class IdentityError(Exception):
    """A forged, damaged, expired or unknown-app assertion."""


def player_of(app: str, user: str) -> str:
    """The player id of ``user`` of ``app``: stable, and the same on every gateway."""
    digest = hashlib.sha256(f"dudo-user/1\0{app}\0{user}".encode()).digest()
    return "u-" + b64(digest)[:22]


def sign_identity(app: str, secret: bytes, user: str, ttl_s: int = 3600) -> str:
    """An assertion that ``user`` of ``app`` plays, valid for ``ttl_s`` seconds: what an
    app's backend hands its client (any language can do the same: see the module)."""
    payload = b64(
        json.dumps(
            {"a": app, "u": user, "e": int(time.time()) + ttl_s}, separators=(",", ":")
        ).encode()
    )
    return f"{payload}.{signature(secret, payload)}"


def parse_apps(text: str) -> dict[str, bytes]:
    """``name=secret,name=secret`` (``DUDO_APPS``) as a dict; ValueError if malformed."""
    apps: dict[str, bytes] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, secret = item.partition("=")
        if not sep or not APP_NAME.fullmatch(name):
            raise ValueError(f"DUDO_APPS: {name!r} is not app=secret with a name of [a-z0-9_-]")
        if len(secret) < SECRET_MIN:
            raise ValueError(f"DUDO_APPS: the secret of {name} must be {SECRET_MIN}+ characters")
        apps[name] = secret.encode()
    return apps


class Identities:
    """The apps a gateway trusts, and the check of their assertions."""

    def __init__(self, apps: dict[str, bytes]) -> None:
        self.apps = apps

    def player_for(self, assertion: object, now: float | None = None) -> str:
        """The player an assertion names, or :class:`IdentityError` saying why not."""
        if not isinstance(assertion, str) or len(assertion) > ASSERTION_MAX:
            raise IdentityError(f"identity must be a string of at most {ASSERTION_MAX}")
        if assertion.count(".") != 1:
            raise IdentityError("identity must be <payload>.<signature>")
        payload, signed = assertion.split(".")
        try:
            claims = json.loads(unb64(payload))
        except (ValueError, UnicodeDecodeError) as exc:
            raise IdentityError("identity payload is not base64url JSON") from exc
        if not isinstance(claims, dict):
            raise IdentityError("identity payload must be an object")
        app, user, expires = claims.get("a"), claims.get("u"), claims.get("e")
        secret = self.apps.get(app) if isinstance(app, str) else None
        if secret is None:
            raise IdentityError("identity names no app this deployment knows")
        if not hmac.compare_digest(signed, signature(secret, payload)):
            raise IdentityError("identity signature does not match")
        if not isinstance(user, str) or not 1 <= len(user) <= USER_MAX:
            raise IdentityError(f"identity user must be a string of 1..{USER_MAX}")
        if not isinstance(expires, int) or isinstance(expires, bool):
            raise IdentityError("identity expiry must be unix seconds")
        if expires < (time.time() if now is None else now):
            raise IdentityError("identity has expired")
        return player_of(app, user)
