"""The WebSocket half of the client: one connection kept open, requests as awaitables."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal, cast, overload

import aiohttp
import msgspec

from ._http import DudoError
from ._pending import Pending as _Pending
from ._pending import again as _again
from ._seeds import SeedKeeper, seed_for
from .messages import (
    AckMessage,
    Action,
    Emote,
    ErrorMessage,
    GameView,
    LeftMessage,
    LobbyMessage,
    MovedMessage,
    PongMessage,
    ServerMessage,
    TournamentMessage,
    ViewMessage,
    WelcomeMessage,
)

PROTOCOL_VERSION = 1
_ENCODE = msgspec.json.Encoder().encode
_DECODE = msgspec.json.Decoder(dict[str, Any]).decode  # a message: a JSON object
MAX_BACKOFF_S = 5.0
# Refusals of an act that only say the table moved on since the view it was chosen from.
_RACES = frozenset({"not_your_turn", "game_over", "paused"})
TRIES_PER_VIEW = 3  # play(): a policy's refused actions on one view before it waits for the next


class DudoConnection:
    """One WebSocket to a gateway, for a seat, spectator or entrant ``token`` (None: the
    lobby only). ``await conn.open()`` returns the ``welcome`` (or the lobby's list);
    then :meth:`act` and the other requests return when answered, and
    :meth:`messages` yields every message as it comes (views only when newer).

    It reconnects with backoff when the connection drops, says hello again, and sends
    the requests still unanswered again with their ids (one applied already comes back
    ``duplicate``: it returns the latest view). A ``rate_limited`` refusal is waited
    out (``retry_ms``) and sent again. A token the gateway refuses stops it.

    ``retries``: connection attempts in a row that may fail before it gives up (None:
    never); ``open_timeout``: seconds :meth:`open` waits for the ``welcome``.

    Once it cannot go on, it ends, and nothing waits for ever: :meth:`open`, every
    unanswered and every later request, and every :meth:`next` raise a
    :class:`DudoError` whose code says why: ``closed`` (:meth:`close`), ``gave_up``
    (``retries`` failed in a row), ``unavailable`` (no welcome within ``open_timeout``),
    or the gateway's refusal of the hello (``unauthorized``, ``unknown_table``: a
    ``dudo serve`` restarted has no table of before, ...). :meth:`wait_closed` returns
    that error when it ends; :attr:`reason` holds it from then on.

    ``on_event(kind, detail)`` hears ``"seed_not_taken"`` (the finished game at table
    ``detail`` dealt this seat its public seed, not ours), ``"dropped"`` (lost),
    ``"reconnected"`` (welcomed again), ``"gave_up"`` and ``"token"`` (the gateway
    renewed the token at a hello: ``detail`` is the new one, which lives 7 days from
    now and is what :attr:`token` holds from then on: store it where you kept the
    first).
    """

    def __init__(
        self,
        base: str,
        token: str | None,
        *,
        lobby: bool | None = None,
        session: aiohttp.ClientSession | None = None,
        on_message: Callable[[ServerMessage], None] | None = None,
        retries: int | None = None,
        open_timeout: float | None = None,
        on_event: Callable[[str, str], None] | None = None,
        seed: str | None = None,
    ) -> None:
        """``on_message`` sees every message as it arrives, before anything else does
        (acks and answered errors included): for logs, or to validate them. ``seed``:
        the seed your seat committed to (default: the one :class:`DudoApi` made for this
        token in this process), revealed when the table asks for it."""
        self.seeds = SeedKeeper(seed if seed is not None else seed_for(token))
        self.retries, self.open_timeout = retries, open_timeout
        self.on_event = on_event or (lambda kind, detail: None)
        self._dropped = False  # lost since the last welcome: the next one is a reconnect
        self.url = base.rstrip("/").replace("http", "ws", 1) + "/ws"
        self.token = token
        self.lobby = token is None if lobby is None else lobby
        self.view: ViewMessage | None = None  # the newest view
        self.welcome: WelcomeMessage | None = None  # while connected and said hello
        self.clock_offset = 0.0  # the gateway's clock minus ours, s (the welcome's `now`)
        self.closed = False
        self.reason: DudoError | None = None  # why it ended, once it did
        self.on_message = on_message
        self._session = session
        self._own = session is None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count()
        self._pending: dict[str, _Pending] = {}
        # None in the queue: the end (each reader that meets it puts it back)
        self._queue: asyncio.Queue[ServerMessage | None] = asyncio.Queue()
        self._ready: asyncio.Future[Any] | None = None
        self._finished: asyncio.Future[DudoError] | None = None
        self._task: asyncio.Task[None] | None = None
        self._later_tasks: set[asyncio.Task[None]] = set()

    # -- the public surface -------------------------------------------------------------

    async def open(self) -> WelcomeMessage | LobbyMessage:
        """Connect (and keep reconnecting); returns the ``welcome`` (lobby: the list)."""
        if self._session is None:
            self._session = aiohttp.ClientSession()
        self.closed, self.reason, self._finished = False, None, None
        self._queue = asyncio.Queue()
        self._ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._run())
        try:
            return cast(
                "WelcomeMessage | LobbyMessage",
                await asyncio.wait_for(asyncio.shield(self._ready), self.open_timeout),
            )
        except TimeoutError:
            late = DudoError("unavailable", f"no welcome in {self.open_timeout} s from {self.url}")
            self._ready.cancel()  # nobody waits for it any more
            self._end(late)
            await self.close()
            raise _again(late) from None
        except DudoError:  # refused or given up: nothing stays open behind the caller
            await self.close()
            raise

    def server_time(self) -> float:
        """The gateway's time now (s since the epoch): count a view's ``deadline`` and
        ``reveal_until`` (ms) against it; this machine's clock may be off by seconds."""
        return time.time() + self.clock_offset

    async def close(self) -> None:
        """Close for good: no reconnect; unanswered requests raise ``DudoError("closed")``."""
        self._end(DudoError("closed", "the connection was closed"))
        if self._ws is not None:
            await self._ws.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._own and self._session is not None:
            await self._session.close()
            self._session = None

    async def wait_closed(self) -> DudoError:
        """Wait until the connection has ended for good; returns why (see the class)."""
        if self.reason is not None:
            return self.reason
        if self._finished is None:
            self._finished = asyncio.get_running_loop().create_future()
        return await asyncio.shield(self._finished)

    async def __aenter__(self) -> DudoConnection:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def act(self, action: Action) -> ViewMessage:
        """Act for the seat; returns the view that shows it, or raises :class:`DudoError`."""
        return cast(ViewMessage, await self._request({"type": "act", "action": action}, "act"))

    async def leave(self) -> LeftMessage:
        """Give the seat up; returns the ``left`` message."""
        return cast(LeftMessage, await self._request({"type": "leave"}, "left"))

    async def start(self) -> ViewMessage:
        """Host only: start with the players seated so far; returns the game's first view."""
        return cast(ViewMessage, await self._request({"type": "start"}, "started"))

    async def rematch(self, table: str) -> ViewMessage:
        """After the game's end: propose a rematch at ``table``, a table you just made;
        returns the view that shows it (``view["rematch"]``). Someone's came first:
        ``DudoError("table_exists")``, and the views show theirs."""
        return cast(
            ViewMessage, await self._request({"type": "rematch", "table": table}, "rematch")
        )

    async def react(self, emote: Emote) -> ViewMessage:
        """A quick reaction at your table (nice, haha, wow, grr, hmm, clap); returns the
        next view (its ``events`` carry it)."""
        return cast(ViewMessage, await self._request({"type": "react", "emote": emote}, "view"))

    async def resync(self) -> ViewMessage:
        return cast(ViewMessage, await self._request({"type": "resync"}, "view"))

    async def ping(self) -> PongMessage:
        return cast(PongMessage, await self._request({"type": "ping"}, "pong"))

    async def play(
        self,
        policy: Callable[[GameView], Action | Awaitable[Action]],
        *,
        on_refused: Callable[[DudoError], None] | None = None,
    ) -> ViewMessage:
        """Play the seat to the end of its game: whenever a view says it is this seat's
        turn (and the table is not paused), ``policy(game)`` chooses the action (it may
        be a coroutine function) and it is sent; returns the game's last view.

        A refused action is handed to ``on_refused`` and the policy asked again, up to
        :data:`TRIES_PER_VIEW` times for one view, then the next view is waited for; a
        refusal that says the table moved on (``not_your_turn``, ``game_over``,
        ``paused``) waits for the next view at once. The connection's end raises."""
        tried: dict[int, int] = {}  # view version -> refused attempts on it
        while True:
            view = self.view or await self.next("view")
            game = view["game"]
            if view["status"] == "over" or (game is not None and game["winner"] is not None):
                return view
            mine = (
                game is not None
                and "legal" in game
                and game["turn"] == view["seat"]
                and not view.get("paused")
            )
            if not mine or tried.get(view["version"], 0) >= TRIES_PER_VIEW:
                await self.next("view")  # (the loop reads the newest, self.view)
                continue
            assert game is not None
            chosen = policy(game)
            action = await chosen if inspect.isawaitable(chosen) else chosen
            try:
                await self.act(action)
            except DudoError as err:
                if self.reason is not None:  # the connection ended
                    raise
                if on_refused is not None:
                    on_refused(err)
                version = view["version"]
                race = err.code in _RACES
                tried[version] = TRIES_PER_VIEW if race else tried.get(version, 0) + 1

    async def messages(self) -> AsyncIterator[ServerMessage]:
        """Every message as it comes (views only when newer than the last), until the
        connection ends (those that came before the end first)."""
        while True:
            message = await self._queue.get()
            if message is None:  # the end: left for the next reader too
                self._queue.put_nowait(None)
                return
            yield message

    # The next message of a kind, typed by the kind (``await conn.next("view")`` is a
    # ViewMessage to a type checker).
    @overload
    async def next(
        self, kind: Literal["view"], until: Callable[[ViewMessage], bool] = ...
    ) -> ViewMessage: ...
    @overload
    async def next(
        self, kind: Literal["lobby"], until: Callable[[LobbyMessage], bool] = ...
    ) -> LobbyMessage: ...
    @overload
    async def next(
        self, kind: Literal["tournament"], until: Callable[[TournamentMessage], bool] = ...
    ) -> TournamentMessage: ...
    @overload
    async def next(
        self, kind: Literal["moved"], until: Callable[[MovedMessage], bool] = ...
    ) -> MovedMessage: ...
    @overload
    async def next(
        self, kind: Literal["left"], until: Callable[[LeftMessage], bool] = ...
    ) -> LeftMessage: ...
    @overload
    async def next(
        self, kind: Literal["error"], until: Callable[[ErrorMessage], bool] = ...
    ) -> ErrorMessage: ...
    @overload
    async def next(
        self, kind: Literal["welcome"], until: Callable[[WelcomeMessage], bool] = ...
    ) -> WelcomeMessage: ...
    @overload
    async def next(
        self, kind: Literal["ack"], until: Callable[[AckMessage], bool] = ...
    ) -> AckMessage: ...
    @overload
    async def next(self, kind: str, until: Callable[[Any], bool] = ...) -> ServerMessage: ...

    async def next(self, kind: str, until: Callable[[Any], bool] = bool) -> ServerMessage:
        """The next message of this kind for which ``until`` is true."""
        async for message in self.messages():
            if message["type"] == kind and until(message):
                return message
        raise _again(self.reason or DudoError("closed", "the connection was closed"))

    # -- inside -------------------------------------------------------------------------

    def _resolve_ready(self, msg: dict[str, Any]) -> None:
        if self._ready is not None and not self._ready.done():
            self._ready.set_result(msg)

    def _hello(self) -> dict[str, Any]:
        return {"type": "hello", "token": self.token, "id": self._id("h")}

    def _id(self, prefix: str) -> str:
        return f"{prefix}{int(time.time() * 1000):x}{next(self._ids):x}"

    async def _send(self, message: dict[str, Any]) -> None:
        ws = self._ws
        if ws is not None and not ws.closed:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await ws.send_str(_ENCODE({"v": PROTOCOL_VERSION, **message}).decode())

    async def _request(self, message: dict[str, Any], kind: str) -> dict[str, Any]:
        if self.reason is not None:  # ended: nothing would ever answer
            raise _again(self.reason)
        full = {**message, "id": self._id(message["type"][0])}
        pending = _Pending(full, kind, asyncio.get_running_loop().create_future())
        self._pending[full["id"]] = pending
        await self._send(full)
        return await pending.future

    def _settle(self, message_id: str, value: Any = None, error: Exception | None = None) -> bool:
        pending = self._pending.pop(message_id, None)
        if pending is None or pending.future.done():
            return False
        if error is not None:
            pending.future.set_exception(error)
        else:
            pending.future.set_result(value)
        return True

    async def _run(self) -> None:
        failed = 0  # connection attempts in a row that failed
        assert self._session is not None
        while not self.closed:
            why = "closed by the gateway"
            try:
                async with self._session.ws_connect(self.url, heartbeat=20) as ws:
                    self._ws, failed = ws, 0
                    if self.token:
                        await self._send(self._hello())
                    if self.lobby:
                        await self._send({"type": "watch_lobby", "id": self._id("w")})
                    async for frame in ws:
                        if frame.type == aiohttp.WSMsgType.TEXT:
                            await self._receive(_DECODE(frame.data))
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                why = str(exc) or type(exc).__name__
            was_open = self._ws is not None
            self._ws, self.welcome = None, None
            if self.closed:
                return
            if was_open:
                self._dropped = True
                self.on_event("dropped", why)
            else:
                failed += 1
            if self.retries is not None and failed > self.retries:
                self._give_up(f"{failed} connection attempts failed in a row: {why}")
                return
            delay = min(MAX_BACKOFF_S, 0.25 * 2**failed) * random.uniform(0.5, 1.0)
            await asyncio.sleep(delay)

    def _give_up(self, why: str) -> None:
        """No more reconnecting: the connection ends with ``DudoError("gave_up")``."""
        self._end(DudoError("gave_up", why))
        self.on_event("gave_up", why)

    def _end(self, error: DudoError) -> None:
        """The connection cannot go on: :meth:`open`, every request and every reader
        raise ``error`` (the first reason it ended stays its reason)."""
        self.closed = True
        if self.reason is not None:
            return
        self.reason = error
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(_again(error))
        self._fail_pending(error)
        self._queue.put_nowait(None)
        if self._finished is not None and not self._finished.done():
            self._finished.set_result(error)

    def _fail_pending(self, error: DudoError) -> None:
        """Every unanswered request raises ``error``."""
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(_again(error))
        self._pending.clear()

    async def _receive(self, msg: dict[str, Any]) -> None:
        """A message from the gateway: what it settles or changes here, then queued for
        :meth:`messages` (not an older view, an ack, or a request's refusal)."""
        message = cast(ServerMessage, msg)  # as the gateway sent it
        if self.on_message is not None:
            self.on_message(message)
        kind = msg["type"]
        if kind == "welcome":
            await self._on_welcome(msg)
        elif kind == "view" and not await self._on_view(msg):
            return  # older than the one held
        elif kind == "ack":
            return self._on_ack(msg)
        elif kind == "error" and await self._refused(msg):
            return  # the answer to a request: its awaiter has it
        elif kind in ("left", "pong") and msg.get("id"):
            self._settle(msg["id"], msg)
        elif kind == "moved":
            self.view = None  # the next view is the new table's
        elif kind == "lobby" and "tables" in msg and not self.token:
            self._resolve_ready(msg)
        self._queue.put_nowait(message)

    async def _on_welcome(self, msg: dict[str, Any]) -> None:
        """Connected (again): the clock, a renewed token, unanswered requests again."""
        self.welcome = cast(WelcomeMessage, msg)
        if isinstance(msg.get("now"), int):  # the gateway's clock, for the deadlines
            self.clock_offset = msg["now"] / 1000 - time.time()
        if msg.get("token"):  # renewed: 7 days from now; reconnects say hello with it
            self.token = msg["token"]
            self.on_event("token", msg["token"])
        if self._dropped:  # (a welcome after a renumbering is not a reconnect)
            self._dropped = False
            self.on_event("reconnected", f"seat {msg.get('seat')}")
        self.seeds.reset()  # a reveal lost with the connection is sent again
        self._resolve_ready(msg)
        for pending in list(self._pending.values()):  # unanswered: again, same ids
            await self._send(pending.message)

    async def _on_view(self, msg: dict[str, Any]) -> bool:
        """A view: held, our seed sent if the table asks for it, and the requests it
        answers settled. False: older than the view held (dropped)."""
        view = self.view
        older = view is not None and view["table"] == msg["table"]
        if older and msg["version"] < view["version"]:  # type: ignore[index]
            return False
        self.view = cast(ViewMessage, msg)
        send, not_taken = self.seeds.step(msg)  # the table asks for our seed, or took another
        if send is not None:
            await self._send({**send, "id": self._id("s")})
        if not_taken is not None:
            self.on_event("seed_not_taken", not_taken)
        for message_id, pending in list(self._pending.items()):
            if pending.answered_by(msg):
                self._settle(message_id, msg)
        return True

    def _on_ack(self, msg: dict[str, Any]) -> None:
        """An act taken: settled once a view of that version (or later) is held."""
        acked, view = self._pending.get(msg["id"]), self.view
        if acked is not None:
            acked.until = msg["version"]
            if view and view["table"] == msg["table"] and view["version"] >= msg["version"]:
                self._settle(msg["id"], view)

    def _later(self, seconds: float, message: dict[str, Any]) -> None:
        """Send ``message`` in ``seconds`` (the reader goes on meanwhile)."""

        async def send() -> None:
            await asyncio.sleep(seconds)
            await self._send(message)

        task = asyncio.create_task(send())
        self._later_tasks.add(task)
        task.add_done_callback(self._later_tasks.discard)

    async def _refused(self, msg: dict[str, Any]) -> bool:
        """An ``error``: True if it answers one of our requests (handled here)."""
        code = msg["code"]
        pending = self._pending.get(msg["id"]) if msg.get("id") else None
        if pending is not None:
            if code == "rate_limited":  # wait as told, then the same request again
                self._later(msg.get("retry_ms", 1000) / 1000, pending.message)
            elif code == "duplicate":  # applied before the connection dropped
                self._settle(msg["id"], self.view)
            else:
                error = DudoError(code, msg["message"], facts=msg.get("facts"))
                self._settle(msg["id"], error=error)
            return True
        if self.token and self.welcome is None:  # the hello was refused
            if code in ("unavailable", "timeout"):  # say hello again in a moment
                self._later(1.0 if code == "unavailable" else 4.0, self._hello())
            elif code == "rate_limited":
                self._later(msg.get("retry_ms", 1000) / 1000, self._hello())
            else:  # the token, or its table, will not work later either: it ends
                self._end(DudoError(code, msg["message"], facts=msg.get("facts")))
                if self._ws is not None:
                    await self._ws.close()
        return False

