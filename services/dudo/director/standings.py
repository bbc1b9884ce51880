"""Who is where, and who finished where: the standings a tournament shows (plain data).

Players are shown by display name and public handle (:func:`dudo.wire.public_id`),
never by player id: a player id is what a gateway names to act for a seat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from .. import wire

STREAMED_PLACES = 100  # a streamed `tournament` message carries the best 100 places


@dataclass
class Entrant:
    """One player of a tournament, as its director keeps them."""

    player: str
    name: str
    gateway: str | None
    bot: str | None
    dice: int = 0  # dice now (0 once out, or before the start)
    table: str | None = None  # where they sit or are going; None: nowhere (out, waiting)
    place: int | None = None
    paid: int = 0  # the buy-in they paid
    won: int = 0  # chips won
    # Where this entrant's row sits in its tournament's record (see EntrantRows): a
    # change to any field marks that chunk of rows to encode again.
    _rows: EntrantRows | None = field(default=None, compare=False, repr=False)
    _index: int = field(default=0, compare=False, repr=False)
    _raw: msgspec.Raw | None = field(default=None, compare=False, repr=False)

    def __setattr__(self, name: str, value: Any) -> None:
        if name[0] != "_" and self.__dict__.get(name) != value:
            # Reports repeat much that did not change: that costs nothing.
            self.__dict__["_raw"] = None
            rows = self.__dict__.get("_rows")
            if rows is not None:
                rows.changed(self._index)
        object.__setattr__(self, name, value)

    def raw(self) -> msgspec.Raw:
        """This entrant's row, encoded once until a field changes."""
        raw = self.__dict__.get("_raw")
        if raw is None:
            raw = self.__dict__["_raw"] = msgspec.Raw(wire.encode(self.row()))
        return raw

    def row(self) -> list[Any]:
        return [
            self.player,
            self.name,
            self.gateway,
            self.bot,
            self.dice,
            self.table,
            self.place,
            self.paid,
            self.won,
        ]

    @classmethod
    def from_row(cls, row: list[Any]) -> Entrant:
        return cls(*row)

    def shown(self, handles: dict[str, str]) -> dict[str, Any]:
        """Name and public handle (``handles`` caches the one-way hashes: a standings
        object is built after every change, for thousands of entrants)."""
        handle = handles.get(self.player)
        if handle is None:
            handle = handles[self.player] = wire.public_id(self.player)
        return {"name": self.name, "handle": handle}


class EntrantRows:
    """Every entrant's row, encoded in chunks of ``CHUNK`` that are kept until one of
    their entrants changes (a chunk is then rebuilt from its rows, each encoded once
    until it changes): the record (every entrant) is written after every batch of
    reports, and between two batches most entrants do not change (10,000 rows
    encoded afresh were half of a director's time)."""

    CHUNK = 64

    def __init__(self) -> None:
        self._chunks: list[msgspec.Raw | None] = []
        self._count = -1

    def changed(self, index: int) -> None:
        chunk = index // self.CHUNK
        if chunk < len(self._chunks):
            self._chunks[chunk] = None

    def encoded(self, entrants: dict[str, Entrant], *, stable: bool) -> list[msgspec.Raw]:
        """The chunks (each a msgpack array of rows), in the entrants' order. ``stable``:
        nobody came or went since the last call but those counted (after the start;
        during registration entrants come and go, and every call numbers them anew)."""
        people = list(entrants.values())
        if not stable or len(people) != self._count:  # number them again
            self._count = len(people)
            self._chunks = [None] * -(-len(people) // self.CHUNK)
            for i, entrant in enumerate(people):
                object.__setattr__(entrant, "_rows", self)
                object.__setattr__(entrant, "_index", i)
        out = []
        for c, chunk in enumerate(self._chunks):
            if chunk is None:
                rows = [e.raw() for e in people[c * self.CHUNK : (c + 1) * self.CHUNK]]
                chunk = self._chunks[c] = msgspec.Raw(wire.encode(rows))
            out.append(chunk)
        return out


def standings(
    summary: dict[str, Any],
    entrants: dict[str, Entrant],
    tables: list[str],
    moving: int,
    *,
    places_limit: int | None = STREAMED_PLACES,
    handles: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The standings object (protocol/schemas/standings.schema.json).

    ``summary`` holds the tournament's own fields (name, format, status, seats,
    heat, buy_in, pool, payouts, start_players, start_at)."""
    handles = {} if handles is None else handles
    at: dict[str, list[dict[str, Any]]] = {table: [] for table in tables}
    left = 0
    placed: list[Entrant] = []
    for entrant in entrants.values():
        if entrant.place is not None:
            placed.append(entrant)
            continue
        if entrant.dice > 0:
            left += 1
        if entrant.table in at and entrant.dice > 0:
            at[entrant.table].append({**entrant.shown(handles), "dice": entrant.dice})
    placed.sort(key=lambda e: e.place or 0)
    shown = placed if places_limit is None else placed[:places_limit]
    return {
        **summary,
        "entrants": len(entrants),
        "left": left,
        "tables": [{"table": t, "players": players} for t, players in at.items() if players],
        "moving": moving,
        "places": [{"place": e.place, **e.shown(handles), "chips": e.won} for e in shown],
        "placed": len(placed),
    }
