"""How a tournament goes on: the start, the tables' reports, balancing, heats, the end.

A mixin of :class:`~dudo.director.tournament.Tournament` (the fields it uses are
declared there): the start seats everyone at as few tables as they need; each
table's report updates who sits where with how many dice and who is out; in
``elimination`` the balancer's orders and moves follow (decided once per batch),
in ``heats`` the players who go through wait for the next heat; when one player
is left they win and the pool is paid out by place.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from ..bots import bot_name
from ..entity import HOUSE, account_of, pool_of, result_send
from ..wire import TableReport, keys, message
from .balance import Balancer, Decisions, first_seating
from .prizes import split_pool
from .standings import Entrant
from .state import CANCELLED, LISTED_OVER_MS, OVER, RUNNING, TournamentState


class Progress(TournamentState):
    """The start, the reports and the end of a tournament."""

    if TYPE_CHECKING:

        def _changed(self, msg: dict[str, Any] | None = None, *, visible: bool = True) -> None: ...
        def _entrant_message(self, entrant: Entrant) -> dict[str, Any]: ...
        def _send_to_table(self, table: str, body: dict[str, Any]) -> None: ...
        def _ledger(self, kind: str, transfers: list[list[Any]]) -> None: ...
        def _enter(self, entrant: Entrant) -> None: ...

    # -- the start ----------------------------------------------------------------------

    def _start(self, rng: random.Random) -> None:
        """Close registration, fill with bots if asked, seat everyone at tables."""
        self.status = RUNNING
        self.started = self._now
        self.wake = None
        self._fill_with_bots(rng)
        players = list(self.entrants)
        rng.shuffle(players)
        self._changed()
        if len(players) < 2:
            self._finish(players)
            return
        if self.config["format"] == "heats":
            self.heat = 1
            self._seat_heat(players, rng)
        else:
            self.balancer = Balancer(self.config["seats"])
            for table, group in self._new_tables(players, None):
                self.balancer.open(table, len(group))
        self.tables_at_start = self.tables_made

    def _cancel(self) -> None:
        """Never begun (or cancelled by its host): everything each entrant paid goes back
        (by double entry, as an unregister's does), and it is listed as cancelled for a day."""
        back = [t for e in self.entrants.values() if e.paid for t in self._paid_back(e)]
        self.pool = 0
        self.status = CANCELLED
        self._organizer_done()
        self.wake = self._now + LISTED_OVER_MS
        self._changed()
        if back:
            self._ledger("lc", back)

    def _organizer_done(self) -> None:
        """Ended: no pause holds and no line of the host's stays (a cancelled tournament
        had gone on saying "paused" and "back in a minute"; issue 53, items 2 and 11)."""
        self.paused = False
        self.announcement = None

    def _paid_back(self, entrant: Entrant) -> list[list[Any]]:
        """The ledger's transfers that give ``entrant`` its buy-in back from the pool."""
        return [
            [pool_of(self.id), -entrant.paid],
            [account_of(entrant.player, entrant.bot), entrant.paid],
        ]

    def _fill_with_bots(self, rng: random.Random) -> None:
        level = self.config["bots"]
        if level is None:
            return
        # Up to `start_players` if set, else the last table's empty seats; two at least.
        seats, n = self.config["seats"], len(self.entrants)
        wanted = max(2, self.config["start_players"] or 0, -(-n // seats) * seats)
        wanted = min(wanted, self.config["max_players"])
        buy_in = self.config["buy_in"]
        for i in range(n, wanted):
            self._enter(Entrant(f"bot-{self.id}-{i}", bot_name(i - n), None, level, paid=buy_in))
            self.pool += buy_in
        bots = buy_in * max(0, wanted - n)
        self._ledger("lf", [[HOUSE, -bots], [pool_of(self.id), bots]])

    def _new_tables(
        self, players: list[str], advance: int | None, *, fresh: bool = True
    ) -> list[tuple[str, list[str]]]:
        """Create tables for ``players`` (as few as they need, sizes within one), each
        with the starting dice (``fresh``) or the dice they have."""
        start_dice = self.config["rules"]["start_dice"]
        rules, seats = self._table_rules(), [{"kind": "open"}] * self.config["seats"]
        made = []
        it = iter(players)
        for size in first_seating(len(players), self.config["seats"]):
            group = [next(it) for _ in range(size)]
            self.tables_made += 1
            table = self.limits.authority.tournament_table(self.id, self.tables_made)
            entrants = []
            for player in group:
                entrant = self.entrants[player]
                entrant.dice = start_dice if fresh else entrant.dice
                entrant.table = table
                self.touch(entrant)
                entrants.append(self._entrant_message(entrant))
            self._send_to_table(
                table,
                message(
                    "create",
                    id=f"c:{self.id}",
                    table=table,
                    gateway="director",
                    rules=rules,
                    seats=seats,
                    tournament={
                        "id": self.id,
                        "director": keys.partition_of(self.id, self.limits.director_partitions),
                        "players": entrants,
                        "advance": advance,
                    },
                ),
            )
            made.append((table, group))
        return made

    def _table_rules(self) -> dict[str, Any]:
        rules = dict(self.config["rules"])
        rules.update(min_players=2, bots_fill=False, stake=0)
        return rules

    def _seat_heat(self, players: list[str], rng: random.Random) -> None:
        final = len(players) <= self.config["seats"]
        advance = None if final else self.config["advance"]
        self.heat_tables = [t for t, _ in self._new_tables(players, advance)]
        self._tables_changed.update(self.heat_tables)

    # -- reports ------------------------------------------------------------------------

    def _on_report(self, msg: TableReport, rng: random.Random) -> None:
        table, version = msg.table, msg.version
        last = self.reported.get(table)
        if (last is not None and version <= last) or self.status != RUNNING:
            return  # a repeat, or news of a tournament already over
        self.reported[table] = version  # none before: the table's creation, its first players
        self._tables_changed.add(table)
        left, joined, out = msg.left, msg.joined, msg.out
        if last is not None and (left or joined):
            self.reseats += 1
        for player in out:
            self._eliminate(player)
        # The seated players' dice: kept as the table reported them (stored in its row),
        # not copied to each entrant (most reports change nothing else).
        self.seated_at[table] = msg.seated.copy()  # its own bytes, not the entry's
        gone = [p["player"] for p in left if p["player"] not in self.kicked]
        for moving in left:
            if moving["player"] in self.kicked:  # sent away before the kick reached it
                self._eliminate(moving["player"])
                out = [*out, moving["player"]]
                continue
            entrant = self.entrants.get(moving["player"])
            if entrant is not None:
                self._came_from[moving["player"]] = table  # for this batch's moves
                entrant.dice, entrant.table = moving["dice"], None
                entrant.gateway = moving["gateway"] or entrant.gateway
                self.touch(entrant)
        self._changed()
        if self.config["format"] == "heats":
            self._heat_report(table, msg, gone, rng)
        elif self.balancer is not None and table in self.balancer.tables:
            # Into the balancer's counts; decisions wait for the batch's end.
            came = 0 if last is None else len(joined)
            if self.balancer.record(table, msg.seated_count, msg.done, gone, came):
                self._decide = True
        if out:
            self._maybe_finish()

    def _eliminate(self, player: str) -> None:
        entrant = self.entrants.get(player)
        if entrant is None or entrant.place is not None:
            return
        self.out += 1
        entrant.dice, entrant.table = 0, None
        entrant.place = len(self.entrants) - self.out + 1
        self.touch(entrant)

    def _decide_moves(self) -> None:
        """Once per batch of reports: seat the players who left, plan, send the orders."""
        assert self.balancer is not None
        decisions = Decisions()
        self.balancer.decide(decisions)
        self.max_imbalance = max(self.max_imbalance, self.balancer.spread())
        for player, target in decisions.moves:
            entrant = self.entrants[player]
            entrant.table = target
            self.touch(entrant)
            self.seat_seq += 1
            self._send_to_table(
                target,
                message(
                    "seat_in",
                    id=f"s:{self.seat_seq}",
                    table=target,
                    tournament=self.id,
                    seq=self.seat_seq,
                    **self._entrant_message(entrant),
                    **{"from": self._came_from.pop(player, None)},
                ),
            )
        for order in decisions.orders:
            self._send_to_table(
                order.table,
                message(
                    "order",
                    id=f"o:{order.seq}",
                    table=order.table,
                    tournament=self.id,
                    seq=order.seq,
                    count=order.count,
                ),
            )

    def _heat_report(
        self, table: str, msg: TableReport, left: list[str], rng: random.Random
    ) -> None:
        self.qualified.extend(p for p in left if p not in self.qualified)
        if not msg.seated_count and table in self.heat_tables:
            self.heat_tables.remove(table)
            self._tables_changed.add(table)
        if self.heat_tables or not self.qualified:
            return
        players, self.qualified = self.qualified, []
        if len(players) == 1:
            self._finish(players)
            return
        rng.shuffle(players)
        self.heat += 1
        self._seat_heat(players, rng)

    def _maybe_finish(self) -> None:
        if self.status == RUNNING and len(self.entrants) - self.out == 1:
            self._finish([p for p, e in self.entrants.items() if e.place is None])

    def _finish(self, standing: list[str]) -> None:
        """One player is left: they win; the pool is paid out by place."""
        for player in standing:
            winner = self.entrants[player]
            winner.place = 1
            self.touch(winner)
            if winner.table is not None:  # let the final table close
                self._close_table(winner.table)
        by_place = sorted(self.entrants.values(), key=lambda e: e.place or 0)
        paid_out: list[list[Any]] = [[pool_of(self.id), -self.pool]]
        for entrant, amount in zip(
            by_place,
            split_pool(self.pool, self.config["payouts"], max(1, len(by_place))),
            strict=False,
        ):
            entrant.won = amount
            self.touch(entrant)
            paid_out.append([account_of(entrant.player, entrant.bot), amount])
        self.pool = 0
        self.status = OVER
        self._organizer_done()
        self.wake = self._now + LISTED_OVER_MS  # listed as over until then
        self._changed()
        self._ledger("lp", paid_out)
        # Rated: the people who played it out. One the host took out was not beaten at a
        # table: their rating does not move for it (issue 53, item 3).
        kicked = set(self.kicked)
        people = [[e.player, e.name] for e in by_place if e.bot is None and e.player not in kicked]
        self._sends.extend(result_send("tournament", self.id, people))

    def _close_table(self, table: str) -> None:
        seq = (self.balancer.last_seq + 1) if self.balancer else 1
        if self.balancer is not None:
            self.balancer.last_seq = seq
        self._send_to_table(
            table,
            message("order", id=f"o:{seq}", table=table, tournament=self.id, seq=seq, count=None),
        )
