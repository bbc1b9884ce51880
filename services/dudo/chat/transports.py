"""The chat networks a chat gateway can play on, and what each must do (docs/architecture.md,
"Where to add... a chat network").

A network is two things: a :class:`Transport` (a connection that says lines, paced, and
reports what it hears) and how its rooms differ (who an account is, how a name shows,
whether a board is edited in place). :data:`TRANSPORTS` opens each by name, which is
``ChatSettings.transport`` and the command (``dudo irc``, ``dudo matrix``); the gateway
knows no network by name beyond that lookup. A new network (Discord, Telegram...) is a
module with its client and one opener here; ``tests/test_extensions.py`` holds every
transport to the contract.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sized
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..text import say
from .casemap import exact
from .irc import IrcClient
from .matrix import MatrixClient
from .room import Output, name_of
from .rooms import Rooms
from .settings import ChatSettings

__all__ = ["TRANSPORTS", "Hooks", "Transport"]


@runtime_checkable
class Transport(Protocol):
    """One connection to a chat network, as the gateway uses it."""

    @property
    def registered(self) -> bool:
        """Connected and in its rooms: the gateway is ready only then."""
        ...

    @property
    def heard(self) -> str | None:
        """The event being heard, where the network names it (ids made from it are the
        same when a restart hears it again), else None."""
        ...

    @property
    def queue(self) -> Sized:
        """What waits for the pace."""
        ...

    @property
    def dropped(self) -> int:
        """Lines not said: the queue was full."""
        ...

    def say(self, target: str, text: str) -> None:
        """Say ``text`` in a room, or to one person (paced; never blocks)."""
        ...

    def board(self, channel: str, text: str, round_: int | None) -> None:
        """A room's table board: edited in place where the network can, else said."""
        ...

    def state(self) -> dict[str, Any]:
        """What a restart needs back (stored with the rooms, all or nothing)."""
        ...

    def restore(self, stored: dict[str, Any]) -> None: ...

    async def run(self) -> None:
        """Connect, and stay connected (reconnecting with backoff) until stopped."""
        ...

    async def stop(self, message: str = "") -> None: ...


@dataclass(frozen=True)
class Hooks:
    """What the gateway hands a transport's opener: where what it hears goes."""

    heard: Callable[[str, str, str, str | None], None]  # (room or sender, sender, text, account)
    emit: Callable[[Output], None]  # the rooms' answer to a presence event
    rooms: Callable[..., Rooms]  # the gateway's rooms for this network's accounts
    lang_of: Callable[[str], str]  # the language a user chose
    where_dice: Callable[[str], str]  # the rooms whose table a user plays
    written: Callable[[], Awaitable[None]]  # until what was heard is in the inboxes


Opener = Callable[[ChatSettings, Hooks], tuple[Transport, Rooms]]


def open_irc(settings: ChatSettings, hooks: Hooks) -> tuple[Transport, Rooms]:
    """IRC: a nick is a person while it is on (its account where the network has them);
    the server's CASEMAPPING says which two nicks are one."""
    network = settings.network or settings.server
    client: IrcClient | None = None
    rooms = hooks.rooms(
        network, network=network,
        mask_of=lambda nick: client.mask_of(nick) if client is not None else None,
    )
    client = IrcClient(
        settings.server,
        settings.port,
        settings.nick,
        settings.channels,
        hooks.heard,
        tls=settings.tls,
        password=settings.server_password,
        lines_per_s=settings.lines_per_s,
        burst=settings.burst,
        on_nick=lambda old, new: hooks.emit(rooms.nick_changed(old, new)),
        on_gone=lambda nick, channel: hooks.emit(rooms.gone(nick, channel)),
        on_came=lambda nick, channel: hooks.emit(rooms.came(nick, channel)),
        on_back=lambda: hooks.emit(rooms.reconnected()),
        on_casemapping=rooms.casemapping,
    )
    return client, rooms


def open_matrix(settings: ChatSettings, hooks: Hooks) -> tuple[Transport, Rooms]:
    """Matrix: a user id is the account (the player's identity, "matrix:@ana:example.org"),
    shown by display name; boards edited in place."""
    if not (settings.homeserver and settings.user_id):
        raise ValueError("matrix needs a homeserver and the bot's user id")
    rooms: Rooms | None = None

    def emit(event: Callable[[Rooms], Output]) -> None:
        assert rooms is not None  # made before the client runs
        hooks.emit(event(rooms))

    client = MatrixClient(
        settings.homeserver,
        settings.user_id,
        settings.channels,
        hooks.heard,
        token=settings.token,
        password=settings.password,
        messages_per_s=settings.lines_per_s,
        burst=settings.burst,
        on_gone=lambda user, room: emit(lambda r: r.gone(user, room)),
        on_came=lambda user, room: emit(lambda r: r.came(user, room)),
        on_renamed=lambda user, room: emit(lambda r: r.renamed(user, room)),
        on_back=lambda: emit(lambda r: r.reconnected()),
        welcome=lambda user: say("matrix_private", hooks.lang_of(user),
                                 where=hooks.where_dice(user)),
        written=hooks.written,
    )  # fmt: skip
    rooms = hooks.rooms(
        "matrix",
        name_of=lambda user: name_of(client.name_of(user)),
        where=lambda room: f"{room} on Matrix" if room.startswith("#") else "a Matrix room",
        id_prefix="mx",
        board=True,
        fold=exact,
    )
    return client, rooms


TRANSPORTS: dict[str, Opener] = {"irc": open_irc, "matrix": open_matrix}
