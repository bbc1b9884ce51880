"""The typed errors the engine raises.

An illegal action never changes the state: the engine validates completely
before it mutates anything, and reports why with one of the published codes
(docs/rules.md, "Error codes"). Client developers match on ``code``; ``message`` is for people.
"""

from __future__ import annotations

# Rule error codes published in docs/rules.md ("Error codes"). Outside code relies on these strings.
NOT_YOUR_TURN = "not_your_turn"
BID_NOT_HIGHER = "bid_not_higher"
BID_OUT_OF_RANGE = "bid_out_of_range"
OPENING_ON_ONES = "opening_on_ones"
PALIFICO_FACE_LOCKED = "palifico_face_locked"
NO_BID_YET = "no_bid_yet"
CALZA_NOT_ALLOWED = "calza_not_allowed"
DIRECTION_REQUIRED = "direction_required"
GAME_OVER = "game_over"
# Engine extension: an action that is not well formed, or that no rule of the
# table ever allows at this point (a direction choice nobody asked for, a seat
# number that does not exist).
BAD_ACTION = "bad_action"
# Engine extension for tournaments: a seat may come in or go out only between
# rounds (before the first action of a round, or once the game is over).
NOT_BETWEEN_ROUNDS = "not_between_rounds"

RULE_ERROR_CODES: frozenset[str] = frozenset(
    {
        NOT_YOUR_TURN,
        BID_NOT_HIGHER,
        BID_OUT_OF_RANGE,
        OPENING_ON_ONES,
        PALIFICO_FACE_LOCKED,
        NO_BID_YET,
        CALZA_NOT_ALLOWED,
        DIRECTION_REQUIRED,
        GAME_OVER,
        BAD_ACTION,
        NOT_BETWEEN_ROUNDS,
    }
)


class DudoError(Exception):
    """The root of every refusal in the project: a published ``code`` that programs match
    on and a ``message`` for people. Its branches: :class:`RuleError` (the game's rules,
    here), ``WireError`` (a message that cannot be read) and ``Refusal`` (a table's or a
    tournament's own rules), both in ``dudo.wire``. It lives in the bottom layer so that
    every layer can raise a branch and every handler can catch the root
    (docs/architecture.md, "Errors")."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class RuleError(DudoError):
    """An action refused by the rules. The state is unchanged."""

    def __init__(self, code: str, message: str) -> None:
        assert code in RULE_ERROR_CODES, code
        super().__init__(code, message)


class RulesConfigError(ValueError):
    """A rules configuration that cannot describe a playable table."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"rules.{field}: {message}")
        self.field = field
        self.message = message
