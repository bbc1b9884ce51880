"""What a chat gateway is started with (``dudo irc``, ``dudo matrix``): the stream side's
settings, the pace and the rates, and each transport's own (docs/operations.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..link import default_gateway_id
from ..wire import keys


@dataclass
class ChatSettings:
    """Every chat gateway's settings; ``transport`` picks the network (a name of
    :data:`dudo.chat.transports.TRANSPORTS`), whose own settings are grouped below."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    # Which chat network: "irc" or "matrix".
    transport: str = "irc"
    # IRC (`dudo irc`): the server, and the nick the gateway takes there.
    server: str = "127.0.0.1"
    port: int = 6667
    tls: bool = False
    server_password: str | None = None
    nick: str = "dudo"
    channels: list[str] = field(default_factory=lambda: ["#dudo"])
    lang: str = "en"
    # The network's name in logged-in players' ids (<network>:<account>); the command line
    # requires it with an app (default here: the server's host).
    network: str | None = None
    turn_seconds: int = 60  # the clock of the tables opened in a channel (0: none)
    lines_per_s: float = 2.0  # the pace of what we say (ngIRCd lets ~3 a second through)
    burst: int = 5
    health_port: int | None = None
    partitions: int = keys.DEFAULT_PARTITIONS
    director_partitions: int = keys.DEFAULT_DIRECTOR_PARTITIONS
    gateway_id: str = field(default_factory=default_gateway_id)
    heartbeat: float = 2.0
    frames: bool = False  # views as `view` messages: a chat renders text, not client JSON
    # What one nick, and one channel, may make the gateway do: lines heard a second
    # (bursts of five times that); past it they are ignored (flooding nicks once held a
    # channel's answers 46 s back).
    nick_lines_per_s: float = 1.0
    channel_lines_per_s: float = 5.0
    # Where the network has accounts: this gateway's app and the private key its
    # identities are signed with (dudo.auth.identity): a logged-in player is then the same
    # player at every table, rated as one. None: every seat a new player.
    app: str | None = None
    identity_key: str | None = None
    # Matrix (`dudo matrix`): the homeserver, the bot's user id and its access token, or a
    # password to log in with; `channels` are then rooms (aliases or ids).
    homeserver: str | None = None
    user_id: str | None = None
    token: str | None = None
    password: str | None = None
