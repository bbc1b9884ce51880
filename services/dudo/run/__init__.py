"""The programs ``dudo`` starts, composed from the layers below: the one place that
picks which entity a partition loop hosts (docs/architecture.md, "Layers"). Its face is
what the command line starts: the programs' modules (each has its own ``run`` or
``main``), the table worker and the bot service."""

from . import director, play, remote_bot, serve
from .bots import BotService
from .worker import table_worker

__all__ = ["BotService", "director", "play", "remote_bot", "serve", "table_worker"]
