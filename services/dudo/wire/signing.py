"""Who wrote an inbox entry: the stream it is in, and a signature per entry.

Each admitted gateway appends to its own inbox stream on each partition
(``dudo:{pN}:in:<gateway>``, :meth:`dudo.wire.keys.Space.inbox`) and to no other: its
Redis user may not touch the others (docs/architecture.md, "Who may touch what"). So a
worker knows who wrote an entry by the stream it read it from. Every entry also carries,
beside its message ``m``, a signature ``s``: the first 16 bytes of HMAC-SHA256 over
``m`` with the writer's key, so that a stream written by someone else with the
deployment's rights (an operator's replay, a misconfigured process) is still judged by
its author.

- A gateway's key is derived from its Redis password (:func:`key_of_password`), so
  the one credential ``dudo admin gateway add`` hands out is all it needs; the admin
  stores the derived key in ``dudo:gateway_keys`` (field: the gateway's id), which
  no gateway's Redis user may read.
- The deployment's own processes (workers, directors, bot services, admin tools)
  sign with the internal key, field ``*`` of the same hash, and write the
  deployment's inbox (``dudo:{pN}:in``).

An entry in a gateway's own inbox is applied only if that gateway signed it, it names
that gateway in its ``gateway`` field, and it is a message a gateway may send. Once that
hash holds an internal key and the flag ``!checking`` (set a few seconds after the key,
once every process of ours signs; before, a deployment without gateway users, nothing
is checked), an entry in the deployment's inbox is applied only if the deployment
signed it. Anything else is dead-lettered as ``unauthorized`` and changes nothing. Pure
functions and plain data: the Redis reads are the callers'.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from .keys import as_text
from .spec import ENTRY_FIELD

INTERNAL = "*"  # the internal key's field in keys.GATEWAY_KEYS
# Set a few seconds after the internal key (by `dudo admin gateway add`): the
# deployment's processes sign as soon as there is a key, workers check only from this
# flag on, so no entry of ours written in between is refused. Neither field can be a
# gateway id (keys.ID_PATTERN).
CHECKING = "!checking"
SIGNATURE_FIELD = b"s"
SIGNATURE_HINT = 'docs/protocol.md, "Who wrote it"'  # where a refusal sends a gateway's author
SIZE = 16
_DERIVE = b"dudo inbox entries/1"

# What a gateway may send (to tables' and tournaments' inboxes); everything else is
# written by the deployment itself (timeouts, reports, orders, seats, results...).
GATEWAY_SENDS = frozenset(
    {"create", "join", "leave", "rename", "attach", "act", "resync", "watch", "start",
     "handover", "close", "rematch", "react", "seed", "commit_seed",
     "tournament_create", "register", "unregister", "begin", "organize", "subscribe",
     "standings"}
)  # fmt: skip
# Fields of those that only the deployment may fill: a player id (a gateway names its
# players by credential: a token, an identity, a request key; dudo.auth.authority), and the
# host of a table or tournament (the player the creator's credentials name).
DEPLOYMENT_FIELDS = {
    "create": ("host",),
    "attach": ("player",),
    "tournament_create": ("host",),
    "join": ("player",),
    "register": ("player",),
    "unregister": ("player",),
    "begin": ("player",),
    "organize": ("player",),
}


def key_of_password(password: str) -> bytes:
    return hmac.digest(password.encode(), _DERIVE, "sha256")


def key_of_url(url: str, user_prefix: str) -> bytes | None:
    """A gateway's signing key from its Redis URL: derived from the password of a user
    named ``<user_prefix><id>``; None for any other URL (an admin's: no gateway user)."""
    parts = urlsplit(url)
    user = unquote(parts.username or "")
    if not user.startswith(user_prefix) or parts.password is None:
        return None
    return key_of_password(unquote(parts.password))


def key_from_hex(stored: bytes | str | None) -> bytes | None:
    """A key as stored in keys.GATEWAY_KEYS (hex), or None where there is none."""
    if not stored:
        return None
    return bytes.fromhex(stored.decode() if isinstance(stored, bytes) else stored)


def new_internal_key() -> str:
    return secrets.token_hex(32)


def sign(key: bytes, payload: bytes) -> bytes:
    return hmac.digest(key, payload, "sha256")[:SIZE]


def signature(key: bytes | None, payload: bytes) -> bytes:
    """An entry's signature with ``key``, or b"" where nothing is signed (no key)."""
    return b"" if key is None else sign(key, payload)


def entry_fields(key: bytes | None, payload: bytes) -> dict[bytes, bytes]:
    """An inbox entry's fields: the message, and its signature where there is a key."""
    if key is None:
        return {ENTRY_FIELD: payload}
    return {ENTRY_FIELD: payload, SIGNATURE_FIELD: sign(key, payload)}


@dataclass
class Verifier:
    """The keys a worker checks entries with (refreshed at every heartbeat)."""

    internal: bytes | None = None
    gateways: dict[str, bytes] = field(default_factory=dict)
    checking: bool = True

    @classmethod
    def from_hash(cls, stored: Mapping[Any, Any]) -> Verifier:
        """From ``HGETALL dudo:gateway_keys`` (hex keys; bytes or str either way)."""
        text = {as_text(k): as_text(v) for k, v in stored.items()}
        internal = text.pop(INTERNAL, None)
        checking = text.pop(CHECKING, None) is not None
        return cls(
            key_from_hex(internal),
            {name: bytes.fromhex(value) for name, value in text.items()},
            checking,
        )

    @property
    def active(self) -> bool:
        """Are entries checked? (Ours are signed whenever there is an internal key.)"""
        return self.internal is not None and self.checking

    def ours(self, payload: bytes, signature: bytes) -> bool:
        """Signed with the internal key: written by one of the deployment's processes
        (whether or not entries are checked yet)."""
        return (
            self.internal is not None
            and bool(signature)
            and hmac.compare_digest(signature, sign(self.internal, payload))
        )

    def refusal(
        self,
        msg: dict[str, Any],
        payload: bytes,
        signature: bytes,
        ours: bool | None = None,
        *,
        writer: str | None = None,
    ) -> str | None:
        """Why this entry must not be applied, or None if it may. ``writer``: the gateway
        whose own inbox it was read from (None: the deployment's inbox). ``ours``: whether
        it is :meth:`ours`, where the caller already asked (one HMAC per entry, not two)."""
        if writer is None:
            if not self.active or (ours if ours is not None else self.ours(payload, signature)):
                return None
            return (
                "the deployment's inbox takes the deployment's own entries only "
                "(a gateway writes its own inbox on each partition)"
            )
        key = self.gateways.get(writer)
        if key is None:
            return f"{writer!r} is no gateway with a key"
        if not signature:
            return (
                f"unsigned: gateway {writer}'s entries carry a signature field "
                f"({SIGNATURE_HINT})"
            )
        if not hmac.compare_digest(signature, sign(key, payload)):
            return (
                f"the signature is not gateway {writer}'s: HMAC-SHA256 of the payload field's "
                f"bytes with the key it was admitted with ({SIGNATURE_HINT})"
            )
        gateway = msg.get("gateway")
        if gateway != writer:
            return f"an entry of gateway {writer}'s own inbox names gateway {gateway!r}"
        kind = msg.get("type")
        if kind not in GATEWAY_SENDS or (kind == "create" and msg.get("tournament") is not None):
            return f"a gateway may not send {kind}"
        for name in DEPLOYMENT_FIELDS.get(kind, ()):
            if msg.get(name) is not None:
                return f"a gateway may not name a player id ({kind}.{name}): send a credential"
        return None
