"""A table's record as Redis keeps it: its format's number, and how a record written
by an older version is read (each field it lacks takes the value that means "as before").

The fields themselves are listed once, in :meth:`dudo.table.Table.to_bytes` and
:meth:`~dudo.table.Table.from_bytes`; this module only knows their history.
"""

from __future__ import annotations

from typing import Any

# 2 added `wake`, 3 the tournament fields, 4 `hold_until`, 5 `idle` and `label`, 6 the
# game's `log`, `round_bids`, `rematch` and `reacted`, 7 `app`, 8 the seeds (the server
# seed, until when it waits for the seats', what was dealt; each seat's commitment and
# seed); older records are still read
FORMAT = 8


def upgraded(raw: Any) -> list[Any]:
    """An unpacked record in today's layout (ValueError: not a table record)."""
    if not isinstance(raw, list) or not raw or raw[0] not in range(1, FORMAT + 1):
        raise ValueError("unknown table record format")
    if raw[0] == 1:  # before `wake`: the turn deadline was the only timer
        raw = [*raw, raw[11]]
    if raw[0] < 3:  # before tournaments
        raw = [*raw, tournament_fields([])]
    if raw[0] < 4:  # before the reveal's hold
        raw = [*raw, None]
    if raw[0] < 5:  # before the idle policy and labels
        raw = [*raw, [], None]
    if raw[0] < 6:  # before the game's log: its history starts now
        raw = [*raw, [], [], None, []]
    if raw[0] < 7:  # before apps were told apart in the lobby
        raw = [*raw, None]
    if raw[0] < 8:  # before seeds: its game deals as it always did
        raw = [*raw, None, None, None]
    return raw


def tournament_fields(stored: list[Any]) -> list[Any]:
    """A tournament table's fields as its record lists them, [tournament, director,
    advance, order, order_done, seat_seq, arrivals, pause_seq, paused, forfeits,
    history, asked, first_counts, redealt]: a record written before some of them has
    fewer (7 before the organizer's pause, 10 before the history, 11 before seeds were
    asked of entrants, 13 before arrivals were dealt from new seeds), the rest take their
    defaults (fresh lists)."""
    defaults = [None, 0, None, None, 0, 0, [], 0, 0, [], [], [], None, []]
    return [*stored, *defaults[len(stored) :]]
