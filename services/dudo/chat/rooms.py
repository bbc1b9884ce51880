"""What the chat gateway knows and says: each channel's table, its players, and the lines
every view makes. Pure: no I/O, no clock, no randomness (the time and new ids come in).

A channel (a :class:`Room`) plays one table at a time. People in it type commands
(``text.lines.parse``: ``!new``, ``!join``, ``!bid 3 5``, ``3 5``...); each becomes
a stream message for the table's inbox, written by the gateway. What comes back
from the outbox (views, ``joined``, errors) becomes lines: **public lines go to
the channel and are made from the public part of a view alone**, built field by
field (:func:`public_of`), never from a seat's view; a player's dice go to that
player's nick only, by private message, once per round. Nothing else of a seat's
private part is ever said.

The gateway's own memory of a room (which table, which nick holds which seat,
the last version it announced) is plain data (:meth:`Room.state`): the gateway
stores it in its own Redis key and, after a restart, takes it up again; a
player's private view is never stored, it comes back with a ``resync``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from irc.strings import lower as fold

from .. import wire
from ..engine import Rules, RulesConfigError
from ..text.lines import LANGS, odds_text, parse, say
from .news import announce, call_turn, dice_line, refusal, table_line
from .room import (
    DEFAULT_PRESET,
    MAX_SEATS,
    PENDING_MAX,
    REMIND_MIN_MS,
    Output,
    Room,
    label_of,
    name_of,
    public_of,
)


class Rooms:
    """Every channel's room; routes commands in and views out."""

    def __init__(
        self,
        channels: list[str],
        *,
        message: Callable[..., dict[str, Any]],
        new_id: Callable[[], str],
        identity_of: Callable[[str], str | None] = lambda account: None,
        lang: str = "en",
        turn_seconds: int = 60,
        network: str | None = None,
    ) -> None:
        self.message = message  # a stream message from this gateway (link.message)
        self.new_id = new_id
        # An account's identity (a JWT of this gateway's app, when it has a key): the
        # same player at every table and tournament, rated as one.
        self.identity_of = identity_of
        # A chat's tables run a turn clock (people drift away from a channel; the house
        # plays for them when it runs out); 0: none.
        self.turn_seconds = turn_seconds
        self.network = network  # where the channels are, for the lobby's label of a table
        self.rooms: dict[str, Room] = {fold(c): Room(c, lang) for c in channels}
        self.by_table: dict[str, Room] = {}
        self.pending: dict[str, tuple[str, str]] = {}  # message id -> (channel, nick)
        self.logged: dict[str, str] = {}  # a join's message id -> its sender's account
        self.creates: dict[str, str] = {}  # a create's message id -> its table, until seen
        self.joins: dict[str, str] = {}  # a join's message id -> its table, until answered
        self.private_replies: set[str] = set()  # ids asked for in private: answered there

    # -- state --------------------------------------------------------------------------

    def state(self) -> dict[str, dict[str, Any]]:
        return {key: room.state() for key, room in self.rooms.items()}

    def load(self, stored: dict[str, dict[str, Any]]) -> Output:
        """Take up the rooms of a previous life: what is ours again, asked for afresh
        (each table watched, each seat's latest view); the channels told."""
        out = Output()
        for key, state in stored.items():
            if key not in self.rooms:
                continue  # a channel we no longer serve
            room = self.rooms[key] = Room.from_state({**state, "channel": self.rooms[key].channel})
            if room.table is None or room.status == "over":
                continue
            self.by_table[room.table] = room
            room.resumed = True
            out.send.append(self._msg(room, "watch", on=True))
            for player, seat in room.seats.items():
                out.send.append(self._msg(room, "resync", seat=seat, player=player))
            out.lines.append((room.channel, say("back", room.lang, table=room.table)))
        return out

    # -- what people type -------------------------------------------------------------------

    def command(self, channel: str, nick: str, text: str, account: str | None = None) -> Output:
        """A line typed in one of our channels (``account``: the sender's, where the
        network has accounts)."""
        room = self.rooms.get(fold(channel))
        if room is None:
            return Output()
        # The handle of this person's seat, if they hold one here (None: not seated).
        player = room.claim(nick, account)
        command = parse(text)
        if not text.lstrip().startswith("!"):
            # Plain chat: only a bid ("3 5") from the player whose turn it is is a move.
            bid = isinstance(command, dict) and command.get("type") == "bid"
            if bid and room.turn_player == player and player in room.seats:
                return self._act(room, nick, player, command)
            return Output()
        if command is None:
            return Output()
        asked = command.get("command") if isinstance(command, dict) else None
        if asked == "usage":  # a known command typed wrong: how to type it
            return Output([(room.channel, say(f"usage_{command['of']}", room.lang, who=nick))])
        if asked == "unknown":
            line = say("unknown_command", room.lang, who=nick, word=f"!{command['word']}")
            return Output([(room.channel, line)])
        if isinstance(command, dict) and command.get("command") == "new":
            return self._new(room, nick, player, command, account)
        if isinstance(command, dict) and command.get("command") == "lang":
            room.lang = command["lang"] if command["lang"] in LANGS else room.lang
            return Output([(room.channel, say("lang_set", room.lang))])
        if command in ("help", "quit"):
            return Output([(room.channel, say("chat_help", room.lang))])
        if room.table is None:
            return Output([(room.channel, say("no_table_here", room.lang))])
        if command == "join":
            if player is not None or self._joining(room, nick):
                return Output()  # seated already, or on the way: one seat a person
            # A new player of the deployment's: the nick is not an identity (another
            # person may take it later); the seat follows this person's nick changes.
            msg = self._msg(room, "join", name=name_of(nick), **self._credential(account))
            self._expect(msg["id"], room.channel, nick, account)
            self.joins[msg["id"]] = room.table
            return Output(send=[msg])
        if command == "table":
            return Output([(room.channel, table_line(room))])
        if player not in room.seats:
            if command == "start" and self._joining(room, nick):  # typed right after !new
                room.start_by = nick  # sent once their seat is confirmed and the bots sit
                return Output([(room.channel, say("start_when_seated", room.lang, who=nick))])
            return Output([(room.channel, say("not_seated", room.lang, who=nick))])
        if command == "dice":  # told again, to this player alone
            return Output([(nick, dice_line(room, player) or say("no_dice", room.lang, who=nick))])
        if command in ("start", "leave") and room.status == "over":
            return Output([(room.channel, say("game_over_new", room.lang, who=nick))])
        if command == "odds":
            view = room.views.get(player)
            text = odds_text(view, room.lang) if view else say("no_odds", room.lang)
            return Output([(nick, text)])
        if command == "start":
            coming = room.status in (None, "open") and room.bots_seated < room.bots
            if coming and room.start_by is None:  # the bot service seats them, soon
                room.start_by = nick
                return Output([(room.channel, say("start_when_seated", room.lang, who=nick))])
            room.start_by = None  # asked twice: at once (refused if too few sit)
            return self._tracked(room, nick, self._msg(room, "start", player=player))
        if command == "close":
            return self._tracked(room, nick, self._msg(room, "close", player=player))
        if asked == "host":  # hand the open table to another player of ours
            target = room.player_of_nick(command["nick"])
            if target not in room.seats:
                line = say("no_such_player", room.lang, who=nick, nick=command["nick"])
                return Output([(room.channel, line)])
            handover = self._msg(room, "handover", player=player, to=room.seats[target])
            return self._tracked(room, nick, handover)
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
        out.lines = [(nick if fold(t) == fold(room.channel) else t, x) for t, x in out.lines]
        self.private_replies.update(m["id"] for m in out.send)
        while len(self.private_replies) > PENDING_MAX:
            self.private_replies.pop()
        return out

    def gone(self, nick: str, channel: str | None) -> Output:
        """``nick`` left ``channel`` (None: the network). A seat that follows that nick
        is nobody's here from now on: the gateway leaves it (an open table frees it and
        passes the host on; in a game the house plays it) and whoever takes the nick
        next is someone else. A seat taken with an account stays the account's: it is
        taken up again when that account comes back."""
        out = Output()
        folded = fold(nick)
        for room in self.rooms.values():
            if channel is not None and fold(channel) != fold(room.channel):
                continue
            for handle, held in list(room.nicks.items()):
                if fold(held) != folded:
                    continue
                del room.nicks[handle]
                if handle in room.accounts or room.status not in (None, "open", "playing"):
                    continue
                if room.status == "playing":  # at an open table the view says "leaves"
                    out.lines.append((room.channel, say("seat_left", room.lang, who=held)))
                if handle in room.seats and room.table is not None:
                    seat = room.seats[handle]
                    out.send.append(self._msg(room, "leave", player=handle, seat=seat))
        return out

    def came(self, nick: str, channel: str) -> Output:
        """``nick`` joined ``channel``: if they hold a seat there (they were cut off, the
        gateway never saw them go), their turn is called again and their dice told."""
        room = self.rooms.get(fold(channel))
        player = room.player_of_nick(nick) if room is not None else None
        if room is None or player is None or room.public is None:
            return Output()
        out = Output()
        dice = dice_line(room, player)
        if dice:
            out.lines.append((nick, dice))
        if room.turn_player == player:
            room.turn_key = None
            out.lines += call_turn(room, room.public)
        return out

    def reconnected(self) -> Output:
        """Back on the chat network after losing it: every channel with a game is told,
        and whose turn it is called again (lines typed meanwhile never reached us)."""
        out = Output()
        for room in self.rooms.values():
            if room.table is None or room.public is None or room.status == "over":
                continue
            out.lines.append((room.channel, say("back_online", room.lang, table=room.table)))
            room.turn_key = None
            out.lines += call_turn(room, room.public)
        return out

    def _credential(self, account: str | None) -> dict[str, str]:
        """How a join names its player: the account's identity where there is one (one
        player everywhere); else a new player of the deployment's."""
        identity = self.identity_of(account) if account is not None else None
        return {"identity": identity} if identity else {}

    def nick_changed(self, old: str, new: str) -> Output:
        """A nick changed: the seat follows it, and the table shows the new name."""
        out = Output()
        for room in self.rooms.values():
            player = room.player_of_nick(old)
            if player is None:
                continue
            room.nicks[player] = new
            if player in room.seats and room.status in (None, "open", "playing"):
                seat = room.seats[player]
                rename = self._msg(room, "rename", player=player, seat=seat, name=name_of(new))
                out.extend(self._tracked(room, new, rename))
        return out

    def _joining(self, room: Room, nick: str) -> bool:
        """Is a join of this nick at this room's table still unanswered?"""
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
        left_behind = Output()
        if room.table is not None and room.status != "over":
            if room.nicks:
                return Output([(room.channel, say("table_busy", room.lang, table=room.table))])
            left_behind = self._leave_behind(room)
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
        if room.table is not None:
            self.by_table.pop(room.table, None)
        table = f"irc{self.new_id()}"[:20]
        fresh = Room(room.channel, room.lang, table, None, nick, preset, bots)
        self.rooms[fold(room.channel)] = fresh
        self.by_table[table] = fresh
        plan = [{"kind": "open"}] * (seats - bots) + [{"kind": "bot", "level": "normal"}] * bots
        # The host: the player the opener's join names (the same identity or request key).
        key = f"open-{self.new_id()}-{self.new_id()}"
        credential = self._credential(account) or {"request": key}
        where = label_of(room.channel, self.network)
        create = self._msg(fresh, "create", rules=wanted, seats=plan, **where, **credential)
        join = self._msg(fresh, "join", name=name_of(nick), **credential)
        watch = self._msg(fresh, "watch", on=True)
        for msg in (create, join):
            self._expect(msg["id"], fresh.channel, nick, account)
        self.creates[create["id"]] = table
        self.joins[join["id"]] = table
        left_behind.send += [create, join, watch]
        return left_behind

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

    def _expect(
        self, message_id: str, channel: str, nick: str, account: str | None = None
    ) -> None:
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
        return self.message(kind, id=f"irc-{self.new_id()}", table=room.table, **fields)

    def _refused(self, room: Room, nick: str, code: str, text: str) -> Output:
        return Output([(room.channel, refusal(room, nick, code, text))])

    # -- what the tables say ------------------------------------------------------------------

    def on_message(self, msg: dict[str, Any]) -> Output:
        """A message from this gateway's outbox."""
        kind = msg["type"]
        if kind == "view":
            return self.on_view(msg)
        if kind == "joined":
            self._seated(msg)
        elif kind in ("left", "detached"):
            room = self.by_table.get(msg["table"])
            self.pending.pop(msg.get("id", ""), None)
            if room is not None:
                room.nicks.pop(msg["player"], None)
                room.seats.pop(msg["player"], None)
                room.accounts.pop(msg["player"], None)
        elif kind == "error":
            return self._error(msg)
        return Output()

    def _seated(self, msg: dict[str, Any]) -> None:
        asked = self.pending.pop(msg["id"], None)
        self.joins.pop(msg["id"], None)
        room = self.by_table.get(msg["table"])
        if room is None:
            return
        player = msg["player"]  # the handle the worker names this player by
        account = self.logged.pop(msg["id"], None)
        if asked is not None:
            room.nicks[player] = asked[1]
            if account is not None:
                room.accounts[player] = account
            if room.host is None and asked[1] == room.opener:
                room.host = player
        if player in room.nicks:  # ours (also: renumbered when the host started early)
            room.seats[player] = msg["seat"]

    def _error(self, msg: dict[str, Any]) -> Output:
        asked = self.pending.pop(msg.get("id") or "", None)
        room = self.by_table.get(msg.get("table") or "")
        if asked is None or room is None:
            return Output()
        channel, nick = asked
        self.joins.pop(msg.get("id") or "", None)
        if self.creates.pop(msg.get("id") or "", None) == room.table:
            self.by_table.pop(room.table or "", None)  # the table was never made
            room.table = None
        if msg["id"] in self.private_replies:
            self.private_replies.discard(msg["id"])
            channel = nick
        said = refusal(room, nick, msg["code"], msg["message"], msg.get("facts"))
        return Output([(channel, said)])

    def on_view(self, msg: dict[str, Any]) -> Output:
        for message_id in msg.get("applied") or ():
            self.pending.pop(message_id, None)  # went through: nothing to tell
        room = self.by_table.get(msg["table"])
        out = Output()
        if room is None or msg["version"] < room.version:
            return out  # not a table of ours, or older than what was said (a duplicate)
        public = public_of(msg)
        fresh = msg["version"] > room.version
        if room.status is None:  # the table exists: its create can no longer be refused
            self.creates = {i: t for i, t in self.creates.items() if t != room.table}
        if fresh:
            out.lines += announce(room, public)
        elif room.resumed:  # the first view after a restart: whose turn it is, again
            room.turn_key = None
            out.lines += call_turn(room, public)
        room.resumed = False
        room.public = public
        self._deferred_start(room, out)
        self._privates(room, msg, out)
        room.version = msg["version"]
        return out

    def _deferred_start(self, room: Room, out: Output) -> None:
        """The start someone asked for while the bots were on their way, now they sit
        (dropped if the game began otherwise, or that person is no longer seated)."""
        if room.start_by is None or (room.bots_seated < room.bots and room.status == "open"):
            return
        player = room.player_of_nick(room.start_by)
        if player not in room.seats and self._joining(room, room.start_by):
            return  # their own seat is not confirmed yet
        nick, room.start_by = room.start_by, None
        if room.status == "open" and player in room.seats:
            out.extend(self._tracked(room, nick, self._msg(room, "start", player=player)))

    def _privates(self, room: Room, msg: dict[str, Any], out: Output) -> None:
        """Each of our players' own part: kept for !odds; the dice told to that player's
        nick alone, once per round."""
        game = msg.get("game")
        for private, holder in zip(msg.get("seats") or (), msg.get("holders") or (), strict=False):
            nick = room.nicks.get(holder)
            if nick is None:
                continue
            room.seats[holder] = private["seat"]
            room.views[holder] = wire.seat_snapshot(msg, private)
            told = dice_line(room, holder)
            if game is not None and told and room.dealt.get(holder) != game["round"]:
                room.dealt[holder] = game["round"]
                out.lines.append((nick, told))

    # -- time -----------------------------------------------------------------------------------

    def tick(self, now_ms: int) -> Output:
        """Reminders: a player of ours whose clock is running out is told, once a turn."""
        out = Output()
        for room in self.rooms.values():
            public, player = room.public, room.turn_player
            if room.deadline is None or player is None or public is None:
                continue
            if room.reminded == room.turn_key or now_ms >= room.deadline:
                continue
            game = public["game"] or {}
            turn_ms = int((game.get("rules") or {}).get("turn_seconds") or 0) * 1000
            if now_ms >= room.deadline - max(REMIND_MIN_MS, turn_ms // 3):
                room.reminded = room.turn_key
                seconds = max(1, round((room.deadline - now_ms) / 1000))
                who = room.nicks[player]
                out.lines.append((room.channel, say("reminder", room.lang, who=who,
                                                    seconds=seconds)))  # fmt: skip
        return out

