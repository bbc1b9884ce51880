"""Msgpack in and out (msgspec, in C): the byte work under every codec of the protocol."""

from __future__ import annotations

from typing import Any

import msgspec

# msgspec's msgpack codec (in C) does the byte work; the protocol is plain msgpack
# either way, and validation below is ours. Encoder and decoder objects are
# reused (msgspec's advice) and safe to share: a call never releases the GIL.
ENCODER = msgspec.msgpack.Encoder()
DECODER = msgspec.msgpack.Decoder()


def encode(message: Any) -> bytes:
    """One message (or any plain data) as msgpack. Outgoing messages are built by
    our own code; the tests validate them, production does not pay for it."""
    return ENCODER.encode(message)


def unpack(data: bytes) -> Any:
    """Msgpack bytes our own code wrote (records) back to plain data, unvalidated."""
    return DECODER.decode(data)
