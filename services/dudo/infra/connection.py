"""Connecting to Redis (standalone or Cluster) and agreeing on the partition count.

The partition count is fixed for a deployment: a table's partition is a pure
function of its id and the count, so a worker or gateway with a different
count would read and write the wrong inboxes. The first process to start
stores the count in ``dudo:config``; every later one compares and refuses to
start on a mismatch, saying why.
"""

from __future__ import annotations

import weakref
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from .. import wire
from ..wire import keys
from .resp import AsyncResp, Resp, options_of

Client = Any  # redis.Redis | redis.cluster.RedisCluster (or fakeredis): same command API


class ConfigMismatch(RuntimeError):
    """This process's settings disagree with what the deployment stored in Redis."""


def no_retries() -> Retry:
    """The client library never resends a command by itself.

    redis-py resends a command whose connection failed (10 times by default).
    For a script or an ``XADD`` whose first reply was lost, that runs it twice:
    a commit would be refused as a version conflict and its delivery record
    stranded, a read would leave entries pending on us unseen, an inbox entry
    would be written twice. Every service handles a failed call itself
    (:mod:`dudo.infra.service`), knowing what the call was.
    """
    return Retry(NoBackoff(), 0)


def connect(url: str, **options: Any) -> Client:
    """A client for ``url``; a Redis Cluster node is detected and gets a cluster client."""
    options.setdefault("socket_timeout", 10)
    options.setdefault("socket_connect_timeout", 5)
    options.setdefault("retry", no_retries())
    if cluster_enabled(url):
        return RedisCluster.from_url(url, **options)
    return redis.Redis.from_url(url, **options)


def cluster_enabled(url: str) -> bool:
    """Is the server at ``url`` a Redis Cluster node? CLUSTER INFO answers on a node and
    is an error elsewhere ("cluster support disabled"; fakeredis does not know it). It
    is what a gateway's own Redis user may ask (INFO, which tells more, it may not)."""
    probe = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=10)
    try:
        probe.execute_command("CLUSTER", "INFO")
        return True
    except redis.ResponseError:
        return False
    finally:
        probe.close()


def is_cluster(client: Client) -> bool:
    """Is ``client`` a Redis Cluster client? Answered once per client class: redis-py 8
    makes RedisCluster a typing Protocol, whose isinstance check is slow, and the
    worker asks on every batch (docs/benchmarks.md, "Measurements behind the code")."""
    kind = type(client)
    known = _CLUSTER_CLASSES.get(kind)
    if known is None:
        known = _CLUSTER_CLASSES[kind] = isinstance(client, RedisCluster)
    return known


_CLUSTER_CLASSES: dict[type, bool] = {}


def ensure_partitions(
    client: Client, partitions: int, space: keys.Space = keys.TABLES, *, set_up: bool = True
) -> int | None:
    """Store the partition count (of tables, or of tournaments) if none is stored;
    refuse a different one. ``set_up=False`` (a gateway: under its own Redis user it
    may read the configuration, not write it): only compare with what is stored, and
    None if nothing is (no worker has started)."""
    if not 1 <= partitions <= keys.MAX_PARTITIONS:
        raise ConfigMismatch(f"partitions must be 1..{keys.MAX_PARTITIONS}, got {partitions}")
    field = space.config_field
    if set_up:
        client.hsetnx(keys.CONFIG, field, partitions)
        client.hsetnx(keys.CONFIG, "protocol", wire.PROTOCOL_VERSION)
    found = client.hget(keys.CONFIG, field)
    if found is None:  # not set up yet (and not ours to set): the workers will
        return None
    stored = int(found)
    if stored != partitions:
        option = field.replace("_", "-")
        raise ConfigMismatch(
            f"this Redis is set up for {stored} {field.replace('_', ' ')} but this process "
            f"was started with {partitions}; every process of a deployment must use the same "
            f"count (start with --{option} {stored}, or use a fresh Redis)"
        )
    protocol = int(client.hget(keys.CONFIG, "protocol") or wire.PROTOCOL_VERSION)
    if protocol != wire.PROTOCOL_VERSION:
        raise ConfigMismatch(
            f"this Redis holds protocol v{protocol}; this process speaks v{wire.PROTOCOL_VERSION}"
        )
    return stored


def ensure_secrets(client: Client) -> dict[Any, Any]:
    """The deployment's own keys (dudo.auth.authority), made by the first process that needs
    them (HSETNX: every worker and director then holds the same); returns them."""
    from ..auth import new_secrets

    for name, value in new_secrets().items():
        client.hsetnx(keys.SECRETS, name, value)
    return client.hgetall(keys.SECRETS)


def create_groups(client: Client, partitions: int | list[int], *, space: keys.Space) -> None:
    """Make sure every partition inbox (or those listed) exists with the space's
    consumer group (``workers`` for tables; no default: a wrong one would leave the
    entries of another space pending for ever).

    The group starts at 0, so entries written before any worker ran are kept.
    """
    for p in range(partitions) if isinstance(partitions, int) else partitions:
        try:
            client.xgroup_create(space.inbox(p), space.group, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise


_FAST: weakref.WeakKeyDictionary[Any, Resp | AsyncResp | None] = weakref.WeakKeyDictionary()


def fast(client: Any) -> Any:
    """The lean hot-path client (:mod:`dudo.infra.resp`) standing in for ``client``, made once
    per client: a :class:`~dudo.infra.resp.Resp` for a synchronous redis-py client of a
    standalone Redis, an :class:`~dudo.infra.resp.AsyncResp` for an asyncio one; None for a
    Cluster or fakeredis client (they keep redis-py's own path)."""
    try:
        return _FAST[client]
    except KeyError:
        pass
    except TypeError:  # not weakly referenceable: not a redis-py client
        return None
    options = options_of(client)
    made: Resp | AsyncResp | None = None
    if options is not None:
        timeout = client.connection_pool.connection_kwargs.get("socket_timeout") or 10.0
        is_async = type(client).__module__.startswith("redis.asyncio")
        made = (AsyncResp if is_async else Resp)(options, timeout=timeout)
    _FAST[client] = made
    return made


def _xread_args(streams: dict[str, str], count: int | None, block: int | None) -> list[Any]:
    pieces: list[Any] = ["XREAD"]
    if block is not None:
        pieces += [b"BLOCK", block]
    if count is not None:
        pieces += [b"COUNT", count]
    return [*pieces, b"STREAMS", *streams, *streams.values()]


def xread_reply(raw: Any) -> list[Any]:
    """A raw XREAD reply in redis-py's shape: [stream, [(id, {field: value})]] per stream."""
    return [
        [
            stream,
            [
                (entry_id, dict(zip(f[::2], f[1::2], strict=True)) if f else {})
                for entry_id, f in got
            ],
        ]
        for stream, got in raw or []
    ]


def xread(
    client: Any, streams: dict[str, str], *, count: int | None = None, block: int | None = None
) -> Any:
    """XREAD through the lean client where there is one, else straight to redis-py's
    ``execute_command`` (a coroutine for an asyncio client). Replies in redis-py's shape.

    redis-py's own ``xread`` walks every reply to record streaming-lag metrics
    (redis-py 7+), whether or not anyone collects them: a visible share of a busy
    gateway's CPU (docs/benchmarks.md, "Measurements behind the code")."""
    args = _xread_args(streams, count, block)
    lean = fast(client)
    wait = (block or 0) / 1000
    if isinstance(lean, Resp):
        return xread_reply(lean.call(*args, wait=wait))
    if isinstance(lean, AsyncResp):
        return _async_xread(lean, args, wait)
    return client.execute_command(*args, keys=list(streams))


async def _async_xread(lean: AsyncResp, args: list[Any], wait: float) -> list[Any]:
    return xread_reply(await lean.call(*args, wait=wait))


class Batch:
    """Commands sent in as few round trips as possible, on Redis or on Redis Cluster.

    Each command is spelled once, as Redis takes it (``batch.add(key, "XADD", key, ...)``),
    and each reply comes back as Redis sends it in RESP2, whichever way it went: through
    the lean client (:mod:`dudo.infra.resp`) on a standalone Redis, else through a
    redis-py pipeline whose replies are not parsed into redis-py's shapes (and RESP3's
    maps, sets and doubles turned back into RESP2's arrays and strings:
    :func:`resp2`). A hash comes back as a flat array (:func:`hash_reply` reads it).
    ``add`` returns the index of the command's reply in :meth:`execute`'s list, so a
    caller reads a reply by name, not by counting.

    redis-py's cluster pipeline refuses Lua scripts, and the worker pipelines
    scripts for many partitions at once. So on a cluster the commands are
    grouped by the node that owns each command's key and sent as one plain
    pipeline per node. While slots move, a node answers for a key it no longer
    serves: ``MOVED`` (the slot has moved: refresh the slot map, send again)
    or ``ASK`` (the slot is migrating and this key is already on the target:
    send it there, preceded by ``ASKING``, which admits one command into an
    importing slot). Results come back in the order added, with errors as
    values; connection errors raise.
    """

    ROUNDS = 5  # redirections followed per command before its error is the result

    def __init__(self, client: Client) -> None:
        self.client = client
        self.keys: list[str] = []
        self.commands: list[tuple[Any, ...]] = []

    def __len__(self) -> int:
        return len(self.commands)

    def add(self, key: str, *command: Any) -> int:
        """Queue ``command`` (its first key: ``key``, which places it on a Cluster);
        returns the index of its reply."""
        self.keys.append(key)
        self.commands.append(command)
        return len(self.commands) - 1

    def execute(self) -> list[Any]:
        if not self.commands:
            return []
        if not is_cluster(self.client):
            lean = fast(self.client)
            if isinstance(lean, Resp):
                return lean.execute(self.commands, raise_on_error=False)
            pipe = _plain_pipeline(self.client)
            for command in self.commands:
                pipe.execute_command(*command)
            return [resp2(reply) for reply in pipe.execute(raise_on_error=False)]
        results: list[Any] = [None] * len(self.commands)
        todo = list(range(len(self.commands)))
        asking: dict[int, tuple[str, int]] = {}  # item -> the node an ASK sent it to
        for _ in range(self.ROUNDS):
            groups: dict[str, list[int]] = {}
            nodes: dict[str, Any] = {}
            for i in todo:
                if i in asking:
                    host, port = asking[i]
                    node = self.client.get_node(host=host, port=port) or _node(
                        self.client, host, port
                    )
                else:
                    node = self.client.get_node_from_key(self.keys[i])
                groups.setdefault(node.name, []).append(i)
                nodes[node.name] = node
            moved, asked = [], {}
            for name, indexes in groups.items():
                pipe = _plain_pipeline(self.client.get_redis_connection(nodes[name]))
                for i in indexes:
                    if i in asking:
                        pipe.execute_command("ASKING")
                    pipe.execute_command(*self.commands[i])
                replies = iter(pipe.execute(raise_on_error=False))
                for i in indexes:
                    if i in asking:
                        next(replies)  # ASKING's OK
                    result = results[i] = resp2(next(replies))
                    if isinstance(result, redis.exceptions.MovedError):
                        moved.append(i)
                    elif isinstance(result, redis.exceptions.AskError):
                        asked[i] = (result.host, result.port)
            if not moved and not asked:
                break
            if moved:
                self.client.nodes_manager.initialize()
            asking = asked
            todo = moved + list(asked)
        return results


def _plain_pipeline(client: Any) -> Any:
    """A redis-py pipeline that hands replies over as the connection read them (no
    response callbacks: no dicts made of hashes, no tuples of TIME, no floats of scores)."""
    pipe = client.pipeline(transaction=False)
    pipe.response_callbacks = {}
    return pipe


def resp2(reply: Any) -> Any:
    """A reply read by redis-py, in the shape RESP2 gives it: a RESP3 map as a flat array
    of keys and values, a set as an array, a double as its shortest decimal string, a
    boolean as 0 or 1 (a connection may speak RESP3: redis-py 8's default). Errors pass
    unchanged. Not undone: RESP3's pairs for WITHSCORES (RESP2 flattens them), and a
    double RESP2 would spell with 17 digits; no batch asks for either."""
    if isinstance(reply, dict):
        return [resp2(x) for pair in reply.items() for x in pair]
    if isinstance(reply, list | tuple | set | frozenset):
        return [resp2(x) for x in reply]
    if isinstance(reply, bool):
        return int(reply)
    if isinstance(reply, float):
        return repr(reply).removesuffix(".0").encode()
    return reply


def hash_reply(reply: Any) -> dict[bytes, Any]:
    """A hash as Redis sends it (HGETALL's, XINFO's: keys and values in turn) as a dict."""
    return dict(zip(reply[::2], reply[1::2], strict=True)) if reply else {}


def _node(client: Any, host: str, port: int) -> Any:
    """A node the client has not met yet (an ASK may name one): refresh, look again."""
    client.nodes_manager.initialize()
    node = client.get_node(host=host, port=port)
    if node is None:
        raise redis.exceptions.ClusterError(f"no cluster node {host}:{port}")
    return node


def connect_async(url: str, max_connections: int = 64, **options: Any) -> Any:
    """A ``redis.asyncio`` client for ``url`` (a cluster client for a cluster node)."""
    import redis.asyncio as aioredis
    from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
    from redis.asyncio.retry import Retry as AsyncRetry

    options.setdefault("socket_connect_timeout", 5)
    if cluster_enabled(url):
        return AsyncRedisCluster.from_url(url, **options)
    options.setdefault("retry", AsyncRetry(NoBackoff(), 0))  # see no_retries()
    # Many requests at once wait for a free connection instead of failing.
    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=max_connections, timeout=10, **options
    )
    return aioredis.Redis(connection_pool=pool)
