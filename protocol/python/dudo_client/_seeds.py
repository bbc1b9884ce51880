"""Seeds of your own for the dice (docs/rules.md, "Seeds from everyone"): made here by
default, committed to when you sit, revealed when the table asks.

:class:`~dudo_client.DudoApi` makes a seed for every seat it takes (unless you give one,
or a ``seed_commitment`` of your own), sends its commitment with the create, join or
quick play, and remembers the seed under the seat's token in this process;
:class:`~dudo_client.DudoConnection` opened with that token reveals it when its table's
view shows ``seeds.until``. The seed never leaves this process before then: the server
sees only its hash until every seat's is fixed.

At a tournament's table the director seats you, so nobody commits sitting down: a
registration says your client brings seeds (``register``'s ``seeds``, sent by default),
and when a table is made with you its views list your seat in ``seeds.asked``. The
connection then makes a seed for that table, sends its commitment (``commit_seed``),
and reveals it when the table asks (``seeds.until``), as above. When someone arrives
there later, the table asks again for the round it holds (``seeds.round``): a new seed
is made for each ask (one the server has seen before would let it know the dice).
"""

from __future__ import annotations

import hashlib
import secrets
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

_KEPT = 1024  # seeds remembered by token in this process (the oldest forgotten first)
_seeds: OrderedDict[str, str] = OrderedDict()


def make_seed() -> str:
    """A fresh seed: 128 random bits, as 32 hex digits."""
    return secrets.token_hex(16)


def seed_commitment(seed: str) -> str:
    """What you send when you sit: lowercase hex of SHA-256("dudo-client/2:" + seed)."""
    if not 1 <= len(seed.encode("utf-8")) <= 64:
        raise ValueError("a seed is 1 to 64 bytes of UTF-8")
    return committed(seed)


def committed(seed: str) -> str:
    """SHA-256("dudo-client/2:" + seed) in hex, the seed's length unchecked (a public
    seed, checked by :func:`~dudo_client.verify`, may be longer than a player's)."""
    return hashlib.sha256(b"dudo-client/2:" + seed.encode("utf-8")).hexdigest()


def remember(token: str, seed: str) -> None:
    """Keep the seed of the seat this token holds, for a connection opened with it."""
    _seeds[token] = seed
    _seeds.move_to_end(token)
    while len(_seeds) > _KEPT:
        _seeds.popitem(last=False)


def seed_for(token: str | None) -> str | None:
    """The seed made for the seat this token holds in this process, if any."""
    return _seeds.get(token) if token is not None else None


def reveal_asked(view: dict[str, Any], seed: str | None) -> tuple[str, int] | None:
    """(table, until) when this view asks our seat for the seed we hold: the table waits
    for seeds (``seeds.until``), our seat's commitment is this seed's, and it is not
    taken yet; None otherwise (a seat without a commitment has nothing to reveal)."""
    seeds, seat = view.get("seeds"), view.get("seat")
    if seed is None or not isinstance(seeds, dict) or "until" not in seeds:
        return None
    if not isinstance(seat, int) or seat >= len(seeds["commitments"]):
        return None
    if seeds["revealed"][seat] or seeds["commitments"][seat] != seed_commitment(seed):
        return None
    return view["table"], seeds["until"]


def commit_asked(view: dict[str, Any]) -> tuple[str, int] | None:
    """(table, commit_until) when this view asks our seat for a commitment (a
    tournament's table just made: our seat is in ``seeds.asked``); None otherwise."""
    seeds, seat = view.get("seeds"), view.get("seat")
    if not isinstance(seeds, dict) or "commit_until" not in seeds or not isinstance(seat, int):
        return None
    return (view["table"], seeds["commit_until"]) if seat in seeds.get("asked", ()) else None


def asked_round(view: dict[str, Any]) -> int:
    """The round the seeds a view asks for will deal (``seeds.round``; 1 when absent)."""
    seeds = view.get("seeds")
    number = seeds.get("round", 1) if isinstance(seeds, dict) else 1
    return number if isinstance(number, int) else 1


def seed_not_taken(view: dict[str, Any], seed_of: Callable[[int], str | None]) -> bool:
    """This finished game's view says our seat committed to the seed we hold for some
    deal (``seed_of(round)``: round 1 for the first, a reseed's round for the others)
    and was dealt another (its public one: our reveal did not reach the table in time,
    or was lost)."""
    seeds, seat = view.get("seeds"), view.get("seat")
    if not isinstance(seeds, dict) or "client_seeds" not in seeds or not isinstance(seat, int):
        return False
    deals = [(1, seeds["client_seeds"], seeds["commitments"])] + [
        (r["round"], r["client_seeds"], r["client_commitments"]) for r in seeds.get("reseeds", [])
    ]
    for first, dealt, given in deals:
        seed = seed_of(first)
        mine = seed is not None and seat < len(given) and given[seat] == seed_commitment(seed)
        if mine and dealt[seat] != seed:
            return True
    return False


_MADE_KEPT = 16  # seeds made for tournament tables, per connection (the oldest forgotten)


class SeedKeeper:
    """A connection's seat seeds: the seat's own (made when it sat), and those made for
    the tournament tables it is seated at; what to send when a view asks for a
    commitment or a seed (once per wait, again after a reconnect: :meth:`reset`), and
    whether a finished game says ours was not taken (told once per table). ``seed=""``:
    none at all, at a tournament's tables either."""

    def __init__(self, seed: str | None) -> None:
        self.seed = seed or None
        self.brings = seed != ""
        # (table, round) -> the seed made for that ask (a tournament table's)
        self._made: OrderedDict[tuple[str, int], str] = OrderedDict()
        self._done: tuple[str, str, int] | None = None  # (what, table, until) sent or told

    def reset(self) -> None:
        """Welcomed again: a commitment or reveal lost with the connection is sent again."""
        self._done = None

    def held_seed(self, table: str | None, first: int) -> str | None:
        """The seed we hold for ``table``'s deal from round ``first``: the one made for
        that ask (a tournament table's), else for a game's first deal the seat's own."""
        return self._made.get((table or "", first), self.seed if first == 1 else None)

    def step(self, view: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        """(the ``commit_seed`` or ``seed`` message to send, or None; the table whose
        finished game dealt our seat another seed, or None)."""
        table = view.get("table")
        commit = commit_asked(view) if self.brings else None
        if commit is not None and self._done != ("commit", *commit):
            self._done = ("commit", *commit)
            made = self._made.setdefault((commit[0], asked_round(view)), make_seed())
            while len(self._made) > _MADE_KEPT:
                self._made.popitem(last=False)
            return {"type": "commit_seed", "commitment": seed_commitment(made)}, None
        seed = self.held_seed(table, asked_round(view))
        asked = reveal_asked(view, seed)
        if asked is not None and self._done != ("seed", *asked):
            self._done = ("seed", *asked)
            return {"type": "seed", "seed": seed}, None
        told = seed_not_taken(view, lambda first: self.held_seed(table, first))
        if told and self._done != ("told", view["table"], -1):
            self._done = ("told", view["table"], -1)
            return None, view["table"]
        return None, None
