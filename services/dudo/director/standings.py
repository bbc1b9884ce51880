"""Who is where, and who finished where: the standings a tournament shows (plain data).

Players are shown by display name and public handle (:func:`dudo.wire.public_id`),
never by player id: a player id is what a gateway names to act for a seat.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection
from operator import attrgetter
from typing import Any

import msgspec

from .. import wire

STREAMED_PLACES = 100  # a streamed `tournament` message carries the best 100 places
# ... and the players of the first 50 tables: it goes to every entrant's connection
# every second, and 1,667 tables of 10,000 players made it 400 kB (HTTP has them all).
STREAMED_TABLES = 50


class Entrant(msgspec.Struct, array_like=True):
    """One player of a tournament, as its director keeps them.

    Each entrant is stored as a row of its own (a field of the record's hash), and a
    batch writes only the rows that changed, not 10,000 of them: whoever changes an
    entrant says so (:meth:`Tournament.touch`). Plain attributes, no tracking hook: a
    ``__setattr__`` hook ran for every field of every entrant made or changed, a
    visible share of a large director's CPU
    (docs/benchmarks.md, "Measurements behind the code").
    A msgspec Struct encoded as an array: its row is
    ``wire.encode(entrant)``, ``[player, name, gateway, bot, dice, table, place,
    paid, won, number, rating, rating_change, late, seeds]``, with no list made first
    (a row written before ratings were kept has the first ten, one written before late
    entries were marked the first twelve, one before seeds the first thirteen: the rest
    take their defaults).
    """

    player: str
    name: str
    gateway: str | None
    bot: str | None
    # Dice when they last sat down, left a table or went out (0 once out, or before the
    # start); a seated player's dice now are their table's last report's (the
    # tournament's ``seated_at``, stored in the table's row): most reports change only
    # dice, and then no entrant changes.
    dice: int = 0
    table: str | None = None  # where they sit or are going; None: nowhere (out, waiting)
    place: int | None = None
    paid: int = 0  # the buy-in they paid
    won: int = 0  # chips won
    number: int = 0  # in the order they registered (bots after the people)
    # Once the tournament is over and rated (the ratings keeper's `rated`): the
    # leaderboard's ordinal after it, and how far it moved. None: a bot, or not yet.
    rating: float | None = None
    rating_change: float | None = None
    late: bool = False  # registered after the start (late registration)
    # Their client brings a seed of its own to each table (`register.seeds`): a table
    # made with them asks their seat for a commitment (dudo.table.seeds).
    seeds: bool = False

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
    tables_limit: int | None = STREAMED_TABLES,
    handles: dict[str, str] | None = None,
    seated: dict[str, msgspec.Raw] | None = None,
    kicked: Collection[str] = (),
) -> dict[str, Any]:
    """The standings object (protocol/schemas/standings.schema.json).

    ``summary`` holds the tournament's own fields (name, format, status, seats,
    heat, buy_in, pool, payouts, start_players, start_at). ``tables`` in the order
    they opened; the players of the first ``tables_limit`` that have any are shown,
    with their dice as their table last reported them (``seated``: table -> [player,
    dice]), or, for a player on their way, as they left."""
    handles = {} if handles is None else handles
    # Comprehensions, not one loop with appends: streamed every second for 10,000.
    everyone = entrants.values()
    placed = [e for e in everyone if e.place is not None]
    playing = [e for e in everyone if e.place is None and e.dice > 0]
    occupied = {e.table for e in playing}
    live = [table for table in tables if table in occupied]
    at: dict[str | None, list[dict[str, Any]]] = {
        table: [] for table in (live if tables_limit is None else live[:tables_limit])
    }
    seated = seated or {}
    reported = {  # the pairs kept as the msgpack of each table's report: shown ones only
        player: dice
        for table in at
        if table in seated
        for player, dice in wire.unpack(seated[table])
    }
    for entrant in [e for e in playing if e.table in at]:
        dice = reported.get(entrant.player, entrant.dice)
        at[entrant.table].append({**entrant.shown(handles), "dice": dice})
    if places_limit is None:
        shown = sorted(placed, key=_PLACE)
    else:
        shown = heapq.nsmallest(places_limit, placed, key=_PLACE)
    return {
        **summary,
        "entrants": len(entrants),
        "left": len(playing),
        "tables": [{"table": t, "players": players} for t, players in at.items()],
        "tables_playing": len(live),
        "moving": moving,
        "places": [_place(e, handles, e.player in kicked) for e in shown],
        "placed": len(placed),
        # Before the start, who registered (in that order; the best 100 places' cap when
        # streamed): the organizer's list, and every entrant's "who else is in".
        "registered": [
            e.shown(handles) for e in (everyone if summary.get("status") == "registering" else ())
        ][:places_limit],
    }


_PLACE = attrgetter("place")


def _place(entrant: Entrant, handles: dict[str, str], kicked: bool = False) -> dict[str, Any]:
    """One place given: who, the chips won and, once rated, the rating change; marked
    when a bot holds it, the player registered after the start (``late``), or the host
    took the player out (``kicked``: not beaten at a table, and not rated for it)."""
    shown = {"place": entrant.place, **entrant.shown(handles), "chips": entrant.won}
    if entrant.bot is not None:
        shown["bot"] = True
    if entrant.late:
        shown["late"] = True
    if kicked:
        shown["kicked"] = True
    if entrant.rating is not None:
        shown["rating"] = entrant.rating
        shown["rating_change"] = entrant.rating_change
    return shown
