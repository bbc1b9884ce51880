"""Issue 32, what a chat player met, room by room against a real table (no IRC, no
Redis; tests/integration/test_irc.py plays the same on ngIRCd): dice told again, an
abandoned table replaced, the turn called again after the gateway was cut off, refusals
in the player's words and language, usage lines, private answers, the table's options."""

from __future__ import annotations

import re

import msgpack

from dudo.chat.news import call_turn
from dudo.chat.room import Room, label_of
from dudo.text.lines import event_line
from dudo.text.words import WORDS

from ..table.test_table import Run
from .test_rooms import CHANNEL, GATEWAY, Harness, Output, channel, play_out, private

DICE = re.compile(r"your dice: ((?:\[\d\] ?)+)")


def started(bots: int = 1, dice: int = 2, *people: str) -> Harness:
    h = Harness()
    h.type("Ana", f"!new classic bots {bots} dice {dice}")
    for nick in people:
        h.type(nick, "!join")
    h.type("Ana", "!start")
    assert h.table().status == "playing"
    return h


def test_dice_told_again_privately_and_after_a_restart() -> None:
    h = started()
    room = h.rooms.rooms[CHANNEL]
    (ana,) = room.nicks
    first = private(h.lines, "Ana")
    assert first and DICE.search(first[-1])
    again = h.type("Ana", "!dice")
    assert [t for t, _ in again] == ["Ana"] and again[0][1] == first[-1]  # to her alone
    assert h.type("Ben", "!dados") == [(CHANNEL, "Ben: you have no seat at this table (!join)")]
    # Killed before the line went out: what it stored does not say her dice were told,
    # so the next life tells them (again) for this round.
    stored = msgpack.unpackb(msgpack.packb(h.rooms.state()), raw=False)
    assert "dealt" not in stored[CHANNEL]
    life = Harness(life="b")
    life.tables = h.tables
    out = life.rooms.load(stored)
    life.run(Output(send=out.send))
    assert private(life.lines, "Ana") == [first[-1]]
    assert ana in life.rooms.rooms[CHANNEL].views


def test_a_table_nobody_here_plays_any_more_gives_way_to_a_new_one() -> None:
    h = Harness()
    h.type("Ana", "!new classic bots 1 dice 2")
    h.type("Ben", "!join")
    h.run(h.rooms.gone("Ana", None))  # the host quits while the table is open
    table = h.table()
    assert [s.name for s in table.seats if s.taken and not s.bot] == ["Ben"]  # hers is free
    said = channel(h.type("Ben", "!start"))  # the host passed to Ben: he may start
    assert said[0] == "The game begins: Ben, Bot5 (bot)" and table.status == "playing", said
    assert "already being played" in channel(h.type("Cleo", "!new"))[0]  # Ben still plays
    h.run(h.rooms.gone("Ben", CHANNEL))
    said = channel(h.type("Cleo", "!new classic bots 2"))
    assert said[0] == f"Nobody here plays table {table.id} any more: it is left to the house"
    assert any("Cleo opens table" in t and "2 bots)" in t for t in said), said
    assert len(h.tables) == 2 and GATEWAY not in table.watchers  # not watched any more


def test_after_the_gateway_was_cut_off_the_turn_is_called_again() -> None:
    h = started(1, 2, "Ben")
    room = h.rooms.rooms[CHANNEL]
    # The stand-in bot service plays at once: whoever's turn it is now is a person's.
    who = room.nicks.get(room.turn_player or "")
    assert who in ("Ana", "Ben")
    out = h.rooms.reconnected()
    lines = channel(out.lines)
    assert lines[0].startswith(f"Back on the channel: table {room.table} goes on")
    assert lines[1].startswith(f"{who}: your turn (")
    came = h.rooms.came(who, CHANNEL)  # and when that player comes back to the channel
    assert private(came.lines, who) and DICE.search(private(came.lines, who)[0])
    assert channel(came.lines)[0].startswith(f"{who}: your turn (")
    assert h.rooms.came("Zoe", CHANNEL).lines == []  # nobody of ours
    assert h.rooms.came(who, CHANNEL).lines == []  # joining again and again: once a round


def test_refusals_name_people_in_the_players_language() -> None:
    h = started(1, 2, "Ben")
    room = h.rooms.rooms[CHANNEL]
    game = h.table().game
    assert game is not None
    turn = room.nicks.get(room.turn_player or "") or room.names[game.turn]
    other = "Ben" if turn == "Ana" else "Ana"
    assert channel(h.type(other, "!dudo")) == [f"{other}: not your turn: it is {turn}'s"]
    h.type("Ana", "!lang es")
    assert channel(h.type(other, "!dudo")) == [f"{other}: no es tu turno: le toca a {turn}"]
    h.type("Ana", "!lang de")
    said = channel(h.type(other, "!dudo"))
    assert said == [f"{other}: du bist nicht dran: {turn} ist dran"]
    assert "seat" not in said[0] and "turn" not in said[0]  # no English, no seat numbers


def test_usage_lines_private_answers_and_the_end_of_a_game() -> None:
    h = started(1, 1)
    assert channel(h.type("Ana", "!bid 3")) == [
        "Ana: usage: !bid Q F, for example !bid 3 5 (three fives) · !help"
    ]
    assert channel(h.type("Ana", "!frobnicate")) == [
        "Ana: there is no command !frobnicate · !help lists them"
    ]
    line = h.rooms.private("Ana", "table")
    assert [t for t, _ in line.lines] == ["Ana"]  # asked privately, answered privately
    assert re.search(
        r"Round \d+ · \d+ dice: .* · (to beat: .* by \S+(?: \(bot\))?|no bid yet)$",
        line.lines[0][1],
    )
    play_out(h, ["Ana"])
    for typed in ("!start", "!leave"):
        assert channel(h.type("Ana", typed)) == ["Ana: this game is over: !new opens another table"]


def test_a_table_with_a_clock_odds_and_the_losers_direction() -> None:
    h = Harness()
    h.type("Ana", "!new lizumo bots 1 clock 45 odds dir")
    rules = h.table().rules
    assert rules.turn_seconds == 45 and rules.assisted and rules.loser_chooses_direction
    said = channel(h.type("Ben", "!new clock 5"))
    assert said and "already being played" in said[0]


def test_every_refusal_sentence_has_every_fact_it_names() -> None:
    for lang, words in WORDS.items():
        for key, text in words.items():
            if key.startswith("err_"):
                text.format(who="x", turn="y", host="z", bid="1 × two", dice=3)  # no KeyError
        assert words["one_bot"] != words["n_bots"], lang


def test_the_loser_who_chose_the_direction_is_called_again_to_open() -> None:
    """With the loser choosing the direction, the same seat chooses, then opens: two
    turns with the same round, seat and bids, each called (the second was not)."""
    room = Room(CHANNEL, table="t1", seats={"h": 0}, nicks={"h": "Ana"})
    game = {"round": 2, "turn": 0, "bids": [], "phase": "direction"}
    view = {"status": "playing", "game": game}
    assert call_turn(room, view) == [
        (CHANNEL, "Ana: your turn (choose who plays next: !dir + or -)")
    ]
    assert call_turn(room, view) == []  # the same turn: once
    view["game"] = {**game, "phase": "bidding"}
    assert call_turn(room, view) == [(CHANNEL, "Ana: your turn (open the round)")]
    # Issue 54, item 11: a turn to beat a bid says whose bid it is ("mara: your turn (4 ×
    # fives)" said nothing of who bid, and Matrix shows bids on its board, not as lines).
    room.seats["b"], room.nicks["b"] = 1, "Mara"
    view["game"] = {**game, "phase": "bidding", "bids": [[1, 4, 5]], "round": 3}
    assert call_turn(room, view) == [(CHANNEL, "Ana: your turn (to beat: 4 × fives by Mara)")]
    room.lang = "es"
    view["game"] = {**view["game"], "bids": [[1, 4, 5], [0, 5, 5], [1, 6, 5]]}
    assert call_turn(room, view) == [(CHANNEL, "Ana: te toca (a superar: 6 × quinas de Mara)")]


def test_a_start_typed_right_after_new_waits_for_the_seat() -> None:
    """People type !new and !start in one breath: the start waits for their own seat
    (and the bots), it is not refused as "no seat"."""
    h = Harness(hold_bots=True)
    out = h.rooms.command(CHANNEL, "Ana", "!new classic bots 1 dice 2")  # not delivered yet
    said = channel(h.type("Ana", "!start"))
    assert said and "the game begins when they sit" in said[0], said
    h.run(out)
    assert h.table().status == "open"
    assert any(t.startswith("The game begins: Ana, Bot") for t in channel(h.seat_bots()))


def test_a_channels_table_is_labelled_with_the_channel_and_network() -> None:
    h = Harness()
    h.rooms.network = "irc.example"
    h.type("Ana", "!new classic bots 1")
    assert h.table().lobby_entry()["label"] == "#dudo on irc.example"  # type: ignore[index]
    long = label_of("#" + "x" * 70 + " on irc.example")["label"]  # cut to the field's 64
    assert len(long) == 64 and Run(label=long).table.label == long
    assert label_of("#dudo\u202e") == {}  # not clean text: no label rather than none


def test_the_host_hands_the_table_over_or_closes_it_from_the_channel() -> None:
    h = Harness()
    h.type("Ana", "!new classic bots 1")
    h.type("Ben", "!join")
    assert channel(h.type("Ana", "!host zoe")) == ["Ana: zoe has no seat at this table"]
    assert channel(h.type("Ana", "!host")) == [
        "Ana: usage: !host NICK (a player at this table becomes its host)"
    ]
    h.type("Ana", "!host ben")
    room = h.rooms.rooms[CHANNEL]
    ben = room.player_of_nick("Ben")
    assert h.table().lobby_entry()["host"] == ben  # type: ignore[index]
    assert channel(h.type("Ana", "!close")) == ["Ana: only Ben, the host, can do that"]
    said = channel(h.type("Ben", "!cerrar"))
    assert said == [f"Table {room.table} was closed by its host"], said
    assert h.table().status == "over"
    assert any("Cleo opens table" in t for t in channel(h.type("Cleo", "!new")))


def test_a_table_opened_elsewhere_is_taken_up_with_join_and_its_id() -> None:
    """``!join TABLE``: a table another app opened (its id as the lobby shows it) is
    played in this channel from then on, this person seated at it; an id no table has
    leaves the channel as it was, with the refusal said."""
    from dudo import wire

    h = Harness(("#dudo", "#two"))
    web = {"gateway": "gw-web", "table": "webTable1"}
    h.deliver(wire.message("create", id="c1", rules={"preset": "classic"},
                           seats=[{"kind": "open"}] * 3, request="k1", **web))  # fmt: skip
    h.deliver(wire.message("join", id="j1", name="Bea", request="k1", **web))
    said = channel(h.type("Ana", "!join webTable1"))
    assert said[0] == "Table webTable1 is played here too: players here sit with !join"
    assert "Ana joins (2/3)" in said and not any("opens table" in x for x in said), said
    table = h.tables["webTable1"]
    assert [s.name for s in table.seats if s.taken] == ["Bea", "Ana"]
    assert GATEWAY in table.watchers  # the channel hears the whole game
    busy = channel(h.type("Cleo", "!join otherTable"))  # Ana plays here: the table stays
    assert busy == ["Table webTable1 is already being played here: !table"]
    elsewhere = h.type("Cleo", "!join webTable1", "#two")
    assert elsewhere == [("#two", "Cleo: table webTable1 is played in another room of mine")]
    said = h.type("Cleo", "!join noSuchTable", "#two")
    assert said[-1] == ("#two", "Cleo: there is no such table (the lobby lists the open ones)")
    assert h.rooms.rooms["#two"].table is None  # refused: nothing is played there
    assert h.type("Cleo", "!join bad/id!", "#two")[0][1].startswith("Cleo: refused")


def test_reactions_go_both_ways_between_the_channel_and_the_table() -> None:
    """``!react haha`` (or the picture) from a chat player reaches the table (every
    gateway's views); a reaction from another app's player is a line in the channel."""
    from dudo import wire

    h = started(1, 2, "Ben")
    said = channel(h.type("Ana", "!react haha"))
    assert "Ana: 😂" in said, said
    assert channel(h.type("Ana", "!react lol")) == [
        "Ana: usage: !react nice|haha|wow|grr|hmm|clap (or 👍 😂 😮 😠 🤔 👏)"
    ]
    # Too soon after her first: the table refuses, and the channel says so in words.
    refused = channel(h.type("Ana", "!react 👏"))
    assert refused and "😂" not in " ".join(refused) and "👏" not in " ".join(refused), refused
    # Ben's, in Spanish words: his seat, his reaction.
    assert "Ben: 😮" in channel(h.type("Ben", "!reaccion wow"))
    # Someone at the table through another gateway (a browser): a line here too.
    table = h.table()
    web = next(i for i, s in enumerate(table.seats) if s.bot)  # (the bot's seat stands in)
    seat = table.seats[web]
    h.deliver(wire.message("react", id="w1", table=table.id, gateway=seat.gateway,
                           player=seat.handle, seat=web, emote="clap"))  # fmt: skip
    assert f"{seat.name} (bot): 👏" in channel(h.lines)  # a bot stands in: marked so


def test_a_face_no_die_has_is_told_so_and_bids_read_in_everyday_words() -> None:
    """Issue 54, items 5 and 6: "4 7" was sent, and refused as "there are only 4 dice in
    play"; "5 treses", "5 doses" and "three fives" (the usage line's own example) were
    ignored without a word: only the Perudo face names were read."""
    h = started(0, 2, "Ben")
    room = h.rooms.rooms[CHANNEL]

    def turn() -> tuple[str, str]:
        nick = room.nicks[room.turn_player or ""]
        return nick, "Ben" if nick == "Ana" else "Ana"

    def bids() -> list[list[int]]:
        game = h.table().game
        assert game is not None
        return [list(b) for b in game.bids]

    now, other = turn()
    face = f"{now}: a die's faces are 1 to 6: 3 5, or 3 fives"
    assert channel(h.type(now, "4 7")) == [face] and bids() == []
    assert channel(h.type(now, "!bid 1 9")) == [face] and bids() == []
    assert channel(h.type(other, "4 7")) == []  # not their turn: plain chat, as before
    seat = h.table().game.turn  # type: ignore[union-attr]
    h.type(now, "one two")
    assert bids() == [[seat, 1, 2]]
    now, other = turn()
    h.type(now, "two threes")
    assert bids()[-1][1:] == [2, 3]
    now, _ = turn()
    h.type("Ana", "!lang es")
    h.type(now, "tres treses")
    assert bids()[-1][1:] == [3, 3]


def test_a_bot_is_said_to_be_one() -> None:
    """Issue 54, item 9: bots looked like people in chat (and answered in the same
    millisecond: `dudo bots` now thinks 0.6-1.4 s by default where people play,
    tests/cli/test_surface.py)."""
    h = started(1, 2)
    said = channel(h.lines)
    table = h.table()
    bot = next(s.name for s in table.seats if s.bot)
    assert f"{bot} (bot) joins (2/6)" in said, said
    assert f"The game begins: Ana, {bot} (bot)" in said, said
    assert any(line.startswith("Round 1 · 4 dice: ") and f"{bot} (bot) 2" in line
               for line in said), said  # fmt: skip
    h.type("Ana", "!lang de")
    (line,) = channel(h.type("Ana", "!table"))
    assert f"{bot} (Bot) 2" in line and "Ana 2" in line, line


def test_a_players_language_is_their_own_and_the_channels_is_its_hosts() -> None:
    """Issue 54, item 7: one player's `!idioma es` switched the channel for everyone,
    and private lines (dice) followed the channel, not the person."""
    h = started(1, 2, "Ben")
    room = h.rooms.rooms[CHANNEL]
    said = channel(h.type("Ben", "!idioma es"))
    assert said == ["Ben: desde ahora te hablo en español (las noticias del canal siguen en "
                    "inglés: quien abrió la mesa puede cambiarlo)"], said  # fmt: skip
    assert room.lang == "en"  # the channel's news stays as it was
    assert h.type("Ben", "!dados")[0][1].startswith("Mesa ")  # his dice, in his words
    assert h.type("Ana", "!dice")[0][1].startswith("Table ")  # hers, in the channel's
    assert channel(h.type("Ben", "!frobnicate")) == [
        "Ben: no existe el comando !frobnicate · !ayuda los lista"
    ]
    assert channel(h.type("Ana", "!frobnicate"))[0].startswith("Ana: there is no command")
    # The host (Ana opened the table) switches the channel, and her own language with it.
    assert channel(h.type("Ana", "!lang de")) == ["Sprache: Deutsch"]
    assert room.lang == "de" and room.lang_of("Ana") == "de" and room.lang_of("Ben") == "es"
    # Kept through a restart, as the rest of the room.
    stored = msgpack.unpackb(msgpack.packb(h.rooms.state()), raw=False)
    assert stored[CHANNEL]["langs"] == {"ben": "es", "ana": "de"}


def test_a_player_who_left_takes_their_seat_back_from_where_they_left() -> None:
    """Issue 54, item 8: after ana left, the house's moves said "(the clock ran out: the
    house plays for ana)" at once, though no clock ran out; back, her !dados told her
    "(!join)", and !join was refused: "the game has started". Now the channel is told
    how she takes it back, and the same nick from the same user@host does (a nick alone
    is not a person: someone else who takes it is refused, as before)."""
    h = started(1, 2, "Ben")
    masks = {"ana": "ana@home.example", "ben": "ben@ben.example"}
    h.rooms.mask_of = lambda nick: masks.get(nick.lower())
    room = h.rooms.rooms[CHANNEL]
    table = h.table()
    (ben,) = [p for p, n in room.nicks.items() if n == "Ben"]
    seat = room.seats[ben]
    before = len(h.lines)
    h.run(h.rooms.gone("Ben", None))  # quit the network
    said = channel(h.lines[before:])
    assert said[0] == ("Ben left: the house plays their seat until Ben comes back and types "
                       "!join (from the same connection, before being out)"), said  # fmt: skip
    assert table.seats[seat].away and "Ben" not in room.nicks.values()
    # The house's moves for him say why: he is away, not out of time.
    view = {"seat": None, "game": {}, "players": [{"name": "Ben", "away": True, "bot": None}]}
    assert event_line(view, {"type": "house_bot", "seat": 0}) == (
        "(Ben is away: the house plays for them)"
    )
    # Someone else under his nick, from elsewhere: a new player, refused as before.
    masks["ben"] = "mallory@elsewhere.example"
    assert channel(h.type("Ben", "!join")) == ["Ben: the game has begun: wait for the next table"]
    assert table.seats[seat].away
    # Ben himself, from where he left: his seat again, his dice told.
    masks["ben"] = "ben@ben.example"
    h.type("Ben", "!join")
    assert not table.seats[seat].away and room.nicks[ben] == "Ben" and room.seats[ben] == seat
    assert ben not in room.left
    assert DICE.search(h.type("Ben", "!dice")[0][1])
