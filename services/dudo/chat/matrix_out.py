"""What the Matrix account says, and how it goes out under a homeserver's rate limit: a
mixin of :class:`~dudo.chat.matrix.MatrixClient`, which holds the state used here.

Homeservers rate-limit messages: Synapse allows 0.2 a second after a burst of 10 unless
its operator exempts the bot, and every message, edit and reaction counts. So:

- **what matters first**: the lines, the rooms' (turn calls and news, each room's
  joined into one message while they wait) and people's (their dice) in fair turns, a
  turn call after the dice it asks to play (:class:`SayQueue`); then a board's buttons
  that a 429 cut short (while its round is played); then the boards, the latest of each
  room only (many states go as one edit). While the homeserver limits us the boards
  wait until nothing was sent for two of its intervals, so a bot's move shows in the
  next turn call (which names the bid to beat) and the board follows when the table is
  quiet;
- **a 429 waits as long as it asks** (``retry_after_ms``), not an ever longer backoff;
- **nothing is lost to a 429**, nor made twice by a retry: a line goes back first in its
  turn, a board's buttons are counted as each goes on, a dice room's first line goes
  with its first dice, and a retry carries the transaction id of the first try (a
  homeserver that took it answers with the event it has);
- **seconds left** in a line are counted as it goes out (:func:`counted`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import html
import json
import re
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import structlog
from mautrix.client import ClientAPI
from mautrix.errors import MatrixConnectionError, MatrixRequestError, MLimitExceeded
from mautrix.types import EventType, RoomCreatePreset

from ..infra import Backoff, Bucket
from .saying import SayQueue, counted

log = structlog.get_logger("dudo.chat.matrix")

MAX_QUEUED = 200  # lines waiting for the pace at most (past it, new lines are dropped)
MAX_BODY = 8000  # characters of one message (a homeserver takes 64 KiB of event)
# A homeserver's 429 says how long to wait (`retry_after_ms`): waited exactly, not an
# ever longer backoff (delays of 5-11 s under Synapse's default limits; issue 54).
RETRY_AFTER_S = (0.2, 60.0)  # the wait a 429 may ask for, bounded
RECONNECT_CAP_S = 5.0  # a homeserver back from a restart is synced within this
LIMITED_S = 60.0  # after a 429, this long counted as limited (board edits wait for quiet)
USER_ID = re.compile(r"@[a-z0-9._=/+\-]+:[A-Za-z0-9.\-]+(?::\d+)?(?<!\.)")
# The buttons of a board: a reaction with this key on it is that command.
REACTIONS = {"👎 dudo": "!dudo", "🎯 calza": "!calza"}
NETWORK_ERRORS = (MatrixConnectionError, OSError, asyncio.TimeoutError)


class MatrixOut:
    """Saying and sending (declared by :class:`~dudo.chat.matrix.MatrixClient`)."""

    api: ClientAPI
    user_id: str
    registered: bool
    bucket: Bucket
    queue: SayQueue
    boards_due: dict[str, tuple[str, int | None]]
    boards: dict[str, list[Any]]
    names: dict[str, str]
    retry_after: float
    pace_s: float
    limited_at: float
    last_sent: float
    life: str  # this process's own (transaction ids of an earlier life never match)
    sent: int  # messages sent (a part of each transaction id)
    unintroduced: set[str]
    room_ids: dict[str, str]
    direct: dict[str, str]
    _wake: asyncio.Event
    welcome: Callable[[str], str]  # the first line of a dice room made for a user

    def shown_as(self, user: str) -> str: ...

    # -- saying ---------------------------------------------------------------------------------

    @property
    def dropped(self) -> int:
        return self.queue.dropped

    def say(self, target: str, text: str) -> None:
        """Queue ``text`` for ``target`` (a configured room, or a user id); joined to the
        last line waiting for the same place, while the message fits."""
        self.queue.add(target, text[:MAX_BODY])
        self._wake.set()

    def board(self, channel: str, text: str, round_: int | None) -> None:
        """The room's board says ``text`` now: edited in place, or a new one for a new
        round. After the lines (a turn call names the bid to beat too), and a board
        still waiting is replaced: under a homeserver's rate limit many states of the
        board go as one edit."""
        self.boards_due.pop(channel, None)
        self.boards_due[channel] = (text, round_)
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

    async def _answered(self, _session: Any, _context: Any, params: Any) -> None:
        """Every answer of the homeserver: a 429 says how long to wait before the next
        message, ``retry_after_ms`` in its body (Synapse's ``Retry-After`` header is that
        rounded up to whole seconds; mautrix's error carries neither). The body read here
        stays cached for mautrix, which reads it next."""
        response = params.response
        if response.status != 429:
            return
        asked: float | None = None
        with contextlib.suppress(ValueError, TypeError, KeyError, aiohttp.ClientError):
            asked = float((await response.json(content_type=None))["retry_after_ms"]) / 1000
        if asked is None:
            with contextlib.suppress(TypeError, ValueError):
                asked = float(response.headers.get("Retry-After", ""))
        low, high = RETRY_AFTER_S
        self.retry_after = min(high, max(low, asked if asked is not None else 1.0))
        # The homeserver's pace: the longest wait asked for while it has been limiting us
        # (right after a message, a 429 asks for a whole interval).
        now = time.monotonic()
        limited = now - self.limited_at <= LIMITED_S
        self.pace_s = max(self.retry_after, self.pace_s) if limited else self.retry_after
        self.limited_at = now

    # -- sending ----------------------------------------------------------------------------------

    async def _send_forever(self) -> None:
        """Send until cancelled; a bug in one send is logged, never the end of sending
        (the task's exception would surface only when it is awaited, at the stop)."""
        while True:
            try:
                await self._send_all()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("matrix_send_crashed")
                await asyncio.sleep(1.0)

    async def _send_all(self) -> None:
        backoff = Backoff(cap=RECONNECT_CAP_S)
        while True:
            owed = self._owed_buttons() if self.registered and not self.queue else None
            hold = self._hold(owed)
            if hold > 0:
                self._wake.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), hold)
                continue
            while not self.bucket.allow():
                await asyncio.sleep(self.bucket.wait())
            # In this order: the lines (dice before a turn call that asks to play them),
            # the buttons a 429 cut short on a board put up, the boards. A line is taken
            # off the queue while it is sent: a line said meanwhile is joined to a
            # message still waiting, never to this one (it would go unsaid).
            line = self.queue.take()
            owed = owed if line is None else None
            board = None if owed or line else next(iter(self.boards_due.items()), None)
            if line is None and owed is None and board is None:
                continue
            try:
                await self._send_next(line, owed, board)
            except (*NETWORK_ERRORS, MatrixRequestError) as exc:
                await self._not_sent(exc, line, owed, board, backoff)
                continue
            backoff.reset()
            self.last_sent = time.monotonic()
            self.sent += 1

    def _hold(self, owed: str | None) -> float:
        """Seconds to wait before sending: a second while nothing waits or while not
        connected (or until woken), none for lines and owed buttons, and for boards
        alone what :meth:`_board_hold` says."""
        if not (self.queue or self.boards_due or owed) or not self.registered:
            return 1.0
        return 0.0 if self.queue or owed else self._board_hold()

    async def _send_next(self, line: Any, owed: str | None, board: Any) -> None:
        """Send what was taken: a line, a board's owed buttons, or a board."""
        log.debug("matrix_sending", to=(line or board or (owed,))[0], board=line is None)
        if owed is not None:
            if owed in self.boards:  # (the room may have been left meanwhile)
                await self._buttons(owed, self.boards[owed])
        elif board is not None:
            del self.boards_due[board[0]]
            await self._put_board(board[0], *board[1])
        elif line is not None:
            await self._send(*line)

    async def _not_sent(
        self, exc: Exception, line: Any, owed: str | None, board: Any, backoff: Backoff
    ) -> None:
        """What was taken and not sent: dropped if refused for good (a room that will
        not have us, say), else put back first in its turn, after the wait the
        homeserver asked for (a 429) or a backoff (the network)."""
        if not isinstance(exc, (MLimitExceeded, *NETWORK_ERRORS)):
            log.warning("matrix_send_failed", target=(line or board or (owed,))[0],
                        error=str(exc))  # fmt: skip
            if owed in self.boards:  # refused for good: never asked again
                self.boards[owed][3] += 1
            return
        log.debug("matrix_send_retry", error=type(exc).__name__, wait=self.retry_after)
        if line is not None:  # said again, first in its turn: nothing lost
            self.queue.put_back(*line)
        elif board is not None:  # unless a newer one came meanwhile
            self.boards_due.setdefault(*board)
        if isinstance(exc, MLimitExceeded):
            await asyncio.sleep(self.retry_after)  # as long as asked, no longer
        else:
            await asyncio.sleep(backoff.next())

    def _board_hold(self) -> float:
        """Seconds the boards wait, only boards waiting: while the homeserver limits us
        (a 429 in the last LIMITED_S), until nothing was sent for two of its intervals.
        A board (a new round's costs three messages with its buttons) then leaves the
        next line room, so turn calls (which name the bid to beat too) go at once and the
        board follows when the table is quiet; not limited, at once."""
        now = time.monotonic()
        if now - self.limited_at > LIMITED_S:
            return 0.0
        return max(0.0, self.last_sent + 2 * self.pace_s - now)

    def _owed_buttons(self) -> str | None:
        """A room whose board is up without all its buttons (a 429 cut them short) while
        its round is still played (a board of a later round waiting makes them moot)."""
        for room_id, board in self.boards.items():
            if board[2] is None or board[3] >= len(REACTIONS):
                continue
            due = self.boards_due.get(self.names.get(room_id, ""))
            if due is None or due[1] == board[2]:
                return room_id
        return None

    async def _send(self, target: str, text: str) -> None:
        room_id = await self._room_of(target)
        if room_id is None:
            return
        # A dice room we made says what it is for in its first message, with the first
        # line (one message of the homeserver's allowance, not two); owed until it goes:
        # a 429 on it once left it unsaid for good (issue 54, item 2).
        intro = self.welcome(target) if room_id in self.unintroduced else ""
        said = f"{intro}\n{text}" if intro else text
        content = self.render(counted(said, int(time.time() * 1000)))
        await self._put(room_id, EventType.ROOM_MESSAGE, content)
        self.unintroduced.discard(room_id)
        log.debug("matrix_said", target=target, text=text[:80])

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
        self.unintroduced.add(room_id)
        return room_id

    async def _put_board(self, channel: str, text: str, round_: int | None) -> None:
        room_id = self.room_ids.get(channel)
        if room_id is None:
            return
        board = self.boards.get(room_id)
        content = self.render(text)
        content["msgtype"] = "m.notice"
        content["m.mentions"] = {}
        if board is not None and board[2] == round_:
            await self._buttons(room_id, board)  # those a 429 cut short, first
            if board[1] != text:
                edit = {
                    **content,
                    "body": f"* {content['body']}",
                    "m.new_content": content,
                    "m.relates_to": {"rel_type": "m.replace", "event_id": board[0]},
                }
                await self._put(room_id, EventType.ROOM_MESSAGE, edit)
                board[1] = text
        else:
            event_id = await self._put(room_id, EventType.ROOM_MESSAGE, content)
            # [event, text, round, buttons put on it]: a board without a game has none.
            board = [str(event_id), text, round_, 0 if round_ is not None else len(REACTIONS)]
            self.boards[room_id] = board
            await self._buttons(room_id, board)

    async def _put(self, room_id: str, kind: EventType, content: dict[str, Any]) -> str:
        """Send one event, its transaction id the same on a retry of the same thing: a
        homeserver that took it but whose answer was lost (it stopped, the connection was
        cut) answers the retry with the event it has, rather than making a second (a
        second button was refused, M_DUPLICATE_ANNOTATION, and retried for ever)."""
        what = json.dumps([room_id, str(kind), content], sort_keys=True, ensure_ascii=False)
        txn = f"dudo.{self.life}.{self.sent}.{hashlib.sha256(what.encode()).hexdigest()[:16]}"
        made = await self.api.send_message_event(room_id, kind, content, txn_id=txn)  # type: ignore[arg-type]
        return str(made)

    async def _buttons(self, room_id: str, board: list[Any]) -> None:
        """The board's reaction buttons not yet on it, each counted as it goes: a 429 in
        the middle once lost the rest (its retry saw the same board, and sent nothing)."""
        while len(board) > 3 and board[3] < len(REACTIONS):
            relates = {"rel_type": "m.annotation", "event_id": board[0],
                       "key": list(REACTIONS)[board[3]]}  # fmt: skip
            await self._put(room_id, EventType.REACTION, {"m.relates_to": relates})
            board[3] += 1


def joined_lines(waiting: str, line: str) -> str | None:
    """Two lines for one room (or person) as one message, while it fits."""
    joined = f"{waiting}\n{line}"
    return joined if len(joined) <= MAX_BODY else None
