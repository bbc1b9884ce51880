"""The wire codec: every message between gateways and workers, and its msgpack form.

This module owns the stream protocol (``v`` = :data:`PROTOCOL_VERSION`). Each
message type is declared once, as a :class:`Message` of :class:`Field` specs;
the same declaration drives

- :func:`decode`: strict validation of what arrives (types, ranges, lengths,
  unknown fields, a size cap), turning anything malformed into a
  :class:`WireError` with a protocol error code;
- :func:`json_schemas`: the JSON Schemas published in ``protocol/schemas/``
  (``dudo schemas write`` regenerates them; a test checks they match).

Inbox entries (gateway → worker) carry one message in the field ``m``; outbox
entries (worker → gateway) carry a msgpack array of messages in ``m``, so a
worker sends one entry per gateway per batch.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import keyword
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import msgspec

from .engine import RuleError, Rules, RulesConfigError, action_from_dict
from .engine.actions import ACTION_FIELDS
from .engine.errors import BAD_ACTION

# The declarations live in wire_spec; their users import them from here, with the codec.
from .wire_spec import BOT_LEVELS as BOT_LEVELS
from .wire_spec import DIRECTOR_TYPES as DIRECTOR_TYPES
from .wire_spec import ID_RE as ID_RE
from .wire_spec import INBOX_TYPES as INBOX_TYPES
from .wire_spec import LOBBY_ENTRY as LOBBY_ENTRY
from .wire_spec import MESSAGE_ID_RE as MESSAGE_ID_RE
from .wire_spec import MESSAGES as MESSAGES
from .wire_spec import OUTBOX_TYPES as OUTBOX_TYPES
from .wire_spec import RATINGS_TYPES as RATINGS_TYPES
from .wire_spec import TABLE_STATUSES as TABLE_STATUSES
from .wire_spec import Field as Field
from .wire_spec import Message as Message

PROTOCOL_VERSION = 1
MAX_INBOUND_BYTES = 16 * 1024
MAX_RESULT_BYTES = 8 * 1024 * 1024
ENTRY_FIELD = b"m"

# Protocol error codes (the rule codes, docs/rules.md, come from the engine).
BAD_MESSAGE = "bad_message"  # not msgpack/JSON, wrong types, unknown type or field
TOO_LARGE = "too_large"  # over the size cap
UNSUPPORTED_VERSION = "unsupported_version"
BAD_RULES = "bad_rules"
UNKNOWN_TABLE = "unknown_table"
UNKNOWN_TOURNAMENT = "unknown_tournament"
TOURNAMENT_FULL = "tournament_full"
TABLE_EXISTS = "table_exists"
TABLE_FULL = "table_full"
SEAT_TAKEN = "seat_taken"
NOT_SEATED = "not_seated"
NOT_ATTACHED = "not_attached"  # the seat is attached to another gateway
NOT_HOST = "not_host"
GAME_NOT_STARTED = "game_not_started"
GAME_STARTED = "game_started"
TOO_FEW_PLAYERS = "too_few_players"
DUPLICATE = "duplicate"  # an action id seen before: it took effect once already
RATE_LIMITED = "rate_limited"  # gateway
UNAUTHORIZED = "unauthorized"  # gateway: bad or foreign seat token
UNAVAILABLE = "unavailable"  # gateway: Redis cannot be reached right now; retry
TIMEOUT = "timeout"  # gateway: no worker answered in time; the request may still apply
INTERNAL = "internal"

PROTOCOL_ERROR_CODES = frozenset(
    {
        BAD_MESSAGE,
        TOO_LARGE,
        UNSUPPORTED_VERSION,
        BAD_RULES,
        UNKNOWN_TABLE,
        UNKNOWN_TOURNAMENT,
        TOURNAMENT_FULL,
        TABLE_EXISTS,
        TABLE_FULL,
        SEAT_TAKEN,
        NOT_SEATED,
        NOT_ATTACHED,
        NOT_HOST,
        GAME_NOT_STARTED,
        GAME_STARTED,
        TOO_FEW_PLAYERS,
        DUPLICATE,
        RATE_LIMITED,
        UNAUTHORIZED,
        UNAVAILABLE,
        TIMEOUT,
        INTERNAL,
    }
)
# What decoding a message can answer: a protocol code, or `bad_action` for a malformed
# `action` (a rule code: docs/rules.md).
DECODE_ERROR_CODES = PROTOCOL_ERROR_CODES | {BAD_ACTION}


class WireError(Exception):
    """A message that cannot be accepted. ``known`` holds the fields that could be read
    (``id``, ``table``, ``gateway``...), so the error can still reach whoever sent it."""

    def __init__(self, code: str, message: str, known: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.known = known or {}


# -- display names -----------------------------------------------------------

NAME_MAX = 32
# Characters no display name may hold: controls, format characters (bidi overrides,
# zero-width joiners and spaces), private use, surrogates, unassigned, line and
# paragraph separators. They hide, reorder or break the text others see.
_HIDDEN = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})


def clean_name(value: Any) -> str:
    """A display name as everyone will see it: NFC, trimmed, inner whitespace runs made
    one space, 1..32 characters, nothing hidden. Raises :class:`WireError` otherwise.

    Gateways clean a name before sending it; workers accept only clean names (the
    gateway once accepted a padded name the worker then refused, after the table
    had been created)."""
    if not isinstance(value, str):
        raise WireError(BAD_MESSAGE, "a name must be a string")
    name = " ".join(unicodedata.normalize("NFC", value).split())
    if not 1 <= len(name) <= NAME_MAX:
        raise WireError(BAD_MESSAGE, f"a name must be 1..{NAME_MAX} characters")
    if any(unicodedata.category(c) in _HIDDEN for c in name):
        raise WireError(BAD_MESSAGE, "a name may not hold control or invisible characters")
    return name


# A display name clean_name leaves as it is, in plain ASCII: printable words, one space
# between them (its length is checked beside it). _is_clean_name asks it, and the fast
# decoder types such names with it.
_CLEAN_ASCII = r"\A[!-~]+(?: [!-~]+)*\Z"
_CLEAN_ASCII_MATCH = re.compile(_CLEAN_ASCII).match


def _is_clean_name(value: str) -> bool:
    """Would :func:`clean_name` leave ``value`` as it is? Checked for every display name
    in every entry (a tournament director: a name for every player moved). Plain
    ASCII is answered without the Unicode tables (NFC leaves it as it is): by the
    pattern the fast decoder types such names with (:data:`_CLEAN_ASCII`)."""
    if value.isascii():
        return len(value) <= NAME_MAX and _CLEAN_ASCII_MATCH(value) is not None
    try:
        return clean_name(value) == value
    except WireError:
        return False


# -- validation -----------------------------------------------------------------

_PY_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "boolean": bool,
    "object": dict,
    "array": list,
}


Checker = Callable[[Any], None]


def _compile(spec: Field, path: str) -> Checker:
    """A function that checks one value against ``spec`` (raising WireError), built once.

    Everything that does not depend on the value (messages, patterns, limits)
    is worked out here, and each field gets one closure doing all its checks,
    so checking a message costs about one call per field: every worker and
    gateway decodes each entry through this.
    """
    nullable = spec.nullable
    null_error = f"{path} may not be null"
    type_error = f"{path} must be {spec.kind}"
    kind = spec.kind
    if kind == "ref":

        def check_ref(value: Any) -> None:
            if value is None:
                if nullable:
                    return
                raise WireError(BAD_MESSAGE, null_error)
            _check_ref(value, spec, path)

        return check_ref
    if kind == "string":
        top = spec.maximum
        length_error = f"{path} must be 1..{top} characters"
        allowed = frozenset(spec.enum) if spec.enum is not None else None
        enum_error = f"{path} must be one of {', '.join(spec.enum or ())}"
        # fullmatch: `$` alone would accept a final newline ("abc\n").
        match = re.compile(spec.pattern).fullmatch if spec.pattern is not None else None
        if spec.display:
            match = _is_clean_name
        pattern_error = f"{path} has characters not allowed"

        def check_string(value: Any) -> None:
            if value is None:
                if nullable:
                    return
                raise WireError(BAD_MESSAGE, null_error)
            if not isinstance(value, str):
                raise WireError(BAD_MESSAGE, type_error)
            if top is not None and not 1 <= len(value) <= top:
                raise WireError(BAD_MESSAGE, length_error)
            if allowed is not None and value not in allowed:
                raise WireError(BAD_MESSAGE, enum_error)
            if match is not None and not match(value):
                raise WireError(BAD_MESSAGE, pattern_error)

        return check_string
    if kind == "integer":
        low = spec.minimum if spec.minimum is not None else -(2**63)
        high = spec.maximum if spec.maximum is not None else 2**63
        range_error = f"{path} must be {low}..{high}"

        def check_integer(value: Any) -> None:
            if value is None:
                if nullable:
                    return
                raise WireError(BAD_MESSAGE, null_error)
            if not isinstance(value, int) or isinstance(value, bool):
                raise WireError(BAD_MESSAGE, type_error)
            if not low <= value <= high:
                raise WireError(BAD_MESSAGE, range_error)

        return check_integer
    if kind == "array":
        low = spec.minimum or 0
        high = spec.maximum if spec.maximum is not None else 1 << 30
        size_error = f"{path} must have {low}..{high} items"
        item = _compile(spec.items, f"{path}[]") if spec.items is not None else None

        def check_array(value: Any) -> None:
            if value is None:
                if nullable:
                    return
                raise WireError(BAD_MESSAGE, null_error)
            if not isinstance(value, list):
                raise WireError(BAD_MESSAGE, type_error)
            if not low <= len(value) <= high:
                raise WireError(BAD_MESSAGE, size_error)
            if item is not None:
                for element in value:
                    item(element)

        return check_array
    expected = _PY_TYPES[kind]
    fields = _compile_fields(spec.fields, path) if spec.fields is not None else None

    def check_other(value: Any) -> None:  # boolean, object
        if value is None:
            if nullable:
                return
            raise WireError(BAD_MESSAGE, null_error)
        if not isinstance(value, expected):
            raise WireError(BAD_MESSAGE, type_error)
        if fields is not None:
            fields(value)

    return check_other


def _compile_fields(
    specs: dict[str, Field], path: str, *, envelope: tuple[str, ...] = ()
) -> Checker:
    """Check an object's fields; ``envelope`` names keys checked elsewhere (``v``, ``type``)."""
    checkers = {key: _compile(spec, f"{path}.{key}") for key, spec in specs.items()}
    checkers.update(dict.fromkeys(envelope, _accept))
    required = [(key, f"{path}.{key} is missing") for key, spec in specs.items() if spec.required]

    def check(value: dict[str, Any]) -> None:
        for key, item in value.items():
            checker = checkers.get(key)
            if checker is None:
                raise WireError(BAD_MESSAGE, f"{path}.{key} is not a field of this message")
            checker(item)
        for key, error in required:
            if key not in value:
                raise WireError(BAD_MESSAGE, error)

    return check


def _accept(value: Any) -> None:
    return None


def _check_ref(value: Any, spec: Field, path: str) -> None:
    """Hand-written schemas are checked by the code that owns their meaning."""
    if spec.ref == "rules.schema.json":
        try:
            Rules.from_dict(value)
        except RulesConfigError as exc:
            raise WireError(BAD_RULES, str(exc)) from exc
    elif spec.ref == "action.schema.json":
        # A malformed action is `bad_action`, as the engine and docs/rules.md say (the
        # rest of a malformed message is `bad_message`): one code for one fault.
        try:
            action_from_dict(value)
        except RuleError as exc:
            raise WireError(exc.code, f"{path}: {exc.message}") from exc
        if any(isinstance(v, int) and not -(2**63) <= v < 2**63 for v in value.values()):
            raise WireError(BAD_ACTION, f"{path}: integers must fit in 64 bits")
    elif not isinstance(value, dict):
        raise WireError(BAD_MESSAGE, f"{path} must be object")


def validator(messages: dict[str, Message]) -> Callable[[Any], dict[str, Any]]:
    """A function that checks a decoded message against its declaration in ``messages``
    and returns it unchanged, or raises :class:`WireError` (with the routable fields)."""
    checks = {
        kind: _compile_fields(spec.fields, kind, envelope=("v", "type"))
        for kind, spec in messages.items()
    }

    def validate(message: Any) -> dict[str, Any]:
        if not isinstance(message, dict):
            raise WireError(BAD_MESSAGE, "a message must be a map")
        try:
            version = message.get("v")
            if version != PROTOCOL_VERSION or isinstance(version, bool):  # True == 1
                raise WireError(
                    UNSUPPORTED_VERSION, f"v must be {PROTOCOL_VERSION}, got {version!r}"
                )
            kind = message.get("type")
            check = checks.get(kind) if isinstance(kind, str) else None
            if check is None:
                raise WireError(BAD_MESSAGE, f"unknown message type {kind!r}")
            check(message)
        except Exception as exc:
            # Every malformed value is a typed error, whatever check it broke:
            # an entry must never take down the process that reads it.
            error = (
                exc
                if isinstance(exc, WireError)
                else WireError(BAD_MESSAGE, f"malformed message ({exc.__class__.__name__})")
            )
            error.known = {
                k: message[k]
                for k in ("id", "table", "gateway", "player", "seat")
                if k in message and _plausible(k, message[k])
            }
            if error is exc:
                raise
            raise error from exc
        return message

    return validate


validate = validator(MESSAGES)


# -- the fast path: msgspec's typed decoding, in C ------------------------------
#
# Checking a message field by field in Python cost more than decoding it (an `act`:
# 23 µs checked, 2 µs decoded, on the development machine), and every worker and
# gateway checks every message. So each declaration is also turned into a msgspec
# Struct that accepts exactly what its checker accepts; a message the Struct
# decoder accepts needs only the checks msgspec cannot express (rules, actions,
# display names: "residual", and display names, wherever they sit, by
# `_display_names`), run on the plainly decoded message. Anything the
# fast path does not accept goes through the checker above, which gives the error.
# tests/test_wire_fuzz.py holds the two to the same answers.


def _fast_type(spec: Field, name: str, clean_ascii: bool = False) -> Any:
    """The msgspec type that accepts exactly what ``spec``'s checker accepts, or None
    when some of that check is ours alone (refs, anything under them). A display name
    is typed as a string of its length here and whether it is clean asked after
    (:func:`_display_names`), so an object holding one is still decoded in C; or,
    with ``clean_ascii``, as a clean name of plain ASCII (a pattern msgspec checks),
    which is all that is left to ask (the names most messages carry)."""
    kind = spec.kind
    if kind == "ref" and spec.ref == "action.schema.json":
        return _FAST_ACTION | None if spec.nullable else _FAST_ACTION
    if kind == "ref":
        return None
    if kind == "string":
        if spec.enum is not None:
            base: Any = Literal[tuple(spec.enum)]  # type: ignore[valid-type]
        else:
            meta: dict[str, Any] = {}
            if spec.maximum is not None:
                meta.update(min_length=1, max_length=spec.maximum)
            if spec.display and clean_ascii:
                meta.update(min_length=1, max_length=min(spec.maximum or NAME_MAX, NAME_MAX))
                meta["pattern"] = _CLEAN_ASCII
            if spec.pattern is not None:
                # msgspec searches; the checker matches the whole string (`$` alone
                # would let a final newline through).
                meta["pattern"] = rf"\A(?:{spec.pattern})\Z"
            base = Annotated[str, msgspec.Meta(**meta)] if meta else str
    elif kind == "integer":
        low = spec.minimum if spec.minimum is not None else -(2**63)
        high = spec.maximum if spec.maximum is not None else 2**63 - 1  # msgspec: int64
        base = Annotated[int, msgspec.Meta(ge=low, le=high)]
    elif kind == "boolean":
        base = bool
    elif kind == "array":
        item = _fast_type(spec.items, name, clean_ascii) if spec.items is not None else Any
        if item is None:
            return None
        meta = {"min_length": spec.minimum or 0}
        if spec.maximum is not None:
            meta["max_length"] = spec.maximum
        base = Annotated[list[item], msgspec.Meta(**meta)]  # type: ignore[valid-type]
    elif kind == "object":
        if spec.fields is None:
            base = dict
        else:
            base = _fast_struct(spec.fields, name, tag=None, clean_ascii=clean_ascii)
            if base is None:
                return None
    else:
        return None
    return base | None if spec.nullable else base


# What action_from_dict accepts (and _check_ref's 64-bit bound): one Struct per kind.
_INT64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
_FAST_ACTION = Union[  # type: ignore[valid-type]  # noqa: UP007
    tuple(
        msgspec.defstruct(
            f"FastAction_{kind}",
            [(f, _INT64) for f in sorted(fields - {"type"})],
            tag_field="type",
            tag=kind,
            forbid_unknown_fields=True,
            kw_only=True,
        )
        for kind, fields in ACTION_FIELDS.items()
    )
]


def _fast_struct(
    specs: dict[str, Field],
    name: str,
    tag: str | None,
    residual: list[str] | None = None,
    clean_ascii: bool = False,
) -> Any:
    """A Struct for an object's fields (a message's when ``tag`` is its type), or None if
    a field cannot be expressed; for a message, such fields are typed Any instead, their
    keys added to ``residual``, and checked afterwards (:class:`FastValidator`)."""
    fields: list[Any] = []
    rename: dict[str, str] = {}
    for key, spec in specs.items():
        typed = _fast_type(spec, f"{name}_{key}", clean_ascii)
        if typed is None:
            if tag is None or residual is None:
                return None
            typed = Any
            residual.append(key)
        attr = key if key.isidentifier() and not keyword.iskeyword(key) else f"{key}_"
        if attr != key:
            rename[attr] = key
        if spec.required:
            fields.append((attr, typed))
        else:
            fields.append((attr, typed, msgspec.UNSET))
    if tag is not None:
        fields.append(("v", Literal[PROTOCOL_VERSION]))
    return msgspec.defstruct(
        f"FastAscii_{name}" if clean_ascii else f"Fast_{name}",
        fields,
        tag_field="type" if tag is not None else None,
        tag=tag if tag is not None else None,
        forbid_unknown_fields=True,
        rename=rename or None,
        kw_only=True,
    )


def _display_names(spec: Field) -> Callable[[Any], list[str]] | None:
    """A function listing every display name in a value of ``spec`` (one the fast
    decoder accepted, so of the declared shape), or None if it can hold none. Plain
    loops over lists: it runs for every entry holding names (a director: each report
    of a player moved)."""
    if spec.kind == "string" and spec.display:
        return lambda value: [value] if isinstance(value, str) else []
    if spec.kind == "array" and spec.items is not None:
        inner = _display_names(spec.items)
        if inner is None:
            return None
        return lambda value: [name for item in value or () for name in inner(item)]
    if spec.kind == "object" and spec.fields is not None:
        direct = [k for k, f in spec.fields.items() if f.kind == "string" and f.display]
        nested = [
            (k, walk)
            for k, f in spec.fields.items()
            if k not in direct and (walk := _display_names(f)) is not None
        ]
        if not direct and not nested:
            return None

        def names(value: Any) -> list[str]:
            if value is None:
                return []
            found = [value[k] for k in direct if isinstance(value.get(k), str)]
            for key, walk in nested:
                if key in value:
                    found.extend(walk(value[key]))
            return found

        return names
    return None


class FastValidator:
    """Decode and check messages of a set in one step: msgspec's typed decoders first,
    the field-by-field checker for what they refuse or cannot judge (same answers)."""

    def __init__(self, messages: dict[str, Message], check: Callable[[Any], dict[str, Any]]):
        self.check = check
        structs, ascii_structs = [], []
        self.residual: dict[str, list[tuple[str, Checker]]] = {}
        self.displays: dict[str, list[tuple[str, Callable[[Any], list[str]]]]] = {}
        for kind, spec in messages.items():
            residual: list[str] = []
            structs.append(_fast_struct(spec.fields, kind, tag=kind, residual=residual))
            ascii_structs.append(
                _fast_struct(spec.fields, kind, tag=kind, residual=[], clean_ascii=True)
            )
            self.residual[kind] = [
                (key, _compile(spec.fields[key], f"{kind}.{key}")) for key in residual
            ]
            self.displays[kind] = [
                (key, walk)
                for key, f in spec.fields.items()
                if key not in residual and (walk := _display_names(f)) is not None
            ]
        union = Union[tuple(structs)]  # type: ignore[valid-type]  # noqa: UP007
        clean = Union[tuple(ascii_structs)]  # type: ignore[valid-type]  # noqa: UP007
        self._msgpack = msgspec.msgpack.Decoder(union).decode
        self._msgpack_ascii = msgspec.msgpack.Decoder(clean).decode
        self._json = msgspec.json.Decoder(union).decode
        self._json_ascii = msgspec.json.Decoder(clean).decode
        self._plain_json = msgspec.json.Decoder().decode

    def msgpack(self, data: bytes) -> dict[str, Any]:
        """A msgpack message, checked (:class:`WireError` if it is not one of the set's)."""
        return self._decode(data, self._msgpack_ascii, self._msgpack, _DECODER.decode)

    def json(self, data: bytes) -> dict[str, Any]:
        """A JSON message, checked; :class:`msgspec.DecodeError` if it is not JSON."""
        return self._decode(data, self._json_ascii, self._json, self._plain_json)

    def _decode(
        self,
        data: bytes,
        typed_ascii: Callable[[bytes], Any],
        typed: Callable[[bytes], Any],
        plain: Callable[[bytes], Any],
    ) -> dict[str, Any]:
        # Names in clean plain ASCII (nearly always): msgspec has checked everything but
        # the residual fields. Otherwise the names are asked about one by one.
        names_checked = True
        try:
            typed_ascii(data)
        except (msgspec.ValidationError, msgspec.DecodeError):
            names_checked = False
            try:
                typed(data)
            except (msgspec.ValidationError, msgspec.DecodeError):
                return self.check(plain(data))  # the checker says what is wrong (or raises)
        message = plain(data)
        for key, residual in self.residual[message["type"]]:
            if key in message:
                try:
                    residual(message[key])
                except Exception:
                    return self.check(message)  # the same error, with what could be read
        if names_checked:
            return message
        for key, names in self.displays[message["type"]]:
            if key in message and not all(_is_clean_name(name) for name in names(message[key])):
                return self.check(message)
        return message


_fast = FastValidator(MESSAGES, validate)


def _plausible(key: str, value: Any) -> bool:
    """Is a field of a refused message safe to echo back (and to route the error by)?"""
    if key == "seat":
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 5
    pattern = MESSAGE_ID_RE if key == "id" else ID_RE
    return isinstance(value, str) and re.fullmatch(pattern, value) is not None


# -- codec ---------------------------------------------------------------------


# msgspec's msgpack codec (in C) does the byte work; the protocol is plain msgpack
# either way, and validation below is ours. Encoder and decoder objects are
# reused (msgspec's advice) and safe to share: a call never releases the GIL.
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder()


def encode(message: Any) -> bytes:
    """One message (or any plain data) as msgpack. Outgoing messages are built by
    our own code; the tests validate them, production does not pay for it."""
    return _ENCODER.encode(message)


def unpack(data: bytes) -> Any:
    """Msgpack bytes our own code wrote (records) back to plain data, unvalidated."""
    return _DECODER.decode(data)


# The message types that travel each way (wire_spec's directions).
_TYPES_OF = {
    "in": INBOX_TYPES,
    "out": OUTBOX_TYPES,
    "director": DIRECTOR_TYPES,
    "ratings": RATINGS_TYPES,
}


def decode(data: bytes, *, direction: str = "in") -> dict[str, Any]:
    """Bytes from a stream entry to a validated message, or :class:`WireError`."""
    # A tournament's result names every entrant: only our own tables and directors
    # write the ratings inbox, so its cap is larger.
    cap = MAX_RESULT_BYTES if direction == "ratings" else MAX_INBOUND_BYTES
    if len(data) > cap:
        raise WireError(TOO_LARGE, f"a message may be at most {cap} bytes")
    try:
        # The size cap above bounds every string, array and map inside.
        message = _fast.msgpack(data)
    except WireError:
        raise
    except Exception as exc:  # malformed, truncated, trailing bytes, nested too deep
        raise WireError(BAD_MESSAGE, f"not a msgpack message: {exc.__class__.__name__}") from exc
    wanted = _TYPES_OF[direction]
    if message["type"] not in wanted:
        raise WireError(BAD_MESSAGE, f"{message['type']} does not travel this way", {})
    return message


# Every message type's required fields, and those of them that are strings (the top
# level only: what decode_own asks for; an id a worker routes by is one of them).
_REQUIRED = {
    kind: frozenset(key for key, spec in m.fields.items() if spec.required)
    for kind, m in MESSAGES.items()
}
_REQUIRED_STRINGS = {
    kind: tuple(
        key
        for key, spec in m.fields.items()
        if spec.required and spec.kind == "string" and not spec.nullable
    )
    for kind, m in MESSAGES.items()
}


class TableReport(msgspec.Struct):
    """One table's report as a director takes it (an item of `reports`, the fields of a
    `report`). ``seated`` stays the msgpack its table wrote: the director stores it in
    the table's row as it is and reads it only for the standings it shows, so a
    report's ``[player, dice]`` pairs are neither decoded nor encoded again (a fifth
    of a 10,000-player director's own work, docs/tournaments.md)."""

    table: str
    version: int
    round: int
    seated: msgspec.Raw
    done: int
    left: list[dict[str, Any]]
    joined: list[str]
    out: list[str]

    @classmethod
    def of(cls, fields: dict[str, Any]) -> TableReport:
        """From a checked message's plain data (a `report`, or a `reports` item)."""
        return cls(
            fields["table"],
            fields["version"],
            fields["round"],
            msgspec.Raw(encode(fields["seated"])),
            fields["done"],
            fields["left"],
            fields["joined"],
            fields["out"],
        )

    @property
    def seated_count(self) -> int:
        """How many players ``seated`` names (read from the array's header)."""
        first = memoryview(self.seated)[0]
        if 0x90 <= first <= 0x9F:  # a fixarray: up to 15 (a table seats at most 6)
            return first & 0x0F
        return len(unpack(self.seated))


class _OwnReports(msgspec.Struct, tag_field="type", tag="reports"):
    v: int
    id: str
    tournament: str
    reports: Annotated[list[TableReport], msgspec.Meta(min_length=1)]


_own_reports = msgspec.msgpack.Decoder(_OwnReports).decode


def decode_own(data: bytes, *, direction: str = "in") -> dict[str, Any]:
    """An entry one of our own processes wrote (signed with the deployment's key,
    :mod:`dudo.signing`) to a message: its shape is checked at the top only (a type
    that travels this way, every field that type requires, its required strings
    strings), not field by field. Our code builds such messages from messages
    already checked, and the tests validate every message our code writes (as for
    :func:`encode`); checking them again was half a director's decoding
    (docs/tournaments.md). A director's `reports` come with their items as
    :class:`TableReport`. Anything else is left to :func:`decode`, which says what
    is wrong (:class:`WireError`)."""
    cap = MAX_RESULT_BYTES if direction == "ratings" else MAX_INBOUND_BYTES
    if len(data) > cap:
        return decode(data, direction=direction)
    if direction == "director":
        # Most of a director's entries: their reports as TableReport (seated raw).
        try:
            own = _own_reports(data)
        except (msgspec.ValidationError, msgspec.DecodeError):
            pass
        else:
            if own.v == PROTOCOL_VERSION:
                return {"v": own.v, "type": "reports", "id": own.id,
                        "tournament": own.tournament, "reports": own.reports}  # fmt: skip
    try:
        message = _DECODER.decode(data)
    except Exception:
        message = None
    if isinstance(message, dict):
        kind = message.get("type")
        if (
            isinstance(kind, str)
            and kind in _TYPES_OF[direction]
            and message.get("v") == PROTOCOL_VERSION
            and not isinstance(message.get("v"), bool)
            and _REQUIRED[kind] <= message.keys()
            and all(isinstance(message[key], str) for key in _REQUIRED_STRINGS[kind])
        ):
            return message
    return decode(data, direction=direction)


def pack_batch(encoded: list[bytes]) -> bytes:
    """A msgpack array of already-encoded messages, without decoding them again."""
    n = len(encoded)
    if n < 16:
        header = bytes((0x90 | n,))
    elif n < 0x10000:
        header = b"\xdc" + n.to_bytes(2, "big")
    else:
        header = b"\xdd" + n.to_bytes(4, "big")
    return header + b"".join(encoded)


def unpack_batch(data: bytes) -> list[dict[str, Any]]:
    """The messages of one outbox entry."""
    batch = _DECODER.decode(data)
    if not isinstance(batch, list):
        raise WireError(BAD_MESSAGE, "an outbox entry holds an array of messages")
    return batch


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


def message(kind: str, **fields: Any) -> dict[str, Any]:
    """A message dict with ``v`` and ``type`` filled in."""
    return {"v": PROTOCOL_VERSION, "type": kind, **fields}


# -- JSON Schemas ------------------------------------------------------------------

SCHEMA_BASE = "https://dudo.example/protocol/schemas/"
_ARROWS = {
    "in": "gateway → worker",
    "out": "worker → gateway",
    "director": "gateway or table → director",
    "ratings": "table or director → ratings",
    "ws-in": "client → gateway",
    "ws-out": "gateway → client",
}


def _schema(spec: Field) -> dict[str, Any]:
    if spec.kind == "ref":
        out: dict[str, Any] = {"$ref": spec.ref}
    else:
        out = {"type": spec.kind}
        if spec.kind == "string":
            if spec.maximum is not None:
                out.update(minLength=1, maxLength=spec.maximum)
            if spec.pattern is not None:
                out["pattern"] = spec.pattern
            if spec.enum is not None:
                out = {"enum": list(spec.enum)}
        elif spec.kind == "integer":
            if spec.minimum is not None:
                out["minimum"] = spec.minimum
            if spec.maximum is not None:
                out["maximum"] = spec.maximum
        elif spec.kind == "array":
            if spec.minimum is not None:
                out["minItems"] = spec.minimum
            if spec.maximum is not None:
                out["maxItems"] = spec.maximum
            if spec.items is not None:
                out["items"] = _schema(spec.items)
        elif spec.kind == "object" and spec.fields is not None:
            out.update(_object(spec.fields))
    if spec.doc:
        out["description"] = spec.doc
    if spec.nullable:
        out = {"anyOf": [out, {"type": "null"}]}
    return out


def _object(specs: dict[str, Field]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": [k for k, s in specs.items() if s.required],
        "properties": {k: _schema(s) for k, s in specs.items()},
        "additionalProperties": False,
    }


def json_schemas(messages: dict[str, Message] | None = None) -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema for every message of a set (default: the stream protocol)."""
    out: dict[str, dict[str, Any]] = {}
    for kind, msg in (MESSAGES if messages is None else messages).items():
        name = f"{msg.direction}-{kind}.schema.json"
        body = _object(msg.fields)
        body["properties"] = {
            "v": {"const": PROTOCOL_VERSION, "description": "protocol version"},
            "type": {"const": kind},
            **body["properties"],
        }
        body["required"] = ["v", "type", *body["required"]]
        out[name] = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": SCHEMA_BASE + name,
            "title": f"{kind} ({_ARROWS[msg.direction]})",
            "description": msg.doc,
            **body,
        }
    return out


def sync_schema_files(
    schemas: dict[str, dict[str, Any]], folder: Path, *, write: bool
) -> list[str]:
    """Write the schema files, or (``write`` False) list those that are missing or stale."""
    stale = []
    for name, schema in schemas.items():
        text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
        path = folder / name
        if write:
            path.write_text(text, encoding="utf-8")
        elif not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    return stale
