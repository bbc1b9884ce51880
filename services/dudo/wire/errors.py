"""The protocols' error codes, and two branches of the error tree: :class:`WireError` (a
message that cannot be read) and :class:`Refusal` (a table's or tournament's refusal of
one that can). Their root, ``DudoError``, and the rules' branch, ``RuleError``, are the
engine's."""

from __future__ import annotations

from typing import Any

from ..engine import BAD_ACTION, DudoError

# Protocol error codes (the rule codes, docs/rules.md, come from the engine).
BAD_MESSAGE = "bad_message"  # not msgpack/JSON, wrong types, unknown type or field
TOO_LARGE = "too_large"  # over the size cap
UNSUPPORTED_VERSION = "unsupported_version"
BAD_RULES = "bad_rules"
UNKNOWN_TABLE = "unknown_table"
UNKNOWN_TOURNAMENT = "unknown_tournament"
UNKNOWN_PLAYER = "unknown_player"  # HTTP: no profile for that handle
TOURNAMENT_FULL = "tournament_full"
TABLE_EXISTS = "table_exists"
TABLE_FULL = "table_full"
SEAT_TAKEN = "seat_taken"
NAME_TAKEN = "name_taken"  # a tournament has an entrant of that name (or one like it)
NOT_SEATED = "not_seated"
NOT_ATTACHED = "not_attached"  # the seat is attached to another gateway
NOT_HOST = "not_host"
GAME_NOT_STARTED = "game_not_started"
GAME_STARTED = "game_started"
GAME_NOT_OVER = "game_not_over"  # a rematch proposed before the game's end
# a tournament table's action while its organizer has the tournament paused
PAUSED = "paused"
TOURNAMENT_OVER = "tournament_over"  # an organizer's control after the end (or a cancel)
TOO_FEW_PLAYERS = "too_few_players"
DUPLICATE = "duplicate"  # an action id seen before: it took effect once already
RATE_LIMITED = "rate_limited"  # gateway
UNAUTHORIZED = "unauthorized"  # gateway: bad or foreign seat token
UNAVAILABLE = "unavailable"  # gateway: Redis cannot be reached right now; retry
TIMEOUT = "timeout"  # gateway: no worker answered in time; the request may still apply
INTERNAL = "internal"
# a seed that does not match its seat's commitment, or sent when no seed is asked for
BAD_SEED = "bad_seed"

PROTOCOL_ERROR_CODES = frozenset(
    {
        BAD_MESSAGE,
        TOO_LARGE,
        UNSUPPORTED_VERSION,
        BAD_RULES,
        UNKNOWN_TABLE,
        UNKNOWN_TOURNAMENT,
        UNKNOWN_PLAYER,
        TOURNAMENT_FULL,
        TABLE_EXISTS,
        TABLE_FULL,
        SEAT_TAKEN,
        NAME_TAKEN,
        NOT_SEATED,
        NOT_ATTACHED,
        NOT_HOST,
        GAME_NOT_STARTED,
        GAME_STARTED,
        GAME_NOT_OVER,
        PAUSED,
        TOURNAMENT_OVER,
        TOO_FEW_PLAYERS,
        DUPLICATE,
        RATE_LIMITED,
        UNAUTHORIZED,
        UNAVAILABLE,
        TIMEOUT,
        INTERNAL,
        BAD_SEED,
    }
)
# What decoding a message can answer: a protocol code, or `bad_action` for a malformed
# `action` (a rule code: docs/rules.md).
DECODE_ERROR_CODES = PROTOCOL_ERROR_CODES | {BAD_ACTION}


class WireError(DudoError):
    """A message that cannot be read: malformed, too large, of an unknown type or version.
    ``known`` holds the fields that could be read (``id``, ``table``, ``gateway``...), so
    the error can still reach whoever sent it."""

    def __init__(
        self,
        code: str,
        message: str,
        known: dict[str, Any] | None = None,
        named: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(code, message)
        self.known = known or {}
        # What the message claims (its gateway, id, type) where it must not be answered
        # (an entry not signed by the gateway it names): for that gateway's refused
        # stream (keys.refused), never for a reply.
        self.named = named or {}


class Refusal(DudoError):
    """A well-formed message that a table or a tournament refuses by its own rules (the
    seat is taken, the game has started, only the host may start): nothing changed. The
    game's own refusals are the engine's ``RuleError``."""

    def __init__(self, code: str, message: str) -> None:
        assert code in PROTOCOL_ERROR_CODES, code
        super().__init__(code, message)
