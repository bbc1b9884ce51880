"""An admitted gateway's Redis user, as the deployment's processes handle it: the
nodes it must exist on, the ACL file it is saved to, and its revocation (by an
operator, ``dudo admin gateway revoke``; by the warden, past its memory budget:
:mod:`dudo.worker.warden`). Making one is the operator's alone (:mod:`dudo.ops.admin`).
"""

from __future__ import annotations

from typing import Any

from ..wire import keys
from .connection import is_cluster


def user_of(gateway: str) -> str:
    """The Redis user of gateway ``gateway``."""
    if not keys.ID_PATTERN.fullmatch(gateway):
        raise ValueError(f"a gateway name is 1-64 of A-Z a-z 0-9 _ - (got {gateway!r})")
    return keys.USER_PREFIX + gateway


def partition_counts(client: Any) -> tuple[int | None, int | None]:
    """The deployment's table and director partition counts, as the first worker and
    director stored them (None: not yet; the gateway may then append to any inbox of
    the shape: add it again once they run, to hold it to those that exist)."""
    found = client.hmget(keys.CONFIG, [keys.TABLES.config_field, keys.TOURNAMENTS.config_field])
    return tuple(int(v) if v is not None else None for v in found)  # type: ignore[return-value]


def revoke_gateway(client: Any, gateway: str) -> bool:
    """Delete the gateway's user (Redis closes its connections at once) and every key
    that is its own (its inboxes with what still waits there, its outbox, refused
    stream, memory and presence: what it wrote costs Redis nothing more). False if it
    had no user."""
    removed = False
    for node in nodes(client):
        removed = bool(node.execute_command("ACL", "DELUSER", user_of(gateway))) or removed
    client.hdel(keys.GATEWAY_KEYS, gateway)  # its inboxes are read no more
    client.hdel(keys.GATEWAY_APPS, gateway)
    tables, directors = partition_counts(client)
    owned = keys.gateway_owned(
        gateway, tables or keys.DEFAULT_PARTITIONS, directors or keys.DEFAULT_DIRECTOR_PARTITIONS
    )
    for key in owned:  # one by one: on a Cluster they live in many slots
        client.delete(key)
    save_acl(client)
    return removed


def acl_file(client: Any) -> bool:
    """Does this Redis keep its users in an ACL file (so they outlive a restart)?"""
    try:
        found = client.config_get("aclfile")
    except Exception:  # CONFIG refused to us: we cannot tell
        return False
    value = found.get("aclfile") or found.get(b"aclfile")
    return bool(value)


def save_acl(client: Any) -> None:
    for node in nodes(client):
        if acl_file(node):
            node.execute_command("ACL", "SAVE")


def nodes(client: Any) -> list[Any]:
    """A client per node the users must exist on: this one, or on a Redis Cluster every
    master and replica (a replica promoted by a failover must know the gateways)."""
    if not is_cluster(client):
        return [client]
    return [client.get_redis_connection(node) for node in client.get_nodes()]
