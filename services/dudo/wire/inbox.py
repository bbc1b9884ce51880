"""The messages a table partition's inbox takes (direction ``in``: gateway → worker)."""

from __future__ import annotations

from .fields import (
    BOT_LEVELS,
    BRINGS_SEEDS,
    CLIENT_SEED,
    DICE,
    EMOTES,
    ENTRANT,
    GATEWAY,
    HANDLE,
    IDENTITY,
    MSG_ID,
    PLAYER,
    REQUEST,
    SEAT_SPEC,
    SEED_COMMITMENT,
    TABLE,
    TABLE_COMMITMENT,
    TOKEN,
    TOURNAMENT,
    Field,
    Message,
    id_field,
    seat_field,
)

INBOX: list[Message] = [
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
            "label": Field(
                "string",
                required=False,
                maximum=64,
                doc="where the table is played, for the lobby: \"#dudo on irc.libera.chat\", "
                "\"a Matrix room\": a line of text as wire.clean_line leaves it (trimmed, "
                "single spaces, nothing hidden; else bad_message)",
            ),
            "host": id_field(
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
            "player": id_field(PLAYER.doc, required=False),
            "name": Field(
                "string",
                required=False,
                maximum=32,
                display=True,
                doc="display name: 1..32 characters, trimmed, no control or invisible "
                "characters (gateways clean names with wire.clean_name); needed to take "
                "a new seat",
            ),
            "seat": seat_field(required=False, nullable=True),
            "bot": Field("string", enum=BOT_LEVELS, required=False, doc="a bot client"),
            "seed_commitment": SEED_COMMITMENT.with_doc(
                "the player's commitment to a seed of their own (docs/rules.md, \"Seeds "
                "from everyone\"): taken with a new seat, or, before the start, in place "
                "of the one the seat had"
            ),
        },
    ),
    Message(
        "commit_seed",
        "in",
        "At a tournament's table, just made or holding a round after an arrival: a seat "
        "the table asks for a commitment "
        "(`seeds.asked` in its views, while `seeds.commit_until`) gives its commitment to a "
        "seed of its own; once every asked seat gave one (or the time is up) the table "
        "asks for the seeds (`seeds.until`: `seed`). Not asked: `bad_seed`.",
        {
            "id": MSG_ID,
            "table": TABLE,
            "gateway": GATEWAY,
            "player": HANDLE,
            "seat": seat_field(),
            "commitment": TABLE_COMMITMENT,
        },
    ),
    Message(
        "seed",
        "in",
        "A seat reveals the seed it committed to when it sat. Taken while the table "
        "waits for seeds (its views show `seeds.until`); once every seat with a "
        "commitment revealed, the dice are dealt at once. A seed that does not match the "
        "seat's commitment, or none asked for: `bad_seed`.",
        {
            "id": MSG_ID,
            "table": TABLE,
            "gateway": GATEWAY,
            "player": HANDLE,
            "seat": seat_field(),
            "seed": CLIENT_SEED,
        },
    ),
    Message(
        "leave",
        "in",
        "Leave a seat: before the start it is freed; during the game the house bot plays for it.",
        {"id": MSG_ID, "table": TABLE, "gateway": GATEWAY, "player": HANDLE, "seat": seat_field()},
    ),
    Message(
        "react",
        "in",
        "A seated player's quick reaction: every view's `events` carry it once "
        "(`reaction`). At most one a seat every 1.5 s: sooner, `rate_limited`.",
        {
            "id": MSG_ID,
            "table": TABLE,
            "gateway": GATEWAY,
            "player": HANDLE,
            "seat": seat_field(),
            "emote": Field("string", enum=EMOTES, doc="which reaction"),
        },
    ),
    Message(
        "rematch",
        "in",
        "A seat of the finished game proposes a rematch at `next`, the table it just made "
        "(the same rules, its people's seats open, its bots): every later view of this "
        "table says so (`rematch`), for the others to join. The first proposal stays: "
        "another is refused `table_exists`. Before the game's end: `game_not_over`; at a "
        "tournament's table: `bad_message`.",
        {
            "id": MSG_ID,
            "table": TABLE,
            "gateway": GATEWAY,
            "player": HANDLE,
            "seat": seat_field(),
            "next": TABLE,
        },
    ),
    Message(
        "rename",
        "in",
        "A seated player's new display name (a chat nick changed, a profile was edited): "
        "views show it from the next one on. Refused at a tournament's table "
        "(`bad_message`: there names are the entrants').",
        {
            "id": MSG_ID,
            "table": TABLE,
            "gateway": GATEWAY,
            "player": HANDLE,
            "seat": seat_field(),
            "name": Field(
                "string",
                maximum=32,
                display=True,
                doc="the new display name, cleaned as `join.name` is",
            ),
        },
    ),
    Message(
        "attach",
        "in",
        "Deliver a seat's views to this gateway from now on. The deployment's own "
        "processes only: a gateway sends `join` with the seat token.",
        {"id": MSG_ID, "table": TABLE, "gateway": GATEWAY, "player": PLAYER, "seat": seat_field()},
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
            "seat": seat_field(),
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
            "seat": seat_field(required=False, nullable=True),
            "player": id_field("the seat's player's handle", required=False),
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
        "handover",
        "in",
        "The host makes the person in seat `to` the host of the open table (a host who "
        "goes away need not leave the table waiting for its expiry). After the start: "
        "`game_started`.",
        {
            "id": MSG_ID,
            "table": TABLE,
            "gateway": GATEWAY,
            "player": HANDLE,
            "to": seat_field("the new host's seat: a person's"),
        },
    ),
    Message(
        "close",
        "in",
        "The host closes the open table: it leaves the lobby, its players get a last "
        "view (status `over`, event `closed`). After the start: `game_started`.",
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
            "gateway": id_field("the gateway the player's views go to, if known", nullable=True),
            "bot": Field("string", enum=BOT_LEVELS, nullable=True, doc="bot level, or null"),
            "from": id_field(
                "the table the player left (null at the start or when not known)",
                required=False,
                nullable=True,
            ),
            "seeds": BRINGS_SEEDS.with_doc(
                "the player brings seeds: the table holds its next round and asks every "
                "seat that brings seeds for new ones"
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
            "count": Field("integer", nullable=True, minimum=0, maximum=6, doc="players to send"),
        },
    ),
    Message(
        "pause",
        "in",
        "A tournament's director pauses (on) or resumes this table. Paused, it finishes "
        "the round in progress, then stops: no turn clock, no house moves, acts refused "
        "`paused`; seats still change between rounds. Resumed, the next turn gets a "
        "whole clock. A lower seq than the last taken is ignored.",
        {
            "id": MSG_ID,
            "table": TABLE,
            "tournament": TOURNAMENT,
            "seq": Field("integer", minimum=1, doc="the director's pause number"),
            "on": Field("boolean"),
        },
    ),
    Message(
        "forfeit",
        "in",
        "A tournament's director takes a player out (its host kicked them): at the end "
        "of the round in progress (at once if none is played) their seat is vacated and "
        "reported `out`, as an elimination; a player still on their way here is "
        "reported joined and out at once.",
        {"id": MSG_ID, "table": TABLE, "tournament": TOURNAMENT, "player": PLAYER},
    ),
]
