"""``dudo irc`` and ``dudo matrix``: Dudo in chat rooms (IRC channels, Matrix rooms), a
thin gateway like the web one; one gateway, two transports.

People type in a channel (``!new``, ``!join``, ``3 5``, ``!dudo``...); the
gateway turns each command into a stream message for the table's inbox,
signed as this gateway (its own Redis user: ``dudo admin gateway add``), and
turns what its outbox brings back into lines: the table's public news in the
channel, each player's dice by private message (:mod:`dudo.chat.rooms` decides
what is said; :mod:`dudo.chat.irc` or :mod:`dudo.chat.matrix` says it, paced). Turn clocks are the
table's (the house plays a seat whose clock runs out); the gateway reminds the
player shortly before.

It holds no game: what it remembers (each channel's table, who holds which
seat, how far it read its outbox) is a cache in its own Redis key
(:func:`dudo.wire.keys.gateway_memory`), stored after every batch it reads. Killed
and started again (same ``--id``), it reads its outbox from where it stopped,
asks every table it plays for the latest views, and goes on in the channels.

Who a player is: whoever typed ``!join`` (or ``!new``), a new player of the
deployment's, named by the handle the worker answers with; the seat follows that
person's nick changes. A nick is not an identity: on a network where nicks are not
registered, someone else may take it later (docs/security.md). On Matrix a sender is
their user id, an account: the seat is that account's, whatever its display name.

Matrix replays what was said since the sync token the memory stored: the ids of the
messages an event causes are made from that event's id, so a line heard again after a
kill makes the same messages, and the table refuses the copies as duplicates.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import secrets
import signal
import time
from typing import Any

import msgpack
import structlog
from prometheus_client import Counter, Gauge

from ..auth import sign_identity
from ..infra import REDIS_DOWN, Backoff, Health, PerKey, connect_async, metrics_registry
from ..link import OutboxHandlers, StreamSide
from ..wire import keys
from .room import Output, Room
from .rooms import Rooms
from .settings import ChatSettings
from .transports import TRANSPORTS, Hooks

log = structlog.get_logger("dudo.chat")


class ChatGateway:
    def __init__(self, settings: ChatSettings) -> None:
        self.settings = settings
        self.log = log.bind(gateway=settings.gateway_id)
        handlers = OutboxHandlers(self._dispatch, after_read=self._after_read)
        self.streams = StreamSide(settings, self.log, handlers)
        self._seeded: tuple[str, int] | None = None  # (event, ids made) while one is heard
        self._sending: set[asyncio.Future[None]] = set()  # inbox writes not yet done
        hooks = Hooks(
            heard=self._heard, emit=self._emit, rooms=self._rooms, lang_of=self._lang_of,
            where_dice=self._where_dice, written=self._written,
        )
        self.chat, self.rooms = TRANSPORTS[settings.transport](settings, hooks)
        self._init_service(settings.transport)

    def _rooms(self, accounts: str, **chat: Any) -> Rooms:
        """The rooms of either chat: ``accounts`` names the chat's accounts in identities
        (``<accounts>:<account>``); ``chat``, what differs between the chats."""
        settings = self.settings
        return Rooms(
            settings.channels,
            message=self._message,
            identity_of=lambda account: self._identity(accounts, account),
            new_id=self._new_id,
            lang=settings.lang,
            turn_seconds=settings.turn_seconds,
            **chat,
        )

    def _played_by(self, user: str) -> list[Room]:
        """The rooms whose table ``user`` plays (a Matrix user id is also the account)."""
        return [r for r in self.rooms.rooms.values() if r.player_of_nick(user, user)]

    def _lang_of(self, user: str) -> str:
        """The language ``user`` chose (`!lang`) in a room they play, else the gateway's."""
        played = self._played_by(user)
        return played[0].lang_of(user) if played else self.settings.lang

    def _where_dice(self, user: str) -> str:
        """The rooms whose table ``user`` plays (for the first line of their dice room)."""
        return ", ".join(r.channel for r in self._played_by(user)) or "Dudo"

    def _new_id(self) -> str:
        """A new message or table id: made from the event being heard, where the chat
        says which (Matrix: the same ids when a restart hears it again), else random."""
        heard = self.chat.heard
        if heard is None:
            return secrets.token_urlsafe(9).replace("_", "-")
        if self._seeded is None or self._seeded[0] != heard:
            self._seeded = (heard, 0)
        event, made = self._seeded
        self._seeded = (event, made + 1)
        digest = hashlib.blake2b(f"{event}/{made}".encode(), digest_size=9).digest()
        return base64.urlsafe_b64encode(digest).decode().replace("_", "-")

    def _init_service(self, kind: str) -> None:
        settings = self.settings
        self.per_nick = PerKey(settings.nick_lines_per_s, 5 * settings.nick_lines_per_s, 10_000)
        self.per_channel = PerKey(
            settings.channel_lines_per_s, 5 * settings.channel_lines_per_s, 1_000
        )
        self.registry = metrics_registry()  # served at /metrics with its health
        r = self.registry
        connected = Gauge(f"dudo_{kind}_connected", f"1 while on the {kind} server", registry=r)
        connected.set_function(lambda: float(self.chat.registered))
        Gauge(f"dudo_{kind}_send_queue", "lines waiting for the pace", registry=r).set_function(
            lambda: len(self.chat.queue)
        )
        self.commands = Counter(f"dudo_{kind}_commands_total", "lines heard in rooms", registry=r)
        self.ignored = Counter(
            f"dudo_{kind}_ignored_total", "lines ignored: a nick or room over its rate", registry=r
        )
        Gauge(f"dudo_{kind}_dropped_lines", "lines not said: the queue was full", registry=r
              ).set_function(lambda: self.chat.dropped)  # fmt: skip
        self.health = Health(kind, registry=r)
        self.memory = keys.gateway_memory(settings.gateway_id)
        self._stored: bytes | None = None
        self._stored_id: str | None = None
        self._trimmed: str | None = None
        self._stop = asyncio.Event()

    # -- life ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Until SIGTERM/SIGINT: take up the memory, connect both sides, serve."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stop.set)
        if self.settings.health_port is not None:
            self.health.serve(self.settings.health_port)
        self.streams.redis = connect_async(self.settings.redis_url)
        stored = await self._recall()
        await self.streams.open(read_from=stored.get("outbox"))
        assert self.streams.reader is not None
        # This gateway trims its outbox itself, after storing how far it read.
        self.streams.reader.TRIM_EVERY = 1 << 62
        self.streams.reader.TRIM_AFTER_S = float("inf")
        self.streams.ready = True
        self.chat.restore(stored.get("chat") or {})
        self._emit(self.rooms.load(stored.get("rooms") or {}))
        self.streams.tasks += [
            asyncio.create_task(self.chat.run()),
            asyncio.create_task(self._tick()),
        ]
        self.log.info("chat_started", server=self.settings.server, channels=self.settings.channels)
        await self._stop.wait()
        await self.shutdown()

    async def shutdown(self) -> None:
        self.streams.ready = False
        self.health.set_ready(False, "stopping")
        await self.chat.stop("the game service is restarting")
        with contextlib.suppress(Exception):
            await self._remember()
        if self.streams.link is not None:
            with contextlib.suppress(Exception):
                await self.streams.link.deregister()
        await self.streams.close()
        self.log.info("chat_stopped")

    def stop(self) -> None:
        self._stop.set()

    async def _recall(self) -> dict[str, Any]:
        """What the previous life stored (waiting for Redis if it is down)."""
        backoff = Backoff(cap=5.0)
        while True:
            try:
                raw = await self.streams.redis.hgetall(self.memory)
                break
            except REDIS_DOWN as exc:
                self.log.warning("waiting_for_redis", error=str(exc))
                await asyncio.sleep(backoff.next())
        found = {(k.decode() if isinstance(k, bytes) else k): v for k, v in raw.items()}
        outbox = found.get("outbox")
        return {
            "outbox": outbox.decode() if isinstance(outbox, bytes) else outbox,
            "rooms": msgpack.unpackb(found["rooms"], raw=False) if "rooms" in found else {},
            "chat": msgpack.unpackb(found["chat"], raw=False) if "chat" in found else {},
        }

    async def _remember(self) -> None:
        """Store the rooms, the chat's own (Matrix: how far it synced) and how far the
        outbox was read: one write, all or nothing."""
        assert self.streams.reader is not None
        rooms = msgpack.packb(self.rooms.state(), use_bin_type=True)
        chat = msgpack.packb(self.chat.state(), use_bin_type=True)
        if rooms + chat == self._stored and self.streams.reader.last_id == self._stored_id:
            return
        mapping = {"rooms": rooms, "chat": chat, "outbox": self.streams.reader.last_id}
        await self.streams.redis.hset(self.memory, mapping=mapping)  # type: ignore[arg-type]
        self._stored, self._stored_id = rooms + chat, self.streams.reader.last_id

    async def _after_read(self) -> None:
        """After every batch: the memory stored, then the outbox trimmed up to where it
        says we read (what a restart would read again is kept; nothing else is)."""
        await self._remember()
        reader, stored = self.streams.reader, self._stored_id
        if reader is not None and stored and stored != self._trimmed:
            await self.streams.redis.xtrim(reader.outbox, minid=stored, approximate=False)
            self._trimmed = stored

    async def _tick(self) -> None:
        """Every second: reminders, the memory stored, health."""
        while True:
            await asyncio.sleep(1.0)
            self.health.beat()
            self._emit(self.rooms.tick(int(time.time() * 1000)))
            try:
                await self._remember()
            except Exception as exc:
                self.log.warning("remember_failed", error=str(exc))
            status = self.streams.status()
            kind = self.settings.transport
            if not self.chat.registered:
                self.health.set_ready(False, f"not connected to the {kind} server")
            elif not status["ready"]:
                self.health.set_ready(False, "no outbox reader or no live worker")
            else:
                self.health.set_ready(True)
            self.health.details = {**status, kind: self.chat.registered}

    # -- both directions ----------------------------------------------------------------------

    def _message(self, kind: str, **fields: Any) -> dict[str, Any]:
        assert self.streams.link is not None
        return self.streams.link.message(kind, **fields)

    def _heard(self, target: str, nick: str, text: str, account: str | None = None) -> None:
        """A line from IRC: in a channel, a command; in private, a command for the one
        table this person plays (if they play exactly one). A nick or a channel past its
        rate is not listened to until it slows down."""
        if self.streams.link is None:
            return
        self.log.debug("heard", target=target, nick=nick, text=text[:200])
        self.commands.inc()
        fold = self.rooms.fold
        channel = fold(target) in self.rooms.rooms
        if not self.per_nick.allow(fold(nick)) or (
            channel and not self.per_channel.allow(fold(target))
        ):
            self.ignored.inc()
            return
        if channel:
            out = self.rooms.command(target, nick, text, account)
            self._emit(out, reply_to=(target, nick))
        else:
            self._emit(self.rooms.private(nick, text, account), reply_to=(nick, nick))

    def _identity(self, network: str, account: str) -> str | None:
        """The identity of ``account`` of this network, signed with our app's key."""
        if self.settings.app is None or self.settings.identity_key is None:
            return None
        return sign_identity(self.settings.app, self.settings.identity_key, f"{network}:{account}")

    async def _dispatch(self, msg: dict[str, Any]) -> None:
        out = self.rooms.on_message(msg)
        self.log.debug("outbox", kind=msg["type"], table=msg.get("table"), said=len(out.lines))
        self._emit(out)

    def _emit(self, out: Output, reply_to: tuple[str, str] | None = None) -> None:
        if out.send:
            self.log.debug("sending", kinds=[m["type"] for m in out.send])
        for target, text in out.lines:
            self.chat.say(target, text)
        for channel, text, round_ in out.boards:
            self.chat.board(channel, text, round_)
        if out.send and self.streams.link is not None:
            sent = self.streams.link.send_soon(*out.send)
            self._sending.add(sent)
            sent.add_done_callback(self._sending.discard)
            if reply_to is not None:
                sent.add_done_callback(lambda f: self._sent(f, reply_to))

    async def _written(self) -> None:
        """Until what was heard so far is in the inboxes (or failed, and was said so):
        Matrix moves its stored sync token past a batch only then, so a kill in between
        makes it hear the batch again rather than lose it."""
        if self._sending:
            await asyncio.wait(list(self._sending), timeout=30)

    def _sent(self, future: asyncio.Future[None], reply_to: tuple[str, str]) -> None:
        if future.cancelled() or future.exception() is None:
            return
        target, nick = reply_to
        self.log.warning("inbox_write_failed", error=str(future.exception()))
        self.chat.say(target, f"{nick}: the game service is unreachable; try again")


def run(settings: ChatSettings) -> None:
    asyncio.run(ChatGateway(settings).run())
