"""The tournament entity without Redis: registration, refusals, the start, the record."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dudo import wire
from dudo.director.state import (
    CANCELLED,
    LISTED_OVER_MS,
    OVER,
    REGISTERING,
    RUNNING,
    UNSTARTED_MS,
)
from dudo.director.tournament import Context, Tournament
from dudo.wire import Refusal, keys

RNG = random.Random(4)


def create(**over: Any) -> dict[str, Any]:
    body = wire.message(
        "tournament_create",
        id="c",
        tournament="cup",
        gateway="gw",
        host="h",
        name="Cup",
        rules={"preset": "classic"},
        seats=4,
        format="elimination",
        advance=None,
        start_players=None,
        start_at=None,
        max_players=5,
        buy_in=7,
        payouts=[60, 40],
        bots=None,
    )
    body.update(over)
    wire.validate(body)
    return body


def replies(t: Tournament) -> list[dict[str, Any]]:
    return [wire.unpack(data) for _, data in t.flush().outputs]


def send(t: Tournament, kind: str, **fields: Any) -> list[dict[str, Any]]:
    body = wire.message(kind, tournament="cup", gateway="gw", **fields)
    wire.validate(body)
    t.handle(body, 0, RNG)
    return replies(t)


def codes(out: list[dict[str, Any]]) -> list[str]:
    return [m["code"] for m in out if m["type"] == "error"]


def test_registration_refusals_and_refunds() -> None:
    t = Tournament.create(create(), 0, Context())
    replies(t)
    for i in range(5):
        out = send(t, "register", id=f"r{i}", player=f"p{i}", name=f"P{i}", bot=None)
        assert out[0]["type"] == "registered" and out[0]["entrants"] == i + 1
    assert t.pool == 35
    assert codes(send(t, "register", id="r9", player="p9", name="P9", bot=None)) == [
        "tournament_full"
    ]
    assert codes(send(t, "register", id="r0", player="p0", name="P0", bot=None)) == ["duplicate"]
    send(t, "unregister", id="u1", player="p1")
    assert t.pool == 28 and "p1" not in t.entrants
    assert codes(send(t, "begin", id="b0", player="p0")) == ["not_host"]
    out = send(t, "begin", id="b1", player="h")
    assert t.status == RUNNING and not codes(out)
    assert codes(send(t, "register", id="r7", player="p7", name="P7", bot=None)) == ["game_started"]
    # The start seated four players at one table (a create sent to its inbox), as few
    # tables as needed.
    flush = t.flush()
    assert flush.sends == []  # sent with the begin's flush already
    again = Tournament.from_hash(t.to_record())
    assert again is not None and again.to_record() == t.to_record()


def test_the_start_sends_one_create_per_table_to_the_tables_inbox() -> None:
    t = Tournament.create(create(max_players=20, start_players=9, bots="easy"), 0, Context(16, 4))
    replies(t)
    send(t, "register", id="r", player="p", name="P", bot=None)
    assert t.status == REGISTERING
    t.handle(wire.message("begin", id="b", tournament="cup", gateway="gw", player="h"), 0, RNG)
    flush = t.flush()
    to_tables = [(stream, data) for stream, data in flush.sends if stream != keys.RATINGS.inbox(0)]
    creates = [wire.unpack(data) for _, data in to_tables]
    assert [c["type"] for c in creates] == ["create"] * 3  # 9 players (8 bots) at 4 seats
    assert sorted(len(c["tournament"]["players"]) for c in creates) == [3, 3, 3]
    # The bots' buy-ins go from the house into the pool (the person's went at registering).
    [bots_in] = [wire.unpack(d) for s, d in flush.sends if s == keys.RATINGS.inbox(0)]
    assert bots_in["transfers"] == [["house", -56], ["pool:cup", 56]]
    for (stream, _), c in zip(to_tables, creates, strict=True):
        assert stream == keys.inbox(keys.partition_of(c["table"], 16))
        assert c["tournament"]["director"] == keys.partition_of("cup", 4)
        wire.validate(c)
    seated = [p["player"] for c in creates for p in c["tournament"]["players"]]
    assert sorted(seated) == sorted(t.entrants) and len(set(seated)) == 9
    # The bots have people's names, as a table's bots do, each its own (not "Bot 2").
    names = [p["name"] for c in creates for p in c["tournament"]["players"] if p.get("bot")]
    assert len(names) == len(set(names)) == 8 and "P" not in names
    assert not any(name.startswith("Bot") for name in names), names


def test_a_big_tournaments_bots_are_told_apart() -> None:
    from dudo.bots.names import bot_name

    assert [bot_name(n) for n in (0, 9, 10, 25)] == ["Rocío", "Félix", "Rocío 2", "Tomás 3"]
    assert len({bot_name(n) for n in range(10_000)}) == 10_000


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"payouts": [40, 60]}, "bad_rules"),
        ({"payouts": [50, 30]}, "bad_rules"),
        ({"format": "heats", "advance": 2, "seats": 4}, "bad_rules"),
        ({"tournament": "x" * 49}, "bad_message"),
        ({"rules": {"preset": "classic", "turn_seconds": 0}}, "bad_rules"),  # clock off
    ],
)
def test_bad_tournaments_are_refused(fields: dict[str, Any], code: str) -> None:
    with pytest.raises(Refusal) as err:
        Tournament.create(create(**fields), 0, Context())
    assert err.value.code == code


def test_a_lone_entrant_wins_and_gets_the_pool_back() -> None:
    t = Tournament.create(create(), 0, Context())
    send(t, "register", id="r", player="p", name="P", bot=None)
    t.handle(wire.message("tournament_timeout", id="t", tournament="cup", version=0), 0, RNG)
    assert t.status == REGISTERING  # a timer of an older version does nothing
    t.config["start_at"] = 1
    t.handle(
        wire.message("tournament_timeout", id="t2", tournament="cup", version=t.version), 0, RNG
    )
    assert t.status == OVER and t.entrants["p"].place == 1 and t.entrants["p"].won == 7


class Stored:
    """The tournament's hash as the commits leave it: each flush's record and rows."""

    def __init__(self) -> None:
        self.fields: dict[bytes, bytes] = {}

    def commit(self, t: Tournament) -> Tournament:
        """Flush ``t`` as the loop does, store what it wrote, and read it back."""
        flush = t.flush()
        self.written = [name for name, _ in flush.rows]
        if flush.record is not None:
            self.fields[b"s"] = flush.record
        for name, value in flush.rows:
            if value:
                self.fields[name.encode()] = value
            else:
                self.fields.pop(name.encode(), None)
        again = Tournament.from_hash(self.fields)
        assert again is not None
        return again


def test_the_record_is_right_whoever_comes_goes_or_changes() -> None:
    """Entrants are stored one row each and a flush writes only the rows that changed:
    a change, an unregister and a new registration in one batch must all show in
    what is stored, in the order they registered."""
    t = Tournament.create(create(max_players=600), 0, Context())
    stored = Stored()
    for i in range(520):
        t.handle(
            wire.message("register", id=f"r{i}", tournament="cup", gateway="gw",
                         player=f"p{i}", name=f"P{i}", bot=None), 0, RNG,
        )  # fmt: skip
    stored.commit(t)
    t.handle(
        wire.message("unregister", id="u", tournament="cup", gateway="gw", player="p3"), 0, RNG
    )
    t.handle(
        wire.message("register", id="rx", tournament="cup", gateway="gw", player="px",
                     name="PX", bot=None), 0, RNG,
    )  # fmt: skip
    again = stored.commit(t)
    assert list(again.entrants) == list(t.entrants) and "p3" not in again.entrants
    assert len(stored.fields) == 1 + 520  # s; the rows of 519 + px (p3's row is gone)
    t.handle(wire.message("begin", id="b", tournament="cup", gateway="gw", player="h"), 0, RNG)
    stored.commit(t)
    t.entrants["p300"].dice = 0  # a change to one row after the start
    t._eliminate("p300")
    t._changed()
    again = stored.commit(t)
    assert stored.written == ["e:p300"]  # that row alone is written
    # A row is the entrant's fields in order (format 3): what older records hold.
    e = t.entrants["p300"]
    assert wire.unpack(dict(t.to_rows(everything=True))["e:p300"]) == [
        e.player, e.name, e.gateway, e.bot, e.dice, e.table, e.place, e.paid, e.won, e.number,
        e.rating, e.rating_change, e.late, e.seeds,
    ]  # fmt: skip
    assert again.entrants["p300"].place == t.entrants["p300"].place
    assert list(again.entrants.values()) == list(t.entrants.values())
    assert again.to_record() == t.to_record()


def test_a_player_placed_after_leaving_is_sent_with_the_table_they_left() -> None:
    t = Tournament.create(create(max_players=12, start_players=12, bots="easy"), 0, Context(16, 4))
    t.handle(wire.message("begin", id="b", tournament="cup", gateway="gw", player="h"), 0, RNG)
    creates = [wire.unpack(d) for s, d in t.flush().sends if s != keys.RATINGS.inbox(0)]
    first = creates[0]
    players = [p["player"] for p in first["tournament"]["players"]]

    def report(version: int, seated: list[str], left: list[str], joined: list[str]) -> None:
        body = wire.message(
            "report", id=f"r:{version}", tournament="cup", table=first["table"],
            version=version, round=version, done=0,
            seated=[[p, 5] for p in seated], joined=joined, out=[],
            left=[{"player": p, "name": p, "dice": 3, "gateway": None, "bot": "easy"}
                  for p in left],
        )  # fmt: skip
        wire.validate(body)
        t.handle(body, 0, RNG)

    report(1, players, [], players)
    t.flush()
    report(2, players[1:], players[:1], [])
    sent = [wire.unpack(d) for s, d in t.flush().sends if s != keys.RATINGS.inbox(0)]
    [seat_in] = [m for m in sent if m["type"] == "seat_in"]
    assert seat_in["player"] == players[0] and seat_in["from"] == first["table"]
    assert seat_in["dice"] == 3  # they keep their dice (here the shortest table is theirs)


def test_streamed_standings_show_the_first_tables_and_count_them_all() -> None:
    """A streamed `tournament` message goes to every entrant's connection each second:
    it carries the players of the first 50 tables (in the order they opened) and how
    many tables play; over HTTP every table is listed."""
    from dudo.director.standings import STREAMED_TABLES, Entrant, standings

    tables = [f"cup-{n}" for n in range(1, 121)]
    entrants = {}
    for i in range(360):
        player = f"p{i}"
        entrants[player] = Entrant(player, f"P{i}", None, None, dice=2, table=tables[i // 3])
    entrants["p0"].dice, entrants["p0"].place = 0, 360  # out: shown among places only
    streamed = standings({}, entrants, tables, 0)
    assert streamed["tables_playing"] == 120 and streamed["left"] == 359
    assert [t["table"] for t in streamed["tables"]] == tables[:STREAMED_TABLES]
    assert [len(t["players"]) for t in streamed["tables"][:2]] == [2, 3]
    whole = standings({}, entrants, tables, 0, places_limit=None, tables_limit=None)
    assert [t["table"] for t in whole["tables"]] == tables and whole["tables_playing"] == 120


def test_a_record_written_before_rows_is_read_and_rewritten_as_rows() -> None:
    """Format 2 held everything in one field: a director of this version continues
    such a tournament, and its next commit writes every row."""
    t = Tournament.create(create(max_players=12, start_players=12, bots="easy"), 0, Context(16, 4))
    t.handle(wire.message("begin", id="b", tournament="cup", gateway="gw", player="h"), 0, RNG)
    t.flush()
    first = next(iter(t.balancer.tables))  # type: ignore[union-attr]
    t._eliminate(next(iter(t.entrants)))
    t.reported[first] = 3
    b = t.balancer
    assert b is not None
    old = wire.encode(
        [2, t.id, t.config, t.host, t.version, t.status,
         [[wire.unpack(wire.encode(e))[:9] for e in t.entrants.values()]],
         [b.seats, [[c.table, c.seated, c.arriving, c.breaking, c.order, c.order_seq]
                    for c in b.tables.values()], b.waiting, b.last_seq],
         t.reported, t.heat, t.heat_tables, t.qualified, ["x"] * t.out, t.pool, t.tables_made,
         t.seat_seq, t.subscribers, [t.max_imbalance, t.reseats, t.tables_at_start],
         "\n".join(t.seen), t.wake, t.created]
    )  # fmt: skip
    again = Tournament.from_bytes(old)
    assert again.to_record() == t.to_record()
    assert {name for name, _ in again.to_rows()} == {n.decode() for n in t.to_record()} - {"s"}


def test_every_tournament_table_has_a_turn_clock() -> None:
    """Issue 31, item 2: with the API's defaults a tournament had no turn clock, and one
    entrant who never showed froze it. Left out, the clock is the tournament's own
    (30 s); given, it is kept; off (0) is refused above."""
    assert Tournament.create(create(), 0, Context()).config["rules"]["turn_seconds"] == 30
    kept = create(rules={"preset": "classic", "turn_seconds": 12})
    assert Tournament.create(kept, 0, Context()).config["rules"]["turn_seconds"] == 12


def test_a_name_like_an_entrants_is_refused_until_that_entrant_leaves() -> None:
    """Issue 31, item 7: duplicate and look-alike display names were accepted, so two
    "Ana"s stood in the standings. A name equal to an entrant's in any case, width or
    spacing, or that differs only by characters that look the same (another script's
    letters, "0" for "O", "rn" for "m", "I" for "l") is refused `name_taken`; free again
    once that entrant unregisters; the same player registering again is not a second
    entrant (and not refused). Names that merely differ stay free."""
    t = Tournament.create(create(max_players=20), 0, Context())
    replies(t)
    assert not codes(send(t, "register", id="r1", player="p1", name="Ana María", bot=None))
    assert not codes(send(t, "register", id="r2", player="p2", name="Ollie", bot=None))
    alikes = [
        "ana maría", "ANA MARÍA", "Ａｎａ María", "ana MARÍA",
        "\u0410na María",  # a Cyrillic capital A
        "Ana Maríа",  # a Cyrillic small a at the end
        "Ana Ma\u0072\u0131\u0301a",  # a dotless i with a combining acute
        "Ana rnaría",  # r and n for m
        "0llie", "OIIie", "ollie",  # zero for O, capital I for l
    ]  # fmt: skip
    for i, alike in enumerate(alikes):
        refused = send(t, "register", id=f"x{i}", player=f"q{i}", name=alike, bot=None)
        assert codes(refused) == ["name_taken"], alike
    assert not codes(send(t, "register", id="r1b", player="p1", name="Ana María", bot=None))
    assert len(t.entrants) == 2
    for i, other in enumerate(["Ana Marta", "Ana", "Olive", "Anna María"]):
        assert not codes(send(t, "register", id=f"o{i}", player=f"o{i}", name=other, bot=None))
    send(t, "unregister", id="u1", player="p1")
    assert not codes(send(t, "register", id="r3", player="p3", name="Аna maría", bot=None))
    send(t, "unregister", id="u3", player="p3")  # frees its keys, not Ollie's
    refused = send(t, "register", id="r4", player="p4", name="OLLIE", bot=None)
    assert codes(refused) == ["name_taken"]


def test_a_finished_tournament_is_listed_as_over_for_a_day_then_leaves_the_listing() -> None:
    """Issue 31, item 3: a finished tournament left the listing at once. It is listed as
    over for LISTED_OVER_MS; then its timer takes it out of the listing and nothing
    else: its record, with the results, stays for the director's retention."""
    t = Tournament.create(create(), 0, Context())
    send(t, "register", id="r", player="p", name="P", bot=None)
    t.config["start_at"] = 1
    timeout = {"tournament": "cup", "id": "t"}
    t.handle(wire.message("tournament_timeout", version=t.version, **timeout), 50, RNG)
    assert t.status == OVER
    flush = t.flush()
    assert flush.finished and flush.lobby and flush.lobby["status"] == "over"
    assert t.wake == 50 + LISTED_OVER_MS and flush.timer_add is not None
    t.handle(wire.message("tournament_timeout", version=t.version - 1, **timeout), 60, RNG)
    assert t.flush().lobby is False  # an older timer: still listed
    t.handle(wire.message("tournament_timeout", version=t.version, **timeout), 70, RNG)
    flush = t.flush()
    assert flush.lobby is None and flush.record is not None and flush.finished
    assert t.wake is None and flush.timer_remove is not None
    assert t.entrants["p"].place == 1  # the results are still there


def test_a_tournament_that_never_begins_is_cancelled_and_pays_every_buy_in_back() -> None:
    """Issue 31, item 6: tournaments that never started stayed registering for ever (2,000
    of them filled the listing every lobby polls). With no start time, a day after its
    creation it is cancelled: each buy-in back by double entry, listed as cancelled for a
    day, registering refused; at its start time with nobody, likewise."""
    t = Tournament.create(create(), 1_000, Context())
    assert t.wake == 1_000 + UNSTARTED_MS
    for i in range(2):
        send(t, "register", id=f"r{i}", player=f"p{i}", name=f"P{i}", bot=None)
    t.flush()
    timeout = {"tournament": "cup", "id": "t"}
    t.handle(wire.message("tournament_timeout", version=t.version, **timeout), t.wake, RNG)
    assert t.status == CANCELLED and t.pool == 0
    flush = t.flush()
    assert flush.finished and flush.lobby and flush.lobby["status"] == "cancelled"
    [ledger] = [wire.unpack(d) for _, d in flush.sends if wire.unpack(d)["type"] == "ledger"]
    assert sorted(ledger["transfers"]) == [["p0", 7], ["p1", 7], ["pool:cup", -14]]
    assert t.standings()["status"] == "cancelled"
    refused = send(t, "register", id="r9", player="p9", name="P9", bot=None)
    assert codes(refused) == ["game_started"] and "cancelled" in refused[0]["message"]
    t.handle(wire.message("tournament_timeout", version=t.version, **timeout), t.wake, RNG)
    assert t.flush().lobby is None  # a day later: out of the listing, the record kept

    nobody = Tournament.create(create(start_at=5_000), 1_000, Context())
    assert nobody.wake == 5_000
    timer = wire.message("tournament_timeout", version=nobody.version, **timeout)
    nobody.handle(timer, 5_000, RNG)
    assert nobody.status == CANCELLED


def test_standings_news_held_back_is_sent_by_a_wake_up_not_the_next_entry() -> None:
    """While it runs, standings go out at most once a second; news held back waited for
    the director's next entry, which in a paused tournament (or tables waiting on
    people) may not come for minutes: the host kicked a player during a pause and the
    page never showed him out. Now a wake-up sends it, on one timer entry for the run."""
    t = Tournament.create(create(), 0, Context())
    for n in (1, 2, 3):
        send(t, "register", id=f"r{n}", player=f"p{n}", name=f"P{n}", bot=None)
    t.handle(wire.message("begin", id="b", tournament="cup", gateway="gw", player="h"), 9000, RNG)
    flush = t.flush()
    [table] = [wire.unpack(d)["table"] for s, d in flush.sends if s != keys.RATINGS.inbox(0)]

    def broadcasts(flush: Any) -> list[dict[str, Any]]:
        sent = [wire.unpack(data) for _, data in flush.outputs]
        return [m for m in sent if m["type"] == "tournament" and "id" not in m]

    def report(version: int, now: int, out: list[str]) -> None:
        body = wire.message(
            "report", id=f"r:{version}", tournament="cup", table=table, version=version,
            round=version, done=0, seated=[[p, 2] for p in ("p1", "p2", "p3") if p not in out],
            joined=["p1", "p2", "p3"] if version == 1 else [], out=out, left=[],
        )  # fmt: skip
        wire.validate(body)
        t.handle(body, now, RNG)

    assert broadcasts(flush) and t.status == RUNNING  # the start
    assert flush.timer_add is None and t.wake is None  # nothing held back
    report(1, 9100, [])
    flush = t.flush()
    assert broadcasts(flush) == []  # held back: a broadcast went out 100 ms ago
    assert flush.timer_add == ("cup|0", 10_000)
    report(2, 9400, ["p3"])  # p3 goes out: the news the page waits for
    flush = t.flush()
    assert broadcasts(flush) == [] and flush.timer_add is None  # the same entry
    assert flush.timer_remove is None
    # The wake-up (any version while it runs): the news goes out, the timer goes.
    t.handle(Tournament.timeout("cup", 0), 10_000, RNG)
    flush = t.flush()
    [news] = broadcasts(flush)
    assert [p["name"] for p in news["standings"]["places"]] == ["P3"]
    assert flush.timer_remove == "cup|0" and flush.timer_add is None and t.wake is None
    # Stored with its timer: a director taking over starts from the same.
    again = Tournament.from_hash(t.to_record())
    assert again is not None and again.wake is None
