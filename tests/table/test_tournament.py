"""A tournament's table (dudo.table.tournament), without Redis: players arrive and leave
only at the end of a round, every round's end is reported, and nobody sees a die they
should not."""

from __future__ import annotations

import random
from typing import Any

import msgpack

import dudo_client
from dudo import wire
from dudo.director.tournament import Context, Tournament
from dudo.engine import OVER
from dudo.engine.fairness import client_commitment, game_secret, public_client_seed, verify
from dudo.entity.reports import report_sends
from dudo.table import DONE, PLAYING, Table
from dudo.wire import keys

from ..director.test_tournament import create
from .test_table import NOW, h, msg

SEATS = 4


def entrant(player: str, dice: int = 3, gateway: str | None = "gw-a") -> dict[str, Any]:
    return {"player": player, "name": player.upper(), "dice": dice, "gateway": gateway, "bot": None}


class Cup:
    """One tournament table fed by hand, as the worker feeds it."""

    def __init__(
        self,
        players: list[dict[str, Any]],
        advance: int | None = None,
        rules: dict[str, Any] | None = None,
    ) -> None:
        self.rng = random.Random(3)
        self.n = 0
        create = msg(
            "create",
            id="c",
            table="t1",
            rules={"preset": "lizumo", "max_players": SEATS, **(rules or {})},
            seats=[{"kind": "open"}] * SEATS,
            tournament={"id": "cup", "director": 2, "players": players, "advance": advance},
            gateway="director",
        )
        self.table = Table.create(create, NOW, rng=self.rng)
        self.reports: list[dict[str, Any]] = []
        self.histories: list[dict[str, Any]] = []  # table_history, once it closes
        self.out: list[tuple[str, dict[str, Any]]] = []
        self.flush()

    def flush(self) -> None:
        flush = self.table.flush()
        # As the partition loop writes them: one `reports` entry for the tournament.
        for stream, data in [*flush.sends, *report_sends(flush.reports)]:
            assert stream == keys.TOURNAMENTS.inbox(2)
            sent = wire.decode(data, direction="director")  # (its size cap, too)
            if sent["type"] == "table_history":
                self.histories.append(sent)
                continue
            assert sent["type"] == "reports" and sent["tournament"] == "cup"
            assert [r["table"] for r in sent["reports"]] == [self.table.id] * len(sent["reports"])
            self.reports.extend(sent["reports"])
        for gateway, data in flush.outputs:
            message = msgpack.unpackb(data, raw=False)
            wire.validate(message)
            self.out.append((gateway, message))

    def send(self, kind: str, **fields: Any) -> None:
        self.n += 1
        fields.setdefault("id", f"m{self.n}")
        body = wire.message(kind, table="t1", **fields)
        wire.validate(body)
        self.table.handle(body, NOW, self.rng)
        self.flush()

    def seat_in(self, seq: int, player: str, dice: int, gateway: str | None = None) -> None:
        self.send(
            "seat_in",
            tournament="cup",
            seq=seq,
            player=player,
            name=player.upper(),
            dice=dice,
            gateway=gateway,
            bot=None,
        )

    def act(self, seat: int, action: dict[str, Any]) -> None:
        self.from_seat("act", seat, action=action)

    def from_seat(self, kind: str, seat: int, **fields: Any) -> list[str]:
        """The seat's holder sends ``kind`` through its gateway: the error codes it got."""
        holder = self.table.seats[seat]
        before = len(self.out)
        self.n += 1
        body = msg(kind, holder.gateway, id=f"m{self.n}", table="t1", player=holder.handle,
                   seat=seat, **fields)  # fmt: skip
        self.table.handle(body, NOW, self.rng)
        self.flush()
        return [m["code"] for _, m in self.out[before:] if m["type"] == "error"]

    def play_round(self) -> None:
        """The seat in turn opens with the lowest legal bid; the next one calls Dudo."""
        game = self.table.game
        assert game is not None and game.phase != OVER
        opener = game.turn
        assert opener is not None
        legal = game.legal(opener)
        face = next(f for f, q in enumerate(legal["bid"], start=1) if q is not None)
        self.act(opener, {"type": "bid", "quantity": legal["bid"][face - 1], "face": face})
        assert game.turn is not None
        self.act(game.turn, {"type": "dudo"})

    def players(self) -> list[str | None]:
        return [s.player for s in self.table.seats]

    def dice(self) -> dict[str, int]:
        game = self.table.game
        assert game is not None
        return {
            s.player: game.counts[i] for i, s in enumerate(self.table.seats) if s.player is not None
        }

    def views_to(self, gateway: str) -> list[dict[str, Any]]:
        return [m for g, m in self.out if g == gateway and m["type"] == "view"]


def test_created_playing_with_vacant_seats_and_reported() -> None:
    cup = Cup([entrant("a"), entrant("b", 2, "gw-b"), entrant("c", 1, None)])
    table = cup.table
    assert table.status == PLAYING and cup.players() == ["a", "b", "c", None]
    assert table.game is not None and table.game.counts == [3, 2, 1, 0]
    assert table.game.eliminated == []  # the empty seat is vacant, not out
    moved = [(g, m["player"]) for g, m in cup.out if m["type"] == "moved"]
    assert moved == [("gw-a", h("a")), ("gw-b", h("b"))]  # c has no gateway yet
    [report] = cup.reports
    assert report["seated"] == [["a", 3], ["b", 2], ["c", 1]]
    assert report["joined"] == ["a", "b", "c"] and report["left"] == [] and report["done"] == 0


def test_an_arrival_waits_for_the_end_of_the_round_then_sits_with_its_dice() -> None:
    cup = Cup([entrant("a"), entrant("b"), entrant("c")])
    cup.reports.clear()
    cup.send(
        "seat_in", tournament="cup", seq=5, player="d", name="D", dice=2, gateway="gw-d", bot=None
    )
    assert cup.players() == ["a", "b", "c", None] and not cup.reports
    assert not cup.views_to("gw-d")
    before = dict(cup.dice())
    round_no = cup.table.game.round_no  # type: ignore[union-attr]
    cup.play_round()
    assert cup.players() == ["a", "b", "c", "d"] and cup.dice()["d"] == 2
    assert sum(cup.dice().values()) == sum(before.values()) - 1 + 2
    [report] = cup.reports
    assert report["joined"] == ["d"] and report["round"] == round_no + 1
    assert sorted(report["seated"]) == sorted([p, n] for p, n in cup.dice().items())
    # d is told where it sits, and its first view already has it seated with its dice.
    assert [m["type"] for g, m in cup.out if g == "gw-d"][:2] == ["moved", "view"]
    [view] = cup.views_to("gw-d")
    assert view["holders"] == [h("d")] and len(view["seats"][0]["dice"]) == 2
    # The view that ended the round shows the new seating: none shows the old one
    # with the new round's dice.
    last = cup.views_to("gw-a")[-1]
    assert last["players"][3]["name"] == "D" and last["game"]["dice_counts"][3] == 2


def test_an_order_sends_the_seats_that_act_last_with_their_dice_and_keeps_two() -> None:
    cup = Cup([entrant("a"), entrant("b", gateway="gw-b"), entrant("c"), entrant("d")])
    cup.reports.clear()
    cup.send("order", tournament="cup", seq=7, count=1)
    assert cup.table.order == [7, 1] and not cup.reports
    cup.play_round()
    [report] = cup.reports
    assert report["done"] == 7 and len(report["left"]) == 1
    gone = report["left"][0]
    assert gone["player"] not in cup.players() and gone["dice"] >= 1
    game = cup.table.game
    assert game is not None and game.opener is not None
    # The opener of the new round stays; the one who would have spoken last went.
    assert cup.table.seats[game.opener].player is not None
    assert cup.table.order is None and cup.table.order_done == 7
    # An order for more than the table can spare leaves two.
    cup.send("order", tournament="cup", seq=8, count=6)
    cup.play_round()
    assert len([p for p, n in cup.dice().items() if n > 0]) == 2


def test_older_and_repeated_messages_change_nothing() -> None:
    cup = Cup([entrant("a"), entrant("b"), entrant("c")])
    cup.send("order", tournament="cup", seq=9, count=1)
    cup.send("order", tournament="cup", seq=4, count=0)
    assert cup.table.order == [9, 1]
    cup.send(
        "seat_in", tournament="cup", seq=3, player="d", name="D", dice=1, gateway=None, bot=None
    )
    cup.send(
        "seat_in", tournament="cup", seq=3, player="d", name="D", dice=1, gateway=None, bot=None
    )
    cup.send(
        "seat_in", tournament="cup", seq=2, player="e", name="E", dice=1, gateway=None, bot=None
    )
    assert [a[0] for a in cup.table.arrivals] == ["d"]
    version = cup.table.version
    cup.send("order", tournament="other", seq=10, count=0)  # not this table's tournament
    assert cup.table.order == [9, 1] and cup.table.version == version


def test_a_finished_table_is_broken_at_once_and_closes() -> None:
    cup = Cup([entrant("a", 1), entrant("b", 1)])
    cup.play_round()
    game = cup.table.game
    assert game is not None and game.phase == OVER and game.winner is not None
    assert cup.table.status == PLAYING  # a tournament's table waits for its director
    winner = cup.table.seats[game.winner].player
    cup.reports.clear()
    cup.send("order", tournament="cup", seq=1, count=None)
    [report] = cup.reports
    assert [p["player"] for p in report["left"]] == [winner] and report["seated"] == []
    assert cup.table.status == DONE
    assert ("gw-a", "detached") in [(g, m["type"]) for g, m in cup.out]
    # Closed: its history goes to the director once, with the commit that closed it.
    loser = next(p for p in ("a", "b") if p != winner)
    [history] = cup.histories
    assert (history["table"], history["part"], history["parts"]) == ("t1", 0, 1)
    assert [row[2:] for row in history["rows"]] == [
        [[["a", 1], ["b", 1]], [], []],  # the first players, with their dice
        [[], [], [loser]],
        [[], [[winner, 1]], []],  # the winner, sent away as the table closes
    ]
    assert [row[0] for row in history["rows"]] == [1, 1, 1]  # the game ended in round 1
    cup.flush()
    assert len(cup.histories) == 1  # never again


def test_a_long_history_goes_in_parts_under_the_inbox_cap_and_old_records_read() -> None:
    cup = Cup([entrant("a", 1), entrant("b", 1)])
    many = [[r, NOW, [[f"p{r}-{i}-{'x' * 50}", 5] for i in range(6)], [], []] for r in range(300)]
    cup.table.history = many
    # Seeds given after 40 arrivals, each as long as they come: more than a part holds.
    long = [[client_commitment("s" * 64), "s" * 64]] * 6
    cup.table.redealt = [[r, long[:2] + [[None, None]] * 2] for r in range(2, 42)]
    cup.table.dealt = long[:2] + [[None, None]] * 2
    cup.send("order", tournament="cup", seq=1, count=None)
    cup.play_round()
    assert cup.table.status == DONE and len(cup.histories) > 2
    assert [h["part"] for h in cup.histories] == list(range(len(cup.histories)))
    assert {h["parts"] for h in cup.histories} == {len(cup.histories)}
    assert [row for h in cup.histories for row in h["rows"]] == cup.table.history
    logged = cup.table.logged_seeds()
    assert logged is not None and len(logged["reseeds"]) == 40
    assert [r for h in cup.histories for r in h.get("reseeds", [])] == logged["reseeds"]
    # The director joins them, whatever part each came in.
    director = Tournament.create(create(), 0, Context(16, 4))
    for part in cup.histories:
        director.handle(part, 0, random.Random(1))
    assert director.table_seeds["t1"] == logged
    assert director.history()[0]["seeds"] == logged
    # A record written before the history (10 tournament fields) reads with none.
    raw = wire.unpack(cup.table.to_bytes())
    raw[14] = raw[14][:10]
    assert Table.from_bytes(wire.encode(raw)).history == []


def test_a_halted_table_takes_arrivals_at_once_and_plays_again() -> None:
    cup = Cup([entrant("a", 2), entrant("b", 2), entrant("c", 2)])
    cup.send("order", tournament="cup", seq=1, count=None)
    cup.play_round()
    game = cup.table.game
    assert game is not None and game.phase == OVER and game.winner is None
    assert cup.table.status == DONE  # everyone went: broken
    # A table still playing takes an arrival at once when it halts below two.
    cup = Cup([entrant("a", 1), entrant("b", 1)])
    cup.send(
        "seat_in", tournament="cup", seq=1, player="c", name="C", dice=3, gateway=None, bot=None
    )
    cup.play_round()  # someone is eliminated: the winner and c play a new game
    game = cup.table.game
    assert game is not None and game.phase != OVER and game.winner is None
    assert len([n for n in cup.dice().values() if n > 0]) == 2


def test_heats_send_the_last_players_standing_through() -> None:
    cup = Cup([entrant("a", 1), entrant("b", 1), entrant("c", 1)], advance=2)
    cup.reports.clear()
    cup.play_round()  # one of three is eliminated: two are left, they go through
    [report] = cup.reports
    assert len(report["out"]) == 1 and len(report["left"]) == 2
    assert {p["dice"] for p in report["left"]} == {1}
    assert cup.table.status == DONE


def test_the_record_keeps_what_waits_for_the_round_end() -> None:
    cup = Cup([entrant("a"), entrant("b"), entrant("c")])
    cup.send("order", tournament="cup", seq=4, count=1)
    cup.send(
        "seat_in", tournament="cup", seq=5, player="d", name="D", dice=2, gateway=None, bot=None
    )
    again = Table.from_bytes(cup.table.to_bytes())
    assert (again.tournament, again.director, again.order, again.seat_seq) == ("cup", 2, [4, 1], 5)
    assert again.arrivals == cup.table.arrivals and again.to_bytes() == cup.table.to_bytes()


def test_a_finished_ordinary_game_sends_its_people_to_the_ratings() -> None:
    from .test_table import Run

    run = Run(rules={"preset": "lizumo", "start_dice": 1}, seats=3)
    run.send("join", player="p0", name="P0")
    run.send("join", player="p1", name="P1")
    run.send("join", "gw-bots", player="b2", name="Bot", bot="normal")
    sends = []
    while run.table.status != DONE:
        game = run.table.game
        assert game is not None and game.turn is not None
        legal = game.legal(game.turn)
        holder = run.table.seats[game.turn]
        gateway = "gw-bots" if holder.bot else "gw-a"
        if legal["dudo"]:
            action: dict[str, Any] = {"type": "dudo"}
        else:
            face = next(f for f, q in enumerate(legal["bid"], 1) if q is not None)
            action = {"type": "bid", "quantity": legal["bid"][face - 1], "face": face}
        run.send("act", gateway, player=holder.handle, seat=game.turn, action=action)
        sends.extend(run.last.sends)
    [(stream, data)] = sends
    assert stream == keys.RATINGS.inbox(0)
    ranking = wire.decode(data, direction="ratings")["ranking"]
    assert sorted(p for p, _ in ranking) == ["p0", "p1"]  # the bot is not rated
    winner = run.table.game.winner  # type: ignore[union-attr]
    if run.table.seats[winner].bot is None:
        assert ranking[0][0] == run.table.seats[winner].player


def test_an_arrival_never_takes_the_seat_of_a_player_out_in_that_same_round() -> None:
    """The player who just went out still gets the view of the round that put them out
    (their seat is not handed to an arrival in that step: no `detached` for them)."""
    cup = Cup([entrant(p, 1, f"gw-{p}") for p in "abcd"])
    cup.seat_in(1, "e", 2, "gw-e")
    before = len(cup.out)
    cup.play_round()  # one of the four goes out; every seat is taken
    [gone] = [p for p, n in cup.dice().items() if n == 0]
    assert "e" not in cup.players() and [a[0] for a in cup.table.arrivals] == ["e"]
    mine = [m for g, m in cup.out[before:] if g == f"gw-{gone}"]
    assert {m["type"] for m in mine} == {"view"}  # the bid, the reveal: no `detached`
    assert mine[-1]["holders"] == [h(gone)] and mine[-1]["game"]["last_round"]["loser"] is not None
    cup.play_round()  # the next round's end: e takes the seat of the first one out
    assert "e" in cup.players() and gone not in cup.players()
    assert ("gw-" + gone, "detached") in [(g, m["type"]) for g, m in cup.out]


def test_a_staked_game_moves_its_chips_by_double_entry() -> None:
    """Seed 003: the winner takes the pot. The chips go to the ledger with the result."""
    from .test_table import Run

    run = Run(rules={"preset": "cacho", "start_dice": 1, "stake": 25}, seats=3)
    for i in range(3):
        run.send("join", player=f"p{i}", name=f"P{i}")
    sends = []
    while run.table.status != DONE:
        game = run.table.game
        assert game is not None and game.turn is not None
        legal = game.legal(game.turn)
        if legal["dudo"]:
            action: dict[str, Any] = {"type": "dudo"}
        else:
            face = next(f for f, q in enumerate(legal["bid"], 1) if q is not None)
            action = {"type": "bid", "quantity": legal["bid"][face - 1], "face": face}
        run.send("act", player=h(f"p{game.turn}"), seat=game.turn, action=action)
        sends.extend(run.last.sends)
    [ledger] = [
        m for m in (wire.decode(d, direction="ratings") for _, d in sends) if m["type"] == "ledger"
    ]
    winner = run.table.seats[run.table.game.winner].player  # type: ignore[union-attr]
    moves = dict(ledger["transfers"])
    assert moves == {p: (50 if p == winner else -25) for p in ("p0", "p1", "p2")}


def test_a_moved_player_is_told_where_they_came_from() -> None:
    cup = Cup([entrant("a"), entrant("b"), entrant("c")])
    cup.send(
        "seat_in", tournament="cup", seq=1, player="d", name="D", dice=2, gateway="gw-d",
        bot=None, **{"from": "t9"},
    )  # fmt: skip
    cup.play_round()
    [moved] = [m for g, m in cup.out if g == "gw-d" and m["type"] == "moved"]
    assert (moved["from"], moved["table"], moved["player"]) == ("t9", "t1", h("d"))


def test_a_house_bot_plays_after_a_moment_whatever_the_turn_clock() -> None:
    """Issue 34, item 3 (and 31, item 2, which keeps a clock at every tournament table):
    the table's own bots waited the whole turn clock before each move. They play after
    the house's moment of thought where people watch, at once where none do; the
    deadline people see stays the clock's."""
    bots = [{**entrant(f"b{i}", gateway=None), "bot": "normal"} for i in range(3)]
    cup = Cup([entrant("ana"), *bots], rules={"turn_seconds": 20})
    table, game = cup.table, cup.table.game
    assert game is not None and game.turn is not None
    if table.seats[game.turn].player == "ana":  # let her open: a bot's turn comes next
        legal = game.legal(game.turn)
        face = next(f for f, q in enumerate(legal["bid"], start=1) if q is not None)
        cup.act(game.turn, {"type": "bid", "quantity": legal["bid"][face - 1], "face": face})
    assert table.seats[game.turn].bot is not None  # a house-played seat is in turn
    assert table.deadline == NOW + 20_000  # the rule shown: the clock's
    assert table.wake == NOW + table.limits.house_think_ms  # not the deadline

    # Nobody watches (bots alone): at once, its move sent to its own inbox with the commit.
    four = [*bots, {**entrant("b3", gateway=None), "bot": "normal"}]
    cup = {"id": "cup", "director": 2, "players": four, "advance": None}
    create = msg("create", id="c", table="t2", rules={"preset": "lizumo", "turn_seconds": 20},
                 seats=[{"kind": "open"}] * SEATS, gateway="director", tournament=cup)  # fmt: skip
    alone = Table.create(create, NOW, rng=random.Random(1))
    assert alone.wake is None and alone._play_now
    moves = [wire.decode(d) for _, d in alone.flush().sends if wire.unpack(d)["type"] == "timeout"]
    assert [m["table"] for m in moves] == ["t2"]


def bid_before_the_break(cup: Cup) -> int:
    """The table is told to break up at its round's end; a bid is made: the seat that
    may now call Dudo (and so end the round that sends it away)."""
    cup.send("order", tournament="cup", seq=3, count=None)
    game = cup.table.game
    assert game is not None and game.turn is not None
    legal = game.legal(game.turn)
    face = next(f for f, q in enumerate(legal["bid"], start=1) if q is not None)
    cup.act(game.turn, {"type": "bid", "quantity": legal["bid"][face - 1], "face": face})
    assert game.turn is not None
    return game.turn


def test_a_call_that_ends_the_round_that_sends_its_caller_away_is_acknowledged() -> None:
    """Issue 31, item 4: when a player's own Dudo ends the round in the step that moves
    them away, their gateway got no view (their seat was gone by the flush), so no
    `ack`: the client library's act() never resolved. Their gateway gets the step's
    view, public only (they hold no seat here now), with their act in `applied` and
    the reveal of their own call in its events."""
    cup = Cup([entrant("a", gateway="gw-a"), entrant("b", gateway="gw-b"),
               entrant("c", gateway="gw-c")])  # fmt: skip
    caller = bid_before_the_break(cup)
    gateway = cup.table.seats[caller].gateway
    assert gateway is not None
    cup.out.clear()
    cup.act(caller, {"type": "dudo"})
    assert cup.table.seats[caller].player is None  # gone with the order
    [view] = cup.views_to(gateway)
    assert view["applied"] == [f"m{cup.n}"]
    assert view["holders"] == [] and view["seats"] == []  # nothing private
    assert any(event["type"] == "reveal" for event in view["events"])


def test_a_pause_lets_the_round_finish_then_stops_the_clock_and_refuses_acts() -> None:
    """Issue 31, organizer controls: paused, a table finishes the round in progress,
    then no clock runs (no deadline, no timer), every view says `paused`, an act is
    refused `paused` and changes nothing; seats still change meanwhile (the balancing
    goes on); resumed, the seat in turn gets a whole clock again."""
    cup = Cup([entrant("a"), entrant("b"), entrant("c")], rules={"turn_seconds": 20})
    game = cup.table.game
    assert game is not None
    opener = game.turn
    assert opener is not None
    legal = game.legal(opener)
    face = next(f for f, q in enumerate(legal["bid"], start=1) if q is not None)
    cup.act(opener, {"type": "bid", "quantity": legal["bid"][face - 1], "face": face})
    cup.send("pause", tournament="cup", seq=1, on=True)
    assert cup.table.deadline is not None  # the round in progress plays on, clocked
    assert "paused" not in cup.views_to("gw-a")[-1]
    assert game.turn is not None
    cup.act(game.turn, {"type": "dudo"})  # ends the round: the pause begins
    table = cup.table
    assert table.deadline is None and table.wake is None
    assert cup.views_to("gw-a")[-1]["paused"] is True
    turn, version, n = game.turn, table.version, len(game.bids)
    assert turn is not None
    cup.out.clear()
    legal = game.legal(turn)
    face = next(f for f, q in enumerate(legal["bid"], start=1) if q is not None)
    cup.act(turn, {"type": "bid", "quantity": legal["bid"][face - 1], "face": face})
    [refused] = [m for _, m in cup.out if m["type"] == "error"]
    assert refused["code"] == "paused" and table.version == version and len(game.bids) == n
    # The table's own timer (as the worker would fire it) does nothing while paused.
    timer = wire.message("timeout", id="t", table="t1", version=table.version)
    cup.table.handle(timer, NOW, cup.rng)
    assert len(game.bids) == n and table.status == PLAYING
    # A player sent here meanwhile sits down at once (no round is being played).
    cup.seat_in(1, "d", 2, "gw-d")
    assert cup.players() == ["a", "b", "c", "d"]
    # A repeated (older) pause changes nothing; resume: the clock runs again.
    cup.send("pause", tournament="cup", seq=1, on=False)
    assert table.paused
    cup.send("pause", tournament="cup", seq=2, on=False)
    assert not table.paused and table.deadline == NOW + 20_000
    assert "paused" not in cup.views_to("gw-a")[-1]
    # Stored and read back, a pause holds.
    cup.send("pause", tournament="cup", seq=3, on=True)
    again = Table.from_bytes(table.to_bytes())
    assert again.paused == table.paused and again.pause_seq == 3


def test_a_kicked_player_is_out_at_the_end_of_the_round_and_reported_out() -> None:
    """Issue 31, kick: the director's `forfeit` takes effect at the round's end; the
    seat is vacated (their views stop: `detached`) and the report names them `out`, not
    `left` (the director places them, it does not seat them again). A player on their
    way here is reported joined and out at once, never seated."""
    cup = Cup([entrant("a"), entrant("b", gateway="gw-b"), entrant("c"), entrant("d")])
    cup.reports.clear()
    cup.seat_in(1, "e", 2)  # waits for a seat: none is free
    cup.send("forfeit", tournament="cup", player="b")
    cup.send("forfeit", tournament="cup", player="e")
    assert "b" in cup.players() and not cup.reports  # the round plays on
    cup.play_round()
    assert "b" not in cup.players() and "e" not in cup.players()
    [report] = cup.reports
    assert "b" in report["out"] and "e" in report["out"] and "e" in report["joined"]
    assert all(p["player"] != "b" for p in report["left"])
    assert all(player != "b" for player, _ in report["seated"])
    assert any(m["type"] == "detached" for g, m in cup.out if g == "gw-b")
    assert cup.table.forfeits == [] and cup.table.arrivals == []


def test_a_kick_and_an_order_at_the_same_round_end_never_vacate_a_seat_twice() -> None:
    """The order's leavers are the seats that act last, chosen while the kicked seat
    still counts: a kicked player is taken out once, the order sends the others."""
    for kicked in ("a", "b", "c", "d"):
        cup = Cup([entrant("a"), entrant("b"), entrant("c"), entrant("d")])
        cup.reports.clear()
        cup.send("order", tournament="cup", seq=1, count=2)
        cup.send("forfeit", tournament="cup", player=kicked)
        cup.play_round()
        [report] = cup.reports
        assert kicked in report["out"] and kicked not in cup.players()
        assert all(p["player"] != kicked for p in report["left"])
        seated = [p for p, _ in report["seated"]]
        assert len(seated) >= 2 and len(set(seated)) == len(seated)


def test_the_caller_sent_away_by_their_own_call_sees_its_reveal_through_the_gateway() -> None:
    """Issue 31, item 4 (the gateway's part): that step's public view reaches the
    caller's connection, unseated by the `detached` before it, after the `ack` of their
    act: the reveal of their own call (`game.last_round`), with no seat and no die of
    theirs or anyone's; `moved` then seats them elsewhere."""
    from dudo.auth.authority import Grant
    from dudo.gateway.app import Gateway, GatewaySettings

    cup = Cup([entrant("a", gateway="gw-a"), entrant("b", gateway="gw-a"),
               entrant("c", gateway="gw-a")])  # fmt: skip
    caller = bid_before_the_break(cup)
    cup.out.clear()
    cup.act(caller, {"type": "dudo"})
    step = [m for g, m in cup.out if g == "gw-a"]
    assert [m["type"] for m in step][-1] == "view"

    class Conn:
        binary, seat, table = True, caller, "t1"
        grant = Grant(table="cup", player=h("a"), name="A", kind="entrant", expires=2**40)

        def __init__(self) -> None:
            self.sent: list[dict[str, Any]] = []

        def send(self, message: dict[str, Any]) -> None:
            self.sent.append(message)

    gateway = Gateway(GatewaySettings(secret=b"s" * 16, gateway_id="gw-a"))
    conn = Conn()
    gateway._remember_request(conn, "t1", f"m{cup.n}", "mine", timed=True)  # type: ignore[arg-type]
    conn.seat = None  # the step's `detached` came first: no seat here any more
    gateway._relay_view(step[-1])
    assert [m["type"] for m in conn.sent] == ["ack", "view"]
    ack, shown = conn.sent
    assert ack["id"] == "mine"
    assert shown["table"] == "t1" and shown["seat"] is None
    assert shown["game"]["last_round"] is not None and "dice" not in shown["game"]


def test_a_tournament_table_refuses_a_rename() -> None:
    """A tournament's names are its entrants' (checked for look-alikes when they
    register): a gateway may not rename a seat there."""
    cup = Cup([entrant("a"), entrant("b", 2, "gw-b")])
    cup.send("rename", gateway="gw-a", player=h("a"), seat=0, name="Bea")
    cup.flush()
    refused = [m for g, m in cup.out if m["type"] == "error" and g == "gw-a"]
    assert [m["code"] for m in refused] == ["bad_message"]
    assert cup.table.seats[0].name != "Bea"


def test_a_no_show_is_marked_away_then_out_and_reported_out() -> None:
    """Issue 53, item 8: a registered player who closed their browser won a tournament,
    the house playing every turn of theirs, and nothing at the table said they were away.
    From two house-played turns in a row everyone sees them away; at three they are out
    at the round's end, and the report says so (the director places them)."""
    five = {"turn_seconds": 20, "start_dice": 5, "max_dice": 5}
    cup = Cup([entrant("a", dice=5), entrant("b", dice=5), entrant("c", dice=5)], rules=five)
    table = cup.table
    seat_a = cup.players().index("a")
    at = NOW
    away_seen = False
    while not any("a" in r["out"] for r in cup.reports):
        game = table.game
        assert game is not None and game.phase != OVER and game.turn is not None
        at += 1_000
        if game.turn == seat_a:  # the clock runs out: the house plays
            at = max(at, table.wake or at)
            table.handle(Table.timeout("t1", table.version), at, cup.rng)
            cup.flush()
        else:
            legal = game.legal(game.turn)
            if legal["dudo"] and game.bids[-1][1] >= 2:
                cup.act(game.turn, {"type": "dudo"})
            else:
                face = next(f for f, q in enumerate(legal["bid"], start=1) if q is not None)
                bid = {"type": "bid", "quantity": legal["bid"][face - 1], "face": face}
                cup.act(game.turn, bid)
        if "a" in cup.players():
            turns = dict(table.idle).get(seat_a, 0)
            shown = cup.views_to("gw-a")[-1]["players"][seat_a]["away"]
            assert shown == (turns >= table.limits.away_after), (turns, shown)
            away_seen = away_seen or shown
    assert away_seen
    events = [e for _, m in cup.out if m["type"] == "view" for e in m["events"]]
    vacated = [e for e in events if e["type"] == "vacated"]
    assert vacated == [{"type": "vacated", "seat": seat_a, "turns": table.limits.vacate_after}]


def test_a_new_holder_of_a_seat_starts_with_no_house_played_turns() -> None:
    """The count that marks a seat away (and takes it out at three) is its holder's: a
    player seated where an absent one was is not marked away for the other's turns."""
    cup = Cup([entrant("a"), entrant("b"), entrant("c"), entrant("d")])
    seat_b = cup.players().index("b")
    cup.seat_in(1, "e", 2)  # waits for a seat
    cup.send("forfeit", tournament="cup", player="b")
    cup.play_round()  # b out; e waits a round (not the seat of one out this very step)
    cup.table.idle = [[seat_b, 2]]  # as b's absence left it
    cup.play_round()
    assert cup.players()[seat_b] == "e"
    assert dict(cup.table.idle).get(seat_b) is None
    view = cup.views_to("gw-a")[-1]
    assert view["players"][seat_b]["away"] is False


def test_a_won_game_that_takes_arrivals_again_shows_no_seed_until_the_table_closes() -> None:
    """A tournament table whose game is over is not done: an arrival starts its next
    round from the same game secret. A view that showed the seeds there would let
    anyone compute every later round's dice; they are shown once the table closes."""
    cup = Cup([entrant("a", 1), entrant("b", 1)])
    cup.play_round()
    game = cup.table.game
    assert game is not None and game.phase == OVER and cup.table.status == PLAYING
    cup.seat_in(1, "c", 2, gateway="gw-a")
    assert game.phase != OVER  # the winner and c play on, dice from the same secret
    shown = [m.get("seeds", {}) for m in cup.views_to("gw-a")]
    assert shown and not any("server_seed" in s or "client_seeds" in s for s in shown)
    cup.send("order", tournament="cup", seq=1, count=None)
    while cup.table.status != DONE:
        cup.play_round()
    last = cup.views_to("gw-a")[-1]
    assert bytes.fromhex(last["seeds"]["server_seed"]) == cup.table.server_seed
    # The closed table's history carries them for the tournament's results: with the
    # table's rounds, a log every round of the table checks against, the rounds
    # played after the arrival included.
    (history,) = cup.histories
    seeds = history["seeds"]
    rounds = last["game"]["log"]
    assert len(rounds) >= 2 and seeds["client_commitments"] == [None] * SEATS
    verdict = verify({"table": "t1", "rounds": rounds, **seeds})
    assert verdict.ok and verdict.seeded and verdict.rounds == len(rounds), verdict.problems
    assert dudo_client.verify({"table": "t1", "rounds": rounds, **seeds}) == []
    changed = {**seeds, "client_seeds": [*seeds["client_seeds"][:-1], "public:t1:9"]}
    assert not verify({"table": "t1", "rounds": rounds, **changed}).ok


# -- seeds the entrants bring (dudo.table.seeds; docs/security.md) --------------------

A_SEED, B_SEED = "a's seed for t1", "b-91f0"


def bringing(player: str, dice: int = 2) -> dict[str, Any]:
    return {**entrant(player, dice), "seeds": True}


def test_entrants_who_bring_seeds_commit_when_the_table_is_made_then_reveal_then_it_deals() -> None:
    """The director seats them (no commitment given sitting down): the table asks the
    seats of entrants who bring seeds for a commitment, takes the seeds only once every
    one is in, and deals from them; the results verify it."""
    cup = Cup([bringing("a"), bringing("b"), entrant("c", 2)])
    assert cup.table.status == "open" and cup.table.game is None and cup.reports == []
    asking = cup.views_to("gw-a")[-1]["seeds"]
    assert asking["asked"] == [0, 1] and asking["commit_until"] > NOW and "until" not in asking
    # Nothing is revealed before every commitment is in; nobody else commits.
    assert cup.from_seat("seed", 0, seed=A_SEED) == [wire.BAD_SEED]
    assert cup.from_seat("commit_seed", 2, commitment=client_commitment("c")) == [wire.BAD_SEED]
    assert cup.from_seat("commit_seed", 0, commitment=client_commitment(A_SEED)) == []
    again = client_commitment("again")
    assert cup.from_seat("commit_seed", 0, commitment=again) == [wire.BAD_SEED]
    assert cup.views_to("gw-a")[-1]["seeds"]["asked"] == [1]
    assert cup.from_seat("commit_seed", 1, commitment=client_commitment(B_SEED)) == []
    revealing = cup.views_to("gw-a")[-1]["seeds"]
    assert "asked" not in revealing and revealing["until"] > NOW
    ca, cb = client_commitment(A_SEED), client_commitment(B_SEED)
    assert revealing["commitments"][:3] == [ca, cb, None]
    assert cup.from_seat("seed", 1, seed="not b's") == [wire.BAD_SEED]
    assert cup.from_seat("seed", 0, seed=A_SEED) == [] and cup.table.game is None
    assert cup.from_seat("seed", 1, seed=B_SEED) == []
    game = cup.table.game
    assert game is not None and cup.table.status == PLAYING and game.counts[:3] == [2, 2, 2]
    seeds = [A_SEED, B_SEED, *(public_client_seed("t1", s) for s in range(2, SEATS))]
    assert game.secret == game_secret(cup.table.server_seed, seeds)
    assert [r["joined"] for r in cup.reports] == [["a", "b", "c"]]  # reported once dealt
    cup.send("order", tournament="cup", seq=1, count=None)
    while cup.table.status != DONE:
        cup.play_round()
    (history,) = cup.histories
    rounds = cup.views_to("gw-a")[-1]["game"]["log"]
    assert history["seeds"]["client_seeds"][:2] == [A_SEED, B_SEED]
    assert verify({"table": "t1", "rounds": rounds, **history["seeds"]}).ok


def test_seeds_asked_and_not_given_in_time_are_public_and_the_wait_survives_the_record() -> None:
    cup = Cup([bringing("a"), bringing("b")])
    assert cup.from_seat("commit_seed", 0, commitment=client_commitment(A_SEED)) == []
    # A worker dies mid-wait: the next one reads what was asked and the dice to deal.
    cup.table = Table.from_bytes(cup.table.to_bytes())
    assert cup.table.asked == [1] and cup.table.first_counts == [2, 2, 0, 0]
    cup.send("timeout", version=cup.table.version)  # b never committed: a is asked for
    assert cup.table.game is None and cup.views_to("gw-a")[-1]["seeds"]["until"] > NOW
    cup.send("timeout", version=cup.table.version)  # a never revealed either
    assert cup.table.dealt == [[client_commitment(A_SEED), None], [None, None], [None, None],
                               [None, None]]  # fmt: skip
    assert cup.table.status == PLAYING and cup.dice() == {"a": 2, "b": 2}
    # With no commitment at all, the time for them up: dealt at once, public seeds.
    cup = Cup([bringing("a"), bringing("b")])
    cup.send("timeout", version=cup.table.version)
    assert cup.table.status == PLAYING and cup.table.dealt == [[None, None]] * SEATS


def _seeded(cup: Cup, seeds: dict[int, str]) -> None:
    """Each seat in ``seeds`` commits to its seed, then reveals it, as asked."""
    for seat, seed in seeds.items():
        assert cup.from_seat("commit_seed", seat, commitment=client_commitment(seed)) == []
    for seat, seed in seeds.items():
        assert cup.from_seat("seed", seat, seed=seed) == []


def test_an_arrival_holds_the_next_round_until_seeds_given_after_it_deal_it() -> None:
    """Issue 55, item 5: the director chose who sits where, and the deployment knew the
    secret the table was dealt from, so it could have seated a favourite where the dice
    fall well. The round after an arrival is held (no dice, nobody's turn) and dealt from
    seeds every seat that brings them gives after the change; the closed table's
    results verify every round, the held one and those after it by the new seeds."""
    cup = Cup([bringing("a"), bringing("b"), entrant("c", 2)])
    _seeded(cup, {0: A_SEED, 1: B_SEED})
    table, game = cup.table, cup.table.game
    assert game is not None and table.redealt == []
    cup.send("seat_in", tournament="cup", seq=1, player="d", name="D", dice=2, gateway="gw-d",
             bot=None, seeds=True)  # fmt: skip
    held = game.round_no + 1
    cup.play_round()
    assert cup.players() == ["a", "b", "c", "d"] and game.round_no == held
    assert game.undealt and game.commitment is None and not any(game.hands)
    # Everyone sees a round with no dice and nobody's turn, and is asked again.
    for gateway in ("gw-a", "gw-d"):
        view = cup.views_to(gateway)[-1]
        assert view["game"]["turn"] is None and view["game"]["commitment"] is None
        assert all(seat["dice"] == [] for seat in view["seats"])
        assert view["seeds"]["asked"] == [0, 1, 3] and view["seeds"]["round"] == held
        assert view["seeds"]["commitments"] == [None] * SEATS
    assert cup.from_seat("act", 2, action={"type": "bid", "quantity": 1, "face": 2}) == [
        "not_your_turn"
    ]
    # The seed a seat gave for the first deal is not asked for again: a new one is.
    assert cup.from_seat("seed", 0, seed=A_SEED) == [wire.BAD_SEED]
    # A worker dies mid-wait: the next one holds the same round, asks the same seats.
    cup.table = table = Table.from_bytes(table.to_bytes())
    game = table.game
    assert game is not None and game.undealt and table.asked == [0, 1, 3]
    again = {0: "a, after d came", 1: "b, after d came", 3: "d's own"}
    _seeded(cup, again)
    assert not game.undealt and game.turn is not None and game.round_no == held
    seeds = [again[0], again[1], public_client_seed("t1", 2), again[3]]
    assert game.secret == game_secret(table.server_seed, seeds)  # type: ignore[arg-type]
    dealt = cup.views_to("gw-d")[-1]
    assert [e["round"] for e in dealt["events"] if e["type"] == "round_start"] == [held]
    assert dealt["game"]["commitment"] == game.commitment and dealt["seats"][0]["dice"]
    assert dealt["seeds"]["revealed"] == [True, True, False, True]
    for _ in range(2):
        cup.play_round()
    assert cup.views_to("gw-a")[-1].get("seeds") is None  # (nothing shown mid-game)
    cup.send("order", tournament="cup", seq=2, count=None)
    while cup.table.status != DONE:
        cup.play_round()
    (history,) = cup.histories  # (the director joins the parts' reseeds to the seeds)
    assert "reseeds" not in history["seeds"]
    [reseed] = history["reseeds"]
    assert reseed == {"round": held, "client_seeds": seeds,
                      "client_commitments": [client_commitment(again[0]),
                                             client_commitment(again[1]), None,
                                             client_commitment(again[3])]}  # fmt: skip
    cup.send("watch", gateway="gw-w", on=True)  # the closed table's view, as anyone sees it
    last = cup.views_to("gw-w")[-1]
    rounds = last["game"]["log"]
    assert rounds[-1]["round"] > held and last["seeds"]["reseeds"] == [reseed]
    log = {"table": "t1", "rounds": rounds, **history["seeds"], "reseeds": [reseed]}
    assert verify(log).ok, verify(log).problems
    assert dudo_client.verify(last) == []
    first_only = {k: v for k, v in log.items() if k != "reseeds"}
    assert verify(first_only).problems[0] == f"round {held}: the seed is not the one the seeds make"


def test_an_arrival_at_a_table_where_nobody_brings_seeds_is_dealt_at_once() -> None:
    """No seat to ask: the round after the arrival is dealt at once from the same
    secret, as before seeds (the deployment deals alone at such a table)."""
    cup = Cup([entrant("a"), entrant("b"), entrant("c")])
    game = cup.table.game
    assert game is not None
    cup.seat_in(1, "d", 2, "gw-d")
    cup.play_round()
    assert cup.players()[3] == "d" and not game.undealt and cup.table.redealt == []


def test_an_arrival_during_a_held_and_paused_round_waits_for_that_rounds_end() -> None:
    """The organizer's pause begins at a round's end; an arrival there holds the next
    round for seeds. Another arrival (or a kick) coming then waits for the held round to
    be dealt and played, as mid-round: carried out at once it would ask again for seeds
    some seats may have revealed (and the engine refuses to hold a held round)."""
    cup = Cup([bringing("a"), bringing("b"), entrant("c", 2)])
    _seeded(cup, {0: A_SEED, 1: B_SEED})
    game = cup.table.game
    assert game is not None
    cup.send("pause", tournament="cup", seq=1, on=True)
    cup.send("seat_in", tournament="cup", seq=1, player="d", name="D", dice=2, gateway="gw-d",
             bot=None, seeds=True)  # fmt: skip
    cup.play_round()
    assert game.undealt and cup.table.paused and cup.table.asked == [0, 1, 3]
    errors = len([m for _, m in cup.out if m["type"] == "error"])
    cup.send("seat_in", tournament="cup", seq=2, player="e", name="E", dice=1, gateway="gw-e",
             bot=None, seeds=True)  # fmt: skip
    cup.send("forfeit", tournament="cup", player="c")
    assert [a[0] for a in cup.table.arrivals] == ["e"] and cup.table.forfeits == ["c"]
    assert game.undealt and cup.table.asked == [0, 1, 3] and cup.players()[4:] == []
    assert len([m for _, m in cup.out if m["type"] == "error"]) == errors
    cup.send("pause", tournament="cup", seq=2, on=False)
    _seeded(cup, {0: "a2", 1: "b2", 3: "d2"})
    assert not game.undealt and [a[0] for a in cup.table.arrivals] == ["e"]
    cup.play_round()  # the held round's end: c is out; e takes no seat freed this step
    assert "c" not in cup.players() and not game.undealt  # (a departure deals on)
    cup.play_round()  # the next one's end: e sits, and the round after it is held
    assert "e" in cup.players() and game.undealt
