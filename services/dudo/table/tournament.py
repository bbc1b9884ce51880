"""A tournament's table: players come and go between rounds, and every round's end is reported.

A mixin of :class:`~dudo.table.Table` (the fields it uses are declared in
:mod:`dudo.table.state`).
The director (:mod:`dudo.director`) creates the table with its first players,
then sends two kinds of control messages to its inbox:

- ``seat_in``: a player arrives with the dice they bring;
- ``order``: send ``count`` players away (``None``: all, the table breaks).

Neither takes effect inside a round. Both wait for the end of the round in
progress and are carried out in the same step as the action that ends it
(:meth:`TournamentSeats._tournament_step`), so no player ever sees a view of the
new round with the old seating; a table where no round is being played (its
game halted or won) carries them out at once. Each such step is reported to the
director with the commit that makes it (``Flush.sends``), so no report is lost
when a worker dies.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from .. import wire
from ..engine import OVER, RuleError, leavers, reseat, seated_game
from ..entity import message_id
from ..wire import Refusal, keys, message
from .state import DONE, PAUSE_WANTED, PAUSED_NOW, PLAYING, Seat, TableState

if TYPE_CHECKING:
    from ..entity import Report


REPORT_EVERY_MS = 2000
# A `table_history` part's rows stay under this (the director inbox takes 16 KiB a message).
HISTORY_PART_BYTES = 12_000


class TournamentSeats(TableState):
    """Seat changes and reports for a table that belongs to a tournament."""

    # -- creation ---------------------------------------------------------------------

    def _seat_first_players(self, info: dict[str, Any], now: int, rng: random.Random) -> None:
        """Start a tournament table with its first players in its first seats."""
        players = info["players"]
        if len(players) > len(self.seats):
            raise Refusal(wire.BAD_MESSAGE, f"{len(players)} players for {len(self.seats)} seats")
        rules = self.rules
        counts = [p["dice"] for p in players] + [0] * (len(self.seats) - len(players))
        if any(dice > rules.max_dice for dice in counts):
            raise Refusal(wire.BAD_MESSAGE, f"a player brings more than {rules.max_dice} dice")
        self.tournament = info["id"]
        self.director = info["director"]
        self.advance = info.get("advance")
        for i, p in enumerate(players):
            self.seats[i] = Seat(p["player"], p["name"], p.get("gateway"), p.get("bot"))
            self.seats[i].brings = bool(p.get("seeds"))
            self._tell_moved(i, None)
        # Entrants whose clients bring seeds are asked for commitments first (seeds.py).
        self.first_counts = counts
        self._ask_for_commitments([i for i, p in enumerate(players) if p.get("seeds")], now, rng)

    def _deal_tournament(self, now: int, rng: random.Random) -> None:
        """The table's first deal, from its seeds, with the dice its players brought (or
        the deal of a round held after an arrival: seeds.py)."""
        if self.game is not None:
            self._redeal(now, rng)
            return
        counts, self.first_counts = self.first_counts, None
        assert counts is not None  # set when the table was made, until this deal
        players = [seat.player for seat in self.seats if seat.player is not None]
        secret = self._deal_secret(rng)
        self.game = seated_game(self.rules, counts, secret, opener=rng.randrange(len(players)))
        self.status = PLAYING
        self._events.append(
            {"type": "game_start", "opener": self.game.opener, "commitment": self.game.commitment}
        )
        self._queue_report([], [], players, now)
        self._rearm(now)

    # -- the director's messages ------------------------------------------------------

    def _tournament_only(self, msg: dict[str, Any]) -> None:
        if self.tournament != msg["tournament"]:
            raise Refusal(wire.BAD_MESSAGE, f"table {self.id} is not in that tournament")

    def _on_seat_in(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        self._tournament_only(msg)
        if msg["seq"] <= self.seat_seq:
            return  # a repeat of a move taken before (the director numbers them)
        self.seat_seq = msg["seq"]
        player = msg["player"]
        self.arrivals.append(
            [
                player,
                msg["name"],
                msg["dice"],
                msg.get("gateway"),
                msg.get("bot"),
                msg.get("from"),
                bool(msg.get("seeds")),
            ]
        )
        self._changed(msg, visible=False)
        if self._idle():
            self._carry_out([], now, round_end=False)

    def _on_order(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        self._tournament_only(msg)
        seq = msg["seq"]
        if seq <= self.order_done or (self.order is not None and seq <= self.order[0]):
            return  # older than what this table already has
        self.order = [seq, msg["count"]]
        self._changed(msg, visible=False)
        if self._idle():
            self._carry_out([], now, round_end=False)

    def _on_pause(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """The organizer pauses (the round in progress ends first) or resumes."""
        self._tournament_only(msg)
        if msg["seq"] <= self.pause_seq:
            return  # older than what this table already has
        self.pause_seq = msg["seq"]
        if not msg["on"]:
            self.paused = 0
        elif self.paused != PAUSED_NOW:
            self.paused = PAUSED_NOW if self._idle() else PAUSE_WANTED
        self._changed(msg)  # a view: the clock stops (or starts again) where people see it
        self._rearm(now)
        if self.arrivals and self._idle():
            self._carry_out([], now, round_end=False)

    def _on_forfeit(self, msg: dict[str, Any], now: int, rng: random.Random) -> None:
        """The organizer took a player out: at the end of the round in progress."""
        self._tournament_only(msg)
        if msg["player"] not in self.forfeits:
            self.forfeits.append(msg["player"])
        self._changed(msg, visible=False)
        if self._idle():
            self._carry_out([], now, round_end=False)

    # -- round ends -------------------------------------------------------------------

    def _tournament_step(self, events: list[dict[str, Any]], now: int) -> None:
        """After an action: if it ended a round, carry out what waits and report."""
        if not any(e["type"] == "reveal" for e in events):
            return
        assert self.game is not None
        if self.paused == PAUSE_WANTED:
            self.paused = PAUSED_NOW  # the round is over: the pause begins
        self._vacate_idle(events)  # absent players out, as kicked ones (clocks.py)
        out = [self.seats[e["seat"]].player for e in events if e["type"] == "eliminated"]
        self._carry_out([p for p in out if p is not None], now, round_end=True)

    def _idle(self) -> bool:
        """No round is being played (or the organizer's pause holds the table before the
        next round's first action): a change can happen now. Not while a round is held
        for seeds after an arrival (seeds.py): a change then would ask again for seeds
        some seats may have revealed already; it waits for that round's end."""
        game = self.game
        if game is None or game.undealt:
            return False
        return game.phase == OVER or self.paused == PAUSED_NOW

    def _carry_out(self, out: list[str], now: int, *, round_end: bool) -> None:
        """Carry out the pending kicks, order and arrivals (and, in heats, send the
        players who go through), report, and close the table if nobody is left.
        ``out``: players the round just ended eliminated (every round's end is
        reported)."""
        game = self.game
        assert game is not None
        taken, dropped = self._kicked()
        out = [*out, *(self.seats[s].player or "" for s in taken), *dropped]
        leave = self._leavers(taken)
        free = self._free_seats(leave, out)
        arriving, self.arrivals = self.arrivals[: len(free)], self.arrivals[len(free) :]
        join = [(seat, a[2]) for seat, a in zip(free, arriving, strict=False)]
        if not leave and not join and not dropped:
            self._wake_if_stuck()
            # A round where nobody went out changes only dice counts: reported for the
            # live standings, but at most every REPORT_EVERY_MS per table (bots play
            # several rounds a second; people take longer than that over a round).
            if round_end and (out or now - self._last_report >= REPORT_EVERY_MS):
                self._queue_report(out, [], [], now)
            return
        left = [self._leaver(s) for s in leave if s not in taken]
        try:
            self._events.extend(reseat(game, leave, join))
        except RuleError as exc:  # never: we only get here between rounds
            raise AssertionError(f"seat change refused: {exc}") from exc
        for s in leave:
            self._detach(s)
            self.seats[s] = Seat()
        for (s, _), (player, name, _, gateway, bot, *more) in zip(join, arriving, strict=True):
            if self.seats[s].player is not None:
                self._detach(s)
            # (an arrival kept by a record from before seeds has no `brings`)
            self.seats[s] = Seat(player, name, gateway, bot, brings=bool(more[1:2] and more[1]))
            self._tell_moved(s, more[0] if more else None)
        # The house-played count is the seat's holder's: a new holder starts at none.
        changed = set(leave) | {s for s, _ in join}
        self.idle = [[s, n] for s, n in self.idle if s not in changed]
        if join:  # the next round is dealt from seeds given after this (seeds.py)
            self._ask_again(now)
        self._changed()
        self._queue_report(out, left, [a[0] for a in arriving] + dropped, now)
        if not any(game.counts) and not self.arrivals:
            self.status = DONE  # broken up: everyone has gone
            self.deadline = None
            self._history_due = True
        self._rearm(now)
        self._wake_if_stuck()

    def _kicked(self) -> tuple[list[int], list[str]]:
        """The organizer's kicks, taken: the seats of kicked players still in (to be
        vacated, and reported out as if eliminated), and kicked players still on their
        way here (dropped from the arrivals: reported joined and out)."""
        game = self.game
        assert game is not None
        kicked = set(self.forfeits)
        self.forfeits = []
        taken = [s for s, c in enumerate(game.counts) if c > 0 and self.seats[s].player in kicked]
        dropped = [a[0] for a in self.arrivals if a[0] in kicked]
        if dropped:
            self.arrivals = [a for a in self.arrivals if a[0] not in kicked]
        return taken, dropped

    def _leavers(self, taken: list[int]) -> list[int]:
        """The seats that leave now: those of the director's order (a table broken up,
        or players moved to balance), in heats every player still in once few enough
        are left to go through, and the ``taken`` seats of kicked players last."""
        game = self.game
        assert game is not None
        alive = [s for s, c in enumerate(game.counts) if c > 0 and s not in taken]
        leave: list[int] = []
        if self.order is not None:
            seq, count = self.order
            keep_two = max(0, min(count or 0, len(alive) - 2))
            leave = alive if count is None else leavers(game, keep_two)
            self.order_done, self.order = seq, None
        if self.advance is not None and 0 < len(alive) - len(leave) <= self.advance:
            leave = alive  # heats: the last `advance` players standing go through
        # (an order's leavers are chosen by the game, which still counts kicked seats)
        return [s for s in leave if s not in taken] + taken

    def _free_seats(self, leave: list[int], out: list[str]) -> list[int]:
        """The seats arrivals may take, in the order they take them: vacant seats first,
        then seats of players already out, but never the seat of a player who went out
        in this very step: they would not see the reveal of the round that put them out
        (their seat's view goes to its new holder). Such an arrival waits for the next
        round's end, or, if no round follows (the game stopped), for a wake-up this
        table sends itself."""
        game = self.game
        assert game is not None
        gone, went = set(leave), set(out)
        just_out = {s for s, seat in enumerate(self.seats) if seat.player in went}
        return sorted(
            (s for s, c in enumerate(game.counts) if (c == 0 or s in gone) and s not in just_out),
            key=lambda s: (s not in gone and self.seats[s].player is not None, s),
        )

    def _leaver(self, s: int) -> dict[str, Any]:
        """What the director is told of a player who leaves seat ``s`` (still in)."""
        seat = self.seats[s]
        assert self.game is not None
        return {
            "player": seat.player, "name": seat.name, "dice": self.game.counts[s],
            "gateway": seat.gateway, "bot": seat.bot,
        }  # fmt: skip

    def _wake_if_stuck(self) -> None:
        """Arrivals still wait and no round will end to seat them: wake this table up
        (an entry to its own inbox, sent with the commit; see _house_move)."""
        if self.arrivals and self.game is not None and self.game.phase == OVER:
            self._play_now = True

    def _history_sends(self) -> list[tuple[str, bytes]]:
        """The closed table's history for its director's records (``table_history``),
        appended with the commit that closed it: in parts that each stay under the
        director inbox's size cap, numbered, so a repeat is taken once."""
        if not self._history_due or self.tournament is None:
            return []
        self._history_due = False
        inbox = keys.TOURNAMENTS.inbox(self.director)
        # The seeds go in the last part (the parts come in order), but for the reseeds:
        # one per arrival, they are spread over the parts with the rows, as size allows.
        seeds = self.logged_seeds()
        reseeds = seeds.pop("reseeds", []) if seeds is not None else []
        items = [("rows", row) for row in self.history] + [("reseeds", r) for r in reseeds]
        parts: list[dict[str, list[Any]]] = [{"rows": []}]
        size = 0
        for kind, item in items:
            item_size = len(wire.encode(item))
            if size and size + item_size > HISTORY_PART_BYTES:
                parts.append({"rows": []})
                size = 0
            parts[-1].setdefault(kind, []).append(item)
            size += item_size
        sends = []
        for n, part in enumerate(parts):
            last = {"seeds": seeds} if seeds is not None and n == len(parts) - 1 else {}
            body = message(
                "table_history",
                id=message_id("h", self.id, n),
                tournament=self.tournament,
                table=self.id,
                part=n,
                parts=len(parts),
                **part,
                **last,
            )
            sends.append((inbox, wire.encode(body)))
        return sends

    def _house_played(self, seat: Seat) -> bool:
        """A tournament's bot with no bot service behind it: the table plays it."""
        return self.tournament is not None and seat.bot is not None and seat.gateway is None

    def _house_move(self) -> list[tuple[str, bytes]]:
        """The house bot's next move (or, at a stopped game, the seating of arrivals that
        waited a step) as an inbox entry of this table's own partition, appended with
        this commit (taken in order with everything else, and only if nothing changed
        the table first: it names the version)."""
        if not self._play_now:
            return []
        self._play_now = False
        if self.status != PLAYING or self.seeding_until is not None:
            return []
        timeout = message("timeout", id=f"t:{self.version}", table=self.id, version=self.version)
        inbox = keys.inbox(keys.partition_of(self.id, self.limits.partitions))
        return [(inbox, wire.encode(timeout))]

    def _tell_moved(self, seat: int, origin: str | None) -> None:
        holder = self.seats[seat]
        if holder.gateway is None or holder.player is None:
            return
        self._direct.append(
            (
                holder.gateway,
                message(
                    "moved",
                    table=self.id,
                    seat=seat,
                    player=holder.handle,
                    tournament=self.tournament,
                    **{"from": origin},
                ),
            )
        )

    def _queue_report(
        self, out: list[str], left: list[dict[str, Any]], joined: list[str], now: int
    ) -> None:
        self._last_report = now
        game = self.game
        assert game is not None
        seated = [
            [s.player, game.counts[i]]
            for i, s in enumerate(self.seats)
            if s.player is not None and game.counts[i] > 0
        ]
        if out or left or joined:  # the seating changed: a row of the table's history
            brought = dict(seated)  # (0: kicked on the way here, never seated)
            self.history.append(
                [
                    game.round_no,
                    now,
                    [[p, brought.get(p, 0)] for p in joined],
                    [[p["player"], p["dice"]] for p in left],
                    list(out),
                ]
            )
        self._reports.append(
            {
                "seated": seated,
                "out": out,
                "left": left,
                "joined": joined,
                "round": game.round_no,
                "version": self.version,
                "done": self.order_done,
            }
        )

    def _reports_out(self) -> list[Report]:
        """The reports of this batch, for the director's inbox (the partition loop
        writes a commit's reports as one entry per tournament: dudo.entity.reports)."""
        reports, self._reports = self._reports, []
        if not reports or self.tournament is None:
            return []
        inbox = keys.TOURNAMENTS.inbox(self.director)
        return [(inbox, self.tournament, {"table": self.id, **report}) for report in reports]

    deadline: int | None
