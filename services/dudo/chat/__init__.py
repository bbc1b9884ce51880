"""The chat gateway: Dudo in IRC channels, a thin gateway like the web one (``dudo irc``)."""

from .gateway import ChatGateway, ChatSettings, run

__all__ = [
    "ChatGateway", "ChatSettings", "run",
]
