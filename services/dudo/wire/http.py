"""The HTTP API's tournament and leaderboard bodies, as JSON Schemas
(``protocol/schemas/http-*.schema.json``, written by ``dudo schemas write``).

Why declared here and not written by hand like the table calls' schemas: each of these
bodies is a stream message's fields seen from the other side (a create's fields are
``tournament_create``'s, a listing's entry is the ``tournaments`` message's, an
organizer's request is ``organize``'s), so its schema is made from that declaration and
cannot drift from what the director checks. The client packages' types come from these
files like every other (:mod:`.typings`).
"""

from __future__ import annotations

from typing import Any

from .fields import BRINGS_SEEDS, HANDLE_PATTERN, ID_RE, PERSON, TABLE_HISTORY, Field
from .schemas import SCHEMA_BASE, object_schema
from .spec import MESSAGES

# The `tournament_create` fields a client may leave out, with what the gateway puts
# there (`name` has no default: it must be given).
CREATE_DEFAULTS: dict[str, Any] = {
    "rules": {}, "seats": 6, "format": "elimination", "advance": None,
    "start_players": None, "start_at": None, "max_players": 1000, "buy_in": 0,
    "payouts": [100], "bots": None, "private": False, "late_minutes": 0, "reentries": 0,
}  # fmt: skip

_TOURNAMENT = Field("string", pattern=ID_RE, doc="the tournament's id")
_HANDLE = Field("string", pattern=HANDLE_PATTERN, doc="a player's public handle")
_NAME = Field("string", maximum=32, doc="a display name")
_ENTRANT_TOKEN = Field(
    "string", maximum=1024, doc="the entrant token `register` answered: send it in the hello"
)
_INVITE = Field(
    "string",
    required=False,
    maximum=64,
    doc="a private tournament's invite code: the host gets it in their answer, entrants "
    "need it to register",
)
_STANDINGS = Field("ref", ref="standings.schema.json", doc="the standings after it")


def _fields(message: str, *drop: str) -> dict[str, Field]:
    return {k: f for k, f in MESSAGES[message].fields.items() if k not in drop}


def _create_request() -> dict[str, Field]:
    fields = _fields("tournament_create", "id", "tournament", "gateway", "host")
    out = {k: f.optional(default=CREATE_DEFAULTS[k]) if k in CREATE_DEFAULTS else f
           for k, f in fields.items()}  # fmt: skip
    out["host"] = _NAME.optional(
        doc="your name: you register as the host, may begin it early and organize it "
        "(a private tournament needs one)"
    )
    out["seeds"] = BRINGS_SEEDS.with_doc("with a host: as the registration's `seeds`")
    return out


def _bodies() -> dict[str, tuple[str, dict[str, Field]]]:
    """File stem -> (title, fields) of each body."""
    entry = MESSAGES["tournaments"].fields["entry"].fields
    assert entry is not None
    organize = {
        "token": _ENTRANT_TOKEN.with_doc("your entrant token (the host's, for all but unregister)"),
        **_fields("organize", "id", "tournament", "gateway", "action", "token", "player"),
    }
    return {
        "http-tournaments-response": (
            "GET /api/tournaments (200)",
            {
                "tournaments": Field(
                    "array",
                    items=Field("object", fields={"tournament": _TOURNAMENT, **entry}),
                    doc="open to register first, then being played, then ended (each listed a "
                    "day); private ones never",
                ),
            },
        ),
        "http-tournament-create-request": ("POST /api/tournaments (body)", _create_request()),
        "http-tournament-create-response": (
            "POST /api/tournaments (201)",
            {
                "tournament": _TOURNAMENT,
                "player": _HANDLE.optional(doc="with a host: your public handle"),
                "token": _ENTRANT_TOKEN.optional(doc="with a host: your entrant token"),
                "invite": _INVITE,
            },
        ),
        "http-register-request": (
            "POST /api/tournaments/{tournament}/register (body)",
            {
                **_fields("register", "id", "tournament", "gateway", "player", "bot", "invite"),
                "invite": _INVITE,
            },
        ),
        "http-register-response": (
            "POST /api/tournaments/{tournament}/register (200)",
            {
                "tournament": _TOURNAMENT,
                "player": _HANDLE.with_doc("your public handle"),
                "token": _ENTRANT_TOKEN,
                "invite": _INVITE,
            },
        ),
        "http-entrant-request": (
            "POST /api/tournaments/{tournament}/{unregister,begin,pause,resume,cancel,kick,"
            "announce} (body)",
            organize,
        ),
        "http-unregister-response": (
            "POST /api/tournaments/{tournament}/unregister (200)",
            {
                "tournament": _TOURNAMENT,
                "entrants": Field("integer", minimum=0, doc="entrants now"),
            },
        ),
        "http-organize-response": (
            "POST /api/tournaments/{tournament}/{begin,pause,resume,cancel,kick,announce} (200)",
            {"tournament": _TOURNAMENT, "standings": _STANDINGS},
        ),
        "http-standings-response": (
            "GET /api/tournaments/{tournament} (200)",
            {
                "tournament": _TOURNAMENT,
                "version": Field("integer", minimum=0, doc="newer standings have a higher one"),
                "standings": _STANDINGS.with_doc("every place given so far, every table"),
            },
        ),
        "http-results-response": (
            "GET /api/tournaments/{tournament}/results (200)",
            {
                "tournament": _TOURNAMENT,
                "name": Field("string", doc="the tournament's name"),
                "status": Field("string", enum=("registering", "running", "over", "cancelled")),
                "format": Field("string", enum=("elimination", "heats")),
                "entrants": Field("integer", minimum=0),
                "buy_in": Field("integer", minimum=0),
                "payouts": Field("array", items=Field("integer", minimum=1, maximum=100)),
                "places": Field(
                    "array",
                    doc="every place given so far, best first",
                    items=Field(
                        "object",
                        fields={
                            "place": Field("integer", minimum=1),
                            **PERSON,
                            "chips": Field("integer", minimum=0, doc="chips won"),
                            "rating": Field(
                                "number",
                                nullable=True,
                                doc="null for a bot, and "
                                "until the ratings keeper has rated the result",
                            ),
                            "rating_change": Field("number", nullable=True, doc="as `rating`"),
                            "bot": Field("boolean", doc="a bot held this place"),
                            "late": Field(
                                "boolean", doc="registered after the start (late registration)"
                            ),
                            "kicked": Field(
                                "boolean",
                                doc="the host took this player out: placed where they stood, "
                                "not rated for it",
                            ),
                        },
                    ),
                ),
                "tables": Field("array", items=TABLE_HISTORY, doc="every closed table"),
            },
        ),
        "http-bots-response": (
            "GET /api/bots (200)",
            {
                "endgame_solves": Field(
                    "object",
                    nullable=True,
                    doc="the bot services' solves of the presets' heads-up endgames still "
                    "under way, counted over the services alive (null: none is): until a "
                    "round's solve is done, a hard bot plays its heuristic in that round",
                    fields={
                        "done": Field("integer", minimum=0, doc="solves finished"),
                        "of": Field("integer", minimum=1, doc="solves asked for at start"),
                    },
                ),
            },
        ),
        "http-leaderboard-response": (
            "GET /api/leaderboard?limit=N (200)",
            {
                "leaderboard": Field(
                    "array",
                    doc="the best rated players, best first (N: 1..500, default 50)",
                    items=Field(
                        "object",
                        fields={
                            "rank": Field("integer", minimum=1),
                            "name": Field("string", doc="the name of their latest rated game"),
                            "handle": _HANDLE,
                            "ordinal": Field("number", doc="the rating the board is sorted by"),
                            "mu": Field("number"),
                            "sigma": Field("number"),
                            "games": Field("integer", minimum=0, doc="rated games and tournaments"),
                            "chips": Field("integer", doc="their chips"),
                        },
                    ),
                ),
            },
        ),
    }


def http_schemas() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema of each tournament and leaderboard body."""
    out = {}
    for stem, (title, fields) in _bodies().items():
        name = f"{stem}.schema.json"
        out[name] = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": SCHEMA_BASE + name,
            "title": title,
            **object_schema(fields),
        }
    return out
