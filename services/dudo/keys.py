"""Every Redis key name, in one place (DESIGN §3). Nothing else formats a key.

Keys that one Lua script touches together carry the same hash tag, so the
scripts stay legal on Redis Cluster: ``{pN}`` for everything of partition N,
``{g:<gateway>}`` for a gateway's outbox.

A table's partition is a pure function of its id (:func:`partition_of`), so
gateways, workers and third-party tools all compute the same one:
``CRC-32(utf-8 id) mod P`` (the zlib/PNG CRC-32 that every language ships).
"""

from __future__ import annotations

import re
import zlib

PREFIX = "dudo"
DEFAULT_PARTITIONS = 16
MAX_PARTITIONS = 1024
CONSUMER_GROUP = "workers"

# Ids that end up inside key names: short, printable, no braces or colons. Check
# with ``fullmatch``: ``$`` alone also matches before a final newline.
ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# Shared registry and configuration (no hash tag: never used inside a script).
CONFIG = f"{PREFIX}:config"  # hash: partitions, protocol
WORKERS = f"{PREFIX}:workers"  # zset: worker id -> last heartbeat (ms)
GATEWAYS = f"{PREFIX}:gateways"  # zset: gateway id -> last heartbeat (ms)


def partition_of(table_id: str, partitions: int) -> int:
    """The partition that owns ``table_id``."""
    return zlib.crc32(table_id.encode("utf-8")) % partitions


def _p(partition: int) -> str:
    return f"{PREFIX}:{{p{partition}}}"


def inbox(partition: int) -> str:
    """Stream of actions and control messages for the tables of a partition."""
    return f"{_p(partition)}:in"


def partition_of_inbox(key: str) -> int:
    """The partition number in an inbox key (the inverse of :func:`inbox`)."""
    return int(key[len(PREFIX) + 3 : key.index("}")])


def table(partition: int, table_id: str) -> str:
    """Hash ``{v: version, s: msgpack table record}``."""
    return f"{_p(partition)}:t:{table_id}"


def table_of(table_id: str, partitions: int) -> str:
    return table(partition_of(table_id, partitions), table_id)


def lease(partition: int) -> str:
    """String ``<generation>|<owner>|<expires ms>``: who holds the partition."""
    return f"{_p(partition)}:lease"


def timers(partition: int) -> str:
    """Zset ``<table>|<version>`` -> turn deadline (ms)."""
    return f"{_p(partition)}:timers"


def deliveries(partition: int) -> str:
    """Stream of committed but not yet fanned-out messages (the delivery record)."""
    return f"{_p(partition)}:deliver"


def lobby(partition: int) -> str:
    """Hash: table id -> msgpack summary of an open table of this partition.

    Written by the commit script only (fenced, atomic with the table), so a
    paused former owner can never list a table that has since started. The
    lobby is the union over every partition (:func:`lobbies`)."""
    return f"{_p(partition)}:lobby"


def lobbies(partitions: int) -> list[str]:
    """Every partition's lobby hash: together, the list of open tables."""
    return [lobby(p) for p in range(partitions)]


def dead_letters(partition: int) -> str:
    """Stream of inbox entries that could not be processed, with the reason."""
    return f"{_p(partition)}:dead"


def outbox(gateway: str) -> str:
    """Stream of views and errors for the seats one gateway instance hosts."""
    return f"{PREFIX}:{{g:{gateway}}}:out"


def partition_keys(partition: int) -> list[str]:
    """Every fixed key of a partition (tables excluded), for cleanup and inspection."""
    return [
        inbox(partition),
        lease(partition),
        timers(partition),
        deliveries(partition),
        dead_letters(partition),
        lobby(partition),
    ]
