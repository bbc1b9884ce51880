"""One IRC connection that stays up, and says things at a pace the server accepts.

The protocol work (parsing lines, answering the server's PINGs, registering) is
the ``irc`` library's (jaraco's, asyncio flavour); this module adds what a
service needs around it:

- **reconnecting** with backoff whenever the connection drops or goes silent
  (we PING the server when it has said nothing for a while, and drop a
  connection that still says nothing after that), and re-joining the channels;
- **another nick** when ours is taken (``dudo``, ``dudo_``, ``dudo__``...);
- **pacing**: servers throttle or disconnect a client that sends too fast
  (ngIRCd lets about three lines a second through, others disconnect for
  "excess flood"), so every line waits for a token of a bucket (``burst``
  lines at once, then ``lines_per_s``); lines to the same target that wait
  together are joined into one message, and a long text is split at its
  separators to fit IRC's 512 bytes;
- **lenient decoding**: a peer's bytes that are not UTF-8 are read as Latin-1,
  never an exception;
- **a fair, bounded queue** (:class:`~dudo.chat.saying.SayQueue`): lines wait per
  target and go in turns, channels and people alternating, so people asking in private
  never hold a channel's lines back; at most ``MAX_QUEUED`` lines wait (flooding nicks
  once delayed a channel's answers by 46 s); past it a line is dropped, and counted;
- **accounts**: where the network has them (IRCv3 ``account-tag``, asked for after
  registration), each line says which account its sender is logged in as.

What arrives is handed to ``on_message(target, nick, text, account)``: ``target`` is
the channel, or our own nick for a private message; ``account`` the sender's account,
or None. ``on_gone(nick, channel)``: a nick left a channel (``channel`` None: it quit
the network), so whoever takes that nick later is someone else.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import Callable
from typing import Any

import structlog
from irc.client import NickMask
from irc.client_aio import AioConnection, AioReactor
from irc.connection import AioFactory
from jaraco.stream.buffer import LenientDecodingLineBuffer

from ..infra import Backoff
from .casemap import Fold, ascii_fold, casemapping
from .saying import SayQueue, counted

log = structlog.get_logger("dudo.chat.irc")

MASKS_KEPT = 10_000  # nicks whose user@host is remembered (the oldest go first)
MAX_TEXT_BYTES = 400  # of a PRIVMSG's text: 512 with our prefix, the target and CRLF
SEPARATOR = " · "
SILENT_PING_S = 60.0  # the server said nothing this long: we ping it
SILENT_DROP_S = 150.0  # ... and drop the connection if it still says nothing
MAX_QUEUED = 200  # lines waiting for the pace at most (past it, new lines are dropped)
# What we ask the server for (IRCv3), where it has them: the sender's account on every
# line, and account changes.
CAPABILITIES = ("account-tag", "account-notify", "extended-join")


class _Connection(AioConnection):
    buffer_class = LenientDecodingLineBuffer


def split_text(text: str, limit: int = MAX_TEXT_BYTES) -> list[str]:
    """``text`` as lines of at most ``limit`` UTF-8 bytes, cut at its separators (then at
    spaces, then anywhere); a newline always ends a line."""
    out: list[str] = []
    for paragraph in text.splitlines() or [""]:
        line = ""
        for piece in _pieces(paragraph, limit):
            joined = f"{line}{SEPARATOR}{piece}" if line else piece
            if len(joined.encode()) <= limit:
                line = joined
            else:
                out.append(line)
                line = piece
        if line:
            out.append(line)
    return out


def _pieces(paragraph: str, limit: int) -> list[str]:
    pieces: list[str] = []
    for part in paragraph.split(SEPARATOR):
        while len(part.encode()) > limit:
            cut = part.encode()[:limit].decode(errors="ignore")
            space = cut.rfind(" ")
            cut = cut[:space] if space > 0 else cut
            pieces.append(cut)
            part = part[len(cut) :].lstrip()
        if part:
            pieces.append(part)
    return pieces


class Pacer:
    """A token bucket: ``burst`` lines at once, then one every ``1 / lines_per_s``."""

    def __init__(self, lines_per_s: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.rate, self.burst, self.clock = lines_per_s, burst, clock
        self.tokens = float(burst)
        self.at = clock()

    def wait(self) -> float:
        """Seconds until a line may go (0: now)."""
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate

    def take(self) -> None:
        self.tokens -= 1


class IrcClient:
    def __init__(
        self,
        host: str,
        port: int,
        nick: str,
        channels: list[str],
        on_message: Callable[[str, str, str, str | None], None],
        *,
        tls: bool = False,
        password: str | None = None,
        lines_per_s: float = 2.0,
        burst: int = 5,
        on_nick: Callable[[str, str], None] = lambda old, new: None,
        on_gone: Callable[[str, str | None], None] = lambda nick, channel: None,
        on_came: Callable[[str, str], None] = lambda nick, channel: None,
        on_back: Callable[[], None] = lambda: None,
        on_casemapping: Callable[[Fold], None] = lambda fold: None,
    ) -> None:
        """``on_came(nick, channel)``: someone joined one of our channels; ``on_back()``:
        welcomed again after a lost connection (whatever was typed meanwhile is lost);
        ``on_casemapping(fold)``: the server said how it compares nicks and channel names
        (its ISUPPORT ``CASEMAPPING``, chat/casemap.py), at each connection, before any
        line of a channel can arrive."""
        self.host, self.port, self.tls, self.password = host, port, tls, password
        self.wanted_nick = nick
        self.channels = list(channels)
        self.on_message = on_message
        self.on_nick = on_nick
        self.on_gone = on_gone
        self.on_came = on_came
        self.on_back = on_back
        self.on_casemapping = on_casemapping
        self.fold: Fold = ascii_fold  # until the server says (chat/casemap.py)
        self.welcomed = 0  # times the server welcomed us (past 1: we came back)
        self.pacer = Pacer(lines_per_s, burst)
        self.queue = SayQueue(most=MAX_QUEUED, join=_joined)
        self.registered = False  # welcomed by the server (and channels asked for)
        # The line being heard, for ids made from it (Matrix's replays): IRC never
        # hears a line twice, so its ids are random.
        self.heard: str | None = None
        self.joined: set[str] = set()
        self.masks: dict[str, str] = {}  # folded nick -> user@host, as last seen
        self._wake = asyncio.Event()
        self._down = asyncio.Event()
        self._heard = time.monotonic()
        self._reactor: AioReactor | None = None
        self._conn: _Connection | None = None
        self._stopping = False
        self._nick_tries = 0

    @property
    def dropped(self) -> int:
        """Lines not said: a bound of the queue dropped them."""
        return self.queue.dropped

    @property
    def nick(self) -> str:
        conn = self._conn
        return conn.get_nickname() if conn is not None and self.registered else self.wanted_nick

    def say(self, target: str, text: str) -> None:
        """Queue ``text`` for ``target``; it goes out as soon as the pace allows, joined
        with what else waits for the same target where it fits."""
        for line in split_text(text):
            self.queue.add(target, line)
        self._wake.set()

    def board(self, channel: str, text: str, round_: int | None) -> None:
        """A table's board: IRC cannot edit a line, so it is said like any other (rooms
        on IRC are made without boards; this is the transport contract's fallback)."""
        self.say(channel, text)

    def state(self) -> dict[str, Any]:
        """What the gateway stores of this connection: nothing (IRC does not replay)."""
        return {}

    def restore(self, stored: dict[str, Any]) -> None:
        """Nothing to take up: see :meth:`state`."""

    async def run(self) -> None:
        """Stay connected until :meth:`stop`: connect, send at pace, reconnect with
        backoff when the connection drops or goes silent."""
        loop = asyncio.get_running_loop()
        self._reactor = AioReactor(loop=loop)
        self._reactor.connection_class = _Connection
        for event, handler in (
            ("welcome", self._welcome),
            ("nicknameinuse", self._nick_taken),
            ("erroneusnickname", self._nick_taken),
            ("pubmsg", self._message),
            ("privmsg", self._message),
            ("join", self._joined),
            ("part", self._parted),
            ("kick", self._kicked),
            ("quit", self._quit),
            ("nick", self._nick),
            ("disconnect", self._disconnected),
            ("featurelist", self._features),
            ("all_raw_messages", self._heard_something),
        ):
            self._reactor.add_global_handler(event, _guarded(handler))
        backoff = Backoff(base=0.5, cap=30.0)
        sender = asyncio.create_task(self._send_forever())
        try:
            while not self._stopping:
                try:
                    await self._connect()
                except (OSError, TimeoutError) as exc:
                    log.warning("irc_connect_failed", server=self.host, error=str(exc))
                    await asyncio.sleep(backoff.next())
                    continue
                backoff.reset()
                await self._watch()
                if not self._stopping:
                    await asyncio.sleep(backoff.next())
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender

    async def stop(self, message: str = "") -> None:
        self._stopping = True
        conn = self._conn
        if conn is not None and conn.is_connected():
            with contextlib.suppress(Exception):
                conn.disconnect(message)
        self._down.set()

    # -- connection --------------------------------------------------------------------

    async def _connect(self) -> None:
        assert self._reactor is not None
        self.registered, self.joined = False, set()
        self._nick_tries = 0
        self._down.clear()
        self._heard = time.monotonic()
        factory = AioFactory(ssl=ssl.create_default_context()) if self.tls else AioFactory()
        self._conn = self._conn or self._reactor.server()
        connecting = self._conn.connect(
            self.host,
            self.port,
            self.wanted_nick,
            password=self.password,
            username="dudo",
            ircname="Dudo (Liar's Dice)",
            connect_factory=factory,
        )
        await asyncio.wait_for(connecting, timeout=15)
        log.info("irc_connected", server=self.host, port=self.port)

    async def _watch(self) -> None:
        """Until the connection drops: ping a silent server, drop one that stays silent."""
        pinged = False
        while not self._down.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._down.wait(), 5.0)
            silent = time.monotonic() - self._heard
            conn = self._conn
            if self._down.is_set() or conn is None:
                break
            if silent > SILENT_DROP_S:
                log.warning("irc_silent", seconds=round(silent))
                conn.disconnect("no answer")
                break
            if silent > SILENT_PING_S and not pinged:
                pinged = True
                with contextlib.suppress(Exception):
                    conn.ping(self.host)
            elif silent < SILENT_PING_S:
                pinged = False
        self.registered = False

    async def _send_forever(self) -> None:
        while True:
            if not self.queue or not self.registered:
                self._wake.clear()
                await self._wake.wait()
                continue
            wait = self.pacer.wait()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            target, text = self.queue.peek() or ("", "")
            conn = self._conn
            if conn is None or not conn.is_connected():
                self.registered = False
                continue
            try:
                conn.privmsg(target, counted(text, int(time.time() * 1000)))
            except Exception as exc:  # not sent: kept for the next connection
                log.warning("irc_send_failed", error=str(exc))
                self.registered = False
                continue
            self.pacer.take()
            self.queue.pop()

    # -- events (the library calls these; _guarded keeps a bug from closing the socket) --

    def _heard_something(self, conn: Any, event: Any) -> None:
        self._heard = time.monotonic()

    def _welcome(self, conn: Any, event: Any) -> None:
        log.info("irc_registered", nick=conn.get_nickname())
        with contextlib.suppress(Exception):  # refused or unknown: no accounts, that is all
            conn.send_raw("CAP REQ :" + " ".join(CAPABILITIES))
        for channel in self.channels:
            conn.join(channel)
        self.registered = True
        self.welcomed += 1
        self._wake.set()
        if self.welcomed > 1:
            self.on_back()

    def _features(self, conn: Any, event: Any) -> None:
        """ISUPPORT (005), loaded into ``conn.features`` by the library before this
        runs: how the server folds names. It comes after the welcome and before the
        server answers our JOINs, so no channel line is judged by a folding it did not
        announce."""
        features = conn.features
        fold = casemapping(
            getattr(features, "casemapping", None), getattr(features, "utf8mapping", None)
        )
        if fold is not self.fold:
            self.fold = fold
            self.joined = {fold(channel) for channel in self.joined}
            log.info("irc_casemapping", mapping=fold.__name__)
            self.on_casemapping(fold)

    def _nick_taken(self, conn: Any, event: Any) -> None:
        if not self.registered:
            self._nick_tries += 1
            conn.nick(_another_nick(self.wanted_nick, self._nick_tries))

    def mask_of(self, nick: str) -> str | None:
        """Where ``nick`` was last seen connecting from (``user@host`` as the server
        gives it), kept after they quit: the seat they left is theirs to take back from
        there (dudo.chat.typed), not anyone's who takes the nick next."""
        return self.masks.get(self.fold(nick))

    def _seen(self, event: Any) -> str:
        """The nick an event comes from; its ``user@host`` noted."""
        mask = NickMask(event.source)
        if mask.user and mask.host:
            self.masks[self.fold(mask.nick)] = f"{mask.user}@{mask.host}"
            while len(self.masks) > MASKS_KEPT:
                self.masks.pop(next(iter(self.masks)))
        return str(mask.nick)

    def _message(self, conn: Any, event: Any) -> None:
        nick = self._seen(event)
        target = event.target if event.type == "pubmsg" else conn.get_nickname()
        account = next(
            (t.get("value") for t in event.tags or () if t.get("key") == "account"), None
        )
        text = event.arguments[0] if event.arguments else ""
        self.on_message(target, nick, text, account or None)

    def _joined(self, conn: Any, event: Any) -> None:
        nick = self._seen(event)
        if nick == conn.get_nickname():
            self.joined.add(self.fold(event.target))
        else:
            self.on_came(nick, event.target)

    def _parted(self, conn: Any, event: Any) -> None:
        nick = self._seen(event)
        if nick == conn.get_nickname():
            self.joined.discard(self.fold(event.target))
        else:
            self.on_gone(nick, event.target)

    def _kicked(self, conn: Any, event: Any) -> None:
        if event.arguments and event.arguments[0] == conn.get_nickname():
            self.joined.discard(self.fold(event.target))
            log.warning("irc_kicked", channel=event.target)
            asyncio.get_running_loop().call_later(10.0, _rejoin, conn, event.target)
        elif event.arguments:
            self.on_gone(event.arguments[0], event.target)

    def _quit(self, conn: Any, event: Any) -> None:
        self.on_gone(self._seen(event), None)

    def _nick(self, conn: Any, event: Any) -> None:
        self.on_nick(NickMask(event.source).nick, event.target)

    def _disconnected(self, conn: Any, event: Any) -> None:
        log.warning("irc_disconnected", server=self.host)
        self.registered = False
        self._down.set()


def _joined(waiting: str, line: str) -> str | None:
    """Two lines for one target as one, where they fit in a message."""
    joined = f"{waiting}{SEPARATOR}{line}"
    return joined if len(joined.encode()) <= MAX_TEXT_BYTES else None


def _another_nick(wanted: str, tries: int) -> str:
    """``dudo`` → ``dudo_`` → ``dudo__`` → ``dudo___``, then numbered."""
    return wanted + "_" * tries if tries <= 3 else f"{wanted[:7]}{tries}"


def _rejoin(conn: Any, channel: str) -> None:
    with contextlib.suppress(Exception):
        if conn.is_connected():
            conn.join(channel)


def _guarded(handler: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
    """An exception in a handler would end the connection (it runs in data_received): log
    it instead."""

    def call(conn: Any, event: Any) -> None:
        try:
            handler(conn, event)
        except Exception:
            log.exception("irc_handler_failed", event=event.type)

    return call
