"""The published protocols: every message declared once, checked, encoded, documented.

The stream protocol (gateways, workers, directors; ``v`` = :data:`PROTOCOL_VERSION`) is
declared in :mod:`.fields` and by direction in :mod:`.inbox`, :mod:`.outbox` and
:mod:`.tournaments` (:mod:`.spec` gathers them); the client protocol in :mod:`.client`.
The same declarations drive

- :func:`decode`: strict validation of what arrives (types, ranges, lengths, unknown
  fields, a size cap), turning anything malformed into a :class:`WireError` with a
  protocol error code (:mod:`.checks`, and its fast path in C, :mod:`.fast`);
- :func:`json_schemas`: the JSON Schemas published in ``protocol/schemas/``
  (:mod:`.schemas`; ``dudo schemas write`` regenerates them, a test checks they match),
  and the generated reference of docs/protocol.md (:mod:`.reference`).

Also here: every Redis key name (:mod:`.keys`), the signatures of stream entries
(:mod:`.signing`), the views as gateways hand them on (:mod:`.views`, :mod:`.frames`).
Inbox entries carry one message in the field ``m``; outbox entries a msgpack array of
messages, so a worker sends one entry per gateway per batch.

This face names what the rest of the project uses; the modules behind it say how.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..engine import DudoError
from .checks import Checker, plausible, validate, validator
from .codec import (
    TYPES_OF,
    TableReport,
    decode,
    decode_own,
    message,
    pack_batch,
    unpack_batch,
)
from .errors import (
    BAD_MESSAGE,
    BAD_RULES,
    BAD_SEED,
    DECODE_ERROR_CODES,
    DUPLICATE,
    GAME_NOT_OVER,
    GAME_NOT_STARTED,
    GAME_STARTED,
    INTERNAL,
    NAME_TAKEN,
    NOT_ATTACHED,
    NOT_HOST,
    NOT_SEATED,
    PAUSED,
    PROTOCOL_ERROR_CODES,
    RATE_LIMITED,
    SEAT_TAKEN,
    TABLE_EXISTS,
    TABLE_FULL,
    TIMEOUT,
    TOO_FEW_PLAYERS,
    TOO_LARGE,
    TOURNAMENT_FULL,
    TOURNAMENT_OVER,
    UNAUTHORIZED,
    UNAVAILABLE,
    UNKNOWN_PLAYER,
    UNKNOWN_TABLE,
    UNKNOWN_TOURNAMENT,
    UNSUPPORTED_VERSION,
    Refusal,
    WireError,
)
from .fast import FastValidator, fast_check
from .fields import (
    BOT_LEVELS,
    DEFAULT_BOT_LEVEL,
    HEX_DIGEST,
    ID_RE,
    LOBBY_ENTRY,
    MESSAGE_ID_RE,
    RATED_MAX,
    REPORTS_MAX,
    TABLE_STATUSES,
    Field,
    Message,
)
from .frames import SnapshotTexts, encode_json, frames_message, public_piece
from .keys import DEFAULT_DIRECTOR_PARTITIONS, DEFAULT_PARTITIONS
from .names import NAME_MAX, clean_line, clean_name, is_clean_name, name_keys
from .packing import encode, unpack
from .schemas import SCHEMA_BASE, json_schemas, rules_schemas, sync_schema_files
from .signing import SIGNATURE_FIELD, Verifier, entry_fields, key_of_url, signature
from .spec import (
    DIRECTOR_TYPES,
    ENTRY_FIELD,
    INBOX_TYPES,
    MAX_INBOUND_BYTES,
    MAX_RESULT_BYTES,
    MESSAGES,
    OUTBOX_TYPES,
    PROTOCOL_VERSION,
    RATINGS_TYPES,
)
from .views import GATEWAY_ONLY, HANDLE_RE, public_id, seat_snapshot, seat_views, spectator_view

__all__ = [
    "BAD_MESSAGE",
    "BAD_RULES",
    "BAD_SEED",
    "BOT_LEVELS",
    "CLIENT_MESSAGES",
    "CREATE_DEFAULTS",
    "DECODE_ERROR_CODES",
    "DEFAULT_BOT_LEVEL",
    "DEFAULT_DIRECTOR_PARTITIONS",
    "DEFAULT_PARTITIONS",
    "DIRECTOR_TYPES",
    "DUPLICATE",
    "ENTRY_FIELD",
    "GAME_NOT_OVER",
    "GAME_NOT_STARTED",
    "GAME_STARTED",
    "GATEWAY_ONLY",
    "HANDLE_RE",
    "HEX_DIGEST",
    "ID_RE",
    "INBOX_TYPES",
    "INTERNAL",
    "LOBBY_ENTRY",
    "MAX_CLIENT_BYTES",
    "MAX_INBOUND_BYTES",
    "MAX_RESULT_BYTES",
    "MESSAGES",
    "MESSAGE_ID_RE",
    "NAME_MAX",
    "NAME_TAKEN",
    "NOT_ATTACHED",
    "NOT_HOST",
    "NOT_SEATED",
    "OUTBOX_TYPES",
    "PAUSED",
    "PROTOCOL_ERROR_CODES",
    "PROTOCOL_VERSION",
    "RATED_MAX",
    "RATE_LIMITED",
    "RATINGS_TYPES",
    "REPORTS_MAX",
    "SCHEMA_BASE",
    "SEAT_TAKEN",
    "SIGNATURE_FIELD",
    "TABLE_EXISTS",
    "TABLE_FULL",
    "TABLE_STATUSES",
    "TIMEOUT",
    "TOO_FEW_PLAYERS",
    "TOO_LARGE",
    "TOURNAMENT_FULL",
    "TOURNAMENT_OVER",
    "TYPES_OF",
    "UNAUTHORIZED",
    "UNAVAILABLE",
    "UNKNOWN_PLAYER",
    "UNKNOWN_TABLE",
    "UNKNOWN_TOURNAMENT",
    "UNSUPPORTED_VERSION",
    "Checker",
    "DudoError",
    "FastValidator",
    "Field",
    "Message",
    "Refusal",
    "SnapshotTexts",
    "TableReport",
    "Verifier",
    "WireError",
    "clean_line",
    "clean_name",
    "decode",
    "decode_own",
    "encode",
    "encode_json",
    "entry_fields",
    "fast_check",
    "fast_client",
    "frames_message",
    "http_schemas",
    "is_clean_name",
    "json_schemas",
    "key_of_url",
    "keys",
    "message",
    "name_keys",
    "pack_batch",
    "plausible",
    "public_id",
    "public_piece",
    "rules_schemas",
    "seat_snapshot",
    "seat_views",
    "signature",
    "signing",
    "solves",
    "spectator_view",
    "sync",
    "sync_schema_files",
    "sync_typings",
    "unpack",
    "unpack_batch",
    "validate",
    "validate_client",
    "validator",
]

# Loaded on first use (PEP 562): the client protocol (the web gateway's), the HTTP bodies'
# schemas and the generators of docs/protocol.md's reference and the client packages'
# types are never needed by a worker or a director, which import this face at start-up.
_LATER = {
    "CLIENT_MESSAGES": ".client", "MAX_CLIENT_BYTES": ".client", "fast_client": ".client",
    "validate_client": ".client", "CREATE_DEFAULTS": ".http", "http_schemas": ".http",
    "sync": ".reference", "sync_typings": ".typings",
}  # fmt: skip

if TYPE_CHECKING:  # what type checkers see of them
    from .client import CLIENT_MESSAGES, MAX_CLIENT_BYTES, fast_client, validate_client
    from .http import CREATE_DEFAULTS, http_schemas
    from .reference import sync
    from .typings import sync_typings


def __getattr__(name: str) -> Any:
    where = _LATER.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(where, __name__), name)
    globals()[name] = value  # found here from now on, without this call
    return value

