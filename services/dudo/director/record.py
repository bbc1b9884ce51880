"""How a tournament is stored: one record field, and a row per entrant and per table.

A mixin of :class:`~dudo.director.tournament.Tournament`. The record's hash holds
``s`` (everything but entrants and tables) and ``e:<player>`` / ``t:<table>`` rows
beside it (and ``h:<table>``, a closed table's history, written once): a batch of
reports changes a few entrants and tables of thousands, and the commit writes those
rows only (:attr:`dudo.entity.Flush.rows`). Entrants mark
themselves changed (:class:`~dudo.director.standings.Entrant`); the balancer says
which tables it touched; the tournament marks the tables whose report or heat
changed. A seated player's dice now are in their table's row (as its last report
gave them: ``seated_at``), their own row keeps those of their last move: most
reports change dice only, and then one table row is written instead of a row per
player.
``tests/worker/test_tournament_play.py`` checks after every cycle of whole
tournaments that what Redis holds is, field for field, what the director holds
in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Self

import msgspec

from .. import wire
from ..auth import table_order
from ..entity import RecentIds
from .balance import Balancer, TableCount
from .standings import Entrant
from .state import RUNNING, TournamentState

FORMAT = 3  # 3: entrants and tables in rows of their own (fields e:<player>, t:<table>)
ENTRANT_ROW = "e:"  # + player id: that entrant's row in the record's hash
# + table id: the last report's version, in the heat or not, its balancing count and the
# [player, dice] of its last report (the dice of the players seated there)
TABLE_ROW = "t:"
HISTORY_ROW = "h:"  # + table id: a closed table's history (TournamentState.histories)
SEEDS_ROW = "d:"  # + table id: what its dice came from (TournamentState.table_seeds)


class Stored(TournamentState):
    """Writing a tournament to its hash and reading it back."""

    if TYPE_CHECKING:

        def _timer_name(self) -> str: ...

    def to_bytes(self) -> bytes:
        """The record's own field: everything but the entrants and tables (rows)."""
        b = self.balancer
        balancer = None if b is None else [b.seats, b.waiting, b.last_seq]
        return wire.encode(
            [
                FORMAT,
                self.id,
                self.config,
                self.host,
                self.version,
                self.status,
                balancer,
                self.heat,
                self.out,
                self.entrant_seq,
                self.pool,
                self.tables_made,
                self.seat_seq,
                self.subscribers,
                [self.max_imbalance, self.reseats, self.tables_at_start],
                "\n".join(self.seen),
                self.wake,
                self.created,
                [
                    self.paused,
                    self.pause_seq,
                    self.announcement,
                    self.started,
                    self.kicked,
                    self.reentered,
                    self.paused_at,
                ],
            ]
        )

    def to_rows(self, *, everything: bool = False) -> list[tuple[str, bytes]]:
        """The rows that changed since the last call (all of them with ``everything``):
        ``(field, encoded row)``, or ``(field, b"")`` for an entrant who unregistered."""
        balancer = self.balancer
        if everything:
            players: Iterable[str] = self.entrants
            tables: Iterable[str] = self.reported.keys() | set(self.heat_tables)
            if balancer is not None:
                tables = tables | balancer.tables.keys()
            histories: Iterable[str] = self.histories
        else:
            players, tables = self._entrants_changed, self._tables_changed
            histories = self._histories_changed
            if balancer is not None and balancer.touched:
                tables = tables | balancer.touched
        encode, entrants, reported = wire.encode, self.entrants, self.reported
        seated = self.seated_at
        rows = []
        for player in players:
            entrant = entrants.get(player)
            rows.append((ENTRANT_ROW + player, b"" if entrant is None else encode(entrant)))
        heat = set(self.heat_tables) if tables and self.heat_tables else ()
        counts = balancer.tables if balancer is not None else {}
        for table in tables:
            count = counts.get(table)
            counted = None
            if count is not None:
                counted = [count.seated, count.arriving, count.breaking, count.order,
                           count.order_seq]  # fmt: skip
            row = [reported.get(table, -1), table in heat, counted, seated.get(table)]
            rows.append((TABLE_ROW + table, encode(row)))
        for table in histories:
            rows.append((HISTORY_ROW + table, encode(self.histories[table])))
            if table in self.table_seeds:
                rows.append((SEEDS_ROW + table, encode(self.table_seeds[table])))
        if not everything:
            self._entrants_changed.clear()
            self._tables_changed.clear()
            self._histories_changed.clear()
            if balancer is not None:
                balancer.touched.clear()
        return rows

    def to_record(self) -> dict[bytes, bytes]:
        """The whole record's hash, as stored (without the version field ``v``)."""
        rows = {name.encode(): row for name, row in self.to_rows(everything=True)}
        return {b"s": self.to_bytes(), **rows}

    @classmethod
    def from_bytes(cls, data: bytes, rows: Mapping[bytes, bytes] | None = None) -> Self:
        """The tournament from its record and rows (a hash's fields as read from Redis;
        others, such as ``v`` and ``s``, are ignored)."""
        raw = wire.unpack(data)
        if isinstance(raw, list) and raw[0] == 2:
            return cls._from_format_2(raw)
        if not isinstance(raw, list) or raw[0] != FORMAT:
            raise ValueError("unknown tournament record format")
        if len(raw) == 18:  # before the organizer's controls
            raw = [*raw, [False, 0, None, 0, [], {}]]
        (_, tid, config, host, version, status, balancer, heat, out, entrant_seq, pool, made,
         seq, subscribers, measured, seen, wake, created, organizer) = raw  # fmt: skip
        people, tables, histories, seeds = _read_rows(rows or {})
        b = None
        if balancer is not None:
            seats, waiting, last_seq = balancer
            counts = {t: TableCount(t, *row[2]) for t, row in tables if row[2] is not None}
            b = Balancer(seats, counts, waiting, last_seq)
        t = cls(
            id=tid,
            config=config,
            host=host,
            version=version,
            status=status,
            balancer=b,
            reported={table: row[0] for table, row in tables if row[0] >= 0},
            heat=heat,
            heat_tables=[table for table, row in tables if row[1]],
            out=out,
            entrant_seq=entrant_seq,
            pool=pool,
            tables_made=made,
            seat_seq=seq,
            subscribers=subscribers,
            seen=RecentIds(seen.split("\n") if seen else ()),
            wake=wake,
            created=created,
            histories=dict(sorted(histories.items(), key=lambda h: table_order(h[0]))),
            table_seeds=seeds,
        )
        for entrant in people:
            t.entrants[entrant.player] = entrant
        # Rows stored before held no dice (their players' rows did).
        t.seated_at = {
            table: msgspec.Raw(wire.encode(row[3]))  # the bytes the table's report held
            for table, row in tables
            if row[3:] and row[3] is not None
        }
        if config["format"] == "heats" and status == RUNNING:  # through, waiting
            t.qualified = [p for p, e in t.entrants.items() if e.place is None and not e.table]
        t.max_imbalance, t.reseats, t.tables_at_start = measured
        t.paused, t.pause_seq, t.announcement, t.started, t.kicked, t.reentered = organizer[:6]
        t.paused_at = organizer[6] if len(organizer) > 6 else 0  # not kept before 2026-12-06
        t.timer_member = t._timer_name() if wake is not None else None
        return t

    @classmethod
    def from_hash(cls, stored: Mapping[bytes, bytes]) -> Self | None:
        """The tournament from its whole hash as read (HGETALL), None if there is none."""
        blob = stored.get(b"s")
        return cls.from_bytes(blob, stored) if blob is not None else None

    @classmethod
    def _from_format_2(cls, raw: list[Any]) -> Self:
        """A record written before rows (everything in one field): read as the rows
        it would have had, all of them to be written with the next commit."""
        (_, tid, config, host, version, status, chunks, balancer, reported, heat,
         heat_tables, _qualified, out, pool, made, seq, subscribers, measured, seen, wake,
         created) = raw  # fmt: skip
        entrants = [[*row, n] for n, row in enumerate((r for c in chunks for r in c), 1)]
        head = None
        tables = {t: [v, t in heat_tables, None] for t, v in reported.items()}
        for table in heat_tables:
            tables.setdefault(table, [-1, True, None])
        if balancer is not None:
            seats, counts, waiting, last_seq = balancer
            head = [seats, waiting, last_seq]
            for name, *count in counts:
                tables.setdefault(name, [-1, False, None])[2] = count
        record = [
            FORMAT, tid, config, host, version, status, head, heat, len(out), len(entrants),
            pool, made, seq, subscribers, measured, seen, wake, created,
        ]  # fmt: skip
        rows = {(ENTRANT_ROW + row[0]).encode(): wire.encode(row) for row in entrants}
        rows.update({(TABLE_ROW + t).encode(): wire.encode(row) for t, row in tables.items()})
        t = cls.from_bytes(wire.encode(record), rows)
        t._entrants_changed.update(t.entrants)
        t._tables_changed.update(tables)
        return t


def _read_rows(
    rows: Mapping[bytes, bytes],
) -> tuple[
    list[Entrant], list[tuple[str, list[Any]]], dict[str, list[list[Any]]],
    dict[str, dict[str, Any]],
]:
    """A record's rows by kind (``e:`` entrants in their order, ``t:`` tables in the
    order they were opened, ``h:`` their histories, ``d:`` their seeds); other fields
    are ignored."""
    people: list[Entrant] = []
    tables: list[tuple[str, list[Any]]] = []
    histories: dict[str, list[list[Any]]] = {}
    seeds: dict[str, dict[str, Any]] = {}
    for name, value in rows.items():
        if name.startswith(b"e:"):
            people.append(Entrant.from_row(wire.unpack(value)))
        elif name.startswith(b"t:"):
            tables.append((name[2:].decode(), wire.unpack(value)))
        elif name.startswith(b"h:"):
            histories[name[2:].decode()] = wire.unpack(value)
        elif name.startswith(b"d:"):
            seeds[name[2:].decode()] = wire.unpack(value)
    people.sort(key=lambda e: e.number)
    tables.sort(key=lambda t: table_order(t[0]))
    return people, tables, histories, seeds
