"""``dudo bot URL``: one of our bot levels playing as a player does, from outside, through
the public client protocol and the official Python library (:mod:`dudo_client`).

The bot service (service.py) fills the seats a table sets aside for bots from inside
the deployment, over the stream protocol. This is the other way in: a bot that any
gateway takes for an ordinary client. It creates a table (with house bots), joins one,
plays the seat of a token, or registers for a tournament and plays its tables one after
the other as the director moves it. Same policies (levels.LEVELS), same library an
outside developer uses, so it doubles as a load and soak client for a deployment.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from dataclasses import dataclass
from typing import Any

from dudo_client import DudoApi, DudoConnection, DudoError

from ..bots import LEVELS, my_turn
from ..wire import DEFAULT_BOT_LEVEL

RETRIES_PER_VIEW = 2  # refused moves tried again from the same view before waiting


@dataclass
class Outcome:
    """How it ended for the bot: a table's winner, or a tournament's place."""

    table: str | None = None
    seat: int | None = None
    winner: int | None = None  # the table's winning seat
    tournament: str | None = None
    place: int | None = None  # the bot's place in the tournament's final standings
    moves: int = 0
    refused: int = 0

    def text(self) -> str:
        if self.tournament is not None:
            return f"tournament {self.tournament}: place {self.place} ({self.moves} moves)"
        won = "won" if self.winner == self.seat else f"lost (seat {self.winner} won)"
        return f"table {self.table}, seat {self.seat}: {won} ({self.moves} moves)"


@dataclass
class RemoteBot:
    """Plays one connection's seat (a table's, or an entrant's from table to table)."""

    conn: DudoConnection
    level: str = DEFAULT_BOT_LEVEL
    rng: random.Random | None = None
    think: tuple[float, float] = (0.0, 0.0)  # seconds to wait before each move

    def __post_init__(self) -> None:
        self.policy = LEVELS[self.level]
        self.rng = self.rng or random.Random()
        self.outcome = Outcome()
        self._tried: dict[tuple[str, int], int] = {}  # (table, version) -> moves sent

    async def play(self, handle: str | None = None) -> Outcome:
        """Until the game is over (a table) or the standings say over (a tournament,
        ``handle`` being the entrant's public id, to find its place among the best
        shown)."""
        welcome = self.conn.welcome or {}
        self.outcome.tournament = welcome.get("tournament")
        await self._maybe_act()
        async for msg in self.conn.messages():
            kind = msg["type"]
            if kind == "tournament" and msg["standings"]["status"] == "over":
                places = msg["standings"]["places"]
                mine = [p["place"] for p in places if p["handle"] == handle]
                self.outcome.place = mine[0] if mine else None
                return self.outcome
            if kind == "view":
                game = msg["game"]
                self.outcome.table, self.outcome.seat = msg["table"], msg["seat"]
                over = game is not None and game["winner"] is not None
                if over and self.outcome.tournament is None:
                    self.outcome.winner = game["winner"]
                    return self.outcome
            await self._maybe_act()
        raise DudoError("closed", "the connection closed before the end")

    async def _maybe_act(self) -> None:
        """Move while the latest view says it is our turn (and we have not used that view
        up: a move refused from it is tried again at most RETRIES_PER_VIEW times)."""
        assert self.rng is not None
        while True:
            view = self.conn.view
            if view is None or view["game"] is None or "legal" not in view["game"]:
                return
            key = (view["table"], view["version"])
            if not my_turn(view) or self._tried.get(key, 0) > RETRIES_PER_VIEW:
                return
            self._tried = {key: self._tried.get(key, 0) + 1}
            wait = self.rng.uniform(*self.think) if self.think[1] > 0 else 0.0
            if view.get("reveal_until"):  # the table holds for people to read the reveal
                wait = max(wait, view["reveal_until"] / 1000 - time.time())
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                await self.conn.act(self.policy(view, self.rng))
                self.outcome.moves += 1
            except DudoError:  # the table moved on meanwhile (a clock ran out): look again
                self.outcome.refused += 1


async def run(
    base: str,
    *,
    level: str = DEFAULT_BOT_LEVEL,
    seed: int | None = None,
    think: tuple[float, float] = (0.0, 0.0),
    name: str | None = None,
    table: str | None = None,
    token: str | None = None,
    tournament: str | None = None,
    create: dict[str, Any] | None = None,
) -> Outcome:
    """Take a seat the way asked (a token, a table to join, a tournament to register
    for, else a new table made from ``create``) and play it to the end."""
    # Unnamed, a bot takes a tag of its own: a tournament refuses a name an entrant has
    # (name_taken), and several bots of one level often register for the same one.
    name = name or f"{level.capitalize()} bot {secrets.token_hex(2)}"
    handle = None
    async with DudoApi(base) as api:
        if token is None and tournament is not None:
            entry = await api.register(tournament, name=name)
            token, handle = entry["token"], entry["player"]
        elif token is None and table is not None:
            token = (await api.join_table(table, name=name))["token"]
        elif token is None:
            bots = [DEFAULT_BOT_LEVEL]
            body = create or {"rules": {"preset": "classic"}, "seats": 2, "bots": bots}
            token = (await api.create_table(name=name, **body))["token"]
        async with DudoConnection(base, token) as conn:
            bot = RemoteBot(conn, level, random.Random(seed), think)
            outcome = await bot.play(handle)
        if outcome.tournament is not None and outcome.place is None and handle is not None:
            final = await api.standings(outcome.tournament)  # every place, not the best 100
            places = final["standings"]["places"] if "standings" in final else final["places"]
            outcome.place = next((p["place"] for p in places if p["handle"] == handle), None)
    return outcome
