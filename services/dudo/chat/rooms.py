"""What the chat gateway knows and says: each channel's table, its players, and the lines
every view makes. Pure: no I/O, no clock, no randomness (the time and new ids come in).

A channel (a :class:`Room`) plays one table at a time. People in it type commands
(``text.lines.parse``: ``!new``, ``!join``, ``!bid 3 5``, ``3 5``...); each becomes
a stream message for the table's inbox, written by the gateway (:mod:`.typed`, a mixin
of :class:`Rooms`; people coming and going are here). What comes back
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

from .. import wire
from ..text import say
from .casemap import Fold, ascii_fold
from .news import announce, board_line, call_turn, dice_line, refusal
from .room import REMIND_MIN_MS, Output, Room, name_of, public_of
from .saying import countdown
from .typed import Typed


class Rooms(Typed):
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
        name_of: Callable[[str], str] = name_of,
        where: Callable[[str], str | None] | None = None,
        id_prefix: str = "irc",
        board: bool = False,
        fold: Fold = ascii_fold,
        mask_of: Callable[[str], str | None] = lambda nick: None,
    ) -> None:
        self.message = message  # a stream message from this gateway (link.message)
        self.new_id = new_id
        # An account's identity (a JWT of this gateway's app, when it has a key): the
        # same player at every table and tournament, rated as one.
        self.identity_of = identity_of
        # A chat's tables run a turn clock (people drift away from a channel; the house
        # plays for them when it runs out); 0: none.
        self.turn_seconds = turn_seconds
        # A person as the table names them (IRC: the nick; Matrix: the display name).
        self.name_of = name_of
        # Where a nick connects from (IRC's user@host; None where unknown): who may take
        # back the seat their nick left (dudo.chat.typed).
        self.mask_of = mask_of
        # Where a channel's tables are played, for the lobby ("#dudo on irc.libera.chat").
        self.network = network
        self.where = where or self._on_network
        self.id_prefix = id_prefix  # of the message and table ids this gateway makes
        # A chat that edits one message in place (Matrix) is given each room's board,
        # and the bids are said there rather than as lines.
        self.board = board
        # Which names are one: the chat's own folding (chat/casemap.py); an IRC server's
        # announced mapping replaces it (:meth:`casemapping`).
        self.fold = fold
        self.rooms: dict[str, Room] = {fold(c): Room(c, lang, fold=fold) for c in channels}
        self.by_table: dict[str, Room] = {}
        self.pending: dict[str, tuple[str, str]] = {}  # message id -> (channel, nick)
        self.logged: dict[str, str] = {}  # a join's message id -> its sender's account
        self.creates: dict[str, str] = {}  # a create's message id -> its table, until seen
        self.joins: dict[str, str] = {}  # a join's message id -> its table, until answered
        self.private_replies: set[str] = set()  # ids asked for in private: answered there

    def casemapping(self, fold: Fold) -> None:
        """The chat network says how it compares names (an IRC server's CASEMAPPING):
        from now on two nicks are one person, and two channel names one channel, exactly
        when it says so."""
        self.fold = fold
        for room in self.rooms.values():
            room.fold = fold
        self.rooms = {fold(room.channel): room for room in self.rooms.values()}

    def _on_network(self, channel: str) -> str:
        return f"{channel} on {self.network}" if self.network else channel

    # -- state --------------------------------------------------------------------------

    def state(self) -> dict[str, dict[str, Any]]:
        return {key: room.state() for key, room in self.rooms.items()}

    def load(self, stored: dict[str, dict[str, Any]]) -> Output:
        """Take up the rooms of a previous life: what is ours again, asked for afresh
        (each table watched, each seat's latest view); the channels told."""
        out = Output()
        for state in stored.values():
            key = self.fold(str(state.get("channel", "")))
            if key not in self.rooms:
                continue  # a channel we no longer serve
            room = self.rooms[key] = Room.from_state({**state, "channel": self.rooms[key].channel})
            room.fold = self.fold
            if room.table is None or room.status == "over":
                continue
            self.by_table[room.table] = room
            room.resumed = True
            out.send.append(self._msg(room, "watch", on=True))
            for player, seat in room.seats.items():
                out.send.append(self._msg(room, "resync", seat=seat, player=player))
            out.lines.append((room.channel, say("back", room.lang, table=room.table)))
        return out

    def gone(self, nick: str, channel: str | None) -> Output:
        """``nick`` left ``channel`` (None: the network). A seat that follows that nick
        is nobody's here from now on: the gateway leaves it (an open table frees it and
        passes the host on; in a game the house plays it) and whoever takes the nick
        next is someone else. A seat taken with an account stays the account's: it is
        taken up again when that account comes back."""
        out = Output()
        fold = self.fold
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
                mask = self.mask_of(held)
                if room.status == "playing" and handle in room.seats and mask is not None:
                    room.left[handle] = [folded, mask]  # theirs to take back (!join)
                    out.lines.append((room.channel, say("seat_left_back", room.lang, who=held)))
                elif room.status == "playing":  # at an open table the view says "leaves"
                    out.lines.append((room.channel, say("seat_left", room.lang, who=held)))
                if handle in room.seats and room.table is not None:
                    seat = room.seats[handle]
                    out.send.append(self._msg(room, "leave", player=handle, seat=seat))
        return out

    def came(self, nick: str, channel: str) -> Output:
        """``nick`` joined ``channel``: if they hold a seat there (they were cut off, the
        gateway never saw them go), their turn is called again and their dice told, once
        a round."""
        room = self.rooms.get(self.fold(channel))
        player = room.player_of_nick(nick) if room is not None else None
        if room is None or player is None or room.public is None:
            return Output()
        if room.welcomed.get(player) == room.round:
            return Output()
        room.welcomed[player] = room.round or 0
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

    def nick_changed(self, old: str, new: str) -> Output:
        """A nick changed: the seat follows it, and the table shows the new name."""
        out = Output()
        for room in self.rooms.values():
            player = room.player_of_nick(old)
            if player is not None:
                room.nicks[player] = new
                out.extend(self._rename(room, player))
        return out

    def renamed(self, nick: str, channel: str | None = None) -> Output:
        """``nick`` is named otherwise now (a Matrix display name, in ``channel`` or
        everywhere): the tables they play show the new name."""
        out = Output()
        for room in self.rooms.values():
            player = room.player_of_nick(nick, nick)
            same = channel is None or self.fold(channel) == self.fold(room.channel)
            if player is not None and same:
                out.extend(self._rename(room, player))
        return out

    def _rename(self, room: Room, player: str) -> Output:
        if player not in room.seats or room.status not in (None, "open", "playing"):
            return Output()
        nick = room.nicks[player]
        seat = room.seats[player]
        rename = self._msg(room, "rename", player=player, seat=seat, name=self.name_of(nick))
        return self._tracked(room, nick, rename)

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
            room.left.pop(player, None)
            if msg.get("token"):
                room.tokens[player] = msg["token"]

    def _error(self, msg: dict[str, Any]) -> Output:
        asked = self.pending.pop(msg.get("id") or "", None)
        room = self.by_table.get(msg.get("table") or "")
        if asked is None or room is None or msg["code"] in (wire.DUPLICATE, wire.TABLE_EXISTS):
            # Sent again after a restart (a chat that replays what it heard since its
            # last store makes the same ids and tables): the first went through.
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
            out.lines += announce(room, public, bids=not self.board)
        elif room.resumed:  # the first view after a restart: whose turn it is, again
            room.turn_key = None
            out.lines += call_turn(room, public)
        room.resumed = False
        room.public = public
        self._deferred_start(room, out)
        self._privates(room, msg, out)
        room.version = msg["version"]
        if self.board and fresh:
            out.boards.append((room.channel, board_line(room), room.round))
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
                who = room.nicks[player]  # the seconds left counted as the line goes out
                out.lines.append((room.channel, say("reminder", room.lang_of(who), who=who,
                                                    seconds=countdown(room.deadline))))  # fmt: skip
        return out
