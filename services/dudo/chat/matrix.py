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
  unless the operator exempts the bot): what matters goes first, a room's lines as one
  message, a 429 waits as long as it asks and loses nothing (:mod:`.matrix_out`).

Direct-message rooms are **not end-to-end encrypted**: the bot holds no Olm/Megolm
keys, so the homeservers of the bot and of the player can read a player's dice
(docs/operations.md, "Matrix"). An encrypted room's messages cannot be read by the bot
at all: a command typed in one is not heard.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import structlog
from mautrix.client import ClientAPI
from mautrix.errors import MatrixRequestError

from .. import wire
from ..infra import Backoff, Bucket
from .matrix_out import (
    MAX_QUEUED,
    NETWORK_ERRORS,
    REACTIONS,
    RECONNECT_CAP_S,
    MatrixOut,
    joined_lines,
)
from .saying import SayQueue

log = structlog.get_logger("dudo.chat.matrix")

SYNC_TIMEOUT_MS = 20_000
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


def strip_reply(body: str) -> str:
    """A reply's own text, without the quote of what it answers (``> <@x> ...`` lines and
    the blank line after them, as clients send a reply's fallback)."""
    lines = body.splitlines()
    if not lines or not lines[0].startswith("> "):
        return body
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return "\n".join(lines).lstrip("\n")


class MatrixClient(MatrixOut):
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
        # Lines by target, a room's joined into one message while they wait, people's
        # (their dice) and rooms' (turn calls and news) in fair turns; then the boards,
        # the latest of each room only (dudo.chat.saying).
        self.queue = SayQueue(most=MAX_QUEUED, join=joined_lines)
        self.boards_due: dict[str, tuple[str, int | None]] = {}
        self.retry_after = 1.0  # what the last 429 asked for (seconds)
        self.pace_s = 1.0  # the homeserver's interval between messages, learned from 429s
        self.limited_at = -math.inf  # when the last 429 came (monotonic)
        self.last_sent = -math.inf  # when the last message went
        self.life, self.sent = secrets.token_hex(4), 0
        self.unintroduced: set[str] = set()  # dice rooms made whose first line is owed
        self.registered = False  # synced, the configured rooms joined
        self.since: str | None = None
        self.room_ids: dict[str, str] = {}  # configured name -> room id
        self.names: dict[str, str] = {}  # room id -> configured name
        self.direct: dict[str, str] = {}  # user id -> their direct-message room
        self.display: dict[str, str] = {}  # user id -> display name, as last seen
        # room id -> [event id, text, round, buttons put on it]
        self.boards: dict[str, list[Any]] = {}
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
        # A board stored before its buttons were counted: taken as having them all.
        self.boards = {k: [*v, len(REACTIONS)][:4] for k, v in (stored.get("boards") or {}).items()}

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

    # -- life -----------------------------------------------------------------------------------

    async def run(self) -> None:
        """Sync and send until stopped, through any number of lost connections."""
        trace = aiohttp.TraceConfig()
        trace.on_request_end.append(self._answered)
        self.api = ClientAPI(
            self.user_id, base_url=self.homeserver, token=self.token,
            # No request waits for ever on a connection the homeserver no longer answers
            # (aiohttp's own limit is five minutes): a sync's long poll and then some.
            client_session=aiohttp.ClientSession(
                trace_configs=[trace],
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=10,
                                              sock_read=SYNC_TIMEOUT_MS / 1000 + 15),
            ),
        )  # fmt: skip
        # A homeserver restarting is back within seconds: looked for every few (a backoff
        # to 30 s synced again 35 s after it was back; issue 54, item 3).
        backoff, lost = Backoff(cap=RECONNECT_CAP_S), False
        sender = asyncio.create_task(self._send_forever())
        try:
            while not self._stopping:
                try:
                    await self._connect()
                    # The first sync of an account reads the rooms' state; the first after
                    # a lost connection answers at once (a long poll held the gateway
                    # "not back" 20 s more: issue 54, item 3).
                    first, at_once = self.since is None, True
                    while not self._stopping:
                        data = await self.api.sync(
                            since=self.since, timeout=0 if at_once else SYNC_TIMEOUT_MS,
                            filter_id=SYNC_FILTER,  # type: ignore[arg-type]
                        )  # fmt: skip
                        at_once = False
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
            if not (self.queue or self.boards_due) or not self.registered:
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
