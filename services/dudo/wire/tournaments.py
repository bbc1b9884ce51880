"""The messages of the director's inboxes (direction ``director``: gateways and tables →
a tournament's director) and of the ratings keeper's (direction ``ratings``)."""

from __future__ import annotations

from ..engine import MAX_SEATS
from .fields import (
    BOT_LEVELS,
    BRINGS_SEEDS,
    GATEWAY,
    IDENTITY,
    MESSAGE_ID_RE,
    MSG_ID,
    PLAYER,
    RATED_MAX,
    REPORT_FIELDS,
    REPORTS_MAX,
    REQUEST,
    RESEEDS,
    TABLE_SEEDS,
    TOURNAMENT,
    Field,
    Message,
    id_field,
)

# Who a host's control comes from: the host's entrant token (a gateway's message), or
# the player id (the deployment's own; dudo.wire.signing refuses one from a gateway).
AS_HOST = {
    "token": Field("string", required=False, maximum=1024, doc="the host's entrant token"),
    "player": id_field(PLAYER.doc, required=False),
}

DIRECTOR: list[Message] = [
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
            "host": id_field(
                "player allowed to begin it early (the deployment's own creates; a "
                "gateway's creator is named by `identity` or `request`)",
                nullable=True,
                required=False,
            ),
            "identity": IDENTITY,
            "request": REQUEST,
            "name": Field("string", maximum=64, display=True, doc="shown to players"),
            "rules": Field(
                "ref",
                ref="rules.schema.json",
                doc="preset plus overrides; every table keeps a turn clock: turn_seconds "
                "is 30 when left out, and 0 is refused (bad_rules)",
            ),
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
            "private": Field(
                "boolean",
                required=False,
                doc="not listed; registering needs the invite code the director makes "
                "(the creator's `registered` answer carries it); default false",
            ),
            "late_minutes": Field(
                "integer",
                required=False,
                minimum=0,
                maximum=240,
                doc="elimination: registration stays open this many minutes after the "
                "start, a late entrant seated where the balancing puts them; default 0",
            ),
            "reentries": Field(
                "integer",
                required=False,
                minimum=0,
                maximum=10,
                doc="elimination, within late registration: how many times an entrant "
                "who is out may register again (another buy-in, a fresh stack); "
                "default 0",
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
            "player": id_field(PLAYER.doc, required=False),
            "name": Field("string", maximum=32, display=True, doc="display name"),
            "bot": Field("string", enum=BOT_LEVELS, nullable=True, doc="a bot client"),
            "invite": Field(
                "string",
                required=False,
                maximum=64,
                pattern=r"^[A-Za-z0-9_-]+$",
                doc="a private tournament's invite code",
            ),
            "seeds": BRINGS_SEEDS,
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
            "player": id_field(PLAYER.doc, required=False),
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
            **AS_HOST,
        },
    ),
    Message(
        "organize",
        "director",
        "The host runs the tournament: `pause` (each table finishes its round, then its "
        "clock stops and acts are refused `paused`), `resume`, `cancel` (before or during: "
        "the tables close at their round's end, every buy-in goes back), `kick` (the "
        "entrant `target` names by handle: before the start unregistered, buy-in back; "
        "after it, out at the end of their table's round, placed as if eliminated) and "
        "`announce` (`text`, shown to every entrant; empty: none). Answered with the "
        "standings, or an error.",
        {
            "id": MSG_ID,
            "tournament": TOURNAMENT,
            "gateway": GATEWAY,
            **AS_HOST,
            "action": Field("string", enum=("pause", "resume", "cancel", "kick", "announce")),
            "target": id_field("kick: the entrant's public handle", required=False),
            "text": Field(
                "string",
                required=False,
                maximum=280,
                doc="announce: the line every entrant sees (controls and invisible "
                "characters refused; spaces collapsed)",
            ),
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
        {
            "id": MSG_ID,
            "tournament": TOURNAMENT,
            "gateway": GATEWAY,
            "history": Field(
                "boolean",
                required=False,
                doc="also every closed table's history, by name and handle (the "
                "organizer's results); default false",
            ),
            "token": Field(
                "string",
                required=False,
                maximum=1024,
                doc="an entrant token of this tournament: a private tournament's "
                "standings are its entrants' (or `invite`)",
            ),
            "invite": Field(
                "string",
                required=False,
                maximum=64,
                doc="a private tournament's invite code, as its link carries it",
            ),
        },
    ),
    Message(
        "rated",
        "director",
        "The ratings keeper's answer to a finished tournament's `result`: each rated "
        "entrant's rating (the leaderboard's ordinal, mu - 3 sigma) before and after it, "
        "for the tournament's results. At most 150 entrants a message (a large field "
        "gets several, numbered by their ids); a repeat (same id) changes nothing.",
        {
            "id": MSG_ID,
            "tournament": TOURNAMENT,
            "changes": Field(
                "array",
                minimum=1,
                maximum=RATED_MAX,
                items=Field("array", minimum=3, maximum=3),
                doc="[player, ordinal before, ordinal after]",
            ),
        },
    ),
    Message(
        "table_history",
        "director",
        "A tournament table closed: who sat down there and who left, by round, for the "
        "tournament's records (answered to a `standings` request with `history`). "
        "Written by the table with the commit that closed it, in parts that each stay "
        "under the inbox's size cap; a repeat (same id) changes nothing.",
        {
            "id": MSG_ID,
            "tournament": TOURNAMENT,
            "table": id_field("the table"),
            "part": Field("integer", minimum=0, maximum=999, doc="this part, from 0"),
            "parts": Field("integer", minimum=1, maximum=1000, doc="how many parts"),
            "rows": Field(
                "array",
                maximum=1000,
                items=Field("array", minimum=5, maximum=5),
                doc="[round, time (ms), [[player, dice] who sat down], [[player, dice] "
                "who left for another table], [players out]], oldest first; dice 0 for a "
                "player taken out on the way here",
            ),
            "seeds": TABLE_SEEDS.with_doc(
                "in the last part: what the table's dice came from (shown once it closed), "
                "but for its `reseeds`, which come in the parts' `reseeds`"
            ),
            "reseeds": RESEEDS.with_doc(
                "the seeds given after arrivals, in order, spread over the parts as their "
                "size allows: the director joins them into the table's `seeds.reseeds`"
            ),
        },
    ),
    Message(
        "tournament_timeout",
        "director",
        "A tournament's timer fired: its start time or the registration's expiry, an "
        "ended tournament leaving the listing (these only at this version), or, while "
        "it runs, standings held back (sent then, at any version).",
        {"id": MSG_ID, "tournament": TOURNAMENT, "version": Field("integer", minimum=0)},
    ),
]

RATINGS: list[Message] = [
    Message(
        "result",
        "ratings",
        "A finished game or tournament, for the ratings and the players' statistics: "
        "its people from first to last place (bots are neither rated nor counted; one "
        "person's game against bots is counted, not rated) and, from a table, each "
        "person's calls. Written with the commit that ends it; a repeat (same id) "
        "changes nothing.",
        {
            "id": Field("string", pattern=MESSAGE_ID_RE, doc="unique per result"),
            "ratings": Field("string", enum=("ratings",), doc="the ratings entity"),
            "source": Field("string", enum=("table", "tournament")),
            "tournament": id_field(
                "source tournament: the tournament, answered with `rated` (its entrants' "
                "rating changes, for its results)",
                required=False,
            ),
            "ranking": Field(
                "array",
                minimum=1,
                maximum=100_000,
                items=Field("array", minimum=2, maximum=2),
                doc="[player, name] from first to last place (rated from two people up)",
            ),
            "tallies": Field(
                "array",
                required=False,
                maximum=MAX_SEATS,
                items=Field("array", minimum=6, maximum=6),
                doc="a table's: [player, won (1 or 0), Dudo calls, of them right, Calza "
                "calls, of them right] for each person of the ranking",
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
