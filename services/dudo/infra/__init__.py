"""What every process shares: Redis clients and their outages (:mod:`.resp`,
:mod:`.connection`), the service frame with health and shutdown (:mod:`.service`), logs,
the collector's settings (:mod:`.runtime`), the signing keys' reader (:mod:`.keyring`),
token buckets, and a local ``redis-server`` (:mod:`.redis_server`)."""

from .buckets import Bucket, PerKey
from .connection import (
    Batch,
    Client,
    ConfigMismatch,
    connect,
    connect_async,
    create_groups,
    ensure_partitions,
    ensure_secrets,
    fast,
    hash_reply,
    is_cluster,
    xread,
)
from .gateways import acl_file, nodes, partition_counts, revoke_gateway, save_acl, user_of
from .keyring import internal_key, start_signing
from .log import configure
from .redis_server import (
    RedisServer,
    bindable,
    ephemeral_low,
    find_binary,
    free_port,
    redis_version,
)
from .resp import AsyncResp, Resp, options_of
from .runtime import COUNT_EVERY_S, quiet_collector, settle_heap
from .service import (
    REDIS_DOWN,
    Backoff,
    Health,
    metrics_registry,
    retry_until_ready,
    run_until_stopped,
)

__all__ = [
    "COUNT_EVERY_S",
    "REDIS_DOWN",
    "AsyncResp",
    "Backoff",
    "Batch",
    "Bucket",
    "Client",
    "ConfigMismatch",
    "Health",
    "PerKey",
    "RedisServer",
    "Resp",
    "acl_file",
    "bindable",
    "configure",
    "connect",
    "connect_async",
    "create_groups",
    "ensure_partitions",
    "ensure_secrets",
    "ephemeral_low",
    "fast",
    "find_binary",
    "free_port",
    "hash_reply",
    "internal_key",
    "is_cluster",
    "metrics_registry",
    "nodes",
    "options_of",
    "partition_counts",
    "quiet_collector",
    "redis_version",
    "retry_until_ready",
    "revoke_gateway",
    "run_until_stopped",
    "save_acl",
    "settle_heap",
    "start_signing",
    "user_of",
    "xread",
]
