"""What a gateway can be told: its Redis, its address, its limits (docs/operations.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..link import default_gateway_id
from ..wire import keys


@dataclass
class GatewaySettings:
    redis_url: str = "redis://127.0.0.1:6379/0"
    host: str = "127.0.0.1"
    port: int = 8000
    partitions: int = keys.DEFAULT_PARTITIONS
    director_partitions: int = keys.DEFAULT_DIRECTOR_PARTITIONS
    gateway_id: str = field(default_factory=default_gateway_id)
    # Shared by the instances of one app: its spectator and claim tokens, and table ids
    # made from request keys (seat and entrant tokens are the deployment's, made by the
    # workers). None: DUDO_GATEWAY_SECRET, or a random one (those die with the process).
    secret: bytes | None = None
    rate_per_s: float = 20.0  # client messages per second per connection
    burst: int = 40
    reply_timeout: float = 5.0  # HTTP calls waiting for a worker's answer
    heartbeat: float = 2.0
    send_queue: int = 256  # messages queued for one connection before it is closed as too slow
    send_timeout: float = 10.0  # seconds one message may take to go out before that
    # permessage-deflate when a client asks for it: a view shrinks ~3x, but zlib per
    # message per connection costs more CPU than the rest of the gateway's path
    # (docs/benchmarks.md); off, as in the peers' servers.
    ws_compress: bool = False
    # What serves /ws: "picows" (frames parsed in C, handled in the turn they are read)
    # or "aiohttp" (a task per connection); a client asking for compression from a
    # gateway that compresses is aiohttp's either way (docs/benchmarks.md).
    ws_layer: str = "picows"
    # The event loop: "uvloop" (libuv, in C) or "asyncio" (the standard library's).
    event_loop: str = "uvloop"
    # Views as `frames` (client JSON the workers encode once) instead of `view` messages
    # this gateway decodes and encodes again for every seat (docs/benchmarks.md).
    frames: bool = True
    # What one client may cost (docs/operations.md, "Limits"): per client address,
    # per token, per connection. Limits are per gateway instance.
    creates_per_min: float = 30.0  # tables one address may create per minute (and at once)
    joins_per_min: float = 120.0  # joins and watch tokens per address per minute
    hello_timeout: float = 10.0  # a connection must say hello (or watch the lobby) by then
    conns_per_token: int = 4  # sockets one token may hold open at once
    conns_per_address: int = 256  # sockets one address may hold open at once
    # TCP connections (HTTP and WebSocket) one address may hold at once, and the seconds
    # a connection has to send a whole request (dudo.gateway.guard: slowloris)
    http_conns_per_address: int = 512
    request_timeout: float = 10.0
    costly_every: float = 1.0  # one resync or lobby listing per connection per this long
    lobby_max: int = 500  # tables (the emptiest first), and tournaments, listed at most
    trust_proxy: bool = False  # the client address is X-Forwarded-For's last (one proxy hop)
