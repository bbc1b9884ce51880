"""The chat gateway: Dudo in chat rooms, a thin gateway like the web one (``dudo irc``,
``dudo matrix``); the networks it plays on are :data:`~dudo.chat.transports.TRANSPORTS`."""

from .gateway import ChatGateway, run
from .settings import ChatSettings
from .transports import TRANSPORTS, Hooks, Transport

__all__ = [
    "TRANSPORTS", "ChatGateway", "ChatSettings", "Hooks", "Transport", "run",
]
