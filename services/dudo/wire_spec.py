"""The stream protocol's messages, declared once: every field, its type and limits.

:mod:`dudo.wire` validates what arrives against these declarations and writes the
JSON Schemas in ``protocol/schemas/`` from them. Directions: ``in`` (gateway →
worker, a table partition's inbox), ``out`` (worker → gateway, an outbox),
``director`` (gateways and tables → director, a tournament partition's inbox),
``ratings`` (tables and tournaments → the ratings keeper's inbox).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ID_RE = r"^[A-Za-z0-9_-]{1,64}$"
MESSAGE_ID_RE = r"^[A-Za-z0-9_:.-]{1,64}$"
BOT_LEVELS = ("easy", "normal", "hard")
TABLE_STATUSES = ("open", "playing", "over")


# -- declarations ---------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One field of a message: its JSON type and constraints."""

    kind: str  # "string", "integer", "boolean", "object", "array", "ref"
    required: bool = True
    nullable: bool = False
    minimum: int | None = None
    maximum: int | None = None
    pattern: str | None = None
    enum: tuple[str, ...] | None = None
    items: Field | None = None
    fields: dict[str, Field] | None = None  # for an object with known fields
    ref: str | None = None  # a hand-written schema in protocol/schemas
    display: bool = False  # a name shown to people: in the form clean_name leaves unchanged
    doc: str = ""


@dataclass(frozen=True)
class Message:
    type: str
    direction: str  # "in": gateway -> worker (inbox); "out": worker -> gateway (outbox)
    doc: str
    fields: dict[str, Field] = field(default_factory=dict)


def _id(doc: str, **kw: Any) -> Field:
    return Field("string", pattern=ID_RE, doc=doc, **kw)


def _seat(doc: str = "seat number, 0-based", **kw: Any) -> Field:
    return Field("integer", minimum=0, maximum=5, doc=doc, **kw)


MSG_ID = Field(
    "string", pattern=MESSAGE_ID_RE, doc="the sender's id for this message, unique per table"
)
TABLE = _id("table id; its partition is CRC-32(id) mod P")
GATEWAY = _id("id of the gateway instance that sent it; replies go to its outbox")
PLAYER = _id(
    "a player id: the deployment's own, never sent to or accepted from a gateway "
    "(docs/security.md)"
)
HANDLE = _id(
    "the player's public handle (wire.public_id), as `joined` named it: how a gateway "
    "names and routes its players; it grants nothing"
)
TOKEN = Field(
    "string",
    maximum=1024,
    pattern=r"^[A-Za-z0-9_.-]+$",
    doc="a seat or entrant token the deployment minted (`joined.token`, `registered.token`), "
    "as the player's client handed it to the gateway",
)
IDENTITY = Field(
    "string",
    required=False,
    maximum=2048,
    doc="an identity JWT the gateway's own app signed for one of its users "
    "(docs/security.md): the player is that user, the same everywhere",
)
REQUEST = Field(
    "string",
    required=False,
    pattern=r"^[A-Za-z0-9_-]{8,64}$",
    doc="a request key the client made up: the same key (through any gateway of the same "
    "app) names the same player here, so a retried request is the same request",
)
SEAT_SPEC = Field(
    "object",
    fields={
        "kind": Field("string", enum=("open", "bot"), doc="open for people, or a bot seat"),
        "level": Field("string", enum=BOT_LEVELS, required=False, doc="bot strength"),
    },
)
VIEW_VERSION = Field("integer", minimum=0, doc="table version, rises on every change")
VIEW_STATUS = Field("string", enum=TABLE_STATUSES)
PLAYER_INFO = Field(
    "object",
    nullable=True,
    fields={
        "name": Field("string", maximum=32, display=True, doc="display name"),
        "bot": Field("string", enum=BOT_LEVELS, nullable=True, doc="bot level, or null"),
        "away": Field("boolean", doc="left the table; the house bot plays for the seat"),
    },
)

TOURNAMENT = _id("the tournament; its director partition is CRC-32(id) mod D")
DICE = Field("integer", minimum=1, maximum=10, doc="dice the player brings (they keep their count)")
ENTRANT = Field(
    "object",
    fields={
        "player": PLAYER,
        "name": Field("string", maximum=32, display=True, doc="display name"),
        "dice": DICE,
        "gateway": _id("the gateway the player's views go to, if known", nullable=True),
        "bot": Field("string", enum=BOT_LEVELS, nullable=True, doc="bot level, or null"),
    },
)

# What a tournament table reports to its director (`report`, and each of `reports`).
REPORTS_MAX = 64  # reports in one `reports` entry (a worker writes more as several)
REPORT_FIELDS: dict[str, Field] = {
    "table": TABLE,
    "version": Field("integer", minimum=0, doc="the table's version"),
    "round": Field("integer", minimum=0, doc="rounds played at the table"),
    "seated": Field(
        "array",
        maximum=6,
        items=Field("array", minimum=2, maximum=2),
        doc="[player, dice] for every player with dice at the table now",
    ),
    "done": Field(
        "integer", minimum=0, doc="the last order carried out (its seq; 0: none)"
    ),
    "left": Field(
        "array", maximum=6, items=ENTRANT, doc="players who left, with their dice"
    ),
    "joined": Field("array", maximum=6, items=PLAYER, doc="players who sat down"),
    "out": Field(
        "array",
        maximum=6,
        items=PLAYER,
        doc="players who lost their last die, in the order it happened",
    ),
}

# An open table as the lobby shows it (stream `lobby` news, the client's `lobby`, GET
# /api/tables): one declaration for all three.
LOBBY_ENTRY: dict[str, Field] = {
    "status": Field(
        "string",
        required=False,
        enum=("open", "playing"),
        doc="open: seats may be taken; playing: the game runs (watch it). Absent: open",
    ),
    "preset": Field("string", maximum=32),
    "seats": Field("integer", minimum=2, maximum=6),
    "taken": Field("integer", minimum=0, maximum=6),
    "bots": Field("integer", minimum=0, maximum=6),
    "names": Field("array", maximum=6, items=Field("string", nullable=True, maximum=32)),
    "rules": Field("ref", ref="rules.schema.json"),
    "host": _id("the host's public handle", nullable=True),
    "wants_bots": Field(
        "array",
        maximum=6,
        items=Field("array", minimum=2, maximum=2),
        doc="free seats set aside for bots: [seat, level] pairs",
    ),
}

MESSAGES: dict[str, Message] = {
    m.type: m
    for m in [
        # ---------------------------------------------------------------- inbox
        Message(
            "create",
            "in",
            "Create a table with its rules and seat plan. The table starts when every seat "
            "is taken, or when the host sends start.",
            {
                "id": MSG_ID,
                "table": TABLE,
                "gateway": GATEWAY,
                "rules": Field("ref", ref="rules.schema.json", doc="preset plus overrides"),
                "seats": Field("array", minimum=2, maximum=6, items=SEAT_SPEC),
                "host": _id(
                    "player allowed to start the table early (the deployment's own creates; "
                    "a gateway's creator is named by `identity` or `request`, else the "
                    "first to join is the host)",
                    required=False,
                ),
                "identity": IDENTITY,
                "request": REQUEST,
                "tournament": Field(
                    "object",
                    required=False,
                    doc="a tournament's table (sent by its director): it starts at once with "
                    "these players in its first seats, the other seats vacant; players come "
                    "and go between rounds (seat_in, order) and it reports every round's end",
                    fields={
                        "id": TOURNAMENT,
                        "director": Field(
                            "integer",
                            minimum=0,
                            maximum=1023,
                            doc="the tournament's director partition: reports go to its inbox",
                        ),
                        "players": Field("array", minimum=2, maximum=6, items=ENTRANT),
                        "advance": Field(
                            "integer",
                            nullable=True,
                            minimum=1,
                            maximum=5,
                            doc="heats: the table stops when this many players have dice, and "
                            "they leave to the next heat; null: play on",
                        ),
                    },
                ),
            },
        ),
        Message(
            "join",
            "in",
            "Take a seat (a given one, or any open seat) for the player a credential names: "
            "`token` (a seat token of this table, or an entrant token of its tournament: the "
            "seat it holds), else `identity`, else `request`, else a new player. A player "
            "who already holds a seat at the table gets it back, attached to this gateway. "
            "The answer `joined` carries the seat token.",
            {
                "id": MSG_ID,
                "table": TABLE,
                "gateway": GATEWAY,
                "token": Field(
                    "string",
                    required=False,
                    maximum=1024,
                    pattern=r"^[A-Za-z0-9_.-]+$",
                    doc=TOKEN.doc,
                ),
                "identity": IDENTITY,
                "request": REQUEST,
                "player": _id(PLAYER.doc, required=False),
                "name": Field(
                    "string",
                    required=False,
                    maximum=32,
                    display=True,
                    doc="display name: 1..32 characters, trimmed, no control or invisible "
                    "characters (gateways clean names with wire.clean_name); needed to take "
                    "a new seat",
                ),
                "seat": _seat(required=False, nullable=True),
                "bot": Field("string", enum=BOT_LEVELS, required=False, doc="a bot client"),
            },
        ),
        Message(
            "leave",
            "in",
            "Leave a seat: before the start it is freed; during the game the house bot "
            "plays for it.",
            {"id": MSG_ID, "table": TABLE, "gateway": GATEWAY, "player": HANDLE, "seat": _seat()},
        ),
        Message(
            "attach",
            "in",
            "Deliver a seat's views to this gateway from now on. The deployment's own "
            "processes only: a gateway sends `join` with the seat token.",
            {"id": MSG_ID, "table": TABLE, "gateway": GATEWAY, "player": PLAYER, "seat": _seat()},
        ),
        Message(
            "act",
            "in",
            "A seat's action: bid, dudo, calza or direction.",
            {
                "id": MSG_ID,
                "table": TABLE,
                "gateway": GATEWAY,
                "player": HANDLE,
                "seat": _seat(),
                "action": Field("ref", ref="action.schema.json"),
            },
        ),
        Message(
            "resync",
            "in",
            "Send me the latest view of a seat (with its player) or, with seat null, the "
            "spectator view.",
            {
                "id": MSG_ID,
                "table": TABLE,
                "gateway": GATEWAY,
                "seat": _seat(required=False, nullable=True),
                "player": _id("the seat's player's handle", required=False),
            },
        ),
        Message(
            "watch",
            "in",
            "Start (on) or stop spectator views of a table to this gateway.",
            {"id": MSG_ID, "table": TABLE, "gateway": GATEWAY, "on": Field("boolean")},
        ),
        Message(
            "start",
            "in",
            "The host starts the table with the players seated so far (at least "
            "min_players); open seats are dropped. With `bots_fill` rules (Cacho) the open "
            "seats become bot seats instead, and the game starts once bots have taken them.",
            {"id": MSG_ID, "table": TABLE, "gateway": GATEWAY, "player": HANDLE},
        ),
        Message(
            "timeout",
            "in",
            "A turn clock expired (written by the partition's owner from its timers). "
            "Applies only if the table is still at this version.",
            {"id": MSG_ID, "table": TABLE, "version": Field("integer", minimum=0)},
        ),
        Message(
            "seat_in",
            "in",
            "A tournament's director seats a player at this table with the dice they bring, "
            "at the end of the round in progress (at once if no round is being played). The "
            "player's gateway gets `moved`. Taken once per player: a repeat changes nothing.",
            {
                "id": MSG_ID,
                "table": TABLE,
                "tournament": TOURNAMENT,
                "seq": Field(
                    "integer", minimum=1, doc="the director's move number: a repeat is ignored"
                ),
                "player": PLAYER,
                "name": Field("string", maximum=32, display=True, doc="display name"),
                "dice": DICE,
                "gateway": _id("the gateway the player's views go to, if known", nullable=True),
                "bot": Field("string", enum=BOT_LEVELS, nullable=True, doc="bot level, or null"),
                "from": _id(
                    "the table the player left (null at the start or when not known)",
                    required=False,
                    nullable=True,
                ),
            },
        ),
        Message(
            "order",
            "in",
            "A tournament's director tells this table how many players to send away at the "
            "end of the round in progress (at once if no round is being played): the seats "
            "that would act last in the next round go, and the table keeps at least two "
            "unless count is null (everyone goes: the table breaks). A later order (higher "
            "seq) replaces one not yet carried out; an older one is ignored.",
            {
                "id": MSG_ID,
                "table": TABLE,
                "tournament": TOURNAMENT,
                "seq": Field("integer", minimum=1, doc="the director's order number"),
                "count": Field(
                    "integer", nullable=True, minimum=0, maximum=6, doc="players to send"
                ),
            },
        ),
        # --------------------------------------------------------------- outbox
        Message(
            "view",
            "out",
            "A full snapshot of a table for this gateway: the public part once, and the "
            "private part of each seat this gateway hosts (a seat's view is the public part "
            "merged with its private part; spectators get the public part). Drop any view "
            "whose version is not above the last one you applied for that table.",
            {
                "table": TABLE,
                "version": VIEW_VERSION,
                "status": VIEW_STATUS,
                "players": Field("array", maximum=6, items=PLAYER_INFO),
                "host": _id(
                    "the host's public handle (wire.public_id: never a player id)", nullable=True
                ),
                "deadline": Field(
                    "integer", nullable=True, minimum=0, doc="turn deadline, ms since epoch"
                ),
                "reveal_until": Field(
                    "integer",
                    required=False,
                    minimum=0,
                    doc="a round just ended: its reveal holds the table's clocks and bots "
                    "until then (ms since epoch)",
                ),
                "game": Field(
                    "ref",
                    ref="game-view.schema.json#/$defs/public",
                    nullable=True,
                    doc="the public part of the game; null before the start",
                ),
                "seats": Field(
                    "array",
                    maximum=6,
                    items=Field("ref", ref="game-view.schema.json#/$defs/private"),
                    doc="private parts of the seats this gateway hosts (none for spectators)",
                ),
                "holders": Field(
                    "array",
                    maximum=6,
                    items=HANDLE,
                    doc="the handle of the player holding each seat of `seats`, in the same "
                    "order: a private part goes to that player's connections and nobody "
                    "else's (seat numbers change hands; route by player)",
                ),
                "events": Field(
                    "array",
                    items=Field("ref", ref="event.schema.json"),
                    doc="public events since the last view",
                ),
                "applied": Field(
                    "array",
                    required=False,
                    items=MSG_ID,
                    doc="the ids of this gateway's `act` messages this view is the result of "
                    "(absent when none): tell each sender its action went through",
                ),
            },
        ),
        Message(
            "frames",
            "out",
            "A `view` as the JSON its clients get, for a gateway that registered for it "
            "(`dudo:gateway_views` = `frames`): the same snapshot, encoded once by the worker, "
            'in pieces to splice. A seat\'s frame is `head` + `,"seat":N,"game":` + '
            "`public` + `,` + that seat's piece of `privates` + `}` (or `head` + "
            '`,"seat":N,"game":null}` when `public` is null); a spectator\'s is `head` + '
            '`,"seat":null,"game":` + `public` + `,"seat":null}}`. Same routing and '
            "ordering rules as `view`.",
            {
                "table": TABLE,
                "version": VIEW_VERSION,
                "status": VIEW_STATUS,
                "seats": Field(
                    "array",
                    maximum=6,
                    items=_seat(),
                    doc="the seat number of each piece of `privates`, in the same order",
                ),
                "holders": Field(
                    "array",
                    maximum=6,
                    items=HANDLE,
                    doc="the handle of the player holding each seat of `seats`: its frame "
                    "goes to that player's connections and nobody else's",
                ),
                "head": Field(
                    "string",
                    doc="the client view's JSON without `seat` and `game`, and without its "
                    "closing brace",
                ),
                "public": Field(
                    "string",
                    nullable=True,
                    doc="the public part of the game as JSON without its closing brace; null "
                    "before the start",
                ),
                "privates": Field(
                    "array",
                    maximum=6,
                    items=Field("string", doc="a private part as JSON without its opening brace"),
                    doc="the private part of each seat of `seats`",
                ),
                "applied": Field(
                    "array",
                    required=False,
                    items=MSG_ID,
                    doc="as in `view`: the ids of this gateway's `act` messages it results from",
                ),
            },
        ),
        Message(
            "error",
            "out",
            "A message was refused; nothing changed.",
            {
                "table": _id("the table, when known", nullable=True),
                "tournament": _id("the tournament of a refused tournament message", required=False),
                "seat": _seat(nullable=True),
                "player": _id(
                    "the player's handle, as the refused message named it", nullable=True
                ),
                "id": Field("string", nullable=True, maximum=64, doc="the refused message's id"),
                "code": Field("string", pattern=r"^[a-z_]+$", doc="rule or protocol error code"),
                "message": Field("string", maximum=500, doc="for people"),
            },
        ),
        Message(
            "joined",
            "out",
            "A join succeeded: this player holds this seat. `token` (the answer to a join) "
            "is the seat token: hand it to the player's client, which names the seat with it "
            "from then on, through any gateway of the deployment.",
            {
                "table": TABLE,
                "seat": _seat(),
                "player": HANDLE,
                "id": MSG_ID,
                "token": Field("string", required=False, maximum=1024, doc="the seat token"),
            },
        ),
        Message(
            "left",
            "out",
            "A leave succeeded.",
            {"table": TABLE, "seat": _seat(), "player": HANDLE, "id": MSG_ID},
        ),
        Message(
            "detached",
            "out",
            "This player's seat is no longer played through this gateway (the player attached "
            "it to another gateway): stop relaying anything of this table to that player's "
            "connections here.",
            {"table": TABLE, "seat": _seat(), "player": HANDLE},
        ),
        Message(
            "moved",
            "out",
            "A tournament moved this player to this table (from the table named in `from`, "
            "null at the start): relay this table's views to the player's connections from "
            "now on. Its next view follows.",
            {
                "table": TABLE,
                "seat": _seat(),
                "player": HANDLE,
                "tournament": TOURNAMENT,
                "from": _id("the table the player left", nullable=True),
            },
        ),
        Message(
            "lobby",
            "out",
            "An open table appeared or changed (entry), or is no longer open (entry null). "
            "Drop news whose version is below the last you applied for that table (a late "
            "copy from a worker that lost the table).",
            {
                "table": TABLE,
                "version": Field("integer", minimum=0, doc="the table's version"),
                "entry": Field("object", nullable=True, fields=LOBBY_ENTRY),
            },
        ),
        Message(
            "tournament",
            "out",
            "A tournament's state for the gateways that subscribed to it, after every change: "
            "status, who is left at which table with how many dice, and the places given so "
            "far (all of them once it is over). Drop any version not above the last you "
            "applied.",
            {
                "tournament": TOURNAMENT,
                "version": Field("integer", minimum=0),
                "standings": Field("ref", ref="standings.schema.json"),
                "id": Field(
                    "string",
                    required=False,
                    pattern=MESSAGE_ID_RE,
                    doc="the `standings` request this answers (then every place, not the best "
                    "100)",
                ),
            },
        ),
        Message(
            "tournaments",
            "out",
            "A tournament appeared or changed in the listing (entry), or left it once over "
            "(entry null). Drop news whose version is below the last you applied.",
            {
                "tournament": TOURNAMENT,
                "version": Field("integer", minimum=0),
                "entry": Field(
                    "object",
                    nullable=True,
                    fields={
                        "name": Field("string"),
                        "format": Field("string", enum=("elimination", "heats")),
                        "status": Field("string", enum=("registering", "running", "over")),
                        "seats": Field("integer", minimum=3, maximum=6),
                        "entrants": Field("integer", minimum=0),
                        "left": Field("integer", minimum=0),
                        "max_players": Field("integer", minimum=2),
                        "buy_in": Field("integer", minimum=0),
                        "start_players": Field("integer", nullable=True, minimum=2),
                        "start_at": Field("integer", nullable=True, minimum=0),
                        "rules": Field("ref", ref="rules.schema.json"),
                        "host": _id("the host's public handle", nullable=True),
                    },
                ),
            },
        ),
        Message(
            "registered",
            "out",
            "A register or unregister succeeded (on: true for in, false for out). The answer "
            "to a register carries the entrant token: hand it to the player's client.",
            {
                "tournament": TOURNAMENT,
                "player": HANDLE,
                "id": MSG_ID,
                "on": Field("boolean"),
                "entrants": Field("integer", minimum=0, doc="entrants now"),
                "token": Field("string", required=False, maximum=1024, doc="the entrant token"),
            },
        ),
        Message(
            "entrant",
            "out",
            "Where an entrant sits now: the answer to a `subscribe` with its entrant token "
            "(the entrant's moves go to this gateway from then on). With a table, send that "
            "table a `join` with the same token to take its seat's views.",
            {
                "tournament": TOURNAMENT,
                "player": HANDLE,
                "id": MSG_ID,
                "table": _id(
                    "the table it sits at, or null (between tables, or out)", nullable=True
                ),
                "seat": _seat(nullable=True),
            },
        ),
        # ------------------------------------------------------------- director
        Message(
            "report",
            "director",
            "A tournament table's report to its director, written with the commit of the "
            "step it describes: at the end of every round, and whenever players came or "
            "went. Reports of one table rise in version; the director drops any version it "
            "has already passed. Workers now send them gathered in `reports`; one alone is "
            "still taken.",
            {"id": MSG_ID, "tournament": TOURNAMENT, **REPORT_FIELDS},
        ),
        Message(
            "reports",
            "director",
            "The reports of one worker commit for one tournament, in the order written "
            "(each a `report` without `v`, `type`, `id` and `tournament`): one entry "
            "where there were as many as the commit's tables reported (nine on average "
            "in a 10,000-player tournament), each taken as a `report` alone would be.",
            {
                "id": MSG_ID,
                "tournament": TOURNAMENT,
                "reports": Field(
                    "array",
                    minimum=1,
                    maximum=REPORTS_MAX,
                    items=Field("object", fields=REPORT_FIELDS),
                    doc="the reports, oldest first",
                ),
            },
        ),
        Message(
            "tournament_create",
            "director",
            "Create a tournament. It opens for registration and starts when `start.players` "
            "have registered, at `start.at`, or when its host sends begin (with at least two "
            "entrants, after bots fill it if `bots` says so).",
            {
                "id": MSG_ID,
                "tournament": TOURNAMENT,
                "gateway": GATEWAY,
                "host": _id(
                    "player allowed to begin it early (the deployment's own creates; a "
                    "gateway's creator is named by `identity` or `request`)",
                    nullable=True,
                    required=False,
                ),
                "identity": IDENTITY,
                "request": REQUEST,
                "name": Field("string", maximum=64, display=True, doc="shown to players"),
                "rules": Field("ref", ref="rules.schema.json", doc="preset plus overrides"),
                "seats": Field("integer", minimum=3, maximum=6, doc="seats per table"),
                "format": Field("string", enum=("elimination", "heats")),
                "advance": Field(
                    "integer",
                    nullable=True,
                    minimum=1,
                    maximum=2,
                    doc="heats: players of each table who go through (default: the most that "
                    "still makes every heat smaller, floor((seats + 1) / 2) - 1)",
                ),
                "start_players": Field(
                    "integer", nullable=True, minimum=2, doc="start once this many registered"
                ),
                "start_at": Field("integer", nullable=True, minimum=0, doc="start time, ms"),
                "max_players": Field("integer", minimum=2, maximum=100_000),
                "buy_in": Field("integer", minimum=0, maximum=1_000_000, doc="chips per entrant"),
                "payouts": Field(
                    "array",
                    minimum=1,
                    maximum=100,
                    items=Field("integer", minimum=1, maximum=100),
                    doc="whole percentages of the pool for places 1, 2, ...; they add up to 100",
                ),
                "bots": Field(
                    "string",
                    enum=BOT_LEVELS,
                    nullable=True,
                    doc="at the start, bots of this level fill the last table's empty seats "
                    "(and any field below two); null: no bots",
                ),
            },
        ),
        Message(
            "register",
            "director",
            "Register the player a credential names (`identity`, else `request`, else a new "
            "player) while registration is open. A repeat changes nothing. The answer "
            "`registered` carries the entrant token.",
            {
                "id": MSG_ID,
                "tournament": TOURNAMENT,
                "gateway": GATEWAY,
                "identity": IDENTITY,
                "request": REQUEST,
                "player": _id(PLAYER.doc, required=False),
                "name": Field("string", maximum=32, display=True, doc="display name"),
                "bot": Field("string", enum=BOT_LEVELS, nullable=True, doc="a bot client"),
            },
        ),
        Message(
            "unregister",
            "director",
            "Withdraw a registration before the start; the buy-in is returned.",
            {
                "id": MSG_ID,
                "tournament": TOURNAMENT,
                "gateway": GATEWAY,
                "token": Field("string", required=False, maximum=1024, doc="the entrant token"),
                "player": _id(PLAYER.doc, required=False),
            },
        ),
        Message(
            "begin",
            "director",
            "The host starts the tournament now.",
            {
                "id": MSG_ID,
                "tournament": TOURNAMENT,
                "gateway": GATEWAY,
                "token": Field(
                    "string", required=False, maximum=1024, doc="the host's entrant token"
                ),
                "player": _id(PLAYER.doc, required=False),
            },
        ),
        Message(
            "subscribe",
            "director",
            "Start (on) or stop `tournament` messages to this gateway. With an entrant "
            "`token`, also: that entrant follows through this gateway from now on (its "
            "seats are attached here as it moves), answered with `entrant`.",
            {
                "id": MSG_ID,
                "tournament": TOURNAMENT,
                "gateway": GATEWAY,
                "on": Field("boolean"),
                "token": Field("string", required=False, maximum=1024, doc="an entrant token"),
            },
        ),
        Message(
            "standings",
            "director",
            "Send me this tournament's whole standings (every place, by handle): answered "
            "with a `tournament` message quoting this id. A gateway may not read a "
            "tournament's record, whose entrants are player ids.",
            {"id": MSG_ID, "tournament": TOURNAMENT, "gateway": GATEWAY},
        ),
        Message(
            "tournament_timeout",
            "director",
            "A tournament's timer fired (its start time). Applies only at this version.",
            {"id": MSG_ID, "tournament": TOURNAMENT, "version": Field("integer", minimum=0)},
        ),
        # -------------------------------------------------------------- ratings
        Message(
            "result",
            "ratings",
            "A finished game or tournament, for the ratings: its players from first to last "
            "place (people only; bots are not rated). Written with the commit that ends it; "
            "a repeat (same id) changes nothing.",
            {
                "id": Field("string", pattern=MESSAGE_ID_RE, doc="unique per result"),
                "ratings": Field("string", enum=("ratings",), doc="the ratings entity"),
                "source": Field("string", enum=("table", "tournament")),
                "ranking": Field(
                    "array",
                    minimum=2,
                    maximum=100_000,
                    items=Field("array", minimum=2, maximum=2),
                    doc="[player, name] from first to last place",
                ),
            },
        ),
        Message(
            "ledger",
            "ratings",
            "Chips moving between accounts (double entry: the amounts add up to 0): a "
            "buy-in into a tournament's pool, its return, the payouts, a table's stake. "
            "Accounts: a player id, `pool:<tournament>`, `house` (every bot). Written "
            "with the commit that moves them; a repeat (same id) changes nothing.",
            {
                "id": Field("string", pattern=MESSAGE_ID_RE, doc="unique per movement"),
                "ratings": Field("string", enum=("ratings",), doc="the ratings entity"),
                "transfers": Field(
                    "array",
                    minimum=2,
                    maximum=100_000,
                    items=Field("array", minimum=2, maximum=2),
                    doc="[account, chips] pairs; chips are whole and add up to 0",
                ),
            },
        ),
    ]
}

INBOX_TYPES = frozenset(t for t, m in MESSAGES.items() if m.direction == "in")
OUTBOX_TYPES = frozenset(t for t, m in MESSAGES.items() if m.direction == "out")
DIRECTOR_TYPES = frozenset(t for t, m in MESSAGES.items() if m.direction == "director")
RATINGS_TYPES = frozenset(t for t, m in MESSAGES.items() if m.direction == "ratings")
