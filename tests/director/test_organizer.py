"""The organizer's controls and the entries after the start, on the tournament entity
without Redis (issue 31): pause and resume, cancel, kick, announce, private tournaments,
late registration and re-entry. Every chip moves by double entry; every entrant ends
with exactly one place."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dudo import wire
from dudo.director.standings import Entrant
from dudo.director.state import CANCELLED, RUNNING
from dudo.director.tournament import Context, Tournament
from dudo.wire import Refusal, keys
from dudo.worker.quota import AppQuotas

from .test_tournament import codes, create

RNG = random.Random(7)
LEDGER = keys.RATINGS.inbox(0)


class Cup:
    """A tournament fed by hand as its director's loop would: messages in, its flush out
    (table messages and ledger entries kept apart), reports written for its tables."""

    def __init__(self, **over: Any) -> None:
        self.now = 1_000
        self.t = Tournament.create(create(**over), self.now, Context(16, 4))
        self.tables: dict[str, list[dict[str, Any]]] = {}  # table -> messages it got
        self.ledger: list[list[Any]] = []
        self.ledger_ids: set[str] = set()
        self.out: list[dict[str, Any]] = []
        self.results: list[dict[str, Any]] = []  # for the ratings keeper
        self.versions: dict[str, int] = {}
        self.n = 0
        self.flush()

    def flush(self) -> list[dict[str, Any]]:
        flush = self.t.flush()
        for stream, data in flush.sends:
            body = wire.unpack(data)
            if stream == LEDGER:
                if body["type"] == "result":
                    self.results.append(body)
                if body["type"] == "ledger" and body["id"] not in self.ledger_ids:
                    self.ledger_ids.add(body["id"])  # as the keeper: each id once
                    self.ledger.extend(body["transfers"])
                continue
            wire.validate(body)
            self.tables.setdefault(body["table"], []).append(body)
        out = [wire.unpack(data) for _, data in flush.outputs]
        self.out.extend(out)
        return out

    def send(self, kind: str, **fields: Any) -> list[dict[str, Any]]:
        self.n += 1
        fields.setdefault("id", f"m{self.n}")
        body = wire.message(kind, tournament="cup", gateway="gw", **fields)
        wire.validate(body)
        self.t.handle(body, self.now, RNG)
        return [m for m in self.flush() if m.get("id") == fields["id"]]  # its answers

    def organize(self, action: str, by: str = "h", **fields: Any) -> list[dict[str, Any]]:
        return self.send("organize", player=by, action=action, **fields)

    def report(self, table: str, *, out: tuple[str, ...] = (), left: tuple[str, ...] = (),
               joined: tuple[str, ...] = ()) -> None:  # fmt: skip
        """``table`` reports its round's end: ``out`` eliminated, ``left`` sent away."""
        version = self.versions[table] = self.versions.get(table, 0) + 1
        gone = set(out) | set(left)
        seated = [[p, 2] for p, e in self.t.entrants.items() if e.table == table and p not in gone]
        body = wire.message(
            "report", id=f"r:{table}:{version}", tournament="cup", table=table, version=version,
            round=version, done=0, seated=seated, joined=list(joined), out=list(out),
            left=[{"player": p, "name": p, "dice": 2, "gateway": None, "bot": None} for p in left],
        )  # fmt: skip
        wire.validate(body)
        self.t.handle(body, self.now, RNG)
        self.flush()

    def start_with(self, players: int) -> None:
        for i in range(players):
            self.send("register", player=f"p{i}", name=f"P{i}", bot=None)
        self.send("begin", player="h")
        for table, got in self.tables.items():  # each table's first report
            [created] = [m for m in got if m["type"] == "create"]
            self.report(table, joined=tuple(p["player"] for p in created["tournament"]["players"]))

    def to_table(self, kind: str) -> list[dict[str, Any]]:
        return [m for got in self.tables.values() for m in got if m["type"] == kind]

    def balance(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for account, chips in self.ledger:
            totals[account] = totals.get(account, 0) + chips
        return totals


def places(t: Tournament) -> list[int]:
    return sorted(e.place for e in t.entrants.values() if e.place is not None)


def test_only_the_host_runs_it_and_nothing_after_the_end() -> None:
    cup = Cup(max_players=8)
    cup.send("register", player="h", name="Host", bot=None)
    assert codes(cup.organize("pause", by="p9")) == ["not_host"]
    assert codes(cup.organize("pause")) == ["game_not_started"]  # not running yet
    # An announcement before the start: every entrant's standings carry it.
    [answer] = cup.organize("announce", text="  Starts at  nine:\tbring coffee ")
    assert answer["type"] == "tournament" and answer["id"] == f"m{cup.n}"
    assert answer["standings"]["announcement"] == {"text": "Starts at nine: bring coffee",
                                                   "at": cup.now}  # fmt: skip
    assert codes(cup.organize("announce", text="hidden\u202etext")) == ["bad_message"]
    cup.organize("cancel")
    assert cup.t.status == CANCELLED
    assert codes(cup.organize("resume")) == ["tournament_over"]


def test_before_the_start_the_host_sees_who_registered_and_may_kick_with_the_buy_in_back() -> None:
    cup = Cup(max_players=8)
    for name in ("h", "a", "b"):
        cup.send("register", player=name, name=name.upper(), bot=None)
    [answer] = cup.send("standings")
    assert [e["name"] for e in answer["standings"]["registered"]] == ["H", "A", "B"]
    target = wire.public_id("a")
    assert codes(cup.organize("kick", target=wire.public_id("h"))) == ["bad_message"]
    assert codes(cup.organize("kick", target="nobody")) == ["not_seated"]
    [answer] = cup.organize("kick", target=target)
    assert [e["name"] for e in answer["standings"]["registered"]] == ["H", "B"]
    assert "a" not in cup.t.entrants and cup.t.pool == 14
    assert cup.balance() == {"h": -7, "a": 0, "b": -7, "pool:cup": 14}


def test_a_pause_reaches_every_table_and_a_resume_follows_it() -> None:
    cup = Cup(max_players=12)
    cup.send("register", player="h", name="Host", bot=None)
    cup.start_with(8)  # 9 players at 4 seats: three tables
    assert cup.t.status == RUNNING and len(cup.tables) == 3
    cup.organize("pause")
    cup.organize("pause")  # again: nothing more is sent
    pauses = cup.to_table("pause")
    assert sorted(m["table"] for m in pauses) == sorted(cup.tables)
    assert {(m["seq"], m["on"]) for m in pauses} == {(1, True)}
    [answer] = cup.organize("resume")
    assert answer["standings"]["paused"] is False
    resumed = [m for m in cup.to_table("pause") if m["seq"] == 2]
    assert sorted(m["table"] for m in resumed) == sorted(cup.tables)
    assert not any(m["on"] for m in resumed)
    again = Tournament.from_hash(cup.t.to_record())
    assert again is not None and again.pause_seq == 2 and not again.paused


def test_a_line_made_in_a_pause_goes_with_it_and_nothing_of_the_host_outlives_the_end() -> None:
    """Issue 53, items 2 and 11: "Short break, back in 1 minute" stayed after Resume and
    after the end; a tournament cancelled while paused went on saying "paused"."""
    cup = Cup(max_players=12)
    cup.send("register", player="h", name="Host", bot=None)
    cup.start_with(8)
    cup.organize("announce", text="Final table at nine")
    cup.now += 1_000
    cup.organize("pause")
    cup.now += 1_000
    [answer] = cup.organize("resume")  # a line from before the pause stays
    assert answer["standings"]["announcement"]["text"] == "Final table at nine"
    cup.organize("pause")
    cup.now += 1_000
    cup.organize("announce", text="Short break, back in 1 minute")
    again = Tournament.from_hash(cup.t.to_record())  # the pause's time is kept
    assert again is not None and again.paused_at == cup.t.paused_at > 0
    cup.now += 1_000
    [answer] = cup.organize("resume")
    assert answer["standings"]["announcement"] is None and not answer["standings"]["paused"]
    cup.organize("announce", text="Last hand")
    cup.organize("pause")
    [answer] = cup.organize("cancel")
    standings = answer["standings"]
    assert (standings["status"], standings["paused"], standings["announcement"]) == (
        "cancelled", False, None,
    )  # fmt: skip


def test_a_kicked_player_is_out_at_their_tables_round_end_and_never_seated_again() -> None:
    cup = Cup(max_players=12, payouts=[100])
    cup.send("register", player="h", name="Host", bot=None)
    cup.start_with(8)
    victim = next(p for p in cup.t.entrants if p != "h")
    table = cup.t.entrants[victim].table
    assert table is not None
    cup.organize("kick", target=wire.public_id(victim))
    [forfeit] = cup.to_table("forfeit")
    assert forfeit["table"] == table and forfeit["player"] == victim
    assert cup.t.entrants[victim].place is None  # until the table's round ends
    cup.report(table, out=(victim,))
    assert cup.t.entrants[victim].place == 9
    # Issue 53, item 3: the places say the host took them out (not beaten at a table).
    [answer] = cup.send("standings")
    [place] = [p for p in answer["standings"]["places"] if p["place"] == 9]
    assert place["kicked"] is True and "bot" not in place
    assert codes(cup.organize("kick", target=wire.public_id(victim))) == ["not_seated"]
    # A kicked player whom their table sent away before the kick reached it is placed
    # out when the report of that comes, not seated elsewhere.
    other = next(p for p, e in cup.t.entrants.items() if e.table == table and p != "h")
    cup.organize("kick", target=wire.public_id(other))
    seat_ins = len(cup.to_table("seat_in"))
    cup.report(table, left=(other,))
    assert cup.t.entrants[other].place == 8 and len(cup.to_table("seat_in")) == seat_ins


def test_a_kicked_player_keeps_their_place_but_is_not_rated_for_it() -> None:
    """Issue 53, item 3: a player the host took out lost rating as if beaten (-4.0)."""
    cup = Cup(max_players=4)
    cup.send("register", player="h", name="Host", bot=None)
    cup.start_with(2)
    [table] = cup.tables
    cup.organize("kick", target=wire.public_id("p0"))
    cup.report(table, out=("p0",))
    cup.report(table, out=("p1",))
    assert cup.t.status == "over"
    [result] = cup.results
    assert [player for player, _ in result["ranking"]] == ["h", "p1"]  # not p0
    assert cup.t.entrants["p0"].place == 3


def test_a_cancel_during_play_closes_every_table_and_gives_every_chip_back() -> None:
    cup = Cup(max_players=12)
    cup.send("register", player="h", name="Host", bot=None)
    cup.start_with(8)
    first = next(iter(cup.tables))
    loser = next(p for p, e in cup.t.entrants.items() if e.table == first and p != "h")
    cup.report(first, out=(loser,))
    [answer] = cup.organize("cancel")
    assert cup.t.status == CANCELLED and answer["standings"]["status"] == "cancelled"
    closes = [m for m in cup.to_table("order") if m["count"] is None]
    assert sorted(m["table"] for m in closes) == sorted(cup.tables)
    # Every account is back where it started, the pool empty.
    assert set(cup.balance().values()) == {0}
    cup.report(first, out=("h",))  # reports after the cancel change nothing
    assert cup.t.entrants["h"].place is None


def test_a_private_tournament_is_unlisted_and_registers_by_invite_only() -> None:
    cup = Cup(max_players=8, private=True)
    assert cup.t.lobby_entry() is None
    [registered] = cup.send("register", player="h", name="Host", bot=None)
    invite = registered["invite"]  # the host's answer carries the code to hand out
    assert invite and len(invite) >= 12
    assert codes(cup.send("register", player="a", name="A", bot=None)) == ["unauthorized"]
    forged = ("y" if invite[0] == "x" else "x") + invite[1:]  # one character changed
    wrong = cup.send("register", player="a", name="A", bot=None, invite=forged)
    assert codes(wrong) == ["unauthorized"] and "a" not in cup.t.entrants
    [ok] = cup.send("register", player="a", name="A", bot=None, invite=invite)
    assert ok["type"] == "registered" and "invite" not in ok
    again = Tournament.from_hash(cup.t.to_record())
    assert again is not None and again.config["invite"] == invite


def test_late_registration_and_re_entry_move_the_places_and_pay_into_the_pool() -> None:
    cup = Cup(max_players=20, late_minutes=10, reentries=1, payouts=[70, 30])
    cup.send("register", player="h", name="Host", bot=None)
    cup.start_with(7)  # 8 players at 4 seats: two full tables
    first, _ = list(cup.tables)
    out1 = next(p for p, e in cup.t.entrants.items() if e.table == first and p != "h")
    cup.report(first, out=(out1,))
    assert cup.t.entrants[out1].place == 8
    # A late entrant: every place given moves down one; seated where there is room.
    cup.send("register", player="late", name="Late", bot=None)
    assert cup.t.entrants[out1].place == 9 and cup.t.entrants["late"].place is None
    # ... and their place will say so (item 12 of issue 53), the record keeps it, and an
    # entrant's row stored before it was kept reads as on time.
    assert cup.t.entrants["late"].late and not cup.t.entrants[out1].late
    again = Tournament.from_hash(cup.t.to_record())
    assert again is not None and again.entrants["late"].late
    row = wire.unpack(wire.encode(cup.t.entrants["late"]))
    assert len(row) == 14 and Entrant.from_row(row[:12]).late is False
    assert Entrant.from_row(row[:13]).seeds is False  # a row from before seeds: none
    [seat] = [m for m in cup.to_table("seat_in") if m["player"] == "late"]
    assert seat["table"] == first and seat["dice"] == cup.t.config["rules"]["start_dice"]
    # The player out buys back in once: their place goes, a fresh stack, another buy-in.
    cup.report(first, joined=("late",))
    cup.send("register", player=out1, name="P", bot=None)
    assert cup.t.entrants[out1].place is None and cup.t.out == 0
    assert cup.t.entrants[out1].paid == 14 and cup.t.pool == 10 * 7
    # Two players wait and no table has room: a new table is opened for them.
    cup.send("register", player="x1", name="X1", bot=None)
    cup.send("register", player="x2", name="X2", bot=None)
    creates = cup.to_table("create")
    assert len(creates) == 3 and len(cup.t.balancer.tables) == 3  # type: ignore[union-attr]
    # Out again: no second re-entry; and after the window nobody registers.
    table = cup.t.entrants[out1].table
    assert table is not None
    cup.report(table, out=(out1,))
    assert codes(cup.send("register", player=out1, name="P", bot=None)) == ["game_started"]
    cup.now += 10 * 60_000
    assert codes(cup.send("register", player="y", name="Y", bot=None)) == ["game_started"]
    # Places stay a permutation of the bottom: everyone out so far has one of them.
    assert places(cup.t) == list(range(len(cup.t.entrants) - cup.t.out + 1,
                                       len(cup.t.entrants) + 1))  # fmt: skip
    # The late entrant goes out: their place is marked late, and no other is.
    late_table = cup.t.entrants["late"].table
    assert late_table is not None
    cup.report(late_table, out=("late",))
    [answer] = cup.send("standings")
    assert [p["name"] for p in answer["standings"]["places"] if p.get("late")] == ["Late"]
    assert len(answer["standings"]["places"]) == cup.t.out == 2
    # Chips: every buy-in, re-entry included, is in the pool, by double entry.
    assert cup.balance()["pool:cup"] == cup.t.pool == 12 * 7
    assert sum(cup.balance().values()) == 0


@pytest.mark.parametrize(
    "over", [{"format": "heats", "late_minutes": 5}, {"format": "heats", "reentries": 1},
             {"reentries": 1}],  # re-entry is within late registration
)  # fmt: skip
def test_late_entry_and_re_entry_are_refused_where_they_cannot_work(over: dict[str, Any]) -> None:
    with pytest.raises(Refusal) as refused:
        Tournament.create(create(**over), 0, Context())
    assert refused.value.code == "bad_rules"
    with pytest.raises(wire.WireError):  # beyond the schema's range: refused on decoding
        create(late_minutes=241)


def test_an_admitted_app_is_held_to_its_quotas_of_creates_and_registrations() -> None:
    """Issue 31, item 6: an app that runs its own gateways can switch their per-address
    limits off, so the director counts per app too; the deployment's own gateways (not
    admitted) and processes are not counted."""
    context = Context(16, 4, quotas=AppQuotas(creates_per_min=2, registers_per_min=3))
    context.authority.gateway_apps = {"gw": "acme", "other-gw": "other"}

    def made(tid: str, gateway: str = "gw") -> Tournament | str:
        body = create(tournament=tid, gateway=gateway, host=None, request="k" * 12)
        try:
            return Tournament.create(body, 0, context)
        except Refusal as exc:
            return exc.code

    first, _, third = made("c1"), made("c2"), made("c3")
    assert isinstance(first, Tournament) and third == "rate_limited"
    assert isinstance(made("c4", "other-gw"), Tournament)  # another app: its own bucket
    assert isinstance(made("c5", "ours"), Tournament)  # not admitted: the deployment's
    for i in range(4):  # registrations: three, then refused, nothing changed
        body = wire.message("register", id=f"r{i}", tournament="c1", gateway="gw",
                            request=f"req-{i:08d}", name=f"P{i}", bot=None)  # fmt: skip
        first.handle(body, 0, RNG)
    out = [wire.unpack(d) for _, d in first.flush().outputs]
    assert [m["type"] for m in out if m.get("id") == "r3"] == ["error"]
    assert len(first.entrants) == 3 and first.pool == 21


def test_every_refund_before_the_start_reaches_the_ledger_once_each() -> None:
    """An entrant's own unregister and the host's kick that follows it each give a buy-in
    back under a ledger id of their own (the keeper takes an id once: a shared one lost
    the second refund)."""
    cup = Cup(max_players=8)
    for name in ("h", "a", "b"):
        cup.send("register", player=name, name=name.upper(), bot=None)
    cup.send("unregister", player="a")
    cup.organize("kick", target=wire.public_id("b"))
    assert cup.balance() == {"h": -7, "a": 0, "b": 0, "pool:cup": 7}



def test_entrants_who_bring_seeds_are_named_so_to_the_tables_made_with_them() -> None:
    """A registration with `seeds` (the libraries' default) is kept in the entrant's row
    and passed in the `create` of every table made with them, so the table asks their
    seat for a commitment (dudo.table.seeds); the others, and bots, are not asked."""
    cup = Cup(bots="easy", max_players=4)
    cup.send("register", player="p0", name="P0", bot=None, seeds=True)
    cup.send("register", player="p1", name="P1", bot=None)
    again = Tournament.from_hash(cup.t.to_record())
    assert again is not None and again.entrants["p0"].seeds and not again.entrants["p1"].seeds
    cup.send("begin", player="h")
    seated = {p["player"]: p.get("seeds") for c in cup.to_table("create")
              for p in c["tournament"]["players"]}  # fmt: skip
    assert seated["p0"] is True and seated["p1"] is None
    bots = [p for p, e in cup.t.entrants.items() if e.bot is not None]
    assert bots and all(seated[p] is None for p in bots)
