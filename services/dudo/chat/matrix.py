"""One Matrix account that stays synced, and says things at a pace its homeserver accepts.

The HTTP work (the client-server API, its typed errors) is the ``mautrix`` library's;
this module is what a game service needs around it, the Matrix twin of
:mod:`dudo.chat.irc`:

- **sync that resumes**: ``/sync`` long-polls from a token (``since``) the gateway stores
  with its memory; killed and started again, it reads on from the stored token, so what
  was typed while it was down is heard (a line heard twice makes the same message ids,
  and the table refuses the copy as a duplicate: :mod:`dudo.chat.gateway`); a batch's
  token is taken as read only once the inbox writes its events caused are done. The very
  first sync of an account reads the rooms' state only, never their history of commands;
- **reconnecting** with backoff when the homeserver is unreachable, and ``on_back`` once
  it answers again (a move typed meanwhile may never have reached it);
- **rooms**: the configured ones (an alias ``#dudo:example.org`` or an id ``!abc:...``)
  joined; each player's dice go to a direct-message room with the bot, made on first
  need (invited, ``is_direct``) or the one the player invited the bot to; any other
  invite is declined;
- **who is who**: a sender is their Matrix user id (stable across rooms and display
  names: the account of :mod:`dudo.chat.rooms`); display names are followed from the
  rooms' member events (``on_renamed``), and a user id in what is said is shown as that
  person's display name, a mention (a pill) for the clients that render them;
- **mentions that notify**: a line addressed to someone ("@ana:x: your turn...") goes as
  ``m.text`` with ``m.mentions`` naming them; everything else as ``m.notice`` (clients and
  push rules do not notify for notices, and other bots do not answer them);
- **a board**: each room's table in one message edited in place (``m.replace``), a new
  one each round, with the reactions "👎 dudo" and "🎯 calza" on it as buttons: a
  player's reaction on the board is that command;
- **pacing**: homeservers rate-limit messages (Synapse: 0.2 a second after a burst of 10,
  unless the operator exempts the bot), so every message waits for a token of a bucket;
  lines to the same room that wait together go as one message, and a 429 waits.

Direct-message rooms are **not end-to-end encrypted**: the bot holds no Olm/Megolm
keys, so the homeservers of the bot and of the player can read a player's dice
(docs/operations.md, "Matrix"). An encrypted room's messages cannot be read by the bot
at all: a command typed in one is not heard.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from mautrix.client import ClientAPI
from mautrix.errors import MatrixConnectionError, MatrixRequestError, MLimitExceeded
from mautrix.types import EventType, RoomCreatePreset

from .. import wire
from ..infra.buckets import Bucket
from ..infra.service import Backoff

log = structlog.get_logger("dudo.chat.matrix")

MAX_QUEUED = 200  # messages waiting for the pace at most (past it, new lines are dropped)
MAX_BODY = 8000  # characters of one message (a homeserver takes 64 KiB of event)
SYNC_TIMEOUT_MS = 20_000
USER_ID = re.compile(r"@[a-z0-9._=/+\-]+:[A-Za-z0-9.\-]+(?::\d+)?(?<!\.)")
# The buttons of a board: a reaction with this key on it is that command.
REACTIONS = {"👎 dudo": "!dudo", "🎯 calza": "!calza"}
# What a sync brings: the rooms' messages, reactions and members; no presence, no
# receipts, no typing (a busy room would wake us for nothing).
SYNC_FILTER = json.dumps(
    {
        "presence": {"types": []},
        "account_data": {"types": []},
        "room": {
            "timeline": {"types": ["m.room.message", "m.reaction", "m.room.member"]},
            "state": {"types": ["m.room.member"]},
            "ephemeral": {"types": []},
            "account_data": {"types": []},
        },
    },
    separators=(",", ":"),
)
NETWORK_ERRORS = (MatrixConnectionError, OSError, asyncio.TimeoutError)


def strip_reply(body: str) -> str:
    """A reply's own text, without the quote of what it answers (``> <@x> ...`` lines and
    the blank line after them, as clients send a reply's fallback)."""
    lines = body.splitlines()
    if not lines or not lines[0].startswith("> "):
        return body
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return "\n".join(lines).lstrip("\n")


class MatrixClient:
    """Say things in rooms (a configured room's name, or a user id: that user's
    direct-message room), hear commands, keep boards."""

    def __init__(
        self,
        homeserver: str,
        user_id: str,
        rooms: list[str],
        on_message: Callable[[str, str, str, str | None], None],
        *,
        token: str | None = None,
        password: str | None = None,
        messages_per_s: float = 2.0,
        burst: int = 10,
        on_gone: Callable[[str, str | None], None] = lambda user, room: None,
        on_came: Callable[[str, str], None] = lambda user, room: None,
        on_renamed: Callable[[str, str | None], None] = lambda user, room: None,
        on_back: Callable[[], None] = lambda: None,
        welcome: Callable[[str], str] = lambda user: "",
        written: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.homeserver, self.token = homeserver, token or ""
        self.api: ClientAPI  # made in run(): its HTTP session belongs to the running loop
        self.user_id = user_id
        self.password = password
        self.wanted = list(rooms)  # as configured: an alias or a room id
        self.on_message, self.on_gone, self.on_came = on_message, on_gone, on_came
        self.on_renamed, self.on_back, self.welcome = on_renamed, on_back, welcome
        # Awaited after a sync's events are handled, before its token is taken as read:
        # the gateway's inbox writes for them are done by then.
        self.written = written
        self.bucket = Bucket(messages_per_s, burst)
        self.queue: deque[tuple[str, str]] = deque()  # (target, text), in order
        self.dropped = 0
        self.registered = False  # synced, the configured rooms joined
        self.since: str | None = None
        self.room_ids: dict[str, str] = {}  # configured name -> room id
        self.names: dict[str, str] = {}  # room id -> configured name
        self.direct: dict[str, str] = {}  # user id -> their direct-message room
        self.display: dict[str, str] = {}  # user id -> display name, as last seen
        self.boards: dict[str, list[Any]] = {}  # room id -> [event id, text, round]
        # The event being heard, while it is: the gateway makes the ids of the messages it
        # causes from it, the same ids when a restart hears it again.
        self.heard: str | None = None
        self._wake = asyncio.Event()
        self._stopping = False

    # -- what the gateway stores (with its own memory, in one write) -------------------------

    def state(self) -> dict[str, Any]:
        return {"since": self.since, "direct": self.direct, "boards": self.boards}

    def restore(self, stored: dict[str, Any]) -> None:
        self.since = stored.get("since")
        self.direct = dict(stored.get("direct") or {})
        self.boards = {k: list(v) for k, v in (stored.get("boards") or {}).items()}

    def name_of(self, user: str) -> str:
        """A user's display name, as last seen, as clean text (a display name is anyone's
        to choose: no line breaks or hidden characters, at most a name's 32 characters);
        else the localpart of their id (ids are plain: ``[a-z0-9._=/+-]``)."""
        shown = self.display.get(user)
        if shown:
            with contextlib.suppress(wire.WireError):
                return wire.clean_name(shown[: wire.NAME_MAX])
        return user[1:].split(":", 1)[0][: wire.NAME_MAX]

    def shown_as(self, user: str) -> str:
        """How a line shows a user: their name, and their id too when someone else here
        goes by the same name (as Matrix clients tell such people apart)."""
        name = self.name_of(user)
        twins = [u for u in self.display if u != user and self.name_of(u) == name]
        return f"{name} ({user})" if twins else name

    # -- saying ---------------------------------------------------------------------------------

    def say(self, target: str, text: str) -> None:
        """Queue ``text`` for ``target`` (a configured room, or a user id); joined to the
        last waiting message if that one goes to the same place."""
        if self.queue and self.queue[-1][0] == target:
            joined = f"{self.queue[-1][1]}\n{text}"
            if len(joined) <= MAX_BODY:
                self.queue[-1] = (target, joined)
                self._wake.set()
                return
        if len(self.queue) >= MAX_QUEUED:
            self.dropped += 1
            return
        self.queue.append((target, text[:MAX_BODY]))
        self._wake.set()

    def board(self, channel: str, text: str, round_: int | None) -> None:
        """The room's board says ``text`` now: edited in place, or a new one for a new
        round (sent in turn with the lines, after those queued before it; a board still
        waiting is replaced)."""
        entry = (f"board:{channel}", json.dumps([text, round_]))
        if self.queue and self.queue[-1][0] == entry[0]:
            self.queue[-1] = entry
        else:
            self.queue.append(entry)
        self._wake.set()

    def render(self, text: str) -> dict[str, Any]:
        """A message's content: user ids shown as display names (pills in HTML); a line
        that starts with a user id is addressed to them: mentioned, and a notifying
        ``m.text`` rather than a notice."""
        mentioned: list[str] = []
        for line in text.splitlines():
            found = USER_ID.match(line)
            if found and found.group(0) not in mentioned:
                mentioned.append(found.group(0))
        body = USER_ID.sub(lambda m: self.shown_as(m.group(0)), text)
        parts, at = [], 0
        for m in USER_ID.finditer(text):
            parts.append(html.escape(text[at : m.start()]))
            name = html.escape(self.shown_as(m.group(0)))
            parts.append(f'<a href="https://matrix.to/#/{html.escape(m.group(0))}">{name}</a>')
            at = m.end()
        parts.append(html.escape(text[at:]))
        return {
            "msgtype": "m.text" if mentioned else "m.notice",
            "body": body,
            "format": "org.matrix.custom.html",
            "formatted_body": "".join(parts).replace("\n", "<br>"),
            "m.mentions": {"user_ids": mentioned},
        }

    # -- life -----------------------------------------------------------------------------------

    async def run(self) -> None:
        """Sync and send until stopped, through any number of lost connections."""
        self.api = ClientAPI(self.user_id, base_url=self.homeserver, token=self.token)
        backoff, lost = Backoff(cap=30.0), False
        sender = asyncio.create_task(self._send_forever())
        try:
            while not self._stopping:
                try:
                    await self._connect()
                    first = self.since is None
                    while not self._stopping:
                        data = await self.api.sync(
                            since=self.since, timeout=0 if first else SYNC_TIMEOUT_MS,
                            filter_id=SYNC_FILTER,  # type: ignore[arg-type]
                        )  # fmt: skip
                        await self._handle(data, history=first)
                        if self.written is not None:
                            await self.written()
                        self.since, first = data["next_batch"], False
                        if not self.registered:
                            self.registered = True
                            log.info("matrix_synced", user=self.user_id, rooms=self.room_ids)
                            if lost:
                                self.on_back()
                        backoff.reset()
                except asyncio.CancelledError:
                    raise
                except (*NETWORK_ERRORS, MatrixRequestError) as exc:
                    if isinstance(exc, MatrixRequestError) and exc.http_status == 401:
                        self.api.api.token = ""  # logged out (a password logs in again)
                    self.registered, lost = False, True
                    log.warning("matrix_lost", error=str(exc) or type(exc).__name__)
                    await asyncio.sleep(backoff.next())
                except Exception:  # a homeserver answering nonsense: logged, tried again
                    self.registered, lost = False, True
                    log.exception("matrix_failed")
                    await asyncio.sleep(backoff.next())
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender

    async def stop(self, message: str = "") -> None:
        """Say what is queued (a moment at most), then stop."""
        for _ in range(20):
            if not self.queue or not self.registered:
                break
            await asyncio.sleep(0.1)
        self._stopping = True
        with contextlib.suppress(Exception):
            await self.api.api.session.close()

    async def _connect(self) -> None:
        if not self.api.api.token:
            if self.password is None:  # said, and tried again: the operator may fix the token
                raise RuntimeError("the access token was refused, and no password is set")
            await self.api.login(
                identifier=self.user_id, password=self.password, device_name="dudo"
            )  # fmt: skip
        for wanted in self.wanted:
            try:
                room_id = await self.api.join_room(wanted, max_retries=0)
            except MatrixRequestError as exc:  # not ours to join (yet): the others play on
                if exc.http_status in (401, 429) or exc.http_status >= 500:
                    raise
                log.warning("matrix_room_refused", room=wanted, error=str(exc))
                continue
            self.room_ids[wanted], self.names[room_id] = room_id, wanted
            # Who is who now: a sync resumed from a stored token brings only what changed.
            members = await self.api.get_joined_members(room_id)
            for user, member in members.items():
                if getattr(member, "displayname", None):
                    self.display.setdefault(user, str(member.displayname))

    # -- hearing ----------------------------------------------------------------------------------

    async def _handle(self, data: dict[str, Any], history: bool) -> None:
        """One sync's rooms. ``history``: the account's first sync; its messages were
        typed before we were here, so only who is who is read from it."""
        rooms = data.get("rooms") or {}
        for room_id, invited in (rooms.get("invite") or {}).items():
            await self._invited(room_id, invited)
        for room_id, joined in (rooms.get("join") or {}).items():
            for event in (joined.get("state") or {}).get("events") or ():
                self._member(room_id, event, quiet=True)
            for event in (joined.get("timeline") or {}).get("events") or ():
                if event.get("type") == "m.room.member":
                    self._member(room_id, event, quiet=history)
                elif not history and event.get("sender") != self.user_id:
                    self._event(room_id, event)
        for room_id in rooms.get("leave") or {}:
            self._forget(room_id)

    def _member(self, room_id: str, event: dict[str, Any], quiet: bool) -> None:
        user, content = event.get("state_key") or "", event.get("content") or {}
        if not user.startswith("@") or user == self.user_id:
            return
        before = (event.get("unsigned") or {}).get("prev_content") or {}
        membership, was = content.get("membership"), before.get("membership")
        name = content.get("displayname")
        if membership == "join" and isinstance(name, str) and name:
            renamed = user in self.display and self.display[user] != name
            self.display[user] = name
            if renamed and was == "join" and not quiet:
                # A new display name comes in every room the user is in, and may come
                # first from their dice room: then it is theirs everywhere (None). Read
                # as that room's alone, the channel never heard of it: its own event
                # changed nothing any more (issue 54, item 4).
                self.on_renamed(user, self.names.get(room_id))
        if membership in ("leave", "ban") and self.direct.get(user) == room_id:
            del self.direct[user]  # their dice room no more: a new one when needed
        channel = self.names.get(room_id)
        if quiet or channel is None:
            return
        if membership == "join" and was != "join":
            self.on_came(user, channel)
        elif membership in ("leave", "ban") and was == "join":
            self.on_gone(user, channel)

    def _event(self, room_id: str, event: dict[str, Any]) -> None:
        self.heard = event.get("event_id")
        try:
            self._command(room_id, event)
        finally:
            self.heard = None

    def _command(self, room_id: str, event: dict[str, Any]) -> None:
        sender, content = event.get("sender") or "", event.get("content") or {}
        channel = self.names.get(room_id)
        relates = content.get("m.relates_to") or {}
        if event.get("type") == "m.reaction":
            command = REACTIONS.get(relates.get("key") or "")
            board = self.boards.get(room_id)
            if channel and command and board and relates.get("event_id") == board[0]:
                self.on_message(channel, sender, command, sender)
            return
        if content.get("msgtype") not in ("m.text", "m.emote") or relates.get("rel_type"):
            return  # notices (other bots), media, edits: not commands
        body = content.get("body")
        if not isinstance(body, str):
            return
        text = strip_reply(body).strip()
        if channel is not None:
            self.on_message(channel, sender, text, sender)
        elif self.direct.get(sender) == room_id:
            self.on_message(self.user_id, sender, text, sender)

    async def _invited(self, room_id: str, invited: dict[str, Any]) -> None:
        """An invitation: to a direct chat (the inviter's dice room, if they have none
        yet), joined; to anything else, declined."""
        events = (invited.get("invite_state") or {}).get("events") or ()
        mine = next(
            (e for e in events if e.get("type") == "m.room.member"
             and e.get("state_key") == self.user_id), None,
        )  # fmt: skip
        inviter = (mine or {}).get("sender") or ""
        direct = bool(((mine or {}).get("content") or {}).get("is_direct"))
        if direct and inviter.startswith("@") and inviter not in self.direct:
            await self.api.join_room(room_id, max_retries=0)
            self.direct[inviter] = room_id
            log.info("matrix_direct_room", user=inviter, room=room_id)
        elif room_id not in self.names:
            with contextlib.suppress(MatrixRequestError):
                await self.api.leave_room(room_id)

    def _forget(self, room_id: str) -> None:
        """We left (or were made to leave) a room: a direct one is made anew when needed."""
        for user, direct in list(self.direct.items()):
            if direct == room_id:
                del self.direct[user]
        self.boards.pop(room_id, None)

    # -- sending ----------------------------------------------------------------------------------

    async def _send_forever(self) -> None:
        backoff = Backoff(cap=30.0)
        while True:
            if not self.queue or not self.registered:
                self._wake.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), 1.0)
                continue
            while not self.bucket.allow():
                await asyncio.sleep(self.bucket.wait())
            # Taken off the queue while it is sent: a line said meanwhile is joined to a
            # message still waiting, never to this one (it would go unsaid).
            target, text = self.queue.popleft()
            try:
                if target.startswith("board:"):
                    await self._put_board(target[6:], *json.loads(text))
                else:
                    await self._send(target, text)
            except (*NETWORK_ERRORS, MatrixRequestError) as exc:
                if not isinstance(exc, MLimitExceeded):
                    log.warning("matrix_send_failed", target=target, error=str(exc))
                if isinstance(exc, (MLimitExceeded, *NETWORK_ERRORS)):  # said again later
                    self.queue.appendleft((target, text))
                    await asyncio.sleep(backoff.next())
                    continue
            backoff.reset()

    async def _send(self, target: str, text: str) -> None:
        room_id = await self._room_of(target)
        if room_id is not None:
            await self.api.send_message_event(room_id, EventType.ROOM_MESSAGE, self.render(text))

    async def _room_of(self, target: str) -> str | None:
        """The room a target's lines go to: a configured room's id, or a user's direct
        room. A user's lines (their dice) go only to a room whose members are that user
        and the bot: checked before every one (a member may invite others, or a room
        someone invited us to may hold more people); else a room of ours is made, the
        user invited (as the room's one other member, with no power over it)."""
        if not target.startswith("@"):
            return self.room_ids.get(target)
        room_id = self.direct.get(target)
        if room_id is not None:
            members = await self.api.get_joined_members(room_id)  # type: ignore[arg-type]
            if set(members) <= {target, self.user_id}:
                return room_id
            log.warning("matrix_direct_room_shared", user=target, room=room_id)
            with contextlib.suppress(MatrixRequestError):
                await self.api.leave_room(room_id)  # type: ignore[arg-type]
        room_id = await self.api.create_room(
            preset=RoomCreatePreset.PRIVATE, is_direct=True, invitees=[target],  # type: ignore[list-item]
            name="Dudo", power_level_override={"invite": 50},
        )  # fmt: skip
        self.direct[target] = room_id
        intro = self.welcome(target)
        if intro:
            await self.api.send_message_event(room_id, EventType.ROOM_MESSAGE, self.render(intro))
        return room_id

    async def _put_board(self, channel: str, text: str, round_: int | None) -> None:
        room_id = self.room_ids.get(channel)
        if room_id is None:
            return
        board = self.boards.get(room_id)
        content = self.render(text)
        content["msgtype"] = "m.notice"
        content["m.mentions"] = {}
        if board is not None and board[2] == round_ and board[1] != text:
            edit = {
                **content,
                "body": f"* {content['body']}",
                "m.new_content": content,
                "m.relates_to": {"rel_type": "m.replace", "event_id": board[0]},
            }
            await self.api.send_message_event(room_id, EventType.ROOM_MESSAGE, edit)
            board[1] = text
        elif board is None or board[2] != round_:
            event_id = await self.api.send_message_event(room_id, EventType.ROOM_MESSAGE, content)
            self.boards[room_id] = [str(event_id), text, round_]
            if round_ is not None:
                for key in REACTIONS:
                    await self.api.react(room_id, event_id, key)
