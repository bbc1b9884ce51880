"""The gateway: HTTP lobby API, WebSocket play, and the browser client, over the streams."""

from .app import Gateway, GatewaySettings, run

__all__ = [
    "Gateway", "GatewaySettings", "run",
]
