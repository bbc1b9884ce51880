"""The official Python client of the Dudo protocol (asyncio): ``from dudo.client import ...``.

The same surface as the JavaScript library (``protocol/js``): :class:`DudoApi` for the
HTTP API (creates and joins carry request keys and are retried), :class:`DudoConnection`
for one WebSocket kept open (reconnects with backoff, says hello again, applies only
newer views, turns requests into awaitables settled by their ids). README.md beside
this file has a quick start and a whole bot in under 60 lines.
"""

from ._connection import DudoConnection
from ._http import DudoApi, DudoError, request_key

__all__ = ["DudoApi", "DudoConnection", "DudoError", "request_key"]
