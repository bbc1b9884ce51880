"""The chat gateway's rooms (dudo.chat.rooms) against a real table (dudo.table), without
Redis or IRC: what people type becomes the table's messages, what the table sends becomes
lines. Public lines go to the channel and never hold a die before its reveal; a player's
dice go to that player's nick alone; a restart takes the rooms up again."""

from __future__ import annotations

import itertools
import random
import re
from typing import Any

import msgpack

from dudo import wire
from dudo.bots.policies import baseline, my_turn
from dudo.chat.rooms import Output, Room, Rooms, public_of
from dudo.chat.saying import counted
from dudo.table import Table

NOW = 1_000_000
GATEWAY = "irc-test"
CHANNEL = "#dudo"
DICE = re.compile(r"\[\d\]")


class Harness:
    """Rooms and the tables they make, joined as a worker would join them; bot seats are
    taken and played by a stand-in for the bot service (gateway ``gw-bots``)."""

    def __init__(
        self, channels: tuple[str, ...] = (CHANNEL,), life: str = "a", hold_bots: bool = False
    ) -> None:
        ids = itertools.count(1)  # unique as the gateway's random ids are, life after life
        self.rooms = Rooms(
            list(channels),
            message=lambda kind, **f: wire.message(kind, gateway=GATEWAY, **f),
            new_id=lambda: f"{life}{next(ids)}",
        )
        self.tables: dict[str, Table] = {}
        self.lines: list[tuple[str, str]] = []
        self.rng = random.Random(5)
        self.now = NOW
        # The bot service's joins, held back until seat_bots() (it is another process:
        # its bots sit a moment after the table asks for them).
        self.hold_bots = hold_bots
        self.held: dict[str, dict[str, Any]] = {}

    def type(self, nick: str, text: str, channel: str = CHANNEL) -> list[tuple[str, str]]:
        """``nick`` says ``text`` in ``channel``; the lines everything it caused made."""
        before = len(self.lines)
        self.run(self.rooms.command(channel, nick, text))
        return self.lines[before:]

    def run(self, out: Output) -> None:
        self.lines += out.lines
        for msg in out.send:
            wire.validate(msg)
            self.deliver(msg)

    def deliver(self, msg: dict[str, Any]) -> None:
        if msg["type"] == "create":
            self.tables[msg["table"]] = table = Table.create(msg, self.now, rng=self.rng)
        elif msg["table"] not in self.tables:  # as a worker answers: no such table
            refused = wire.message(
                "error", id=msg["id"], table=msg["table"], seat=None, player=None,
                code=wire.UNKNOWN_TABLE, message="no table",
            )  # fmt: skip
            if msg["gateway"] == GATEWAY:
                self.run(self.rooms.on_message(refused))
            return
        else:
            table = self.tables[msg["table"]]
            table.handle(msg, self.now, self.rng)
        self.flush(table)

    def flush(self, table: Table) -> None:
        for gateway, data in table.flush().outputs:
            message = msgpack.unpackb(data, raw=False)
            wire.validate(message)
            if gateway == GATEWAY:
                self.run(self.rooms.on_message(message))
            elif gateway == "gw-bots" and message["type"] == "view":
                self._bots_play(table, message)
        entry = table.lobby_entry()
        for seat, level in (entry or {}).get("wants_bots", []):
            bot = f"bot-{table.id}-{seat}"
            join = wire.message("join", id=f"j-{bot}", table=table.id, gateway="gw-bots",
                                player=bot, name=f"Bot{seat}", seat=seat, bot=level)  # fmt: skip
            if self.hold_bots:
                self.held[bot] = join
            else:
                self.deliver(join)

    def seat_bots(self) -> list[tuple[str, str]]:
        """The held bots sit; the lines that made."""
        before = len(self.lines)
        held, self.held = self.held, {}
        for join in held.values():
            self.deliver(join)
        return self.lines[before:]

    def _bots_play(self, table: Table, view: dict[str, Any]) -> None:
        for private, holder in zip(view["seats"], view["holders"], strict=True):
            snapshot = wire.seat_snapshot(view, private)
            if view["status"] == "playing" and my_turn(snapshot):
                act = wire.message(
                    "act", id=f"b{self.rng.random()}", table=table.id, gateway="gw-bots",
                    player=holder, seat=private["seat"], action=baseline(snapshot, self.rng),
                )  # fmt: skip
                self.deliver(act)
                return

    def table(self) -> Table:
        (table,) = self.tables.values()
        return table


def private(lines: list[tuple[str, str]], nick: str) -> list[str]:
    return [text for target, text in lines if target == nick]


def channel(lines: list[tuple[str, str]], name: str = CHANNEL) -> list[str]:
    return [text for target, text in lines if target == name]


def play_out(h: Harness, people: list[str], limit: int = 2000) -> None:
    """Every person plays when the channel calls their turn: dudo when they can, else the
    smallest raise (typed as plain "Q F", as people do)."""
    for _ in range(limit):
        table = h.table()
        if table.status == "over":
            return
        game = table.game
        assert game is not None
        room = h.rooms.rooms[CHANNEL]
        nick = room.nicks.get(room.turn_player or "")
        assert nick in people, (room.turn_player, room.nicks)
        view = room.views[room.turn_player or ""]
        legal = view["game"]["legal"]
        if legal["direction"]:
            h.type(nick, "!dir +")
        elif legal["dudo"]:
            h.type(nick, "!dudo")
        else:
            face = next(f for f in (2, 3, 4, 5, 6, 1) if legal["bid"][f - 1] is not None)
            h.type(nick, f"{legal['bid'][face - 1]} {face}")
    raise AssertionError("the game did not end")


def test_a_whole_game_two_people_and_a_bot_each_told_only_their_own_dice() -> None:
    h = Harness()
    opened = h.type("Ana", "!new classic bots 1 dice 2")
    assert any("Ana opens table" in t and "1 bot)" in t for t in channel(opened)), opened
    h.type("Ben", "!join")
    started = h.type("Ana", "!start")
    assert "The game begins: Ana, Ben, Bot5 (bot)" in channel(started), started
    play_out(h, ["Ana", "Ben"])
    table = h.table()
    assert table.status == "over"
    said = channel(h.lines)
    assert any(t.startswith("Winner: ") for t in said)
    # Dice in the channel only in reveals (the round is over then: every hand is public).
    for text in said:
        for part in text.split(" · "):
            assert not DICE.search(part) or "counted" in text, part
    # Each person was told each round's hand, by private message, and it was theirs: the
    # reveal of that round (in the channel) shows the same dice for them.
    reveals = [t for t in said if "— DUDO by" in t or "— CALZA by" in t]
    for nick in ("Ana", "Ben"):
        told = private(h.lines, nick)
        assert told and all(t.startswith("Table irc") and "your dice:" in t for t in told)
        for round_no, hand in ((int(r), d) for r, d in (_round_and_dice(t) for t in told)):
            shown = re.search(rf"{nick} ((?:\[\d\] ?)+)", reveals[round_no - 1])
            assert shown is not None and shown.group(1).split() == hand.split(), round_no
    # Nobody else was sent anything privately (the bot is the bot service's).
    assert {target for target, _ in h.lines} == {CHANNEL, "Ana", "Ben"}


def _round_and_dice(text: str) -> tuple[str, str]:
    found = re.search(r"round (\d+) · your dice: ((?:\[\d\] ?)+)", text)
    assert found is not None, text
    return found.group(1), found.group(2).strip()


def test_the_channel_is_told_from_the_public_part_alone() -> None:
    view = {
        "type": "view", "table": "t", "version": 3, "status": "playing",
        "players": [{"name": "Ana", "bot": None, "away": False}], "host": None,
        "deadline": None, "game": {"round": 1}, "events": [],
        "seats": [{"seat": 0, "dice": [6, 6], "legal": {}}], "holders": ["p-ana"],
        "applied": ["x"],
    }  # fmt: skip
    public = public_of(view)
    assert "seats" not in public and "holders" not in public and "applied" not in public
    assert public["seat"] is None and public["game"] == {"round": 1}


def test_turns_are_called_and_plain_bids_count_only_in_turn() -> None:
    h = Harness()
    h.type("Ana", "!new classic bots 1 dice 1")
    h.type("Ana", "!start")
    room = h.rooms.rooms[CHANNEL]
    game = h.table().game
    assert game is not None
    if room.turn_player is None:  # the bot opened: wait for Ana's turn
        assert game.turn == 1
    version = h.table().version
    assert h.type("Zoe", "3 4") == [] and h.table().version == version  # not seated: chat
    said = h.type("Zoe", "!dudo")
    assert channel(said) == ["Zoe: you have no seat at this table (!join)"]
    assert "Ana: your turn" in " ".join(channel(h.lines))


def test_refusals_go_back_to_whoever_typed() -> None:
    h = Harness()
    assert channel(h.type("Ana", "!new nonsense")) == [
        "Ana: a table cannot be made so: !new [preset] [bots N] [dice D] [clock S] "
        "(rules.preset: unknown preset 'nonsense'; expected one of classic, lizumo, cacho, "
        "liars-dice)"
    ]
    assert "bots: 0..5" in channel(h.type("Ana", "!new classic bots 6"))[0]
    assert channel(h.type("Ana", "!join")) == ["No table in this channel: !new opens one"]
    h.type("Ana", "!new classic bots 1")
    assert "already being played" in channel(h.type("Ben", "!new"))[0]
    h.type("Ben", "!join")
    refused = channel(h.type("Ben", "!start"))
    assert refused == ["Ben: only Ana, the host, can do that"], refused  # names, not seats
    assert h.table().status == "open"


def test_languages_and_faces_of_every_language() -> None:
    h = Harness()
    assert channel(h.type("Ana", "!idioma es")) == ["Idioma: español"]
    said = channel(h.type("Ana", "!nueva classic bots 1 dados 2"))
    assert said and "abre la mesa" in said[0]
    h.type("Ana", "!empezar")
    table = h.table()
    game = table.game
    assert game is not None
    if game.turn != 0:
        return  # the bot opens; faces of every language are checked in tests/text/test_lines.py
    version = table.version
    h.type("Ana", "!puja 1 quina")
    assert table.version > version
    assert any("Ana puja 1 × quina" in t for t in channel(h.lines))


def test_a_reminder_once_a_turn_before_the_clock_runs_out() -> None:
    h = Harness()
    h.type("Ana", "!new classic bots 1")
    h.type("Ana", "!start")
    room = h.rooms.rooms[CHANNEL]
    if room.turn_player is None:
        play_out(h, ["Ana"], limit=1)
    assert room.turn_player == room.player_of_nick("Ana") and room.deadline is not None
    turn_ms = room.public["game"]["rules"]["turn_seconds"] * 1000  # type: ignore[index]
    early = room.deadline - turn_ms // 3 - 1000
    assert h.rooms.tick(early).lines == []
    late = h.rooms.tick(room.deadline - 4000).lines
    said = [(to, counted(text, room.deadline - 4000)) for to, text in late]
    assert said == [(CHANNEL, "Ana: 4 s left, then the house plays for you")]
    # Counted as the line goes out, not as it was made (issue 54, item 3: it waited
    # behind a homeserver's rate limit and told "20 s left" with about 4 left).
    soon = counted(late[0][1], room.deadline - 1200)
    assert soon == "Ana: 1 s left, then the house plays for you"
    assert h.rooms.tick(room.deadline - 2000).lines == []  # once a turn


def test_a_restart_takes_the_rooms_up_again_and_asks_for_the_latest_views() -> None:
    h = Harness()
    h.type("Ana", "!new classic bots 1")
    h.type("Ben", "!join")
    h.type("Ana", "!start")
    stored = h.rooms.state()
    assert "dice" not in repr(stored) and not DICE.search(repr(stored))  # nothing private
    # A new life: the same channels, the memory of the old one.
    again = Harness(life="b")
    again.tables = h.tables
    out = again.rooms.load(msgpack.unpackb(msgpack.packb(stored), raw=False))
    kinds = sorted(m["type"] for m in out.send)
    assert kinds == ["resync", "resync", "watch"]
    # Issue 54, item 10: a move typed while the gateway was down is lost: say so, and
    # call the turn again (it was the same turn as before the restart, so it was not).
    assert channel(out.lines) == [
        f"Back: table {h.table().id} goes on (anything typed while I was away was not "
        "heard: type it again)"
    ]
    again.run(Output(send=out.send))
    room = again.rooms.rooms[CHANNEL]
    assert set(room.views) == set(room.nicks) and sorted(room.nicks.values()) == ["Ana", "Ben"]
    called = " ".join(channel(again.lines))
    if room.turn_player is not None:  # a person's turn (else the bot's, which it plays)
        assert f"{room.nicks[room.turn_player]}: your turn" in called, called
        assert "by ?" not in called  # the bidder named from the view being told
    play_out(again, ["Ana", "Ben"])
    assert h.table().status == "over"


def test_a_nick_change_keeps_the_seat() -> None:
    h = Harness()
    h.type("Ana", "!new classic bots 1")
    h.type("Ana", "!start")
    h.run(h.rooms.nick_changed("Ana", "Ana_away"))
    room: Room = h.rooms.rooms[CHANNEL]
    (ana,) = room.nicks  # her handle, as the worker named her player in `joined`
    assert room.nicks == {ana: "Ana_away"} and room.seats[ana] == 0
    assert h.table().seats[0].name == "Ana_away"  # the table shows it (`rename`)
    assert "Ana_away" in " ".join(channel(h.type("Ana_away", "!table")))
    assert room.player_of_nick("ana_AWAY") == ana and room.player_of_nick("Ana") is None


def test_two_channels_two_tables_at_once() -> None:
    h = Harness(channels=("#one", "#two"))
    h.type("Ana", "!new classic bots 1 dice 1", channel="#one")
    h.type("Ben", "!new classic bots 1 dice 1", channel="#two")
    assert len(h.tables) == 2
    tables = {room.table for room in h.rooms.rooms.values()}
    assert tables == set(h.tables)
    assert all(text for text in channel(h.lines, "#one")) and channel(h.lines, "#two")


def test_hostile_lines_get_an_answer_and_change_nothing() -> None:
    h = Harness()
    h.type("Ana", "!new classic bots 1 dice 2")
    h.type("Ana", "!start")
    table = h.table()
    version = table.version
    for line in (
        "!bid 99999999999999999999999999 5",
        "!bid 3 9",
        "!new classic bots 99999999999999999999",
        "!new " + "x" * 2000,
        "!dir",
        "!lang",
        "!" + "\x00" * 10,
        "\x01ACTION rolls the dice\x01",
        "!dudo " * 200,
        "3 ²",
    ):
        said = h.type("Ana", line)
        assert all(len(text) < 600 for _, text in said), line
        sent = [m for m in h.rooms.command(CHANNEL, "Ana", line).send]
        for msg in sent:  # whatever it asks is a valid message (refused by the table or not)
            wire.validate(msg)
    assert all(t.version >= version for t in h.tables.values())
    assert len(h.tables) == 1  # no second table
    play_out(h, ["Ana"])  # and the game still plays to its end


def test_a_start_typed_before_the_bots_sit_begins_the_game_when_they_do() -> None:
    h = Harness(hold_bots=True)
    h.type("Ana", "!new classic bots 2 dice 2")
    assert channel(h.type("Ana", "!start")) == [
        "Ana: the bots are taking their seats; the game begins when they sit "
        "(!start again: at once)"
    ]
    assert h.table().status == "open" and h.held
    said = channel(h.seat_bots())
    assert any(t.startswith("The game begins: Ana, Bot") for t in said), said
    assert h.table().status == "playing"


def test_a_second_start_goes_at_once_and_is_refused_while_too_few_sit() -> None:
    """The bot service may be down: asking again sends the start, whatever comes of it."""
    h = Harness(hold_bots=True)
    h.type("Ana", "!new classic bots 1 dice 2")
    assert "the game begins when they sit" in channel(h.type("Ana", "!start"))[0]
    said = channel(h.type("Ana", "!start"))
    assert said == ["Ana: two players are needed to start"], said
    said = channel(h.seat_bots())  # the start was refused: no start pending any more
    assert not any("The game begins" in t for t in said) and h.table().status == "open"
    assert any("The game begins" in t for t in channel(h.type("Ana", "!start")))


def test_a_nick_that_left_is_not_its_seat_any_more() -> None:
    """Issue 29, item 9: Ana quits; whoever takes her nick afterwards is someone else:
    refused as unseated, the table unchanged (the house plays her seat by its clock)."""
    h = Harness()
    h.type("Ana", "!new classic bots 1 dice 2")
    h.type("Ana", "!start")
    room = h.rooms.rooms[CHANNEL]
    out = h.rooms.gone("Ana", None)  # QUIT
    assert channel(out.lines) == [
        "Ana left: the house plays their seat (a nick is not a seat: whoever takes it next "
        "is someone else)"
    ]
    version = h.table().version
    for line in ("!dudo", "1 2", "!leave", "!odds"):
        said = channel(h.type("Ana", line))  # another person, the same nick
        assert not said or said == ["Ana: you have no seat at this table (!join)"], said
    assert h.table().version == version and room.player_of_nick("Ana") is None
    assert h.rooms.gone("Ben", "#elsewhere").lines == []  # nobody of ours


def test_a_seat_taken_with_an_account_is_the_accounts_whatever_the_nick() -> None:
    """Where the network has accounts, a seat is its account's: played under any nick
    by whoever is logged in to it, never by someone else with the same nick; and with
    the gateway's app key, the player is the account's identity (one player everywhere)."""
    h = Harness()
    identities: list[str] = []
    h.rooms.identity_of = lambda account: identities.append(account) or None  # type: ignore[func-returns-value]
    h.type("Ana", "!new classic bots 1 dice 2")
    room = h.rooms.rooms[CHANNEL]
    h.run(h.rooms.command(CHANNEL, "Ben", "!join", "ben-account"))
    assert identities == ["ben-account"]
    (ben,) = room.accounts
    assert room.accounts == {ben: "ben-account"} and room.nicks[ben] == "Ben"
    h.type("Ana", "!start")
    h.rooms.gone("Ben", None)  # his connection dropped: the seat is the account's still
    assert room.player_of_nick("Ben") is None  # not for a Ben who is not logged in
    assert room.player_of_nick("Ben", "someone-else") is None
    assert room.claim("Benji", "ben-account") == ben  # back, under another nick
