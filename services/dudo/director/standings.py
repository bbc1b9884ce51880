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
    # This entrant's row in the record, encoded once and kept until a field changes:
    # the record (every entrant) is written after every batch of reports, and most
    # entrants do not change between two batches.
    _raw: msgspec.Raw | None = field(default=None, compare=False, repr=False)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name != "_raw":
            object.__setattr__(self, "_raw", None)

    def raw(self) -> msgspec.Raw:
        """The encoded row, spliced as it is into the record (msgspec.Raw)."""
        if self._raw is None:
            object.__setattr__(self, "_raw", msgspec.Raw(wire.encode(self.row())))
        assert self._raw is not None
        return self._raw

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
