"""Who at this gateway gets what: the routing of views, errors and lobby news to connections.

No Redis and no HTTP here: the gateway hands every outbox message to an
:class:`Audience`, which decides which connections see it.

The rule that keeps dice private: a seat's private part goes to the connections
of the **player** the worker names as its holder (``holders`` in the ``view``
message: the player's public handle), never to "whoever is on seat N". Seat
numbers change hands (a player leaves before the start and another takes the
seat; the host starts early and
seats are renumbered), so routing by number once sent one player's dice to
another player's stale socket. A connection is registered under the (table,
player handle) the worker confirms in ``joined`` for that connection's own hello,
never on a token's word (a gateway cannot check one), and dropped when the
player leaves, when the seat is attached to another gateway, or when it closes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import msgspec

from .. import wire
from ..wire import SnapshotTexts
from .clients import Connection, Metrics

VERSIONS_KEPT = 50_000  # tables whose last relayed version is remembered
STANDINGS_KEPT = 1_000  # tournaments whose last standings are kept (~10-100 kB each)


class Audience:
    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.seated: dict[tuple[str, str], set[Connection]] = defaultdict(set)
        self.spectators: dict[str, set[Connection]] = defaultdict(set)
        self.lobby: set[Connection] = set()
        # Tournament entrants' connections follow their player from table to table.
        self.entrants: dict[tuple[str, str], set[Connection]] = defaultdict(set)
        self.followers: dict[str, set[Connection]] = defaultdict(set)  # tournament -> conns
        self.standings_versions: dict[str, int] = {}  # tournament -> last relayed
        # tournament -> the last standings relayed, for a connection that starts to follow
        # it after they came (the answer to its own subscribe races its follow)
        self.last_standings: dict[str, dict[str, Any]] = {}
        self.versions: dict[str, int] = {}  # table -> last view version relayed
        self.lobby_versions: dict[str, int] = {}  # table -> last lobby version relayed

    # -- membership -------------------------------------------------------------------

    def seat(self, conn: Connection, table: str, player: str, seat: int) -> None:
        """The worker confirmed that ``player`` holds ``seat``: ``conn`` plays it."""
        if conn.seat is None:
            self.metrics.connections.labels("seat").inc()
        conn.seat, conn.table = seat, table
        self.seated[(table, player)].add(conn)

    def follow(self, conn: Connection, tournament: str, player: str) -> bool:
        """``conn`` follows ``player`` through ``tournament``; True if it is the first
        connection here following that tournament (subscribe to its standings then)."""
        first = not self.followers.get(tournament)
        self.followers[tournament].add(conn)
        self.entrants[(tournament, player)].add(conn)
        return first

    def moved(self, msg: dict[str, Any]) -> None:
        """A tournament seated ``player`` at another table: its connections play there."""
        player, table = msg["player"], msg["table"]
        note = wire.message(
            "moved", tournament=msg["tournament"], table=table, seat=msg["seat"],
            **{"from": msg["from"]},
        )  # fmt: skip
        for conn in list(self.entrants.get((msg["tournament"], player), ())):
            self.unseat(conn)
            self.seat(conn, table, player, msg["seat"])
            conn.send(note)

    def relay_tournament(self, msg: dict[str, Any]) -> None:
        """Standings to the connections following that tournament (newest only)."""
        tournament = msg["tournament"]
        if msg["version"] <= self.standings_versions.get(tournament, -1):
            return
        _remember(self.standings_versions, tournament, msg["version"])
        note = wire.message(
            "tournament", tournament=tournament, version=msg["version"],
            standings=msg["standings"],
        )  # fmt: skip
        self.last_standings.pop(tournament, None)  # the order of last use, as _remember's
        self.last_standings[tournament] = note
        if len(self.last_standings) > STANDINGS_KEPT:
            for old in list(self.last_standings)[: STANDINGS_KEPT // 2]:
                del self.last_standings[old]
        for conn in self.followers.get(tournament, ()):
            conn.send(note)

    def send_standings(self, conn: Connection, tournament: str) -> None:
        """The last standings of ``tournament`` this gateway relayed, to a connection
        that has just started to follow it (none if nothing came yet)."""
        note = self.last_standings.get(tournament)
        if note is not None:
            conn.send(note)

    def watch(self, conn: Connection, table: str) -> bool:
        """``conn`` watches ``table``; True if it is the first spectator here."""
        first = not self.spectators.get(table)
        self.spectators[table].add(conn)
        self.metrics.connections.labels("watch").inc()
        return first

    def watch_lobby(self, conn: Connection) -> None:
        if conn not in self.lobby:
            self.lobby.add(conn)
            self.metrics.connections.labels("lobby").inc()

    def unseat(self, conn: Connection) -> None:
        """``conn`` no longer plays a seat (it keeps its token: hello seats it again)."""
        grant = conn.grant
        if grant is None or conn.seat is None or grant.player is None:
            conn.seat = None
            return
        _leave(self.seated, (conn.table or grant.table, grant.player), conn)
        conn.seat = None
        self.metrics.connections.labels("seat").dec()

    def unwatch(self, conn: Connection) -> str | None:
        """Stop ``conn`` watching; returns the table if nobody here watches it any more."""
        grant = conn.grant
        if grant is None or grant.kind != "watch":
            return None
        group = self.spectators.get(grant.table)
        if not group or conn not in group:
            return None
        self.metrics.connections.labels("watch").dec()
        return grant.table if _leave(self.spectators, grant.table, conn) else None

    def drop(self, conn: Connection) -> str | None:
        """Forget ``conn`` entirely (it closed or says hello anew); like :meth:`unwatch`."""
        self.unseat(conn)
        if conn in self.lobby:
            self.lobby.discard(conn)
            self.metrics.connections.labels("lobby").dec()
        grant = conn.grant
        if grant is not None and grant.kind == "entrant" and grant.player is not None:
            _leave(self.entrants, (grant.table, grant.player), conn)
            _leave(self.followers, grant.table, conn)
        return self.unwatch(conn)

    def renumbered(self, table: str, player: str, seat: int) -> None:
        """``player`` holds ``seat`` now (the host started early and the seats were
        renumbered): each of its connections here that thought otherwise gets a new
        ``welcome``, before the first view with the new number."""
        for conn in self.seated.get((table, player), ()):
            if conn.seat != seat:
                conn.seat = seat
                conn.welcome(table=table, seat=seat, player=player)

    def player_left(self, msg: dict[str, Any], asked: tuple[Connection, str | None] | None) -> None:
        """The table confirmed that a player gave its seat up: each of the player's
        connections stops playing it and is told (``left``; the one that asked quotes
        the id it asked with)."""
        table, player = msg["table"], msg["player"]
        asker, client_id = asked if asked is not None else (None, None)
        for conn in list(self.seated.get((table, player), ())):
            self.unseat(conn)
            conn.send(
                wire.message(
                    "left", table=table, seat=msg["seat"], id=client_id if conn is asker else None
                )
            )

    def detach_player(self, table: str, player: str, notice: tuple[str, str] | None = None) -> None:
        """Every connection of ``player`` at ``table`` stops getting that seat; with a
        ``notice`` (code, text) each is told why, as an error without an id."""
        for conn in list(self.seated.get((table, player), ())):
            self.unseat(conn)
            # An entrant leaving a table for another is not news: `moved` follows.
            entrant = conn.grant is not None and conn.grant.kind == "entrant"
            if notice is not None and not entrant:
                code, text = notice
                conn.send(wire.message("error", id=None, code=code, message=text))
                self.metrics.errors.labels(code).inc()

    # -- relaying -----------------------------------------------------------------------

    def relay_view(
        self, msg: dict[str, Any], also_public: set[Connection] | None = None
    ) -> bool:
        """Send each holder's connections its seat's snapshot and every spectator (and
        ``also_public``) the public one, from a ``view`` message or from the ``frames`` a
        worker renders for this gateway. False if it was older than one already relayed
        (dropped)."""
        table = msg["table"]
        if msg["version"] < self.versions.get(table, 0):
            return False  # an older snapshot (at-least-once delivery): already passed
        # Equal versions pass: a resync answers with the current version.
        _remember(self.versions, table, msg["version"])
        spectator: Callable[[], dict[str, Any]]
        if msg["type"] == "frames":
            texts = SnapshotTexts.of_frames(msg)  # pieces encoded by the worker: spliced
            spectator = lambda: _decode_json(texts.spectator())  # noqa: E731
            held = zip(msg["seats"], msg["privates"], msg.get("holders") or (), strict=False)
            for seat, private, holder in held:
                conns = self.seated.get((table, holder))
                if conns:
                    text = texts.seat_text(seat, private.encode())
                    _send_each(conns, seat, lambda text=text: _decode_json(text), lambda t=text: t)
        else:
            texts = SnapshotTexts.of_view(msg)  # the public part encoded once, for everyone
            spectator = lambda: wire.spectator_view(msg)  # noqa: E731
            for private, holder in zip(msg["seats"], msg.get("holders") or (), strict=False):
                conns = self.seated.get((table, holder))
                if conns:
                    _send_each(
                        conns,
                        private["seat"],
                        lambda private=private: wire.seat_snapshot(msg, private),
                        lambda private=private: texts.seat(private),
                    )
        watchers = self.spectators.get(table)
        if also_public:  # an entrant whose own action ended the round that moved it
            watchers = (watchers or set()) | also_public  # on sees its reveal, as all here do
        if watchers:
            _send_each(watchers, None, spectator, texts.spectator)
        if msg["status"] == "over":
            self.versions.pop(table, None)
        return True

    def relay_error(self, msg: dict[str, Any]) -> None:
        """An error nobody waits for by message id: to the connections of its player."""
        table, player = msg.get("table"), msg.get("player")
        if not table or not player:
            return
        note = wire.message("error", id=None, code=msg["code"], message=msg["message"])
        for conn in self.seated.get((table, player), ()):
            conn.send(note)
            self.metrics.errors.labels(msg["code"]).inc()

    def relay_lobby(self, msg: dict[str, Any]) -> None:
        """Lobby news to every lobby watcher, dropping news older than what was relayed."""
        table, version = msg["table"], msg.get("version")
        if version is not None:
            if version < self.lobby_versions.get(table, 0):
                return  # a late delivery from a previous owner: already passed
            _remember(self.lobby_versions, table, version)
        note = wire.message("lobby", table=table, entry=msg["entry"])
        for conn in self.lobby:
            if conn.lobby_held is not None:  # its full list is on its way: news after it
                conn.lobby_held.append(note)
            else:
                conn.send(note)


def _leave(groups: dict[Any, set[Connection]], key: Any, conn: Connection) -> bool:
    """Take ``conn`` out of ``groups[key]``, and the group out when it empties; True if
    it did (nobody here is left in that group)."""
    group = groups.get(key)
    if group is None:
        return False
    group.discard(conn)
    if group:
        return False
    del groups[key]
    return True


def _send_each(
    conns: set[Connection],
    seat: int | None,
    snapshot: Callable[[], dict[str, Any]],
    text: Callable[[], bytes],
) -> None:
    """Send one snapshot to ``conns``, made at most once in each encoding a connection
    speaks: the dict for msgpack connections, the spliced JSON for the others. A
    seat's connections learn its number (it follows a renumbering at the start)."""
    as_dict: dict[str, Any] | None = None
    as_json: bytes | None = None
    for conn in conns:
        if seat is not None:
            conn.seat = seat
        if conn.binary:
            if as_dict is None:
                as_dict = snapshot()
            conn.send(as_dict)
        else:
            if as_json is None:
                as_json = text()
            conn.send(None, as_json)


_decode_json = msgspec.json.Decoder().decode


def _remember(versions: dict[str, int], table: str, version: int) -> None:
    """Note a table's version, forgetting the oldest half past ``VERSIONS_KEPT`` tables
    (a forgotten table only loses the dropping of stale duplicates, never a view)."""
    versions.pop(table, None)  # re-insert: the dict's order is the order of last use
    versions[table] = version
    if len(versions) > VERSIONS_KEPT:
        for old in list(versions)[: VERSIONS_KEPT // 2]:
            del versions[old]
