"""The messages a gateway's outbox carries (direction ``out``: worker or director →
gateway)."""

from __future__ import annotations

from .fields import (
    FACTS,
    HANDLE,
    LOBBY_ENTRY,
    MESSAGE_ID_RE,
    MSG_ID,
    PLAYER_INFO,
    REMATCH,
    SEEDS,
    TABLE,
    TABLE_HISTORY,
    TOURNAMENT,
    VIEW_STATUS,
    VIEW_VERSION,
    Field,
    Message,
    id_field,
    seat_field,
)

OUTBOX: list[Message] = [
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
            "host": id_field(
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
            "paused": Field(
                "boolean",
                required=False,
                doc="present (true) while the tournament's organizer has the table paused: no "
                "clock runs and acts are refused `paused` until it resumes",
            ),
            "rematch": REMATCH,
            "seeds": SEEDS,
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
                doc="the ids of this gateway's `act`, `start` and `resync` messages this "
                "view answers (absent when none): tell each sender its request went through",
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
                items=seat_field(),
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
            "table": id_field("the table, when known", nullable=True),
            "tournament": id_field(
                "the tournament of a refused tournament message", required=False
            ),
            "seat": seat_field(nullable=True),
            "player": id_field(
                "the player's handle, as the refused message named it", nullable=True
            ),
            "id": Field("string", nullable=True, maximum=64, doc="the refused message's id"),
            "code": Field("string", pattern=r"^[a-z_]+$", doc="rule or protocol error code"),
            "message": Field("string", maximum=500, doc="for people (English)"),
            "facts": FACTS,
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
            "seat": seat_field(),
            "player": HANDLE,
            "id": MSG_ID,
            "token": Field("string", required=False, maximum=1024, doc="the seat token"),
        },
    ),
    Message(
        "left",
        "out",
        "A leave succeeded.",
        {"table": TABLE, "seat": seat_field(), "player": HANDLE, "id": MSG_ID},
    ),
    Message(
        "detached",
        "out",
        "This player's seat is no longer played through this gateway (the player attached "
        "it to another gateway): stop relaying anything of this table to that player's "
        "connections here.",
        {"table": TABLE, "seat": seat_field(), "player": HANDLE},
    ),
    Message(
        "moved",
        "out",
        "A tournament moved this player to this table (from the table named in `from`, "
        "null at the start): relay this table's views to the player's connections from "
        "now on. Its next view follows.",
        {
            "table": TABLE,
            "seat": seat_field(),
            "player": HANDLE,
            "tournament": TOURNAMENT,
            "from": id_field("the table the player left", nullable=True),
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
                doc="the `standings` request this answers (then every place, not the best 100)",
            ),
            "history": Field(
                "array",
                required=False,
                items=TABLE_HISTORY,
                doc="answering a `standings` request with `history`: every closed table, "
                "in the order they opened",
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
                    "status": Field("string", enum=("registering", "running", "over", "cancelled")),
                    "seats": Field("integer", minimum=3, maximum=6),
                    "entrants": Field("integer", minimum=0),
                    "left": Field("integer", minimum=0),
                    "max_players": Field("integer", minimum=2),
                    "buy_in": Field("integer", minimum=0),
                    "start_players": Field("integer", nullable=True, minimum=2),
                    "start_at": Field("integer", nullable=True, minimum=0),
                    "rules": Field("ref", ref="rules.schema.json"),
                    "host": id_field("the host's public handle", nullable=True),
                    "late_until": Field(
                        "integer",
                        required=False,
                        nullable=True,
                        minimum=0,
                        doc="running, and registration still open until then (ms since "
                        "epoch): late registration",
                    ),
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
            "invite": Field(
                "string",
                required=False,
                maximum=64,
                doc="to the host of a private tournament: the invite code to hand out",
            ),
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
            "table": id_field(
                "the table it sits at, or null (between tables, or out)", nullable=True
            ),
            "seat": seat_field(nullable=True),
        },
    ),
]
