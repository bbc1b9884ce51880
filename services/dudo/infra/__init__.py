"""What every process shares: Redis clients and their outages (:mod:`.resp`,
:mod:`.connection`), the service frame with health and shutdown (:mod:`.service`), logs,
the collector's settings (:mod:`.runtime`), the signing keys' reader (:mod:`.keyring`),
token buckets, and a local ``redis-server`` (:mod:`.redis_server`)."""

from .connection import Batch, Client, ConfigMismatch, connect, connect_async
from .log import configure
from .redis_server import RedisServer
from .service import Health, metrics_registry, retry_until_ready, run_until_stopped

__all__ = [
    "Batch", "Client", "ConfigMismatch", "Health", "RedisServer", "configure", "connect",
    "connect_async", "metrics_registry", "retry_until_ready", "run_until_stopped",
]
