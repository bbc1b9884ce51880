"""Every Redis key name, in one place (docs/operations.md, "Redis"). Nothing else formats a key.

Keys that one Lua script touches together carry the same hash tag, so the
scripts stay legal on Redis Cluster: ``{pN}`` for everything of table
partition N, ``{dN}`` for everything of tournament (director) partition N,
``{g:<gateway>}`` for a gateway's outbox.

A table's partition is a pure function of its id (:func:`partition_of`), so
gateways, workers and third-party tools all compute the same one:
``CRC-32(utf-8 id) mod P`` (the zlib/PNG CRC-32 that every language ships).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

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
# hash: gateway id -> "frames" for a gateway that takes its views as client JSON
# pieces (the `frames` message) instead of `view` messages
GATEWAY_VIEWS = f"{PREFIX}:gateway_views"
# hash: gateway id -> its key for signing inbox entries (hex), and "*" -> the
# deployment's own (dudo.wire.signing); readable by the deployment only, never a gateway
GATEWAY_KEYS = f"{PREFIX}:gateway_keys"
# hash: "tokens" and "players" -> the deployment's own keys (hex) that sign seat and
# entrant tokens and key player ids (dudo.auth.authority); made once by the first worker
# or director, readable by the deployment only, never a gateway
SECRETS = f"{PREFIX}:secrets"
# hash: app -> the JSON Web Key Set (public keys) its backend signs identities with
# (`dudo admin app add`); and gateway -> the app it belongs to (`gateway add --app`)
APPS = f"{PREFIX}:apps"
# hash: gateway -> why the deployment revoked it (JSON: at, bytes, reason), past its memory
# budget (dudo.worker.warden); `dudo admin gateway add` again clears it
REVOKED = f"{PREFIX}:revoked"
GATEWAY_APPS = f"{PREFIX}:gateway_apps"
DIRECTORS = f"{PREFIX}:directors"  # zset: director id -> last heartbeat (ms)
DEFAULT_DIRECTOR_PARTITIONS = 4
RATERS = f"{PREFIX}:raters"  # zset: processes keeping the ratings -> last heartbeat (ms)
# hash: bot service id -> its endgame solves' progress (JSON: done, of, at; wire.solves),
# read by gateways for GET /api/bots
BOT_SOLVES = f"{PREFIX}:bot_solves"
# hash: gateway limit -> value, set for every gateway by `dudo admin limits` (each
# gateway's own flags stand for the limits not set here)
LIMITS = f"{PREFIX}:limits"
# An admitted gateway's Redis user: this prefix and its name (dudo.ops.admin makes them)
USER_PREFIX = "gateway-"
# The limits `dudo admin limits set` may change for every gateway of a deployment at
# once, while they run (stored in LIMITS): each with its type and range.
ADJUSTABLE_LIMITS: dict[str, tuple[type, float, float]] = {
    "rate_per_s": (float, 0.1, 10_000),
    "burst": (int, 1, 100_000),
    "creates_per_min": (float, 0.0, 1e9),
    "joins_per_min": (float, 0.0, 1e9),
    "conns_per_token": (int, 1, 1_000),
    "conns_per_address": (int, 1, 1_000_000),
    "costly_every": (float, 0.0, 3600),
    "lobby_max": (int, 1, 100_000),
    "send_queue": (int, 1, 100_000),
}


def as_text(value: bytes | str | int) -> str:
    """A key, field or value as Redis returned it (bytes, or str where the client
    decodes) as text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def partition_of(table_id: str, partitions: int) -> int:
    """The partition that owns ``table_id`` (or a tournament id, among the director's)."""
    return zlib.crc32(table_id.encode("utf-8")) % partitions


@dataclass(frozen=True)
class Space:
    """A family of partitions and every key of one partition.

    Tables live in ``{pN}`` partitions, processed by workers; tournaments in
    ``{dN}`` partitions, processed by directors. Both are the same machinery
    (leases with fencing, a fenced commit script, timers, dead letters), so one
    class names the keys of either, and the worker loop is given the space it
    serves.
    """

    tag: str  # "p" or "d": the hash tag is {p3} or {d3}
    group: str  # the inbox streams' consumer group
    registry: str  # zset of the live processes serving this space -> last heartbeat (ms)
    config_field: str  # where the partition count is stored in CONFIG
    role: str  # what the processes serving it are called: worker, director
    # Do admitted gateways write to it (each to its own inbox per partition)? Not the
    # ratings': only the deployment's tables and tournaments send results there.
    gateways_write: bool = True

    def _p(self, partition: int) -> str:
        return f"{PREFIX}:{{{self.tag}{partition}}}"

    @property
    def draining(self) -> str:
        """Set of the processes an operator drained (``dudo admin drain``): they hold
        no partition of this space until undrained."""
        return f"{self.registry}:draining"

    def inbox(self, partition: int, gateway: str | None = None) -> str:
        """Stream of messages for the entities (tables, tournaments) of a partition.

        Without ``gateway``: the deployment's own inbox (its workers' and directors'
        sends, turn clocks, its own gateways and bot services), which no admitted
        gateway may write. With it: that admitted gateway's own inbox on the partition,
        the one stream of the partition it may append to (docs/security.md, "One inbox
        per gateway"): what it does there (any id, any length, any trim) reaches its own
        entries only. Both under the partition's hash tag: one slot on a Cluster."""
        if gateway is None:
            return f"{self._p(partition)}:in"
        return f"{self._p(partition)}:in:{gateway}"

    def partition_of_inbox(self, key: str) -> int:
        """The partition number in an inbox key (the inverse of :meth:`inbox`)."""
        return int(key[len(PREFIX) + 2 + len(self.tag) : key.index("}")])

    def writer_of_inbox(self, key: str) -> str | None:
        """The gateway whose own inbox ``key`` is, or None for the deployment's."""
        rest = key[key.index("}") + 1 :]
        return rest[len(":in:") :] if rest.startswith(":in:") else None

    def record(self, partition: int, entity: str) -> str:
        """Hash ``{v: version, s: msgpack record}`` of one table or tournament."""
        return f"{self._p(partition)}:t:{entity}"

    def records_pattern(self) -> str:
        """A SCAN pattern matching every record of every partition of this space."""
        return f"{PREFIX}:{{{self.tag}*}}:t:*"

    def lease(self, partition: int) -> str:
        """String ``<generation>|<owner>|<expires ms>``: who holds the partition."""
        return f"{self._p(partition)}:lease"

    def timers(self, partition: int) -> str:
        """Zset ``<entity>|<version>`` -> when its timer fires (ms)."""
        return f"{self._p(partition)}:timers"

    def deliveries(self, partition: int) -> str:
        """Stream of committed but not yet fanned-out messages (the delivery record)."""
        return f"{self._p(partition)}:deliver"

    def lobby(self, partition: int) -> str:
        """Hash: entity id -> msgpack summary, for listing (open tables, tournaments).

        Written by the commit script only (fenced, atomic with the entity), so a
        paused former owner can never list a table that has since started. The
        listing is the union over every partition (:meth:`lobbies`)."""
        return f"{self._p(partition)}:lobby"

    def lobbies(self, partitions: int) -> list[str]:
        return [self.lobby(p) for p in range(partitions)]

    def dead_letters(self, partition: int) -> str:
        """Stream of inbox entries that could not be processed, with the reason."""
        return f"{self._p(partition)}:dead"

    def partition_keys(self, partition: int) -> list[str]:
        """Every fixed key of a partition (entities excluded), for cleanup and inspection."""
        return [
            self.inbox(partition),
            self.lease(partition),
            self.timers(partition),
            self.deliveries(partition),
            self.dead_letters(partition),
            self.lobby(partition),
        ]


TABLES = Space("p", CONSUMER_GROUP, WORKERS, "partitions", "worker")
TOURNAMENTS = Space("d", "directors", DIRECTORS, "director_partitions", "director")
# Ratings: one partition, one entity (every player's rating), one holder at a time.
RATINGS = Space("r", "raters", RATERS, "rating_partitions", "rater", gateways_write=False)
RATINGS_ID = "ratings"


def profile_field(handle: str) -> str:
    """The field of an identity user's public profile in the ratings' listing hash
    (``RATINGS.lobby(0)``, beside the board in field ``RATINGS_ID``): by handle."""
    return f"p:{handle}"

# The table space's keys, by the names every service has always used.
inbox = TABLES.inbox
partition_of_inbox = TABLES.partition_of_inbox
table = TABLES.record
lease = TABLES.lease
timers = TABLES.timers
deliveries = TABLES.deliveries
lobby = TABLES.lobby
lobbies = TABLES.lobbies
dead_letters = TABLES.dead_letters
partition_keys = TABLES.partition_keys


def table_of(table_id: str, partitions: int) -> str:
    return table(partition_of(table_id, partitions), table_id)


def tournament_of(tournament_id: str, partitions: int) -> str:
    return TOURNAMENTS.record(partition_of(tournament_id, partitions), tournament_id)


def outbox(gateway: str) -> str:
    """Stream of views and errors for the seats one gateway instance hosts."""
    return f"{PREFIX}:{{g:{gateway}}}:out"


def refused(gateway: str) -> str:
    """Stream: the gateway's entries that the workers refused without an answer (not
    signed by it, unreadable, for the wrong partition), and why: fields ``entry`` (the
    inbox entry id), ``id`` and ``type`` (as far as they could be read), ``code``,
    ``reason`` and ``at`` (ms). Capped (about 1000), gone a day after its last
    entry. Its own: only its workers write it, only it (and the admin) may read it."""
    return f"{PREFIX}:{{g:{gateway}}}:refused"


def presence(gateway: str) -> str:
    """String: an admitted gateway's heartbeat, set with a time to live by the gateway
    itself (``SET ... PX``; value ``frames`` or ``view``: how it takes its views). A
    gateway's Redis user may write this key of its own and no registry: it registers
    itself and nobody else (workers read the presence of the admitted gateways)."""
    return f"{PREFIX}:{{g:{gateway}}}:alive"


PRESENCE_TTL_MS = 30_000  # a presence not renewed for this long: the gateway is gone


def gateway_memory(gateway: str) -> str:
    """Hash: what a gateway remembers across its restarts (the chat gateway: each
    channel's table and who holds which seat, and how far it read its outbox). Its own:
    no other gateway may read it."""
    return f"{PREFIX}:{{g:{gateway}}}:memory"


def gateway_owned(gateway: str, partitions: int, director_partitions: int) -> list[str]:
    """Every key that is an admitted gateway's own: its inbox on each partition of both
    spaces, its outbox, refused stream, memory and presence. What it may cost Redis is
    the memory of these (its budget: dudo.worker.warden); revoking it deletes them."""
    return [
        *(TABLES.inbox(n, gateway) for n in range(partitions)),
        *(TOURNAMENTS.inbox(n, gateway) for n in range(director_partitions)),
        outbox(gateway),
        refused(gateway),
        gateway_memory(gateway),
        presence(gateway),
    ]


@dataclass(frozen=True)
class GatewayKeys:
    """The keys one gateway may touch, as ACL key patterns (``dudo admin gateway``):
    what it writes, what it reads, and its own keys; nothing else (never a table's
    record with its dice, a lease, another gateway's outbox or the dead letters, nor
    anything that holds a player id: a tournament's record, the ratings record)."""

    inboxes: tuple[str, ...]  # append only: its own inbox on each partition of both spaces
    own: tuple[str, ...]  # read, trim and remake: its outbox
    memory: tuple[str, ...]  # read and write: its own memory (a hash)
    public: tuple[str, ...]  # read only: listings (tables, tournaments, the ratings board), config
    presence: tuple[str, ...]  # its own heartbeat and view format (a string with a TTL)
    liveness: tuple[str, ...]  # read only: who serves the tables


def number_globs(count: int) -> list[str]:
    """Glob patterns (Redis's: ``[a-b]`` classes) that match exactly the decimal numbers
    0..count-1, as few as digits allow: 16 is ``[0-9]``, ``1[0-5]``."""
    found: list[str] = []
    top = count - 1
    for width in range(1, len(str(max(top, 0))) + 1):
        low = 0 if width == 1 else 10 ** (width - 1)
        high = min(10**width - 1, top)
        if low <= high:
            found += _span(str(low), str(high))
    return found


def _span(low: str, high: str) -> list[str]:
    """Globs for the numbers low..high, both of the same number of digits."""
    if low == high:
        return [low]
    if len(low) == 1:
        return [f"[{low}-{high}]"]
    if low[0] == high[0]:
        return [low[0] + rest for rest in _span(low[1:], high[1:])]
    n = len(low) - 1
    out: list[str] = []
    first, last = int(low[0]), int(high[0])
    if low[1:] != "0" * n:  # the part of low's leading digit
        out += [low[0] + rest for rest in _span(low[1:], "9" * n)]
        first += 1
    tail: list[str] = []
    if high[1:] != "9" * n:
        tail = [high[0] + rest for rest in _span("0" * n, high[1:])]
        last -= 1
    if first <= last:
        digit = str(first) if first == last else f"[{first}-{last}]"
        out.append(digit + "[0-9]" * n)
    return out + tail


def gateway_keys(
    gateway: str, partitions: int | None = None, director_partitions: int | None = None
) -> GatewayKeys:
    """With the deployment's partition counts, the inboxes a gateway may append to are
    exactly its own on the partitions that exist (none a worker never reads); without,
    its own on any partition of the shape. Never the deployment's, nor another's."""

    def inboxes(space: Space, count: int | None) -> list[str]:
        if count is None:
            return [f"{PREFIX}:{{{space.tag}*}}:in:{gateway}"]
        return [f"{PREFIX}:{{{space.tag}{n}}}:in:{gateway}" for n in number_globs(count)]

    return GatewayKeys(
        inboxes=(
            *inboxes(TABLES, partitions),
            *inboxes(TOURNAMENTS, director_partitions),
        ),
        own=(outbox(gateway), refused(gateway)),
        memory=(gateway_memory(gateway),),
        public=(
            LIMITS,
            f"{PREFIX}:{{{TABLES.tag}*}}:lobby",
            f"{PREFIX}:{{{TOURNAMENTS.tag}*}}:lobby",
            RATINGS.lobby(0),  # the public leaderboard, by handle
            CONFIG,
            BOT_SOLVES,
        ),
        presence=(presence(gateway),),
        liveness=(WORKERS, DIRECTORS),
    )
