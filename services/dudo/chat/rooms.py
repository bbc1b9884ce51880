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
from itertools import zip_longest
from typing import Any

from irc.strings import lower as fold

from .. import wire
from ..engine import Rules, RulesConfigError
from ..text.lines import (
    LANGS,
    bid_text,
    dice_text,
    event_line,
    odds_text,
    parse,
    result_lines,
    reveal_text,
    say,
    summary_line,
)
from .room import (
    DEFAULT_PRESET,
    MAX_SEATS,
    PENDING_MAX,
    REMIND_MIN_MS,
    Output,
    Room,
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
    ) -> None:
        self.message = message  # a stream message from this gateway (link.message)
        self.new_id = new_id
        # An account's identity (a JWT of this gateway's app, when it has a key): the
        # same player at every table and tournament, rated as one.
        self.identity_of = identity_of
        # A chat's tables run a turn clock (people drift away from a channel; the house
        # plays for them when it runs out); 0: none.
        self.turn_seconds = turn_seconds
        self.rooms: dict[str, Room] = {fold(c): Room(c, lang) for c in channels}
        self.by_table: dict[str, Room] = {}
        self.pending: dict[str, tuple[str, str]] = {}  # message id -> (channel, nick)
        self.logged: dict[str, str] = {}  # a join's message id -> its sender's account
        self.creates: dict[str, str] = {}  # a create's message id -> its table, until seen
        self.joins: dict[str, str] = {}  # a join's message id -> its table, until answered

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
        player = room.player_of_nick(nick, account)
        command = parse(text)
        if not text.lstrip().startswith("!"):
            # Plain chat: only a bid ("3 5") from the player whose turn it is is a move.
            bid = isinstance(command, dict) and command.get("type") == "bid"
            if bid and room.turn_player == player and player in room.seats:
                return self._act(room, nick, player, command)
            return Output()
        if command is None:
            return Output()
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
            msg = self._msg(room, "join", name=_name_of(nick), **self._credential(account))
            self._expect(msg["id"], room.channel, nick, account)
            self.joins[msg["id"]] = room.table
            return Output(send=[msg])
        if command == "table":
            return Output([(room.channel, self._table_line(room))])
        if player not in room.seats:
            return Output([(room.channel, say("not_seated", room.lang, who=nick))])
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
        if command == "leave":
            seat = room.seats[player]
            return self._tracked(room, nick, self._msg(room, "leave", player=player, seat=seat))
        if isinstance(command, dict) and "type" in command:
            return self._act(room, nick, player, command)
        return Output([(room.channel, say("chat_help", room.lang))])

    def private(self, nick: str, text: str, account: str | None = None) -> Output:
        """A private message: a command for the one table this person plays, if they play
        exactly one (answers meant for the channel go there); else the help."""
        playing = [r for r in self.rooms.values() if r.player_of_nick(nick, account) in r.seats]
        if len(playing) != 1:
            lang = next(iter(self.rooms.values())).lang if self.rooms else "en"
            return Output([(nick, say("chat_help", lang))])
        line = text.strip()
        return self.command(
            playing[0].channel, nick, line if line.startswith("!") else f"!{line}", account
        )

    def gone(self, nick: str, channel: str | None) -> Output:
        """``nick`` left ``channel`` (None: the network). A seat that follows that nick
        is nobody's here from now on (the table's clock plays it): whoever takes the
        nick next is someone else. A seat taken with an account stays the account's."""
        out = Output()
        folded = fold(nick)
        for room in self.rooms.values():
            if channel is not None and fold(channel) != fold(room.channel):
                continue
            for handle, held in list(room.nicks.items()):
                if fold(held) != folded or handle in room.accounts:
                    continue
                del room.nicks[handle]
                if room.status in (None, "open", "playing"):
                    out.lines.append((room.channel, say("seat_left", room.lang, who=held)))
        return out

    def _credential(self, account: str | None) -> dict[str, str]:
        """How a join names its player: the account's identity where there is one (one
        player everywhere); else a new player of the deployment's."""
        identity = self.identity_of(account) if account is not None else None
        return {"identity": identity} if identity else {}

    def nick_changed(self, old: str, new: str) -> None:
        for room in self.rooms.values():
            player = room.player_of_nick(old)
            if player is not None:
                room.nicks[player] = new

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
        """``!new [preset] [bots N] [dice D]``: a table for this channel, its opener seated."""
        if room.table is not None and room.status != "over":
            return Output([(room.channel, say("table_busy", room.lang, table=room.table))])
        preset, bots = asked["preset"] or DEFAULT_PRESET, asked["bots"]
        wanted: dict[str, Any] = {"preset": preset, "turn_seconds": self.turn_seconds}
        if asked.get("dice"):
            wanted["start_dice"] = asked["dice"]
        try:
            rules = Rules.from_dict(wanted)
        except RulesConfigError as exc:
            return self._refused(room, nick, wire.BAD_RULES, str(exc))
        seats = min(MAX_SEATS, rules.max_players)
        if not 0 <= bots < seats:
            return self._refused(room, nick, wire.BAD_MESSAGE, f"bots: 0..{seats - 1}")
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
        create = self._msg(fresh, "create", rules=wanted, seats=plan, **credential)
        join = self._msg(fresh, "join", name=_name_of(nick), **credential)
        watch = self._msg(fresh, "watch", on=True)
        for msg in (create, join):
            self._expect(msg["id"], fresh.channel, nick, account)
        self.creates[create["id"]] = table
        self.joins[join["id"]] = table
        return Output(send=[create, join, watch])

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
        line = say("refused", room.lang, who=nick, code=code, message=text)
        return Output([(room.channel, line)])

    def _table_line(self, room: Room) -> str:
        public = room.public
        if public is None or public["game"] is None:
            taken = sum(1 for n in room.names if n)
            return say("waiting", room.lang, table=room.table, taken=taken, seats=len(room.names))
        if public["status"] == "over":
            return " · ".join(result_lines(public, room.lang))
        return f"{room.table} · {summary_line(public, room.lang)}"

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
        line = say("refused", room.lang, who=nick, code=msg["code"], message=msg["message"])
        return Output([(channel, line)])

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
            self._announce(room, public, out)
        elif room.resumed:  # the first view after a restart: whose turn it is, again
            room.turn_key = None
            self._call_turn(room, public, out)
        room.resumed = False
        room.public = public
        self._deferred_start(room, out)
        self._privates(room, msg, out)
        room.version = msg["version"]
        return out

    def _announce(self, room: Room, view: dict[str, Any], out: Output) -> None:
        """The channel's lines for a new version of the table: public only."""
        lang, status, game = room.lang, view["status"], view["game"]

        def line(text: str | None) -> None:
            if text:
                out.lines.append((room.channel, text))

        names = [p["name"] if p else None for p in view["players"]]
        if status == "open" and room.status is None:
            host = room.nicks.get(room.host or "", room.opener or "?")
            line(say("opened", lang, host=host, table=room.table, preset=room.preset,
                     seats=len(names), bots=room.bots))  # fmt: skip
        elif status == "open":
            count = sum(1 for n in room.names if n)  # as the channel last heard it
            for old, new in zip_longest(room.names, names):
                if new and not old:
                    count += 1
                    line(say("joins", lang, who=new, taken=count, seats=len(names)))
                elif old and not new:
                    count -= 1
                    line(say("leaves", lang, who=old, taken=count, seats=len(names)))
        if status != "open" and room.status in (None, "open") and game is not None:
            line(say("begins", lang, names=", ".join(n for n in names if n)))
        for event in view["events"]:
            if event["type"] == "reveal" and game and game.get("last_round"):
                parts = reveal_text(view, lang).splitlines()  # a line per hand: one here
                line(" · ".join(" ".join(part.split()) for part in parts))
            else:
                line(event_line(view, event, lang))
        if game is not None and game["phase"] != "over" and game["round"] != room.round:
            line(summary_line(view, lang))
        if status == "over" and room.status != "over" and game is not None:
            line(" · ".join(result_lines(view, lang)))
        room.names, room.status = names, status
        room.round = game["round"] if game else None
        room.deadline = view.get("deadline")
        self._call_turn(room, view, out)

    def _deferred_start(self, room: Room, out: Output) -> None:
        """The start someone asked for while the bots were on their way, now they sit
        (dropped if the game began otherwise, or that person is no longer seated)."""
        if room.start_by is None or (room.bots_seated < room.bots and room.status == "open"):
            return
        nick, room.start_by = room.start_by, None
        player = room.player_of_nick(nick)
        if room.status == "open" and player in room.seats:
            out.extend(self._tracked(room, nick, self._msg(room, "start", player=player)))

    def _call_turn(self, room: Room, view: dict[str, Any], out: Output) -> None:
        """Name the player whose turn it is, when it is one of ours and a new turn."""
        game = view["game"]
        if view["status"] != "playing" or game is None or game["phase"] == "over":
            room.turn_player = None
            return
        key = [game["round"], game["turn"], len(game["bids"])]
        holder = next((p for p, s in room.seats.items() if s == game["turn"]), None)
        room.turn_player = holder if holder in room.nicks else None
        if key == room.turn_key or room.turn_player is None:
            room.turn_key = key
            return
        room.turn_key = key
        if game["phase"] == "direction":
            standing = say("choose_dir", room.lang)
        elif game["bids"]:
            _, quantity, face = game["bids"][-1]
            standing = bid_text(quantity, face, room.lang)
        else:
            standing = say("open_round", room.lang)
        who = room.nicks[room.turn_player]
        out.lines.append((room.channel, say("turn_call", room.lang, who=who, standing=standing)))

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
            dice = private.get("dice")
            if game is None or not dice or msg["status"] != "playing":
                continue
            if room.dealt.get(holder) != game["round"]:
                room.dealt[holder] = game["round"]
                text = say("dice_round", room.lang, table=room.table, round=game["round"],
                           dice=dice_text(dice))  # fmt: skip
                out.lines.append((nick, text))

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


def _name_of(nick: str) -> str:
    """A nick as a display name (nicks are short and plain; cut to the protocol's 32)."""
    try:
        return wire.clean_name(nick[: wire.NAME_MAX])
    except wire.WireError:
        return "player"
