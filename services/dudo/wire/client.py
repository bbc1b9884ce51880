"""The client protocol: what browsers, terminals and other clients send the gateway over
WebSocket, and what it sends back. Declared with the same machinery as the stream
protocol (:mod:`dudo.wire`), so the same code validates it and writes its JSON Schemas.

Text frames carry JSON, binary frames msgpack; every message has ``v`` and ``type``.
A connection authenticates with a token from the HTTP API (``hello``), then acts for
exactly the seat (or spectator place) that token grants: the gateway fills in table,
seat and player itself, so a client cannot name another.
"""

from __future__ import annotations

from .checks import validator
from .fast import FastValidator
from .fields import (
    BOT_LEVELS,
    CLIENT_SEED,
    EMOTES,
    FACTS,
    ID_RE,
    LOBBY_ENTRY,
    MESSAGE_ID_RE,
    REMATCH,
    SEEDS,
    TABLE_COMMITMENT,
    TABLE_STATUSES,
    Field,
    Message,
)

MAX_CLIENT_BYTES = 4096  # a client message larger than this gets `too_large`

_TOKEN = Field("string", maximum=1024, pattern=r"^[A-Za-z0-9_.-]+$", doc="from the HTTP API")
_ID = Field("string", pattern=MESSAGE_ID_RE, doc="your id for this message; errors quote it")
# Any other client message may carry an id too: its answer (and any refusal) quotes it.
_OPTIONAL_ID = Field(
    "string",
    required=False,
    pattern=MESSAGE_ID_RE,
    doc="your id for this message: its answer and any refusal quote it",
)
# The id of the client message an answer answers (null when it had none, or for news).
_REPLY_ID = Field(
    "string", nullable=True, maximum=64, doc="the id of the message this answers, if it had one"
)
_TABLE = Field("string", pattern=ID_RE, doc="table id")
_TABLE_OPTIONAL = Field("string", required=False, pattern=ID_RE, doc="table id")
_GAME = Field("ref", ref="game-view.schema.json", nullable=True, doc="the game as you may see it")

CLIENT_MESSAGES: dict[str, Message] = {
    m.type: m
    for m in [
        Message(
            "hello",
            "ws-in",
            "Authenticate this connection with a seat, spectator or entrant token. Send it "
            "first, and again after every reconnect: the answer is `welcome`, then the latest "
            "view. With an entrant token the connection follows its player through the "
            "tournament: `moved` when the player is seated elsewhere, `tournament` standings.",
            {"token": _TOKEN, "id": _OPTIONAL_ID},
        ),
        Message(
            "act",
            "ws-in",
            "Act for your seat. `table` and `seat` may be given; they must be the token's.",
            {
                "id": _ID,
                "action": Field(
                    "ref", ref="action.schema.json", doc="a bid, dudo, calza or direction"
                ),
                "table": Field("string", required=False, maximum=64, doc="if given: yours"),
                "seat": Field(
                    "integer", required=False, minimum=0, maximum=5, doc="if given: yours"
                ),
            },
        ),
        Message("resync", "ws-in", "Send me the latest view now.", {"id": _OPTIONAL_ID}),
        Message(
            "leave",
            "ws-in",
            "Give up my seat (during a game the house bot plays it); answered with `left`.",
            {"id": _OPTIONAL_ID},
        ),
        Message(
            "start",
            "ws-in",
            "Host only: start with the players seated so far (open seats are dropped and the "
            "seats renumbered: a player whose number changed gets a new `welcome`). The next "
            "view shows the game; a refusal is an `error` quoting your id.",
            {"id": _OPTIONAL_ID},
        ),
        Message(
            "react",
            "ws-in",
            "A quick reaction at your table, shown to everyone there (the views' `reaction` "
            "event): nice, haha, wow, grr, hmm or clap. At most one every 1.5 s (sooner: "
            "`rate_limited`).",
            {"id": _OPTIONAL_ID, "emote": Field("string", enum=EMOTES, doc="which reaction")},
        ),
        Message(
            "commit_seed",
            "ws-in",
            "At a tournament's table just made, or holding a round after someone arrived "
            "(`seeds.round`), when its views list your seat in `seeds.asked` (while "
            "`seeds.commit_until`): make a new seed for this ask, keep it, and send its "
            "commitment. Once every asked seat gave one, the views show `seeds.until`: "
            "reveal it then (`seed`). Not asked: `bad_seed`.",
            {"id": _OPTIONAL_ID, "commitment": TABLE_COMMITMENT},
        ),
        Message(
            "seed",
            "ws-in",
            "Reveal the seed you committed to when you sat (`seed_commitment` of your "
            "join, create or quick play; at a tournament's table, your `commit_seed`), "
            "once the views show `seeds.until`: every seat's "
            "commitment is fixed then. The next view shows it taken (`seeds.revealed`); a "
            "seed that does not match, or none asked for: `bad_seed`.",
            {"id": _OPTIONAL_ID, "seed": CLIENT_SEED},
        ),
        Message(
            "rematch",
            "ws-in",
            "After the game's end: propose a rematch at `table`, a table you just made (POST "
            "/api/tables: the same rules, your seat, the other people's seats open, the same "
            "bots). Every later view of this table shows it (`rematch`), for the others to "
            "join. Someone's proposal came first: `table_exists`, and the views show theirs.",
            {"id": _OPTIONAL_ID, "table": Field("string", pattern=ID_RE, doc="the new table")},
        ),
        Message(
            "watch_lobby",
            "ws-in",
            "Send me the lobby (tables open to sit at, games to watch) now and whenever it "
            "changes. Needs no `hello`: the lobby is public.",
            {"id": _OPTIONAL_ID},
        ),
        Message("ping", "ws-in", "Are you there? (answered with `pong`)", {"id": _OPTIONAL_ID}),
        Message(
            "welcome",
            "ws-out",
            "The token was accepted: this connection plays this seat (or watches, seat null). "
            "For an entrant, `table` is where the player sits now (null before the start or "
            "once out). Sent again, with `id` null, when the host's early start renumbers "
            "your seat.",
            {
                "id": _REPLY_ID,
                "table": Field("string", nullable=True, maximum=64, doc="your table"),
                "tournament": Field(
                    "string", required=False, maximum=64, doc="an entrant's tournament"
                ),
                "seat": Field(
                    "integer", nullable=True, minimum=0, maximum=5, doc="null: a spectator"
                ),
                "player": Field(
                    "string",
                    nullable=True,
                    maximum=64,
                    doc="your public handle (the `host` of views uses the same handles)",
                ),
                "now": Field(
                    "integer",
                    required=False,
                    minimum=0,
                    doc="the gateway's clock when it sent this (ms since the epoch): count "
                    "the views' `deadline` and `reveal_until` against it, not the device's",
                ),
                "token": Field(
                    "string",
                    required=False,
                    maximum=1024,
                    doc="a fresh token for the same seat (or for watching), living 7 days from "
                    "now: keep it in place of the one you said hello with (an entrant's "
                    "token is not renewed: it lives 7 days from the registration)",
                ),
            },
        ),
        Message(
            "view",
            "ws-out",
            "A full snapshot of your table as your seat (or a spectator) may see it. Apply it "
            "only if `version` is above the last one you applied.",
            {
                "table": Field("string", maximum=64, doc="table id"),
                "seat": Field(
                    "integer", nullable=True, minimum=0, maximum=5, doc="yours; null: a spectator"
                ),
                "version": Field(
                    "integer", minimum=0, doc="grows with every change: apply only a higher one"
                ),
                "status": Field("string", enum=TABLE_STATUSES, doc="the table's life"),
                "players": Field(
                    "array",
                    maximum=6,
                    doc="by seat number (null: an open seat); `bot` is a bot seat's level, "
                    "`away` a seat whose player has no connection",
                    items=Field(
                        "object",
                        nullable=True,
                        fields={
                            "name": Field("string", maximum=32),
                            "bot": Field("string", enum=BOT_LEVELS, nullable=True),
                            "away": Field("boolean"),
                        },
                    ),
                ),
                "host": Field(
                    "string", nullable=True, maximum=64, doc="the host's public player handle"
                ),
                "deadline": Field(
                    "integer",
                    nullable=True,
                    minimum=0,
                    doc="when the turn clock runs out (ms since the epoch): the house bot "
                    "plays the turn then",
                ),
                "reveal_until": Field(
                    "integer",
                    required=False,
                    minimum=0,
                    doc="a round just ended: show its reveal (`game.last_round`) until then "
                    "(ms since the epoch); the next turn's clock and the bots wait for it",
                ),
                "paused": Field(
                    "boolean",
                    required=False,
                    doc="present (true) while the tournament's organizer has the table paused: no "
                    "clock runs and acts are refused `paused` until it resumes",
                ),
                "rematch": REMATCH,
                "seeds": SEEDS,
                "game": _GAME,
                "events": Field(
                    "array",
                    items=Field("ref", ref="event.schema.json"),
                    doc="what happened since the previous view (event.schema.json)",
                ),
            },
        ),
        Message(
            "error",
            "ws-out",
            "Your message was refused; nothing changed.",
            {
                "id": Field("string", nullable=True, maximum=64, doc="the refused message's id"),
                "code": Field("string", pattern=r"^[a-z_]+$", doc='why (part 1, "Errors")'),
                "message": Field("string", maximum=500, doc="the same, for people (English)"),
                "retry_ms": Field(
                    "integer",
                    required=False,
                    minimum=1,
                    doc="with `rate_limited`: wait this long before sending again",
                ),
                "facts": FACTS,
            },
        ),
        Message(
            "lobby",
            "ws-out",
            "The lobby: the full list (`tables`; open tables first, then games being played) "
            "when you subscribe, then one change at a "
            "time (`table` with `entry`, or `entry` null when it closed).",
            {
                "id": Field(
                    "string",
                    required=False,
                    nullable=True,
                    maximum=64,
                    doc="on the full list: the id of your `watch_lobby`",
                ),
                "tables": Field(
                    "array",
                    required=False,
                    items=Field("object", fields={"table": _TABLE, **LOBBY_ENTRY}),
                    doc="the full list, when you subscribe",
                ),
                "table": _TABLE_OPTIONAL,
                "entry": Field(
                    "object",
                    required=False,
                    nullable=True,
                    fields=LOBBY_ENTRY,
                    doc="a change: the table's entry now (null: it closed)",
                ),
            },
        ),
        Message(
            "moved",
            "ws-out",
            "Your tournament seated you at this table (from the table in `from`, null at the "
            "start): its views follow; act there from now on.",
            {
                "tournament": Field("string", maximum=64, doc="tournament id"),
                "table": Field("string", maximum=64, doc="where you sit now"),
                "seat": Field("integer", minimum=0, maximum=5, doc="your seat there"),
                "from": Field("string", nullable=True, maximum=64, doc="where you sat before"),
            },
        ),
        Message(
            "tournament",
            "ws-out",
            "Your tournament's standings, after every change (at most about once a second "
            "while it runs). Apply only if `version` is above the last one you applied.",
            {
                "tournament": Field("string", maximum=64, doc="tournament id"),
                "version": Field("integer", minimum=0, doc="apply only a higher one"),
                "standings": Field(
                    "ref", ref="standings.schema.json", doc="players left, tables, places"
                ),
            },
        ),
        Message(
            "ack",
            "ws-out",
            "Your `act` with this id went through: the `view` of this `version` (it follows) "
            "shows it. A refused act gets an `error` with its id instead; an act gets one or "
            "the other.",
            {
                "id": Field("string", pattern=MESSAGE_ID_RE, doc="your act's id"),
                "table": _TABLE,
                "version": Field("integer", minimum=0, doc="the version of the view showing it"),
            },
        ),
        Message(
            "left",
            "ws-out",
            "You gave your seat up (`leave`): this connection plays it no more. Every "
            "connection of your player at that table gets it; the one that asked quotes its id.",
            {
                "id": _REPLY_ID,
                "table": Field("string", maximum=64, doc="the table you left"),
                "seat": Field("integer", minimum=0, maximum=5, doc="the seat you gave up"),
            },
        ),
        Message("pong", "ws-out", "Answer to `ping`.", {"id": _REPLY_ID}),
    ]
}

validate_client = validator(CLIENT_MESSAGES)
# JSON text frames decoded and checked in one step (the same answers as validate_client).
fast_client = FastValidator(CLIENT_MESSAGES, validate_client)
