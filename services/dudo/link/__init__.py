"""A gateway's side of the streams: its inboxes out, its outbox in (:mod:`.link`), the
reading task web and chat gateways share (:mod:`.side`), and seat tokens (:mod:`.tokens`)."""

from .link import AsyncGatewayLink, GatewayLink, default_gateway_id
from .side import OutboxHandlers, StreamSide
from .tokens import Grant, TokenError, Tokens

__all__ = [
    "AsyncGatewayLink",
    "GatewayLink",
    "Grant",
    "OutboxHandlers",
    "StreamSide",
    "TokenError",
    "Tokens",
    "default_gateway_id",
]
