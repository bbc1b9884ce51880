"""The codec of the stream protocol: bytes of a stream entry to a checked message
(:func:`decode`; :func:`decode_own` for what our own processes signed), messages to
bytes (:func:`message`, :func:`pack_batch`), and a table's reports read in C."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from .errors import BAD_MESSAGE, TOO_LARGE, WireError
from .fast import fast_check
from .packing import DECODER, encode, unpack
from .spec import (
    DIRECTOR_TYPES,
    INBOX_TYPES,
    MAX_INBOUND_BYTES,
    MAX_RESULT_BYTES,
    MESSAGES,
    OUTBOX_TYPES,
    PROTOCOL_VERSION,
    RATINGS_TYPES,
)

# The message types that travel each way (the declarations' directions).
TYPES_OF = {
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
        message = fast_check.msgpack(data)
    except WireError:
        raise
    except Exception as exc:  # malformed, truncated, trailing bytes, nested too deep
        raise WireError(BAD_MESSAGE, f"not a msgpack message: {exc.__class__.__name__}") from exc
    wanted = TYPES_OF[direction]
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
    :mod:`dudo.wire.signing`) to a message: its shape is checked at the top only (a type
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
        message = DECODER.decode(data)
    except Exception:
        message = None
    if isinstance(message, dict):
        kind = message.get("type")
        if (
            isinstance(kind, str)
            and kind in TYPES_OF[direction]
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
    batch = DECODER.decode(data)
    if not isinstance(batch, list):
        raise WireError(BAD_MESSAGE, "an outbox entry holds an array of messages")
    return batch


# Fields of a stream `view` for the gateway alone: `holders` (player ids, to route each
# private part) and `applied` (the gateway's act ids, which hold player ids). No client
# ever sees them.


def message(kind: str, **fields: Any) -> dict[str, Any]:
    """A message dict with ``v`` and ``type`` filled in."""
    return {"v": PROTOCOL_VERSION, "type": kind, **fields}
