"""What an operator looks at and does to a running deployment (``dudo admin``), as plain
data: the CLI prints it, tests read it.

- :func:`partitions`: each partition's owner (its lease), inbox length, lag and
  pending entries, dead letters and listed tables;
- :func:`inspect_table`: one table as its players see it from outside (seats, the
  public game); its dice only when asked (``reveal``), and then said so in the logs;
- :func:`dead_letters`, :func:`dead_letter`, :func:`replay`: the entries that could not
  be applied, why, and putting one back in its inbox (once its cause is fixed);
- :func:`drain`: a worker gives its partitions back and takes none until undrained
  (for maintenance on a machine without an orchestrator's SIGTERM);
- :func:`limits`, :func:`set_limits`: the gateways' limits, for every gateway at once,
  while they run.

Nothing here writes a table: replaying puts an entry back where a gateway would
have, and the worker applies it (or refuses it) like any other.
"""

from __future__ import annotations

import time
from typing import Any

import structlog

from .. import wire
from ..engine import public_view
from ..table import Table
from ..wire import SIGNATURE_FIELD, keys

log = structlog.get_logger("dudo.ops.admin")


def partition_count(client: Any, space: keys.Space = keys.TABLES) -> int:
    found = client.hget(keys.CONFIG, space.config_field)
    if found is None:
        raise SystemExit("no partition count stored: is this a dudo deployment's Redis?")
    return int(found)


def admitted(client: Any) -> list[str]:
    """The admitted gateways (those with a key): each has its own inbox per partition."""
    names = (keys.as_text(k) for k in client.hkeys(keys.GATEWAY_KEYS))
    return sorted(n for n in names if keys.ID_PATTERN.fullmatch(n))


def partitions(client: Any, space: keys.Space = keys.TABLES) -> list[dict[str, Any]]:
    """One row per partition: owner, generation and lease time left, inbox length, lag
    and pending entries (of the workers' group, over the deployment's inbox and every
    admitted gateway's own), dead letters, listed entities."""
    count = partition_count(client, space)
    writers: list[str | None] = [None, *(admitted(client) if space.gateways_write else [])]
    now = int(client.time()[0]) * 1000
    pipe = client.pipeline(transaction=False)
    for n in range(count):
        pipe.get(space.lease(n))
        pipe.xlen(space.dead_letters(n))
        pipe.hlen(space.lobby(n))
        for writer in writers:
            pipe.xlen(space.inbox(n, writer))
            pipe.xinfo_groups(space.inbox(n, writer))
    replies = pipe.execute(raise_on_error=False)
    width = 3 + 2 * len(writers)
    rows = []
    for n in range(count):
        lease, dead, listed, *streams = replies[width * n : width * (n + 1)]
        generation, owner, expires = [*keys.as_text(lease or b"0||0").split("|"), "", ""][:3]
        length = lag = pending = 0
        for found, groups in zip(streams[::2], streams[1::2], strict=True):
            length += found if isinstance(found, int) else 0
            listing = groups if isinstance(groups, list) else []
            group = next((g for g in listing if keys.as_text(g["name"]) == space.group), {})
            lag += group.get("lag") or 0
            pending += group.get("pending") or 0
        live = bool(owner) and int(expires or 0) > now
        rows.append(
            {
                "partition": n,
                "owner": owner if live else None,
                "generation": int(generation or 0),
                "lease_ms_left": max(0, int(expires or 0) - now) if live else 0,
                "inbox": length,
                "lag": lag,
                "pending": pending,
                "dead_letters": dead if isinstance(dead, int) else None,
                "listed": listed if isinstance(listed, int) else None,
            }
        )
    return rows


def inspect_table(client: Any, table_id: str, *, reveal: bool = False) -> dict[str, Any]:
    """A table as an operator needs it: status, seats (name, public handle, gateway,
    bot, away), clocks and the public game; every hand only with ``reveal``."""
    if not keys.ID_PATTERN.fullmatch(table_id):
        raise ValueError(f"{table_id!r} is not a table id")
    count = partition_count(client)
    record = client.hgetall(keys.table_of(table_id, count))
    blob = record.pop(b"s", None)
    if blob is None:
        raise LookupError(f"no table {table_id} (finished tables expire an hour after the end)")
    table = Table.from_bytes(blob, record)
    game = table.game
    found: dict[str, Any] = {
        "table": table_id,
        "partition": keys.partition_of(table_id, count),
        "version": table.version,
        "status": table.status,
        "rules": table.rules.preset,
        "host": wire.public_id(table.host) if table.host else None,
        "tournament": table.tournament,
        "deadline": table.deadline,
        "watchers": list(table.watchers),
        "seats": [
            {
                "seat": i,
                "name": seat.name,
                "player": wire.public_id(seat.player) if seat.player else None,
                "gateway": seat.gateway,
                "bot": seat.bot,
                "away": seat.away,
            }
            for i, seat in enumerate(table.seats)
        ],
        "game": public_view(game) if game is not None else None,
    }
    if reveal and game is not None:
        found["hands"] = [list(hand) for hand in game.hands]
        log.warning("table_revealed", table=table_id, version=table.version)
    return found


def dead_letters(
    client: Any,
    space: keys.Space = keys.TABLES,
    partition: int | None = None,
    count: int = 50,
) -> list[dict[str, Any]]:
    """The newest dead letters (of one partition, or all), newest first."""
    numbers = [partition] if partition is not None else range(partition_count(client, space))
    found = []
    for n in numbers:
        for entry_id, fields in client.xrevrange(space.dead_letters(n), count=count):
            found.append(_letter(n, entry_id, fields))
    found.sort(key=lambda d: _stream_order(d["id"]), reverse=True)
    return found[:count]


def dead_letter(
    client: Any, partition: int, entry_id: str, space: keys.Space = keys.TABLES
) -> dict[str, Any]:
    """One dead letter, with its message decoded as far as it decodes."""
    got = client.xrange(space.dead_letters(partition), min=entry_id, max=entry_id)
    if not got:
        raise LookupError(f"no dead letter {entry_id} in partition {partition}")
    letter = _letter(partition, *got[0])
    raw = got[0][1].get(b"m", b"")
    try:
        letter["message"] = wire.unpack(raw)
    except Exception as exc:  # what made it a dead letter, often
        letter["message"] = None
        letter["undecodable"] = f"{exc.__class__.__name__}: {exc}"
    letter["bytes"] = len(raw)
    letter["size"] = int(got[0][1].get(b"bytes") or len(raw))  # before it was cut, if it was
    return letter


def replay(client: Any, partition: int, entry_id: str, space: keys.Space = keys.TABLES) -> str:
    """Append a dead letter's message again to the inbox its writer wrote it in (a
    gateway's own, or the deployment's), as its writer wrote it (with its own signature:
    a replay is never the deployment's, so an entry refused as unauthorized is refused
    again), and delete the dead letter; returns the new entry's id. The worker applies
    it or refuses it as it would any entry: a message already applied is refused as a
    duplicate, so a replay never applies anything twice. A letter kept before
    signatures were (no ``s``) is replayed unsigned: where entries are checked, only the
    deployment's own would pass, and those are signed. A letter whose message was cut
    (a gateway's over 4 KiB) cannot be replayed."""
    letter = dead_letter(client, partition, entry_id, space)
    fields = client.xrange(space.dead_letters(partition), min=entry_id, max=entry_id)[0][1]
    raw = fields[b"m"]
    if not raw:
        raise ValueError("this dead letter holds no message to replay")
    if letter["bytes"] < letter["size"]:
        raise ValueError(
            f"this dead letter keeps {letter['bytes']} of the message's {letter['size']} bytes"
        )
    entry = {b"m": raw}
    if fields.get(b"s"):
        entry[SIGNATURE_FIELD] = fields[b"s"]
    new_id = client.xadd(space.inbox(partition, letter["from"]), entry)
    client.xdel(space.dead_letters(partition), entry_id)
    log.info("dead_letter_replayed", partition=partition, entry=entry_id, reason=letter["reason"])
    return keys.as_text(new_id)


def _letter(partition: int, entry_id: Any, fields: dict[bytes, bytes]) -> dict[str, Any]:
    raw = fields.get(b"m", b"")
    kind = table = None
    try:
        msg = wire.unpack(raw)
        if isinstance(msg, dict):
            kind, table = msg.get("type"), msg.get("table") or msg.get("tournament")
    except Exception:
        pass
    ms = int(keys.as_text(entry_id).split("-")[0])
    return {
        "partition": partition,
        "id": keys.as_text(entry_id),
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000)),
        "reason": keys.as_text(fields.get(b"reason", b"")),
        "entry": keys.as_text(fields.get(b"entry", b"")),
        # Whose inbox it came from: a gateway's own, or None for the deployment's.
        "from": keys.as_text(fields.get(b"from", b"")) or None,
        "type": kind,
        "table": table,
    }


def _stream_order(entry_id: str) -> tuple[int, int]:
    ms, seq = entry_id.split("-")
    return int(ms), int(seq)


def drain(client: Any, worker: str, *, on: bool = True, space: keys.Space = keys.TABLES) -> None:
    """Drain a worker (or director): it hands its partitions back within a heartbeat and
    takes none while drained (its /readyz says so); the others share them out."""
    if on:
        client.sadd(space.draining, worker)
    else:
        client.srem(space.draining, worker)
    log.info("drained" if on else "undrained", **{space.role: worker})


def draining(client: Any, space: keys.Space = keys.TABLES) -> list[str]:
    return sorted(keys.as_text(w) for w in client.smembers(space.draining))


def limits(client: Any) -> dict[str, float]:
    """The gateways' limits set for the whole deployment (each gateway's own flags
    stand for the rest)."""
    return {keys.as_text(k): float(v) for k, v in client.hgetall(keys.LIMITS).items()}


def set_limits(client: Any, changes: dict[str, str | None]) -> dict[str, float]:
    """Set (or, with None, unset) gateway limits for every gateway: each applies them at
    its next heartbeat, to its connections too. ValueError names what is refused."""
    checked: dict[str, float] = {}
    for name, value in changes.items():
        if name not in keys.ADJUSTABLE_LIMITS:
            raise ValueError(f"unknown limit {name!r}; known: {', '.join(keys.ADJUSTABLE_LIMITS)}")
        if value is None:
            continue
        kind, low, high = keys.ADJUSTABLE_LIMITS[name]
        try:
            number = kind(value)
        except ValueError:
            raise ValueError(f"{name} must be a {kind.__name__}, not {value!r}") from None
        if not low <= number <= high:
            raise ValueError(f"{name} must be within {low}..{high}")
        checked[name] = number
    pipe = client.pipeline(transaction=True)
    for name, value in changes.items():
        if value is None:
            pipe.hdel(keys.LIMITS, name)
        else:
            pipe.hset(keys.LIMITS, name, checked[name])
    pipe.execute()
    log.info("limits_set", **{k: v for k, v in changes.items()})
    return limits(client)
