"""The JSON a client gets for a table view, built from pieces encoded once.

A seat's snapshot is the view's wrapper, ``seat``, and ``game`` = the public part
merged with that seat's private part (their keys never overlap); a spectator's
has ``seat`` null inside and out. So the text is spliced from three pieces: the
wrapper without its closing brace (``head``), the public object without its
closing brace (``public``), and each private object without its opening brace.
Equal, byte for byte, to encoding :func:`dudo.wire.seat_snapshot` or
:func:`dudo.wire.spectator_view` (tests/e2e/test_gateway.py).

Two places splice: a gateway that receives stream ``view`` messages encodes the
pieces itself (:meth:`SnapshotTexts.of_view`); a worker delivering to a gateway
that takes ``frames`` encodes them once and sends them as they are
(:func:`frames_message`), and that gateway only splices (:meth:`SnapshotTexts.of_frames`).
Plain data in, bytes out: no I/O here.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .codec import message
from .views import GATEWAY_ONLY

encode_json = msgspec.json.Encoder().encode  # compact JSON, UTF-8, as bytes


def _head(view: dict[str, Any]) -> bytes:
    # Not `seats`, `holders` nor `applied`: inside the gateway only (GATEWAY_ONLY).
    wrapper = {k: v for k, v in view.items() if k != "game" and k not in GATEWAY_ONLY}
    return encode_json(wrapper)[:-1]


class SnapshotTexts:
    """The client JSON of one view: every seat's snapshot and the spectator's."""

    __slots__ = ("head", "public")

    def __init__(self, head: bytes, public: bytes | None) -> None:
        self.head, self.public = head, public

    @classmethod
    def of_view(cls, view: dict[str, Any]) -> SnapshotTexts:
        """From a stream ``view`` message: the shared parts encoded once."""
        return cls(_head(view), public_piece(view["game"]))

    @classmethod
    def of_frames(cls, frames: dict[str, Any]) -> SnapshotTexts:
        """From a stream ``frames`` message: its pieces, as the worker encoded them."""
        public = frames["public"]
        return cls(frames["head"].encode(), public.encode() if public is not None else None)

    def seat(self, private: dict[str, Any]) -> bytes:
        """The snapshot of the seat whose private part this is."""
        return self.seat_text(private["seat"], _private_piece(private))

    def seat_text(self, seat: int, private: bytes) -> bytes:
        """The same, from the private part already encoded without its opening brace."""
        if self.public is None:
            return b'%b,"seat":%d,"game":null}' % (self.head, seat)
        return b'%b,"seat":%d,"game":%b,%b}' % (self.head, seat, self.public, private)

    def spectator(self) -> bytes:
        if self.public is None:
            return b'%b,"seat":null,"game":null}' % self.head
        return b'%b,"seat":null,"game":%b,"seat":null}}' % (self.head, self.public)


def frames_message(view: dict[str, Any], public: bytes | None = None) -> dict[str, Any]:
    """A stream ``view`` message as the ``frames`` message that replaces it for a gateway
    that takes client JSON: the same routing fields, and the text pieces instead of the
    game (``public``: the public part's piece when the caller encoded it already, as
    a table does once for every gateway it delivers to)."""
    if public is None:
        public = public_piece(view["game"])
    frames = message(
        "frames",
        table=view["table"],
        version=view["version"],
        status=view["status"],
        seats=[private["seat"] for private in view["seats"]],
        holders=view["holders"],
        head=_head(view).decode(),
        public=public.decode() if public is not None else None,
        privates=[_private_piece(private).decode() for private in view["seats"]],
    )
    if "applied" in view:
        frames["applied"] = view["applied"]
    return frames


def public_piece(game: dict[str, Any] | None) -> bytes | None:
    """The public part's piece: its JSON without the closing brace (None: no game)."""
    return encode_json(game)[:-1] if game is not None else None


def _private_piece(private: dict[str, Any]) -> bytes:
    """A seat's private part's piece: its JSON without the opening brace."""
    return encode_json(private)[1:]
