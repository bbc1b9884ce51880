"""What a finished tournament keeps for its organizer beyond places and payouts.

A mixin of :class:`~dudo.director.tournament.Tournament`, for two messages that come
after the play, from the deployment only (dudo.wire.signing: no gateway may send them):

- ``rated``: the ratings keeper rated the tournament's result; each entrant's rating
  change goes into their row, and the places show it (``rating``, ``rating_change``);
- ``table_history``: a table closed; who sat down there, who was sent away and who
  went out, by round, kept as a row of its own (``h:<table>``, written once) and
  answered, by name and handle, to a ``standings`` request with ``history``; with
  what the table's dice came from (``seeds``, row ``d:<table>``), so the results let
  anyone check every round the table dealt.

Each comes once per tournament or table, so they cost the director little while the
tournament runs (a history kept by the director itself, row by row with every report,
cost it 15-20% more CPU: docs/tournaments.md).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from .. import wire
from ..auth import table_order
from .state import TournamentState


class Results(TournamentState):
    """Rating changes and every table's history, for the tournament's results."""

    if TYPE_CHECKING:

        def _changed(self, msg: dict[str, Any] | None = None, *, visible: bool = True) -> None: ...

    def _on_table_history(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """A table of this tournament closed: its history, kept for the records (a
        part at a time: the parts of one table come in order, with one commit)."""
        table = msg["table"]
        rows = self.histories.setdefault(table, [])
        if msg["part"] == 0:
            rows.clear()
            self.table_seeds.pop(table, None)
        rows.extend(msg["rows"])
        # The seeds given after arrivals come spread over the parts, the rest in the last.
        reseeds = self.table_seeds.get(table, {}).get("reseeds", []) + msg.get("reseeds", [])
        if reseeds:
            self.table_seeds.setdefault(table, {})["reseeds"] = reseeds
        if "seeds" in msg:
            self.table_seeds[table] = {**msg["seeds"], **self.table_seeds.get(table, {})}
        self._histories_changed.add(msg["table"])
        self._changed(msg, visible=False)

    def history(self) -> list[dict[str, Any]]:
        """Every closed table's history by name and handle (never player ids), tables
        in the order they opened: who sat down with how many dice, who was sent to
        another table, who went out, by round."""
        entrants, handles = self.entrants, self._handles

        def who(player: str, dice: int | None = None) -> dict[str, Any]:
            entrant = entrants.get(player)
            if entrant is not None:
                shown = entrant.shown(handles)
            else:  # unregistered since (never after the start): shown by handle only
                shown = {"name": "", "handle": wire.public_id(player)}
            return shown if dice is None else {**shown, "dice": dice}

        seeds = self.table_seeds
        return [
            {
                "table": table,
                "rounds": [
                    {
                        "round": played,
                        "at": at,
                        "joined": [who(p, d) for p, d in joined],
                        "left": [who(p, d) for p, d in left],
                        "out": [who(p) for p in out],
                    }
                    for played, at, joined, left, out in rows
                ],
                # (all of them once the last part came)
                **({"seeds": seeds[table]} if "server_seed" in seeds.get(table, {}) else {}),
            }
            # Opened in the order of their numbers (auth.authority.table_order).
            for table, rows in sorted(self.histories.items(), key=lambda h: table_order(h[0]))
        ]

    def _on_rated(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """The ratings keeper rated this tournament's result: each entrant's rating
        change goes into its results (places show them from now on). Only the
        deployment writes these (dudo.wire.signing: no gateway may)."""
        for player, before, after in msg["changes"]:
            entrant = self.entrants.get(player)
            if entrant is None or entrant.bot is not None:
                continue
            entrant.rating = float(after)
            entrant.rating_change = round(float(after) - float(before), 3)
            self.touch(entrant)
        self._changed(msg)
