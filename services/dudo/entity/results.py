"""What finished games and tournaments send to the ratings keeper: places and chips.

Tables and tournaments append these to the ratings inbox with the commit that
makes them (``Flush`` sends); :mod:`dudo.director.ratings` applies each once.

- ``result``: people from first to last place, for the ratings (rated from two
  people up), and a table's tally of each person's game (``tallies``: won or not,
  and their calls; the statistics kept for identity users). Bots' seats are left out. A tournament's
  is answered with ``rated`` messages to its director: each entrant's rating
  before and after, which its results show.
- ``ledger``: chips moving between accounts, double entry (the amounts add up to
  0): a player id, ``pool:<tournament>`` (a tournament's prize pool), or
  :data:`HOUSE` (every bot). So the sum over all accounts is always 0, and a
  player's balance is what they won minus what they paid.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from .. import wire
from ..wire import keys

HOUSE = "house"


def account_of(player: str, bot: str | None) -> str:
    """The account a seat's chips go to or come from (every bot shares the house's)."""
    return HOUSE if bot is not None else player


def pool_of(tournament: str) -> str:
    return f"pool:{tournament}"


def message_id(prefix: str, *parts: str | int) -> str:
    """``prefix:part:part``, or ``prefix.<digest>`` when that would pass 64 characters."""
    full = ":".join([prefix, *map(str, parts)])
    if len(full) <= 64:
        return full
    digest = hashlib.sha256(full.encode()).digest()
    return f"{prefix}." + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def result_send(
    kind: str, entity: str, ranking: list[list[str]], tallies: list[list[Any]] | None = None
) -> list[tuple[str, bytes]]:
    """The ``result`` entry for the ratings inbox, as Flush sends. ``ranking``: [player,
    name] from first to last place; ``tallies``: a table's [player, won (1 or 0), Dudo
    calls, right, Calza calls, right] per person. None for fewer than two people unless
    there is a tally (one person's game against bots counts in their statistics,
    unrated). A table or a tournament ends once: its id makes the result's."""
    if len(ranking) < 2 and not tallies:
        return []
    body = wire.message(
        "result",
        id=message_id("rt" if kind == "table" else "rc", entity),
        ratings=keys.RATINGS_ID,
        source=kind,
        ranking=ranking,
    )
    if tallies:
        body["tallies"] = tallies
    if kind == "tournament":  # answered with its entrants' rating changes (`rated`)
        body["tournament"] = entity
    return [(keys.RATINGS.inbox(0), wire.encode(body))]


def ledger_send(ledger_id: str, transfers: list[list[str | int]]) -> list[tuple[str, bytes]]:
    """A ``ledger`` entry for the ratings inbox (none when nothing moves). Transfers to
    the same account are added up; they must add up to 0."""
    totals: dict[str, int] = {}
    for account, chips in transfers:
        totals[str(account)] = totals.get(str(account), 0) + int(chips)
    moves = [[account, chips] for account, chips in totals.items() if chips]
    if not moves:
        return []
    if sum(chips for _, chips in moves) != 0:
        raise ValueError(f"chips must add up to 0: {moves}")
    body = wire.message("ledger", id=ledger_id, ratings=keys.RATINGS_ID, transfers=moves)
    return [(keys.RATINGS.inbox(0), wire.encode(body))]
