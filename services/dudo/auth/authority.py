"""Who may act for a player: credentials the deployment makes and checks, and no gateway can.

Gateways belong to other people (docs/security.md): a club's chat bot, a mobile app,
a web site. Each relays its own players, and none may act for, read or compute another
app's. So everything that says "this is player P" is made and checked here, by the
deployment's own processes (table workers and tournament directors), with keys kept in
``dudo:secrets``, which no gateway's Redis user may read:

- **Player ids** never leave the deployment. A gateway names a player by a credential
  its client handed it, and is told the player's public handle (:func:`dudo.wire.public_id`)
  in return. An app's user is ``u-`` + a keyed hash of (app, user); a player of a
  request key is ``r-`` + a keyed hash of (app, table or tournament, key), so a
  retried request names the same player through any gateway of that app and of no
  other; anyone else is a random ``a-`` id. Keyed: nobody without the key can compute
  one from a user id (an unkeyed hash was found from user ids 0-999 in a minute).
- **Seat and entrant tokens** are minted by the worker that seated the player (by the
  director that registered the entrant) and checked by the worker when a gateway
  attaches the seat: ``<payload>.<signature>``, the payload base64url JSON ``{"t":
  table or tournament, "p": the player's handle, "n": name, "k": "seat"|"entrant",
  "e": expiry}``, readable by anyone (a gateway routes by it) and signed with a key
  only the deployment holds.
- **Identities** are JWTs signed by an app's backend with its own private key (EdDSA
  or ES256) and verified here against the public keys the operator registered for that
  app (``dudo admin app add``), with PyJWT. A gateway may present identities of its own
  app only (``dudo admin gateway add NAME --app APP``).

Pure: the keys are given to :meth:`Authority.load`; the Redis reads are the callers'.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jwt

from .. import wire
from ..wire import Refusal

TOKEN_TTL_S = 7 * 24 * 3600  # a seat or entrant token lives a week (docs/protocol.md)
DEPLOYMENT_KINDS = ("seat", "entrant")  # the tokens the deployment mints
ALGORITHMS = ("EdDSA", "ES256")  # identity JWTs: asymmetric only, never "none" or HS*
USER_MAX = 128
ASSERTION_MAX = 2048
USER_PREFIX = "u-"  # the player id of an app's user (an identity): Authority.user_player
TOKEN_FIELD = "tokens"  # fields of keys.SECRETS
PLAYER_FIELD = "players"


@dataclass(frozen=True)
class Grant:
    """What a token says: its table (or tournament), the player's handle, a name."""

    table: str  # the table; for an entrant token, the tournament
    player: str | None  # the player's public handle (None for a spectator)
    name: str | None
    kind: str  # seat, entrant (the deployment's); watch, claim (a gateway's own)
    expires: int
    request: str | None = None  # claim tokens: the request key that settles the join


def b64(data: bytes) -> str:
    """base64url without padding (tokens and identity assertions)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def token_signature(key: bytes, payload: str) -> str:
    return b64(hmac.new(key, f"dudo-token/1\0{payload}".encode(), hashlib.sha256).digest())


def make_token(key: bytes, body: dict[str, Any]) -> str:
    """A token: the body as base64url JSON, a dot, its signature under ``key``."""
    # UTF-8, not \u escapes: a name of 32 emoji once made a token too long for hello.
    payload = b64(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())
    return f"{payload}.{token_signature(key, payload)}"


def read_token(token: str, key: bytes | None = None, now: float | None = None) -> Grant:
    """A token's grant: checked against ``key``, or read only (``key`` None: a gateway
    routing by a deployment's token, which the worker checks). :class:`Refusal`
    ``unauthorized`` for anything forged, damaged, expired or malformed."""
    if not isinstance(token, str) or len(token) > 1024:
        raise Refusal(wire.UNAUTHORIZED, "a token is a string of at most 1024 characters")
    payload, _, signed = token.partition(".")
    if key is not None and (
        not payload
        or not hmac.compare_digest(signed.encode(), token_signature(key, payload).encode())
    ):
        raise Refusal(wire.UNAUTHORIZED, "bad token signature")
    try:
        body = json.loads(unb64(payload))
        grant = Grant(
            _text(body["t"]), _optional(body.get("p")), _optional(body.get("n")),
            _text(body["k"]), int(body["e"]), _optional(body.get("r")),
        )  # fmt: skip
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise Refusal(wire.UNAUTHORIZED, "malformed token") from exc
    if grant.expires < (time.time() if now is None else now):
        raise Refusal(wire.UNAUTHORIZED, "expired token")
    return grant


def is_user(player: str) -> bool:
    """Whether a player id is an app's user (signed in with an identity): the same
    player at every table, whose statistics the deployment keeps."""
    return player.startswith(USER_PREFIX)


def table_order(table: str) -> tuple[int, str]:
    """A tournament table's place in the order its tables were opened: its number, the
    digits its id ends with (:meth:`Authority.tournament_table`; ``<tournament>-<n>``
    before the tag; ``t10`` after ``t2``), then the id."""
    digits = len(table) - len(table.rstrip("0123456789"))
    return (int(table[-digits:]) if digits else 1 << 62, table)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _optional(value: Any) -> str | None:
    return None if value is None else _text(value)


class Authority:
    """The deployment's keys, and everything made or checked with them.

    One per process, refreshed in place at every heartbeat (:meth:`load`): the
    tables and tournaments of that process share it (their ``limits`` slot)."""

    def __init__(self, token_key: bytes | None = None, player_key: bytes | None = None) -> None:
        # Random until loaded: a table tested without Redis still seats and checks.
        self.token_key = token_key or secrets.token_bytes(32)
        self.player_key = player_key or secrets.token_bytes(32)
        self.apps: dict[str, jwt.PyJWKSet] = {}  # app -> the public keys of its backend
        self.gateway_apps: dict[str, str] = {}  # admitted gateway -> its app
        self.ttl_s = TOKEN_TTL_S

    def load(
        self,
        stored: Mapping[Any, Any],
        apps: Mapping[Any, Any] | None = None,
        gateway_apps: Mapping[Any, Any] | None = None,
        admitted: frozenset[str] | set[str] = frozenset(),
    ) -> None:
        """From ``HGETALL dudo:secrets`` (hex keys), ``dudo:apps`` (app -> JWK set JSON)
        and ``dudo:gateway_apps`` (gateway -> app). An admitted gateway without an app
        of record (admitted before apps existed) is an app of its own name."""
        text = {_str(k): _str(v) for k, v in stored.items()}
        if TOKEN_FIELD in text and PLAYER_FIELD in text:
            self.token_key = bytes.fromhex(text[TOKEN_FIELD])
            self.player_key = bytes.fromhex(text[PLAYER_FIELD])
        found: dict[str, jwt.PyJWKSet] = {}
        for name, value in (apps or {}).items():
            try:
                found[_str(name)] = jwt.PyJWKSet.from_dict(json.loads(_str(value)))
            except Exception:  # an unusable key set refuses that app's identities only
                continue
        self.apps = found
        mapped = {_str(k): _str(v) for k, v in (gateway_apps or {}).items()}
        self.gateway_apps = {g: mapped.get(g, g) for g in admitted}

    # -- player ids -------------------------------------------------------------------

    def _keyed(self, prefix: str, *parts: str) -> str:
        mac = hmac.new(self.player_key, "\0".join(parts).encode(), hashlib.sha256)
        return prefix + b64(mac.digest())[:22]

    def user_player(self, app: str, user: str) -> str:
        """The player of ``user`` of ``app``: the same at every table and tournament."""
        return self._keyed(USER_PREFIX, "dudo-user/2", app, user)

    def request_player(self, app: str, scope: str, key: str) -> str:
        """The player of a request key at one table or tournament, for one app."""
        return self._keyed("r-", "dudo-request/2", app, scope, key)

    def tournament_table(self, tournament: str, number: int) -> str:
        """The id of a tournament's ``number``-th table: its own id, a keyed tag nobody
        can compute without the deployment's key, and its number (last: pages show a
        tournament's tables by it). Ids the lobby could predict (``<tournament>-1``)
        were taken by a hostile gateway before the begin, and the director's creates met
        ``table_exists``: no entrant was ever seated."""
        tag = self._keyed("", "dudo-table/1", tournament, str(number))[:8]
        return f"{tournament[:44]}-{tag}-{number}"

    @staticmethod
    def new_player() -> str:
        """A player nobody named: a new one, random."""
        return "a-" + secrets.token_urlsafe(16)[:22]

    def app_of(self, gateway: str | None) -> str | None:
        """Whose users a sender may name: an admitted gateway's, its own app's; the
        deployment's own processes (not admitted), any app's (None)."""
        return self.gateway_apps.get(gateway) if gateway is not None else None

    def player_for(self, msg: dict[str, Any], scope: str, player_field: str = "player") -> str:
        """The player a join, register or create names: the player id the deployment
        sent (``player_field``: a gateway's entry with one never gets here, dudo.wire.signing
        refuses it); else the user of an ``identity``; else the player of a
        ``request`` key at ``scope``; else a new player. :class:`Refusal`
        ``unauthorized`` for an identity that does not hold."""
        player = msg.get(player_field)
        if player is not None:
            return player
        app = self.app_of(msg.get("gateway"))
        identity = msg.get("identity")
        if identity is not None:
            issuer, user = self.identity(identity, app)
            return self.user_player(issuer, user)
        request = msg.get("request")
        if request is not None:
            return self.request_player(app or "", scope, request)
        return self.new_player()

    # -- tokens -----------------------------------------------------------------------

    def token(self, kind: str, scope: str, player: str, name: str | None) -> str:
        """A seat (or entrant) token for ``player`` at ``scope``: it names the player by
        handle, so whoever reads it learns nothing that grants anything."""
        body = {"t": scope, "p": wire.public_id(player), "n": name, "k": kind,
                "e": int(time.time()) + self.ttl_s}  # fmt: skip
        return make_token(self.token_key, body)

    def check(self, token: Any, scopes: Mapping[str, str | None]) -> Grant:
        """A token of ours, unexpired, of a kind in ``scopes`` for the table (or
        tournament) it maps that kind to: its grant, or :class:`Refusal`
        ``unauthorized``."""
        grant = read_token(token, self.token_key)
        scope = scopes.get(grant.kind)
        if scope is None or grant.table != scope or grant.player is None:
            wanted = " or ".join(f"a {k} token of {v}" for k, v in scopes.items() if v)
            raise Refusal(wire.UNAUTHORIZED, f"not {wanted}")
        return grant

    # -- identities ---------------------------------------------------------------------

    def identity(self, assertion: Any, app: str | None = None) -> tuple[str, str]:
        """(app, user) of an identity JWT its app's backend signed: ``iss`` the app,
        ``sub`` the user, ``exp`` required; with ``app``, only that app's. Anything
        else, however malformed, is :class:`Refusal` ``unauthorized``."""
        if not isinstance(assertion, str) or not 0 < len(assertion) <= ASSERTION_MAX:
            raise Refusal(
                wire.UNAUTHORIZED, f"identity must be a JWT of at most {ASSERTION_MAX} characters"
            )
        try:
            issuer = jwt.decode(assertion, options={"verify_signature": False}).get("iss")
            header = jwt.get_unverified_header(assertion)
        except Exception as exc:  # not a JWT at all: deep JSON, bad base64, non-ASCII...
            raise Refusal(wire.UNAUTHORIZED, "identity is not a JWT") from exc
        if not isinstance(issuer, str) or issuer not in self.apps:
            raise Refusal(wire.UNAUTHORIZED, "identity names no app this deployment knows (iss)")
        if app is not None and issuer != app:
            raise Refusal(
                wire.UNAUTHORIZED, f"identity of app {issuer}; this gateway is of app {app}"
            )
        if header.get("alg") not in ALGORITHMS:
            raise Refusal(
                wire.UNAUTHORIZED, f"identity must be signed with {' or '.join(ALGORITHMS)}"
            )
        keys = self.apps[issuer].keys
        kid = header.get("kid")
        candidates = [k for k in keys if kid is None or k.key_id == kid]
        claims = None
        for candidate in candidates:
            try:
                claims = jwt.decode(
                    assertion, candidate, algorithms=list(ALGORITHMS), issuer=issuer,
                    options={"require": ["exp", "sub", "iss"], "verify_aud": False},
                )  # fmt: skip
                break
            except jwt.ExpiredSignatureError as exc:
                raise Refusal(wire.UNAUTHORIZED, "identity has expired") from exc
            except Exception:
                continue
        if claims is None:
            raise Refusal(wire.UNAUTHORIZED, "identity signature does not match the app's keys")
        user = claims.get("sub")
        if not isinstance(user, str) or not 1 <= len(user) <= USER_MAX:
            raise Refusal(wire.UNAUTHORIZED, f"identity sub must be a string of 1..{USER_MAX}")
        return issuer, user


def _str(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def new_secrets() -> dict[str, str]:
    """Fresh deployment keys for ``dudo:secrets`` (written once, with HSETNX)."""
    return {TOKEN_FIELD: secrets.token_hex(32), PLAYER_FIELD: secrets.token_hex(32)}
