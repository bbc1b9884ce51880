"""A game's log as the table keeps it: each ended round packed, as its record stores it.

The table appends a round at each reveal and writes its record at every commit; the
rounds are read as dicts only for the views of a finished game (`game.log`). Kept
packed, a commit does not pack the whole log again, nor a load unpack it (and hash every
seed) before anyone asks (docs/benchmarks.md, "Measurements behind the code")."""

from __future__ import annotations

from typing import Any

from ..engine import commitment

# A logged round: its fields in this order, without their names, and the seed as bytes,
# with no commitment (the seed's hash: computed again when read): a third of the size of
# the same rounds as dicts.
_ROUND = ("round", "palifico", "call", "caller", "bid", "dice", "count", "loser", "gainer",
          "seed", "bids", "names")  # fmt: skip


def packed_round(ended: dict[str, Any], bids: list[list[int]], names: list[Any]) -> list[Any]:
    """A round from its ``reveal`` event (without or with its type), its bids and the
    seats' names then."""
    seed = ended["seed"]
    return [*(ended[key] for key in _ROUND[:-3]), bytes.fromhex(seed) if seed else None,
            bids, names]  # fmt: skip


def unpacked_round(packed: list[Any]) -> dict[str, Any]:
    """The round as the views give it: its reveal as `last_round` has it, with `bids`
    and `names`."""
    *fields, seed, bids, names = packed
    return {
        **dict(zip(_ROUND[:-3], fields, strict=True)),
        "seed": seed.hex() if seed is not None else None,
        "commitment": commitment(seed) if seed is not None else None,  # as the reveal had
        "bids": bids,
        "names": names,
    }


_CALL, _CALLER, _LOSER = (_ROUND.index(name) for name in ("call", "caller", "loser"))


def calls_by_seat(rounds: list[list[Any]], seats: int) -> list[list[int]]:
    """Each seat's [Dudo calls, of them right, Calza calls, of them right] over the
    logged rounds: a Dudo is right when the bidder loses the die, a Calza when the count
    was exact (nobody loses one). For a player's statistics, at the game's end."""
    counts = [[0, 0, 0, 0] for _ in range(seats)]
    for packed in rounds:
        caller, loser = packed[_CALLER], packed[_LOSER]
        if not isinstance(caller, int) or not 0 <= caller < seats:
            continue
        row = counts[caller]
        if packed[_CALL] == "dudo":
            row[0] += 1
            row[1] += loser != caller
        else:
            row[2] += 1
            row[3] += loser is None
    return counts
