"""Every player's rating across games and tournaments (openskill), and the leaderboard.

One entity (``keys.RATINGS_ID``) in a key space of one partition
(``keys.RATINGS``), hosted by the worker's loop like tables and tournaments:
whichever director holds its lease applies the results in order, fenced, and
exactly once (a result's id is remembered; a repeat changes nothing). Results
come from tables whose game ended and from tournaments that finished, appended
with the commit that ended them (``result`` messages).

Model: openskill's Plackett-Luce for up to :data:`FULL_MODEL_MAX` players in one
result (a table, a small tournament); past that its Thurstone-Mosteller with
partial pairing (each player against their neighbours in the ranking), which is
linear in the players (Plackett-Luce took 0.5 s for 3,000). The leaderboard
ranks by the ordinal, mu - 3 sigma: a rating one can be sure of.

Identity: a player id as the deployment knows it. An anonymous player's id lives
as long as their token, so they are rated for that long; bots are not rated. An
identity user's games are also counted (:mod:`.profiles`), and their profile
published by handle.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from openskill.models import PlackettLuce, ThurstoneMostellerPart

from .. import wire
from ..auth import is_user
from ..entity import Flush, message_id
from ..wire import RATED_MAX, keys
from .profiles import Played, profile, tally

BOARD_MAX = 500  # players on the public leaderboard (GET /api/leaderboard?limit=...)

FORMAT = 3  # 2: chip accounts; 3: identity users' statistics
FULL_MODEL_MAX = 64
RESULTS_REMEMBERED = 10_000  # result ids kept to refuse repeats
_FULL = PlackettLuce()
_PARTIAL = ThurstoneMostellerPart()


@dataclass(frozen=True)
class RatingsContext:
    """What the ratings keeper knows of the deployment (the worker's ``limits`` slot):
    where a tournament's director inbox is, to answer its result with ``rated``."""

    director_partitions: int = keys.DEFAULT_DIRECTOR_PARTITIONS
    # Every loop's limits carry its credentials (the worker sets them); unused here.
    authority: Any = field(default=None, compare=False, repr=False)


@dataclass
class Rated:
    name: str
    mu: float
    sigma: float
    games: int = 0

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma


@dataclass
class Ratings:
    KEY: ClassVar[str] = "ratings"
    CREATES: ClassVar[frozenset[str]] = frozenset({"result", "ledger"})  # the first makes it
    DIRECTION: ClassVar[str] = "ratings"
    UNKNOWN: ClassVar[str] = wire.BAD_MESSAGE

    id: str = keys.RATINGS_ID
    version: int = 0
    players: dict[str, Rated] = field(default_factory=dict)
    accounts: dict[str, int] = field(default_factory=dict)  # chips (dudo.entity.results)
    played: dict[str, Played] = field(default_factory=dict)  # identity users' statistics
    applied: deque[str] = field(default_factory=lambda: deque(maxlen=RESULTS_REMEMBERED))
    limits: Any = field(default=None, compare=False, repr=False)
    timer_member: str | None = None
    _applied_set: set[str] = field(default_factory=set, compare=False, repr=False)
    _changed: bool = False
    _profiles: set[str] = field(default_factory=set, compare=False, repr=False)  # to publish
    _sends: list[tuple[str, bytes]] = field(default_factory=list, compare=False, repr=False)

    @classmethod
    def create(
        cls, msg: dict[str, Any], now: int, limits: Any = None, rng: random.Random | None = None
    ) -> Ratings:
        ratings = cls(limits=limits)
        ratings.handle(msg, now, rng or random.Random())
        return ratings

    def to_bytes(self) -> bytes:
        rows = [[p, r.name, r.mu, r.sigma, r.games] for p, r in self.players.items()]
        accounts = [[a, chips] for a, chips in self.accounts.items()]
        played = [[p, *counts.row()] for p, counts in self.played.items()]
        return wire.encode([FORMAT, self.version, rows, list(self.applied), accounts, played])

    @classmethod
    def from_bytes(cls, data: bytes, rows: Mapping[bytes, bytes] | None = None) -> Ratings:
        raw = wire.unpack(data)
        if not isinstance(raw, list) or raw[0] not in (2, FORMAT):
            raise ValueError("unknown ratings record format")
        _, version, rows, applied, accounts, *rest = raw
        ratings = cls(version=version)
        ratings.accounts = {a: chips for a, chips in accounts}
        ratings.played = {p: Played(*counts) for p, *counts in (rest[0] if rest else [])}
        ratings.players = {p: Rated(name, mu, sigma, games) for p, name, mu, sigma, games in rows}
        ratings.applied.extend(applied)
        ratings._applied_set = set(ratings.applied)
        return ratings

    def handle(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        result_id = msg["id"]
        if result_id in self._applied_set:
            return  # a repeat (delivered again): applied once already
        if len(self.applied) == self.applied.maxlen:
            self._applied_set.discard(self.applied[0])
        self.applied.append(result_id)
        self._applied_set.add(result_id)
        if msg["type"] == "ledger":
            self.move(msg["transfers"])
            self._profiles.update(a for a, _ in msg["transfers"] if is_user(str(a)))
        else:
            self._profiles.update(tally(self.played, msg))  # first: it refuses bad counts
            changes = self.apply(msg["ranking"])
            if msg.get("tournament") is not None and changes:
                self._answer(msg["tournament"], changes)
            self._profiles.update(p for p, _, _ in changes if is_user(p))
        self.version += 1
        self._changed = True

    def move(self, transfers: list[list[Any]]) -> None:
        """Apply chips moving between accounts; they must add up to 0 (double entry), so
        the sum of every account stays 0. Anything else is our bug: it raises, and the
        entry goes to the dead letters unapplied."""
        moves = [(str(a), c) for a, c in transfers]
        if any(not isinstance(c, int) or isinstance(c, bool) for _, c in moves):
            raise ValueError(f"chips are whole numbers: {transfers!r}")
        if sum(c for _, c in moves) != 0:
            raise ValueError(f"a ledger entry must add up to 0: {transfers!r}")
        for account, chips in moves:
            self.accounts[account] = self.accounts.get(account, 0) + chips

    def apply(self, ranking: list[list[Any]]) -> list[list[Any]]:
        """Rate one finished game or tournament: players from first to last place.
        Returns ``[player, ordinal before, ordinal after]`` for each (none for fewer
        than two players: nothing was rated)."""
        seen: set[str] = set()
        order = []
        for player, name in ranking:
            if isinstance(player, str) and player not in seen:
                seen.add(player)
                order.append((player, str(name)))
        if len(order) < 2:
            return []
        model = _FULL if len(order) <= FULL_MODEL_MAX else _PARTIAL
        teams = []
        for player, _ in order:
            known = self.players.get(player)
            rating = model.rating(mu=known.mu, sigma=known.sigma) if known else model.rating()
            teams.append([rating])
        rated = model.rate(teams, ranks=list(range(1, len(order) + 1)))
        changes = []
        for (player, name), [before], [rating] in zip(order, teams, rated, strict=True):
            known = self.players.get(player)
            games = known.games + 1 if known else 1
            after = self.players[player] = Rated(name, rating.mu, rating.sigma, games)
            changes.append([player, round(before.ordinal(), 3), round(after.ordinal, 3)])
        return changes

    def _answer(self, tournament: str, changes: list[list[Any]]) -> None:
        """``rated`` for the tournament's director, sent with this commit: its entrants'
        ratings before and after, in messages of at most RATED_MAX (each under the
        director inbox's size cap), numbered so that a repeat is taken once."""
        context = self.limits if isinstance(self.limits, RatingsContext) else RatingsContext()
        partition = keys.partition_of(tournament, context.director_partitions)
        inbox = keys.TOURNAMENTS.inbox(partition)
        for n, start in enumerate(range(0, len(changes), RATED_MAX)):
            body = wire.message(
                "rated",
                id=message_id("rd", tournament, n),
                tournament=tournament,
                changes=changes[start : start + RATED_MAX],
            )
            self._sends.append((inbox, wire.encode(body)))

    def leaderboard(self, limit: int = 50) -> list[dict[str, Any]]:
        """The best ``limit`` players by ordinal (names and public handles only)."""
        best = heapq.nlargest(limit, self.players.items(), key=lambda kv: kv[1].ordinal)
        return [
            {
                "rank": i + 1,
                "name": r.name,
                "handle": wire.public_id(player),
                "ordinal": round(r.ordinal, 3),
                "mu": round(r.mu, 3),
                "sigma": round(r.sigma, 3),
                "games": r.games,
                "chips": self.accounts.get(player, 0),
            }
            for i, (player, r) in enumerate(best)
        ]

    def profile(self, player: str) -> dict[str, Any]:
        """An identity user's public profile (dudo.director.profiles)."""
        return profile(
            player, self.played.get(player), self.players.get(player), self.accounts.get(player, 0)
        )

    # -- what the partition loop asks of every entity ------------------------------

    @staticmethod
    def error_for(msg: dict[str, Any], code: str, text: str) -> tuple[str, bytes] | None:
        return None  # results come from tables and directors: nobody to answer

    @staticmethod
    def lobby_note(entity: str, entry: dict[str, Any] | None, version: int) -> bytes:
        return b""  # the board is read when asked for (GET /api/leaderboard): no news

    @staticmethod
    def timeout(entity: str, version: int) -> dict[str, Any]:
        raise AssertionError("ratings have no timer")

    def flush(self, frame_gateways: frozenset[str] = frozenset()) -> Flush:
        changed, self._changed = self._changed, False
        sends, self._sends = self._sends, []
        published, self._profiles = self._profiles, set()
        return Flush(
            record=self.to_bytes() if changed else None,
            version=self.version,
            outputs=[],
            # The public board, by handle: what gateways may read (never the record, whose
            # players are player ids), in the listing hash beside it.
            lobby={"leaderboard": self.leaderboard(BOARD_MAX)} if changed else False,
            timer_remove=None,
            timer_add=None,
            finished=False,
            sends=sends,
            listing=[(keys.profile_field(wire.public_id(p)), self.profile(p)) for p in published],
        )
