"""What people type in a chat room, as the table's stream messages: the commands of
:func:`dudo.text.lines.parse` in every language, checked against the room (who holds
which seat, whose turn it is) before anything is sent. A mixin of
:class:`~dudo.chat.rooms.Rooms`, which holds the fields declared here; pure, as it is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import wire
from ..engine import Rules, RulesConfigError
from ..text import odds_text, parse, say
from .news import dice_line, refusal, table_line
from .room import (
    DEFAULT_PRESET,
    MAX_SEATS,
    PENDING_MAX,
    Output,
    Room,
    label_of,
)


class Typed:
    """Commands in, stream messages out (and the answers said at once)."""

    # Declared by Rooms (dudo.chat.rooms), which sets them.
    message: Callable[..., dict[str, Any]]
    new_id: Callable[[], str]
    identity_of: Callable[[str], str | None]
    name_of: Callable[[str], str]
    where: Callable[[str], str | None]
    id_prefix: str
    fold: Callable[[str], str]
    mask_of: Callable[[str], str | None]
    turn_seconds: int
    network: str | None
    rooms: dict[str, Room]
    by_table: dict[str, Room]
    pending: dict[str, tuple[str, str]]
    logged: dict[str, str]
    creates: dict[str, str]
    joins: dict[str, str]
    private_replies: set[str]

    # -- what people type -------------------------------------------------------------------

    def command(self, channel: str, nick: str, text: str, account: str | None = None) -> Output:
        """A line typed in one of our channels (``account``: the sender's, where the
        network has accounts)."""
        room = self.rooms.get(self.fold(channel))
        if room is None:
            return Output()
        # The handle of this person's seat, if they hold one here (None: not seated).
        player = room.claim(nick, account)
        command = parse(text)
        if not text.lstrip().startswith("!"):
            return self._chat(room, nick, player, command)
        if command is None:
            return Output()
        anyone = self._anyones(room, nick, player, command, text.split(), account)
        if anyone is not None:
            return anyone
        if player is None or player not in room.seats:
            if command == "start" and self._joining(room, nick):  # typed right after !new
                room.start_by = nick  # sent once their seat is confirmed and the bots sit
                return _told(room, nick, "start_when_seated")
            return _told(room, nick, "not_seated")
        return self._players(room, nick, player, command)

    def _chat(self, room: Room, nick: str, player: str | None, command: Any) -> Output:
        """Plain chat: only a bid ("3 5") from the player whose turn it is is a move;
        their "4 7" is told what a die has (it was sent, and refused as too many)."""
        if room.turn_player != player or player not in room.seats:
            return Output()
        if isinstance(command, dict) and command.get("type") == "bid":
            return self._act(room, nick, player, command)
        if command == {"command": "usage", "of": "face"}:
            return _told(room, nick, "usage_face")
        return Output()

    def _anyones(
        self, room: Room, nick: str, player: str | None, command: Any, words: list[str],
        account: str | None,
    ) -> Output | None:
        """The commands anyone in the channel may type, seated or not: how to type a
        command, a new table, a language, help, joining, the table in a line. None:
        ``command`` is a player's (:meth:`_players`)."""
        asked = command.get("command") if isinstance(command, dict) else None
        if asked == "usage":  # a known command typed wrong: how to type it
            return _told(room, nick, f"usage_{command['of']}")
        if asked == "unknown":
            return _told(room, nick, "unknown_command", word=f"!{command['word']}")
        if asked == "new":
            return self._new(room, nick, player, command, account)
        if asked == "lang":
            return self._lang(room, nick, player, command["lang"])
        if command in ("help", "quit"):
            return Output([(room.channel, say("chat_help", room.lang))])
        if command == "join" and len(words) == 2 and words[1] != room.table:
            return self._take_up(room, nick, words[1], account)  # a table opened elsewhere
        if room.table is None:
            return Output([(room.channel, say("no_table_here", room.lang))])
        if command == "join":
            return self._join_here(room, nick, player, account)
        if command == "table":
            return Output([(room.channel, table_line(room))])
        return None

    def _join_here(self, room: Room, nick: str, player: str | None, account: str | None) -> Output:
        """`!join` this channel's table: a seat back for whoever left it, else a new one."""
        if player is not None or self._joining(room, nick):
            return Output()  # seated already, or on the way: one seat a person
        back = self._seat_back(room, nick)
        if back is not None:
            return back
        # A new player of the deployment's: the nick is not an identity (another
        # person may take it later); the seat follows this person's nick changes.
        msg = self._msg(room, "join", name=self.name_of(nick), **self._credential(account))
        self._expect(msg["id"], room.channel, nick, account)
        self.joins[msg["id"]] = room.table or ""
        return Output(send=[msg])

    def _players(self, room: Room, nick: str, player: str, command: Any) -> Output:
        """The commands of a player seated at this channel's table."""
        asked = command.get("command") if isinstance(command, dict) else None
        if command == "dice":  # told again, to this player alone
            told = dice_line(room, player) or say("no_dice", room.lang_of(nick), who=nick)
            return Output([(nick, told)])
        if command in ("start", "leave") and room.status == "over":
            return _told(room, nick, "game_over_new")
        if command == "odds":
            view = room.views.get(player)
            lang = room.lang_of(nick)
            text = odds_text(view, lang) if view else say("no_odds", lang)
            return Output([(nick, text)])
        if command == "start":
            coming = room.status in (None, "open") and room.bots_seated < room.bots
            if coming and room.start_by is None:  # the bot service seats them, soon
                room.start_by = nick
                return _told(room, nick, "start_when_seated")
            room.start_by = None  # asked twice: at once (refused if too few sit)
            return self._tracked(room, nick, self._msg(room, "start", player=player))
        if command == "close":
            return self._tracked(room, nick, self._msg(room, "close", player=player))
        if asked == "host":  # hand the open table to another player of ours
            target = room.player_of_nick(command["nick"])
            if target not in room.seats:
                line = say("no_such_player", room.lang_of(nick), who=nick, nick=command["nick"])
                return Output([(room.channel, line)])
            handover = self._msg(room, "handover", player=player, to=room.seats[target])
            return self._tracked(room, nick, handover)
        if asked == "react":  # a quick reaction, for the table's other players to see
            react = self._msg(room, "react", player=player, seat=room.seats[player],
                              emote=command["emote"])  # fmt: skip
            return self._tracked(room, nick, react)
        if command == "leave":
            seat = room.seats[player]
            return self._tracked(room, nick, self._msg(room, "leave", player=player, seat=seat))
        if isinstance(command, dict) and "type" in command:
            return self._act(room, nick, player, command)
        return Output([(room.channel, say("chat_help", room.lang))])  # join at a seat: help

    def private(self, nick: str, text: str, account: str | None = None) -> Output:
        """A private message: a command for the one table this person plays, if they play
        exactly one (answers meant for the channel go there); else the help."""
        playing = [r for r in self.rooms.values() if r.claim(nick, account) in r.seats]
        if len(playing) != 1:
            lang = next(iter(self.rooms.values())).lang if self.rooms else "en"
            return Output([(nick, say("chat_help", lang))])
        line, room = text.strip(), playing[0]
        typed = line if line.startswith("!") else f"!{line}"
        out = self.command(room.channel, nick, typed, account)
        # Asked privately, answered privately: the answers (now, and a refusal later);
        # what the table does is the channel's news as always.
        fold = self.fold
        out.lines = [(nick if fold(t) == fold(room.channel) else t, x) for t, x in out.lines]
        self.private_replies.update(m["id"] for m in out.send)
        while len(self.private_replies) > PENDING_MAX:
            self.private_replies.pop()
        return out

    def _seat_back(self, room: Room, nick: str) -> Output | None:
        """``nick`` left this table's game and came back: the seat they left, with its
        token, if they come from where they left (user@host); else None (a new player's
        join, refused once the game runs). Issue 54, item 8: "!unirse" was refused with
        "the game has started", and nothing said how to take the seat back."""
        mask = self.mask_of(nick)
        folded = self.fold(nick)
        for handle, (was, where) in room.left.items():
            if was == folded and where == mask and handle in room.tokens:
                msg = self._msg(room, "join", token=room.tokens[handle])
                self._expect(msg["id"], room.channel, nick, None)
                self.joins[msg["id"]] = room.table or ""
                return Output(send=[msg])
        return None

    def _lang(self, room: Room, nick: str, player: str | None, lang: str) -> Output:
        """`!lang xx`: this person's language from now on (their dice, their turn, what
        is said to them); the channel's news too when they host its table, or when no
        game is on there (one player's `!idioma es` had switched it for everyone)."""
        room.langs[room.fold(nick)] = lang
        if room.table is None or room.status == "over" or (player and player == room.host):
            room.lang = lang
            return Output([(room.channel, say("lang_set", lang))])
        channel = say(f"lang_{room.lang}", lang)
        return Output([(room.channel, say("lang_you", lang, who=nick, channel=channel))])

    def _credential(self, account: str | None) -> dict[str, str]:
        """How a join names its player: the account's identity where there is one (one
        player everywhere); else a new player of the deployment's."""
        identity = self.identity_of(account) if account is not None else None
        return {"identity": identity} if identity else {}

    def _joining(self, room: Room, nick: str) -> bool:
        """Is a join of this nick at this room's table still unanswered?"""
        fold = self.fold
        folded = fold(nick)
        return any(
            fold(who) == folded and channel == room.channel
            for message_id, (channel, who) in self.pending.items()
            if message_id in self.joins
        )

    def _new(
        self,
        room: Room,
        nick: str,
        player: str | None,
        asked: dict[str, Any],
        account: str | None = None,
    ) -> Output:
        """``!new [preset] [bots N] [dice D] [clock S] [odds] [dir]``: a table for this
        channel, its opener seated. Refused while a game here goes on with a player of
        ours still in the channel; a table nobody here plays any more is left behind."""
        busy = self._busy(room)
        if busy is not None:
            return busy
        preset, bots = asked["preset"] or DEFAULT_PRESET, asked["bots"]
        clock = self.turn_seconds if asked.get("clock") is None else asked["clock"]
        wanted: dict[str, Any] = {"preset": preset, "turn_seconds": clock}
        if asked.get("dice"):
            wanted["start_dice"] = asked["dice"]
        if asked.get("odds"):
            wanted["assisted"] = True
        if asked.get("dir"):
            wanted["loser_chooses_direction"] = True
        try:
            rules = Rules.from_dict(wanted)
        except RulesConfigError as exc:
            return self._refused(room, nick, wire.BAD_RULES, str(exc))
        seats = min(MAX_SEATS, rules.max_players)
        if not 0 <= bots < seats:
            return self._refused(room, nick, wire.BAD_RULES, f"bots: 0..{seats - 1}")
        table = f"{self.id_prefix}{self.new_id()}"[:20]
        fresh = Room(room.channel, room.lang, table, None, nick, preset, bots)
        out = self._replace_table(room, fresh)
        bot = {"kind": "bot", "level": wire.DEFAULT_BOT_LEVEL}
        plan = [{"kind": "open"}] * (seats - bots) + [bot] * bots
        # The host: the player the opener's join names (the same identity or request key).
        key = f"open-{self.new_id()}-{self.new_id()}"
        credential = self._credential(account) or {"request": key}
        where = label_of(self.where(room.channel))
        create = self._msg(fresh, "create", rules=wanted, seats=plan, **where, **credential)
        join = self._msg(fresh, "join", name=self.name_of(nick), **credential)
        watch = self._msg(fresh, "watch", on=True)
        for msg in (create, join):
            self._expect(msg["id"], fresh.channel, nick, account)
        self.creates[create["id"]] = table
        self.joins[join["id"]] = table
        out.send += [create, join, watch]
        return out

    def _take_up(self, room: Room, nick: str, table: str, account: str | None) -> Output:
        """``!join TABLE``: a table opened elsewhere (another channel, another app: its id
        as the lobby shows it) is played in this room from now on, and this person sits
        at it. Refused as ``!new`` is while this room's game goes on; a table another of
        our rooms plays stays there (a table is one room's, for its lines)."""
        busy = self._busy(room)
        if busy is not None:
            return busy
        elsewhere = self.by_table.get(table)
        if elsewhere is not None and elsewhere is not room:
            return _told(room, nick, "table_elsewhere", table=table)
        fresh = Room(room.channel, room.lang, table)
        watch = self._msg(fresh, "watch", on=True)
        try:
            wire.validate(watch)  # a table id as the protocol has them, or nothing changes
        except wire.WireError as exc:
            return self._refused(room, nick, exc.code, exc.message)
        out = self._replace_table(room, fresh)
        join = self._msg(fresh, "join", name=self.name_of(nick), **self._credential(account))
        self._expect(join["id"], fresh.channel, nick, account)
        self.joins[join["id"]] = table
        self.creates[join["id"]] = table  # refused (no such table): the room has none again
        out.lines.append((room.channel, say("taken_up", room.lang, table=table)))
        out.send += [watch, join]
        return out

    def _busy(self, room: Room) -> Output | None:
        """``table_busy`` while this room's game goes on with a player of ours in it."""
        if room.table is not None and room.status != "over" and room.nicks:
            return Output([(room.channel, say("table_busy", room.lang, table=room.table))])
        return None

    def _replace_table(self, room: Room, fresh: Room) -> Output:
        """The channel plays ``fresh``'s table from now on; a game it played that nobody
        here plays any more is left behind (:meth:`_leave_behind`)."""
        live = room.table is not None and room.status != "over"
        out = self._leave_behind(room) if live else Output()
        if room.table is not None:
            self.by_table.pop(room.table, None)
        assert fresh.table is not None
        fresh.fold = self.fold
        self.rooms[self.fold(room.channel)] = fresh
        self.by_table[fresh.table] = fresh
        return out

    def _leave_behind(self, room: Room) -> Output:
        """A game nobody in the channel plays any more: our seats left to the house, the
        table no longer watched, the channel told."""
        out = Output([(room.channel, say("left_behind", room.lang, table=room.table))])
        for handle, seat in room.seats.items():
            out.send.append(self._msg(room, "leave", player=handle, seat=seat))
        out.send.append(self._msg(room, "watch", on=False))
        return out

    def _act(self, room: Room, nick: str, player: str, action: dict[str, Any]) -> Output:
        msg = self._msg(room, "act", player=player, seat=room.seats[player], action=action)
        return self._tracked(room, nick, msg)

    def _tracked(self, room: Room, nick: str, msg: dict[str, Any]) -> Output:
        """A message whose refusal is told to whoever typed it (at once, if it is not
        even a valid message: nothing is sent then)."""
        try:
            wire.validate(msg)
        except wire.WireError as exc:
            return self._refused(room, nick, exc.code, exc.message)
        self._expect(msg["id"], room.channel, nick)
        return Output(send=[msg])

    def _expect(self, message_id: str, channel: str, nick: str, account: str | None = None) -> None:
        """Remember who asked, until the answer (a refusal, ``joined``, or a view that
        applied it); the oldest are forgotten past PENDING_MAX (answers never sent)."""
        self.pending[message_id] = (channel, nick)
        if account is not None:
            self.logged[message_id] = account
        while len(self.pending) > PENDING_MAX:
            del self.pending[next(iter(self.pending))]
        for stale in [i for i in self.joins if i not in self.pending]:
            del self.joins[stale]
        for stale in [i for i in self.logged if i not in self.pending]:
            del self.logged[stale]

    def _msg(self, room: Room, kind: str, **fields: Any) -> dict[str, Any]:
        assert room.table is not None
        message_id = f"{self.id_prefix}-{self.new_id()}"
        return self.message(kind, id=message_id, table=room.table, **fields)

    def _refused(self, room: Room, nick: str, code: str, text: str) -> Output:
        return Output([(room.channel, refusal(room, nick, code, text))])


def _told(room: Room, nick: str, key: str, **fields: Any) -> Output:
    """A line in the channel addressed to ``nick``, in their language (`!lang`)."""
    return Output([(room.channel, say(key, room.lang_of(nick), who=nick, **fields))])
