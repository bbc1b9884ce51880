"""The gateway: HTTP lobby API, WebSocket play, and the browser client, over the streams."""

from .app import Gateway, GatewaySettings, run
from .guard import ConnectionGuard, serve

__all__ = [
    "ConnectionGuard",
    "Gateway",
    "GatewaySettings",
    "fastws",
    "run",
    "serve",
]
