"""What a tournament's organizer (its host) may do while it is open or running.

A mixin of :class:`~dudo.director.tournament.Tournament`: the ``organize`` message's
actions (pause, resume, cancel, kick, announce) and the entries that come after the
start (late registration and re-entry). Each is a change of the tournament's state,
plus messages to its tables appended with the director's commit, like every other
decision of the director: nothing here touches a table directly.

- **pause / resume**: every live table gets ``pause`` (numbered: a repeat or an older
  one is ignored). A table finishes its round in progress, then stops (no clock, no
  house move; acts refused ``paused``); seats still change there, so the balancing
  goes on. Tables a heat opens while paused start paused.
- **cancel**: before the start, as a tournament nobody began; during, every live table
  is closed (its players sent away at their round's end: reports of a cancelled
  tournament are no longer taken), and every entrant gets back all they paid.
- **kick**: before the start, the entrant is unregistered (the buy-in back); during,
  they are out at the end of their table's round (``forfeit``), or at once when they
  sit nowhere, placed as if eliminated then; reports that name them leaving a table
  place them out too, never at another table.
- **announce**: a line every entrant's page shows with the standings.

Late entries (``late_minutes``; elimination only) wait for a seat like a player sent
away from a table, and the balancer seats them. Places are given from the bottom as
players go out, so a new entrant moves every place given so far down by one, and a
re-entry (``reentries``) takes its own place back and moves the places given after it.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from .. import wire
from ..entity import account_of, pool_of
from ..wire import Refusal, message
from .progress import Progress
from .standings import Entrant
from .state import BROADCAST_EVERY_MS, ENDED, REGISTERING, RUNNING

ANNOUNCEMENT_MAX = 280


class Organizer(Progress):
    """The host's controls, and the entries after the start."""

    if TYPE_CHECKING:

        def _player_of(self, msg: dict[str, Any]) -> str: ...
        def _standings_message(self) -> dict[str, Any]: ...
        def _unregister(self, entrant: Entrant) -> None: ...

    def _entrant_by_handle(self, handle: str | None, unknown: str) -> Entrant:
        """The entrant whose public handle is ``handle``, or :class:`Refusal`
        ``not_seated`` (``unknown`` says why). The handle map is made at the first
        lookup this process makes for the tournament, kept up with entries after that."""
        if self._by_handle is None:
            self._by_handle = {wire.public_id(p): p for p in self.entrants}
        player = self._by_handle.get(handle or "")
        entrant = self.entrants.get(player) if player is not None else None
        if entrant is None:
            raise Refusal(wire.NOT_SEATED, unknown)
        return entrant

    # -- the organize message ---------------------------------------------------------

    def _on_organize(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        if self._player_of(msg) != self.host:
            raise Refusal(wire.NOT_HOST, "only the host may run the tournament")
        if self.status in ENDED:
            raise Refusal(wire.TOURNAMENT_OVER, f"the tournament is {self.status}")
        ACTIONS[msg["action"]](self, msg)
        self._changed(msg)
        # Every entrant hears of it now, not at the next report (a paused tournament
        # sends none): the organizer's controls are rare, the standings' pace is for
        # the tables' reports.
        self._last_broadcast = -BROADCAST_EVERY_MS
        # The answer: the standings as they are now, quoting the request's id.
        self._direct.append((msg["gateway"], {**self._standings_message(), "id": msg["id"]}))

    def _pause(self, msg: dict[str, Any]) -> None:
        self._must_run("paused")
        if not self.paused:
            self.paused = True
            self.paused_at = self._now
            self._tell_pause(self._live_tables())

    def _resume(self, msg: dict[str, Any]) -> None:
        self._must_run("resumed")
        if self.paused:
            self.paused = False
            # A line made during the pause was about it ("back in a minute"): it goes.
            if self.announcement is not None and self.announcement["at"] >= self.paused_at:
                self.announcement = None
            self._tell_pause(self._live_tables())

    def _must_run(self, done: str) -> None:
        if self.status != RUNNING:
            raise Refusal(wire.GAME_NOT_STARTED, f"only a running tournament is {done}")

    def _tell_pause(self, tables: list[str]) -> None:
        """Tell ``tables`` whether the tournament is paused now (a numbered message)."""
        if not tables:
            return
        self.pause_seq += 1
        for table in tables:
            body = message("pause", id=f"p:{self.pause_seq}", table=table, tournament=self.id,
                           seq=self.pause_seq, on=self.paused)  # fmt: skip
            self._send_to_table(table, body)

    def _live_tables(self) -> list[str]:
        """The tables still playing (or about to): those a pause, cancel or kick reaches."""
        if self.balancer is not None:
            return [t for t, count in self.balancer.tables.items() if not count.breaking]
        return list(self.heat_tables)

    def _cancel_now(self, msg: dict[str, Any]) -> None:
        if self.status == RUNNING:
            for table in self._live_tables():
                self._close_table(table)
        self._cancel()

    def _kick(self, msg: dict[str, Any]) -> None:
        entrant = self._entrant_by_handle(msg.get("target"), "no entrant has that handle")
        if entrant.player == self.host:
            raise Refusal(wire.BAD_MESSAGE, "the host cannot kick themselves")
        if self.status == REGISTERING:
            # A version of its own first: the refund's ledger id is numbered by it, and an
            # unregister just before (its own refund at the version it made) must not
            # share it (the ledger takes an id once).
            self._changed()
            self._unregister(entrant)
            return
        if entrant.place is not None:
            raise Refusal(wire.NOT_SEATED, f"{entrant.name} is already out")
        if entrant.player not in self.kicked:
            self.kicked.append(entrant.player)
        if entrant.table is not None:  # seated or on the way: out at that round's end
            body = message("forfeit", id=f"f:{self.version}", table=entrant.table,
                           tournament=self.id, player=entrant.player)  # fmt: skip
            self._send_to_table(entrant.table, body)
            return
        # Sitting nowhere (waiting for a seat, or through to the next heat): out now.
        if self.balancer is not None and entrant.player in self.balancer.waiting:
            self.balancer.waiting.remove(entrant.player)
        if entrant.player in self.qualified:
            self.qualified.remove(entrant.player)
        self._eliminate(entrant.player)
        self._maybe_finish()

    def _announce(self, msg: dict[str, Any]) -> None:
        text = wire.clean_line(msg.get("text") or "", "an announcement")[:ANNOUNCEMENT_MAX]
        self.announcement = {"text": text, "at": self._now} if text else None

    # -- entries after the start ------------------------------------------------------

    def _late_until(self) -> int | None:
        """When late registration closes (ms), once started with ``late_minutes``."""
        late = self.config.get("late_minutes") or 0
        if not late or self.status == REGISTERING:
            return None
        return self.started + late * 60_000

    def _late_open(self) -> bool:
        """Registration is still open after the start (``late_minutes``)."""
        until = self._late_until()
        return self.status == RUNNING and until is not None and self._now < until

    def _enter_late(self, entrant: Entrant) -> None:
        """A new entrant after the start: below nobody yet, so every place given so far
        moves down one; they wait for the balancer's seat with a fresh stack."""
        self._places_down(above=None)
        self._wait_for_seat(entrant)

    def _places_down(self, above: int | None) -> None:
        """One more player stands above every place given before ``above`` (None: every
        place given): each moves down one."""
        for other in self.entrants.values():
            if other.place is not None and (above is None or other.place < above):
                other.place += 1
                self.touch(other)

    def _reenter(self, entrant: Entrant) -> None:
        """An entrant who is out buys in again (``reentries`` times at most)."""
        allowed = self.config.get("reentries") or 0
        if entrant.place is None:
            return  # still playing: a repeat of their registration
        bought = self.reentered.get(entrant.player, 0)
        if bought >= allowed or entrant.player in self.kicked:
            raise Refusal(wire.GAME_STARTED, "no re-entry left for this player")
        self._places_down(above=entrant.place)  # those who went out after them
        entrant.place = None
        self.reentered[entrant.player] = bought + 1
        self.out -= 1
        buy_in = self.config["buy_in"]
        entrant.paid += buy_in
        self.pool += buy_in
        self._ledger("lr", [[account_of(entrant.player, entrant.bot), -buy_in],
                            [pool_of(self.id), buy_in]])  # fmt: skip
        self._wait_for_seat(entrant)

    def _decide_moves(self) -> None:
        """The balancer's decisions, then, while late entries come: a new table for the
        players waiting when no table has a seat for them (two at least: one alone
        waits for the next elimination, as a late entrant does in a poker room)."""
        super()._decide_moves()
        balancer = self.balancer
        assert balancer is not None
        if len(balancer.waiting) < 2 or not self._late_open():
            return
        players, balancer.waiting = balancer.waiting, []
        made = self._new_tables(players, None, fresh=False)
        for table, group in made:
            balancer.open(table, len(group))
        if self.paused:
            self._tell_pause([table for table, _ in made])

    def _seat_heat(self, players: list[str], rng: random.Random) -> None:
        """A heat's tables, paused at once while the organizer's pause holds."""
        super()._seat_heat(players, rng)
        if self.paused:
            self._tell_pause(list(self.heat_tables))

    def _wait_for_seat(self, entrant: Entrant) -> None:
        entrant.dice = self.config["rules"]["start_dice"]
        entrant.table = None
        self.touch(entrant)
        assert self.balancer is not None  # late entries are for elimination only
        self.balancer.waiting.append(entrant.player)
        self._decide = True


ACTIONS = {
    "pause": Organizer._pause,
    "resume": Organizer._resume,
    "cancel": Organizer._cancel_now,
    "kick": Organizer._kick,
    "announce": Organizer._announce,
}
