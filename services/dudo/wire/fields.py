"""The stream protocol's vocabulary: how a field and a message are declared
(:class:`Field`, :class:`Message`), and the fields many messages share. The messages
themselves are declared by direction in :mod:`.inbox`, :mod:`.outbox` and
:mod:`.tournaments`; :mod:`.spec` gathers them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

ID_RE = r"^[A-Za-z0-9_-]{1,64}$"
HANDLE_PATTERN = r"^[A-Za-z0-9_-]{16}$"  # what wire.public_id makes
MESSAGE_ID_RE = r"^[A-Za-z0-9_:.-]{1,64}$"
# The bot levels, declared here once (docs/architecture.md, "Where to add..."): what
# plays each is bots.levels.LEVELS; the page's presets.js, the chat's words and the
# command line take them from here or are held to them by tests.
BOT_LEVELS = ("easy", "normal", "hard")
DEFAULT_BOT_LEVEL = "normal"
TABLE_STATUSES = ("open", "playing", "over")


# -- declarations ---------------------------------------------------------------

NO_DEFAULT: Any = type("NoDefault", (), {"__repr__": lambda self: "NO_DEFAULT"})()


@dataclass(frozen=True)
class Field:
    """One field of a message: its JSON type and constraints."""

    kind: str  # "string", "integer", "number", "boolean", "object", "array", "ref"
    required: bool = True
    nullable: bool = False
    minimum: int | None = None
    maximum: int | None = None
    pattern: str | None = None
    enum: tuple[str, ...] | None = None
    items: Field | None = None
    # An array of fixed positions (a [seat, level] pair): one declaration per position.
    prefix: tuple[Field, ...] | None = None
    fields: dict[str, Field] | None = None  # for an object with known fields
    ref: str | None = None  # a hand-written schema in protocol/schemas
    display: bool = False  # a name shown to people: in the form clean_name leaves unchanged
    doc: str = ""
    # What is used when it is left out, for the schema to say (an HTTP body's field
    # the gateway fills in); NO_DEFAULT: nothing said.
    default: Any = field(default_factory=lambda: NO_DEFAULT)

    def optional(self, doc: str | None = None, **changes: Any) -> Field:
        """The same field, one that may be left out (another ``doc``, other changes)."""
        return replace(self, required=False, doc=self.doc if doc is None else doc, **changes)

    def with_doc(self, doc: str) -> Field:
        return replace(self, doc=doc)


@dataclass(frozen=True)
class Message:
    type: str
    direction: str  # "in": gateway -> worker (inbox); "out": worker -> gateway (outbox)
    doc: str
    fields: dict[str, Field] = field(default_factory=dict)


def id_field(doc: str, **kw: Any) -> Field:
    return Field("string", pattern=ID_RE, doc=doc, **kw)


def seat_field(doc: str = "seat number, 0-based", **kw: Any) -> Field:
    return Field("integer", minimum=0, maximum=5, doc=doc, **kw)


MSG_ID = Field(
    "string", pattern=MESSAGE_ID_RE, doc="the sender's id for this message, unique per table"
)
TABLE = id_field("table id; its partition is CRC-32(id) mod P")
GATEWAY = id_field("id of the gateway instance that sent it; replies go to its outbox")
PLAYER = id_field(
    "a player id: the deployment's own, never sent to or accepted from a gateway "
    "(docs/security.md)"
)
HANDLE = id_field(
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
        "away": Field(
            "boolean",
            doc="left the table, or the house played their last turns (their clock ran "
            "out twice in a row): the house bot plays for the seat",
        ),
    },
)

RATED_MAX = 150  # entrants per `rated` message: 150 rows of 64-character ids stay under 16 KiB
TOURNAMENT = id_field("the tournament; its director partition is CRC-32(id) mod D")
DICE = Field("integer", minimum=1, maximum=10, doc="dice the player brings (they keep their count)")
# A tournament entrant whose client brings a seed of its own to each table it is seated
# at (docs/rules.md, "Seeds from everyone"): the table asks it for a commitment when made.
BRINGS_SEEDS = Field(
    "boolean",
    required=False,
    doc="your client brings a seed of its own to each table you are seated at: when a "
    "table is made (and again when someone arrives there) its views ask your seat "
    "(`seeds.asked`) for a commitment (`commit_seed`), then for the seed (`seed`); the "
    "official libraries do by default. "
    "Leave it out if your client does not (the table would wait for it)",
)

ENTRANT = Field(
    "object",
    fields={
        "player": PLAYER,
        "name": Field("string", maximum=32, display=True, doc="display name"),
        "dice": DICE,
        "gateway": id_field("the gateway the player's views go to, if known", nullable=True),
        "bot": Field("string", enum=BOT_LEVELS, nullable=True, doc="bot level, or null"),
        "seeds": BRINGS_SEEDS.with_doc(
            "the entrant brings seeds: the table asks its seat for a commitment"
        ),
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
# What a refusal is about, as data (docs/protocol.md, "Errors"): a gateway phrases the
# refusal in its player's language and names people as it knows them, from these and its
# latest view, never from the English `message`.
FACTS = Field(
    "object",
    required=False,
    doc="the state a refusal refers to: whose turn it is (`not_your_turn`, "
    "`direction_required`), the bid to beat (`bid_not_higher`, `palifico_face_locked`), "
    "the dice in play (`bid_out_of_range`), the host (`not_host`), seated and needed "
    "players (`too_few_players`)",
    fields={
        "turn": seat_field("the seat whose turn it is", required=False),
        "bid": Field(
            "array",
            required=False,
            minimum=3,
            maximum=3,
            items=Field("integer", minimum=0),
            doc="the bid to beat: [seat, quantity, face]",
        ),
        "dice_in_play": Field("integer", required=False, minimum=0),
        "host": id_field("the host's public handle", required=False),
        "seated": Field("integer", required=False, minimum=0, maximum=6),
        "needed": Field("integer", required=False, minimum=2, maximum=6),
    },
)

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
    "host": id_field("the host's public handle", nullable=True),
    "label": Field(
        "string",
        required=False,
        maximum=64,
        doc="where the table is played, as its creator's gateway said (`create.label`)",
    ),
    "app": id_field(
        "the app whose gateway opened it (absent: the deployment's own); a lobby shares "
        "its places out between apps",
        required=False,
    ),
    "wants_bots": Field(
        "array",
        maximum=6,
        items=Field(
            "array",
            minimum=2,
            maximum=2,
            prefix=(
                Field("integer", minimum=0, maximum=5, doc="seat"),
                Field("string", enum=BOT_LEVELS, doc="level"),
            ),
        ),
        doc="free seats set aside for bots: [seat, level] pairs",
    ),
}


# Someone in a tournament's records: by display name and public handle, never player id.
PERSON = {
    "name": Field("string", doc="display name (empty: unregistered since)"),
    "handle": Field("string", pattern=HANDLE_PATTERN, doc="public handle"),
}
_SEATED = Field(
    "array", items=Field("object", fields={**PERSON, "dice": Field("integer", minimum=0)})
)

# Dice no one can choose (dudo.engine.fairness; docs/rules.md, "Seeds from everyone"):
# a seat's commitment to the seed it brings, the seed it reveals, and what a view shows.
HEX_DIGEST = r"^[0-9a-f]{64}$"
SEED_COMMITMENT = Field(
    "string",
    required=False,
    pattern=HEX_DIGEST,
    doc="your commitment to a seed of your own for the dice: lowercase hex of "
    'SHA-256("dudo-client/2:" + seed), the seed being 1..64 bytes of UTF-8 you keep '
    "secret until the table asks for it (`seeds.until` in its views: send `seed`); "
    "without one your seat is dealt its public seed",
)
# At a tournament's table, a seat's commitment asked when the table is made (its seats
# are the director's, so nobody gave one when sitting down): `commit_seed`.
TABLE_COMMITMENT = Field(
    "string",
    pattern=HEX_DIGEST,
    doc='lowercase hex of SHA-256("dudo-client/2:" + seed), for a seed (1..64 bytes of '
    "UTF-8) made for this table and kept secret until the table asks for it "
    "(`seeds.until`: send `seed`)",
)
CLIENT_SEED = Field(
    "string",
    maximum=64,
    doc="the seed you committed to when you sat (1..64 bytes of UTF-8): sent once every "
    "seat's commitment is fixed (while the views show `seeds.until`); refused `bad_seed` "
    "when it does not match",
)
# A seed a seat was dealt with: one a player brought (1..64 bytes) or the public
# public:<table>:<seat>, up to 73 characters with a table id of 64.
DEALT_SEED = Field("string", maximum=73)
# A seat's commitment as a table records it: null when the seat brought no seed.
GIVEN_COMMITMENT = Field("string", nullable=True, pattern=HEX_DIGEST)
# A deal's seeds by seat, under the names a verifier's log gives them.
DEALT_BY_SEAT = {
    "client_seeds": Field(
        "array", maximum=6, items=DEALT_SEED, doc="by seat, the seed it was dealt with"
    ),
    "client_commitments": Field(
        "array",
        maximum=6,
        items=GIVEN_COMMITMENT,
        doc="by seat, the commitment it gave (null: none, dealt its public seed)",
    ),
}
# At a tournament's table, after someone arrived: the seeds the round then held was
# dealt from, and every round after it until the next (dudo.table.seeds).
RESEEDS = Field(
    "array",
    required=False,
    items=Field(
        "object",
        fields={
            "round": Field(
                "integer",
                minimum=1,
                doc="the round held after someone arrived: it and the rounds after it "
                "(until the next reseed) were dealt from these seeds",
            ),
            **DEALT_BY_SEAT,
        },
    ),
    doc="at a tournament's table, once closed: the seeds given after each arrival, "
    "each dealing from its `round` on with the same server seed (the first seeds deal "
    "the rounds before the first of them)",
)
SEEDS = Field(
    "object",
    required=False,
    doc="what the dice of this table's game come from (docs/rules.md, \"Seeds from "
    "everyone\"): the server seed's commitment from the table's making, each seat's "
    "commitment, and once the game is over the seeds themselves (at a tournament's table: "
    "once the table closed, as a won or halted game there plays on with arrivals). In "
    "the views of an open table or of a round held after an arrival, in the view of the "
    "deal and in those of the finished game; left out in the middle of a game (it does "
    "not change then) and at a table made before seeds",
    fields={
        "server": Field(
            "string", pattern=HEX_DIGEST, doc='SHA-256("dudo-server/2:" + server seed), hex'
        ),
        "commitments": Field(
            "array",
            maximum=6,
            items=GIVEN_COMMITMENT,
            doc="by seat: the seat's commitment to its seed (null: it brought none and is "
            "dealt its public seed, public:<table>:<seat>)",
        ),
        "revealed": Field(
            "array",
            maximum=6,
            items=Field("boolean"),
            doc="by seat: its own seed was revealed and taken (a seat with a commitment "
            "that is false once the game runs was dealt its public seed: it did not "
            "reveal in time)",
        ),
        "asked": Field(
            "array",
            required=False,
            maximum=6,
            items=Field("integer", minimum=0, maximum=5),
            doc="at a tournament's table just made, or holding a round after someone "
            "arrived: the seats asked for a commitment (their entrants bring seeds) that "
            "have not given one yet; send `commit_seed`",
        ),
        "commit_until": Field(
            "integer",
            required=False,
            minimum=0,
            doc="while seats are asked for commitments (`asked`): at this time (ms since "
            "the epoch) the table asks for the seeds of the seats that gave one, and the "
            "rest are dealt their public seeds",
        ),
        "until": Field(
            "integer",
            required=False,
            minimum=0,
            doc="every seat is seated and its commitment fixed: seats with a commitment "
            "send their `seed` now; at this time (ms since the epoch) the dice are dealt "
            "with the seeds revealed, public ones for the rest",
        ),
        "server_seed": Field(
            "string",
            required=False,
            pattern=HEX_DIGEST,
            doc="once the game is over: the server seed (32 bytes, hex)",
        ),
        "client_seeds": Field(
            "array",
            required=False,
            maximum=6,
            items=DEALT_SEED,
            doc="once the game is over: by seat, the seed it was dealt with (its own, or "
            "its public one)",
        ),
        "round": Field(
            "integer",
            required=False,
            minimum=1,
            doc="while seeds are asked (`asked` or `until`): the round they will deal, 1 "
            "at a table's start; at a tournament's table, the round held after someone "
            "arrived (its seats are asked again: make a new seed for it)",
        ),
        "reseeds": RESEEDS,
    },
)

# What a closed tournament table's dice came from, for the tournament's results: the
# keys a verifier's log takes beside the table's rounds (docs/rules.md, "Seeds from
# everyone"), so `{table, rounds: <its game.log>, **seeds}` is that log.
TABLE_SEEDS = Field(
    "object",
    required=False,
    doc="what the table's dice came from (docs/rules.md, \"Seeds from everyone\"): "
    "with the table's rounds (its finished view's `game.log`) a log `dudo verify` and the "
    "packages' `verify` check; absent for a table made before seeds",
    fields={
        "server_seed": Field("string", pattern=HEX_DIGEST, doc="the server seed, hex"),
        "server_commitment": Field(
            "string", pattern=HEX_DIGEST, doc="its commitment, shown from the table's making"
        ),
        **DEALT_BY_SEAT,
        "reseeds": RESEEDS,
    },
)

# A closed table's history, as the results and a `tournament` answer with history carry it.
TABLE_HISTORY = Field(
    "object",
    fields={
        "table": Field("string", pattern=ID_RE, doc="the table"),
        "rounds": Field(
            "array",
            items=Field(
                "object",
                fields={
                    "round": Field("integer", minimum=0, doc="the table's round"),
                    "at": Field("integer", minimum=0, doc="when (ms since the epoch)"),
                    "joined": _SEATED.with_doc("who sat down, with their dice"),
                    "left": _SEATED.with_doc("who was moved to another table"),
                    "out": Field(
                        "array", items=Field("object", fields=PERSON), doc="who went out"
                    ),
                },
            ),
        ),
        "seeds": TABLE_SEEDS,
    },
)

# The quick reactions a seat may send its table (ws `react`, inbox `react`, event
# `reaction`): names, drawn by each client as it likes.
EMOTES = ("nice", "haha", "wow", "grr", "hmm", "clap")

# A finished table's view, once a seat proposed a rematch (the stream's and the
# WebSocket's view alike).
REMATCH = Field(
    "object",
    required=False,
    doc="after the game's end: a seat proposed a rematch at `table` (the same "
    "rules, its people's seats open, the same bots): join it there",
    fields={
        "table": Field("string", maximum=64, doc="the rematch's table"),
        "by": Field("integer", minimum=0, maximum=5, doc="the proposing seat"),
    },
)
