"""The official Python client of the Dudo protocol (asyncio): ``from dudo_client import ...``.

The same surface as the JavaScript package (``dudo-client`` on npm): :class:`DudoApi` for
the HTTP API (creates and joins carry request keys and are retried), :class:`DudoConnection`
for one WebSocket kept open (reconnects with backoff, says hello again, applies only newer
views, turns requests into awaitables settled by their ids). Messages are the gateway's
JSON as dicts, typed: :mod:`dudo_client.messages` has a ``TypedDict`` for each, generated
from the protocol's JSON Schemas. README.md has a quick start and a whole bot.
:func:`verify` checks a finished game's dice from its log alone.
"""

from ._connection import PROTOCOL_VERSION, DudoConnection
from ._http import DudoApi, DudoError, request_key
from ._verify import log_of_view, verify
from .messages import (
    Action,
    Die,
    Emote,
    ErrorCode,
    Event,
    GameView,
    LobbyMessage,
    Preset,
    ServerMessage,
    ViewMessage,
    WelcomeMessage,
)

FACES: tuple[Die, ...] = (1, 2, 3, 4, 5, 6)
"""The faces in order, typed: ``zip(FACES, game["legal"]["bid"], strict=True)`` pairs
each with its lowest legal quantity (a face from ``range(1, 7)`` is an ``int``, which a
bid's ``face`` refuses under a type checker)."""

__version__ = "1.9.0"

__all__ = [
    "FACES",
    "PROTOCOL_VERSION",
    "Action",
    "Die",
    "DudoApi",
    "DudoConnection",
    "DudoError",
    "Emote",
    "ErrorCode",
    "Event",
    "GameView",
    "LobbyMessage",
    "Preset",
    "ServerMessage",
    "ViewMessage",
    "WelcomeMessage",
    "__version__",
    "log_of_view",
    "request_key",
    "verify",
]
