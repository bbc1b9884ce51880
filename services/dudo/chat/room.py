"""One channel's table as the chat gateway remembers it (:class:`Room`), what handling
something produces (:class:`Output`), and the public part of a view a channel may be told
(:func:`public_of`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import wire
from .casemap import ascii_fold

Line = tuple[str, str]  # (target: a channel or a nick, text)
DEFAULT_PRESET = "classic"
MAX_SEATS = 6
PENDING_MAX = 4096  # unanswered requests remembered (who asked), the newest kept
REMIND_MIN_MS = 5000  # a reminder comes at least this long before the clock runs out
_PERSISTED = (
    "channel", "lang", "table", "host", "opener", "preset", "bots", "nicks", "seats", "accounts",
    "version", "status", "round", "turn_key", "turn_player", "deadline", "reminded", "names",
    "start_by", "langs", "tokens", "left",
)  # fmt: skip
# Not stored: `dealt` (whose dice were told this round). A line queued to be said dies
# with the process; after a restart every player is told their dice again.


@dataclass
class Output:
    """What handling something produced: lines to say, and messages for the inboxes."""

    lines: list[Line] = field(default_factory=list)
    send: list[dict[str, Any]] = field(default_factory=list)
    # Where a chat keeps a room's state in one message edited in place (Matrix): the
    # room's board as it is now (channel, text, round: a new message each round); a chat
    # without edits says it all in lines.
    boards: list[tuple[str, str, int | None]] = field(default_factory=list)

    def extend(self, other: Output) -> None:
        self.lines += other.lines
        self.send += other.send
        self.boards += other.boards


@dataclass
class Room:
    channel: str
    lang: str = "en"
    table: str | None = None
    host: str | None = None  # the handle of the player who opened the table
    opener: str | None = None  # their nick, as they typed !new
    preset: str = DEFAULT_PRESET
    bots: int = 0
    # Our players, by the handle the workers name them with (`joined`): their nick now
    # (a seat follows its player through nick changes) and their seat.
    nicks: dict[str, str] = field(default_factory=dict)  # handle -> nick
    seats: dict[str, int] = field(default_factory=dict)  # handle -> seat
    # Seats taken by someone logged in to an account (IRCv3): handle -> account. Such a
    # seat is the account's, whatever the nick; any other follows its nick until the
    # nick leaves (then nobody here plays it: a nick is not an identity).
    accounts: dict[str, str] = field(default_factory=dict)
    version: int = 0  # the last view announced
    status: str | None = None
    round: int | None = None
    turn_key: list[int] | None = None  # (round, turn, bids, choosing) of the turn last called
    turn_player: str | None = None  # our player whose turn it is, if it is one of ours
    deadline: int | None = None
    reminded: list[int] | None = None  # the turn_key a reminder was said for
    names: list[str | None] = field(default_factory=list)  # players as last seen
    dealt: dict[str, int] = field(default_factory=dict)  # player -> round its dice were told
    # Who typed !start while the table's bots were still on their way: the start is sent
    # for them once the bots sit.
    start_by: str | None = None
    # A person's own language (`!lang`), by folded nick: what is said to them alone or
    # addressed to them (their dice, their turn, refusals) is in it; the channel's news
    # stays in ``lang`` (one player's `!idioma es` switched it for everyone).
    langs: dict[str, str] = field(default_factory=dict)
    # Our players' seat tokens (`joined`), by handle: what takes a seat back. And the
    # seats whose nick left mid-game, by handle: [folded nick, user@host]. The house
    # plays such a seat; the same nick from the same user@host takes it back with !join
    # (a nick alone is not a person: anyone may take it next).
    tokens: dict[str, str] = field(default_factory=dict)
    left: dict[str, list[str]] = field(default_factory=dict)
    # Not stored: rebuilt from the next view (or a resync after a restart).
    public: dict[str, Any] | None = None
    views: dict[str, dict[str, Any]] = field(default_factory=dict)  # player -> seat view
    resumed: bool = False
    # Who was told again on joining the channel, and for which round: once a round each
    # (a player joining and parting in a loop would spend the pace all channels share).
    welcomed: dict[str, int] = field(default_factory=dict)
    # Which nicks are one person: the chat network's own folding (chat/casemap.py), given
    # by Rooms; never stored (a server announces it again at every connection).
    fold: Callable[[str], str] = field(default=ascii_fold, repr=False, compare=False)

    def state(self) -> dict[str, Any]:
        """What the gateway stores of this room, in its own memory: no dice; its players'
        seat tokens (what takes a left seat back), which only this gateway may read."""
        return {name: getattr(self, name) for name in _PERSISTED}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Room:
        return cls(**{k: v for k, v in state.items() if k in _PERSISTED})

    def lang_of(self, nick: str | None) -> str:
        """The language to say something to ``nick`` in: theirs, else the channel's."""
        return self.langs.get(self.fold(nick), self.lang) if nick else self.lang

    @property
    def bots_seated(self) -> int:
        """Bots at the table as the last view showed (none before the first view)."""
        players = self.public["players"] if self.public is not None else []
        return sum(1 for p in players if p and p.get("bot"))

    def claim(self, nick: str, account: str | None = None) -> str | None:
        """:meth:`player_of_nick`; and a seat taken with ``account`` whose nick had gone
        is this person's again, under the nick they have now."""
        found = self.player_of_nick(nick, account)
        if found is None and account is not None:
            found = next((p for p, a in self.accounts.items() if a == account), None)
            if found is not None:
                self.nicks[found] = nick
        return found

    def player_of_nick(self, nick: str, account: str | None = None) -> str | None:
        """The handle of the seat this person holds here: by account when they are
        logged in to the one it was taken with; else by nick, for a seat not taken
        with an account."""
        if account is not None:
            found = next((p for p, a in self.accounts.items() if a == account), None)
            if found is not None and found in self.nicks:
                return found
        fold = self.fold
        folded = fold(nick)
        return next(
            (p for p, n in self.nicks.items() if fold(n) == folded and p not in self.accounts),
            None,
        )


def public_of(msg: dict[str, Any]) -> dict[str, Any]:
    """A ``view`` message's public part as a spectator's view, field by field: what a
    channel may be told. A seat's private part (``seats``) is never read here."""
    return {
        "table": msg["table"],
        "version": msg["version"],
        "status": msg["status"],
        "players": msg["players"],
        "host": msg.get("host"),
        "deadline": msg.get("deadline"),
        "game": msg.get("game"),
        "events": msg.get("events") or [],
        "seat": None,
    }


def name_of(nick: str) -> str:
    """A nick as a display name (nicks are short and plain; cut to the protocol's 32)."""
    try:
        return wire.clean_name(nick[: wire.NAME_MAX])
    except wire.WireError:
        return "player"


def label_of(where: str | None) -> dict[str, str]:
    """Where a channel's table is played, for the lobby ("#dudo on irc.libera.chat"):
    a create's ``label`` field, or none if it would not read as clean text."""
    if not where:
        return {}
    try:
        return {"label": wire.clean_line(where[:64], "a label")}
    except wire.WireError:
        return {}
