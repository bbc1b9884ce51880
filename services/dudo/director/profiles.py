"""An identity user's statistics, kept by the ratings keeper, and the profile it publishes.

A person signed in with their app's identity is the same player at every table and
tournament (dudo.auth.authority), so their games can be counted across devices and
gateways; an anonymous player is a new player per seat (their page counts on the
device instead), and bots are not counted. What is counted comes with each ``result``:

- a table's game (``tallies``): played, won, the run of wins, Dudo and Calza calls and
  how many were right (from the table's log: at most its LOG_ROUNDS rounds);
- a tournament (``ranking``): entered, won (first place). Its tables' games are the
  tournament's, not counted one by one.

The profile is public by handle (``GET /api/players/{handle}``), like the leaderboard:
written to the ratings' listing hash beside the board (``keys.profile_field``), since a gateway
may never read the record, whose players are player ids.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass
from typing import Any

from .. import wire
from ..auth import is_user


@dataclass
class Played:
    """One identity user's counts, in the order the record stores them."""

    name: str
    games: int = 0
    wins: int = 0
    run: int = 0  # wins in a row, up to the latest game
    best_run: int = 0
    dudo: int = 0
    dudo_right: int = 0
    calza: int = 0
    calza_right: int = 0
    tournaments: int = 0
    tournament_wins: int = 0

    def game(self, won: bool, dudo: int, dudo_right: int, calza: int, calza_right: int) -> None:
        self.games += 1
        self.wins += won
        self.run = self.run + 1 if won else 0
        self.best_run = max(self.best_run, self.run)
        self.dudo += dudo
        self.dudo_right += dudo_right
        self.calza += calza
        self.calza_right += calza_right

    def row(self) -> list[Any]:
        return list(astuple(self))


def tally(played: dict[str, Played], msg: dict[str, Any]) -> set[str]:
    """Count one ``result`` into the identity users' statistics; the players counted.
    A tally that is not counts raises before anything is counted (our bug: the entry
    goes to the dead letters, unapplied)."""
    names = {str(player): str(name) for player, name in msg["ranking"]}
    games: list[tuple[str, tuple[int, int, int, int] | None, bool]] = []  # None: a tournament
    if msg.get("source") == "tournament":
        for place, player in enumerate(names):
            if is_user(player):
                games.append((player, None, place == 0))
    else:
        for player, *numbers in msg.get("tallies") or []:
            if not all(isinstance(n, int) and 0 <= n <= 10_000 for n in numbers):
                raise ValueError(f"a tally is counts: {numbers!r}")
            won, dudo, dudo_right, calza, calza_right = numbers
            if isinstance(player, str) and is_user(player):
                calls = (dudo, min(dudo_right, dudo), calza, min(calza_right, calza))
                games.append((player, calls, bool(won)))
    counted: set[str] = set()
    for player, calls, won in games:
        if player in counted:
            continue
        counted.add(player)
        mine = played.setdefault(player, Played(names.get(player, "")))
        mine.name = names.get(player, mine.name)
        if calls is None:
            mine.tournaments += 1
            mine.tournament_wins += won
        else:
            mine.game(won, *calls)
    return counted


def profile(player: str, played: Played | None, rating: Any, chips: int) -> dict[str, Any]:
    """What anyone may read of an identity user, by handle (never the player id):
    their statistics, their rating (None before a rated game) and their chips."""
    counts = played or Played(rating.name if rating is not None else "")
    return {
        "handle": wire.public_id(player),
        "name": counts.name,
        "games": counts.games,
        "wins": counts.wins,
        "run": counts.run,
        "best_run": counts.best_run,
        "dudo": [counts.dudo_right, counts.dudo],
        "calza": [counts.calza_right, counts.calza],
        "tournaments": counts.tournaments,
        "tournament_wins": counts.tournament_wins,
        "rating": None
        if rating is None
        else {
            "ordinal": round(rating.ordinal, 3),
            "mu": round(rating.mu, 3),
            "sigma": round(rating.sigma, 3),
            "games": rating.games,
        },
        "chips": chips,
    }
