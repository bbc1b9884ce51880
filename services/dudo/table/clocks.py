"""A table's clocks: the turn clock, a silent bot seat, an open or idle table's life.

A mixin of :class:`~dudo.table.Table` (the fields it uses are declared in
:mod:`dudo.table.state`).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from ..bots import HOUSE_POLICY, LEVELS
from ..engine import OVER, RuleError, action_from_dict, forfeit, seat_view
from .state import DONE, OPEN, PAUSED_NOW, PLAYING, TableState

if TYPE_CHECKING:
    pass


class TableClocks(TableState):
    """When the table wakes up by itself, and what it does then."""

    def _timeout(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """The table's timer fired, and nothing happened since it was set: a turn clock
        ran out or a bot seat stayed silent (the house bot plays the seat in turn), or
        the table outlived its limit (an open table closes, an idle game is abandoned)."""
        game = self.game
        if msg["version"] != self.version or self.status == DONE or self.paused == PAUSED_NOW:
            return  # the table moved on since the timer was set (or its organizer paused it)
        if self.seeding_until is not None:  # (at a tournament's table after an arrival too)
            self._seeds_timeout(now, rng)  # deal: public seeds for seats that did not reveal
            return
        if self.status == OPEN:
            self._close(now, "expired")
            return
        assert game is not None
        if self.tournament is not None and game.phase == OVER:
            self._carry_out([], now, round_end=False)  # arrivals that waited a step
            return
        seat = game.turn
        assert seat is not None
        if self.deadline is None and self.seats[seat].bot is None:
            self._close(now, "abandoned")
            return
        view = {"seat": seat, "game": seat_view(game, seat)}
        level = self.seats[seat].bot
        policy = LEVELS[level] if self.tournament is not None and level in LEVELS else HOUSE_POLICY
        action = action_from_dict(policy(view, rng))
        events = game.apply(seat, action)
        self._events.append({"type": "house_bot", "seat": seat})
        if level is None:  # a person's turn, played for them (at a tournament's table too)
            turns = {s: n for s, n in self.idle}.get(seat, 0) + 1
            self.idle = [[s, n] for s, n in self.idle if s != seat] + [[seat, turns]]
        self._after_game_change(events, msg, now)

    def _not_idle(self, seat: int) -> None:
        """The seat's player acted (or came back): their house-played turns start over."""
        if self.idle:
            self.idle = [[s, n] for s, n in self.idle if s != seat]

    def _vacate_idle(self, events: list[dict[str, Any]]) -> None:
        """At a round's end: people whose turns the house played ``vacate_after`` times
        in a row are out (eliminated, placed; the last one standing wins). Not if
        nobody would be left: then the game plays on to its end by itself."""
        game, limit = self.game, self.limits.vacate_after
        if game is None or limit <= 0 or not self.idle or game.phase == OVER:
            return
        if not any(event["type"] == "reveal" for event in events):
            return
        out = [s for s, n in self.idle if n >= limit and game.counts[s] > 0]
        if not out:
            return
        turns = {s: n for s, n in self.idle}
        taken: list[dict[str, Any]] = []
        if self.tournament is not None:
            # A tournament's table takes them out as a kick does: at this round's end,
            # their seat vacated and reported out (the director places them).
            if len(out) >= sum(c > 0 for c in game.counts):
                return  # nobody would be left
            gone = [self.seats[s].player for s in out]
            self.forfeits += [p for p in gone if p is not None and p not in self.forfeits]
        else:
            try:
                taken = forfeit(game, out)
            except RuleError:  # nobody would be left: every seat with dice is idle
                return
        self.idle = [[s, n] for s, n in self.idle if s not in out]
        self._events.extend({"type": "vacated", "seat": s, "turns": turns[s]} for s in out)
        self._events.extend(taken)

    def _close(self, now: int, why: str) -> None:
        """End a table that will not be played: it leaves the lobby, its record expires."""
        self.status = DONE
        self.deadline = None
        self._lobby = True
        self._events.append({"type": why})
        self._changed()
        self._rearm(now)

    def _hold_for_reveal(self, events: list[dict[str, Any]], now: int) -> None:
        """A round just ended (its ``reveal`` is among ``events``) and the game goes on:
        hold the next turn's clock, bots and house for ``reveal_hold_ms`` when people
        are at the table, so that each of them can read the reveal before the next round
        runs under it. People may act sooner; nothing else does. A person who is out
        but still holds the seat is watching ("Keep watching"): the rest of the game is
        held for them too (it ran in a blink; issue 34, item 2); once they left the seat
        (``away``), the bots play on without pauses."""
        hold = self.limits.reveal_hold_ms
        game = self.game
        if hold <= 0 or game is None or game.phase == OVER:
            return
        if not any(event["type"] == "reveal" for event in events):
            return
        people = (
            seat.player is not None and seat.bot is None and (game.counts[i] > 0 or not seat.away)
            for i, seat in enumerate(self.seats)
        )  # playing, or out and watching: once every person is gone, no pauses
        if any(people):
            self.hold_until = now + hold

    def _rearm(self, now: int, *, reset: bool = True) -> None:
        """Set the clocks after a change. The seat in turn gets turn_seconds (the
        public ``deadline``); an away seat's turn is played by the house bot at once.
        The timer (``wake``) fires at the deadline, or, without one, when a bot seat
        in turn has been silent for ``bot_grace_ms`` (its bot service may be dead),
        or when an open table or an idle game has outlived its limit. While a reveal
        holds the table (``hold_until``), clocks start when the hold ends."""
        game, limits = self.game, self.limits
        if self.hold_until is not None and self.hold_until <= now:
            self.hold_until = None
        start = self.hold_until or now
        if self.seeding_until is not None:  # waiting for seeds (seeds.py): no turn yet
            self.deadline, self.wake, self._play_now = None, self.seeding_until, False
            return
        if self.status == OPEN:
            self.deadline = None
            self.wake = now + limits.open_ttl_ms
            return
        if self.status != PLAYING or game is None or game.turn is None:
            self.deadline = self.wake = None
            return
        if self.paused == PAUSED_NOW:  # the organizer's pause: no clock, no house move
            self.deadline = self.wake = None
            self._play_now = False
            return
        seat = self.seats[game.turn]
        if seat.away:
            self.deadline = start
        elif reset:
            seconds = self.rules.turn_seconds
            self.deadline = start + seconds * 1000 if seconds else None
        if self._house_played(seat) and not seat.away:
            # A tournament's bot with no bot service behind it is played by the table,
            # whatever its turn clock says (the deadline stays the rule people see): at
            # once at a table of such bots (a timeout entry sent to its own inbox with
            # the commit, no timer), after a pause where people watch.
            people = any(
                s.player and not self._house_played(s) and game.counts[i] > 0
                for i, s in enumerate(self.seats)
            )  # people still playing: once all of them are out, bots play at full speed
            if people:
                self.wake = start + limits.house_think_ms
                if self.deadline is not None:
                    self.wake = min(self.wake, self.deadline)
            else:
                self.wake, self._play_now = None, True
        elif self.deadline is not None:
            self.wake = self.deadline
        elif seat.bot is not None:
            self.wake = start + limits.bot_grace_ms
        else:
            self.wake = now + limits.idle_ttl_ms
