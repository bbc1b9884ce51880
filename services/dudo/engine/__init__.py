"""The Dudo rules engine: pure Python, no I/O, no clock, no global RNG.

Public API::

    rules = Rules.from_dict({"preset": "classic"})
    state = new_game(rules, seats=4, secret=os.urandom(32))
    events = state.apply(seat, action_from_dict({"type": "bid", "quantity": 3, "face": 5}))
    view = seat_view(state, seat)          # what that seat may see
    events = reseat(state, leave=[2], join=[(3, 4)])   # between rounds only (tournaments)
    blob = to_bytes(state); same = from_bytes(blob)

Everything a client receives is a view or an event; both are plain data.
"""

from .actions import ACTION_FIELDS, Action, Bid, Calza, Direction, Dudo, action_from_dict
from .bids import count_matching
from .dice import commitment, roll, round_seed
from .errors import BAD_ACTION, RULE_ERROR_CODES, DudoError, RuleError, RulesConfigError
from .fairness import (
    SERVER_SEED_BYTES,
    SeedError,
    client_commitment,
    game_secret,
    public_client_seed,
    server_commitment,
    verify,
)
from .observer import all_views, private_view, public_view, seat_view, spectator_view
from .odds import at_least, exactly, most_needed, single_mode
from .rules import (
    MAX_SEATS,
    PLAY_OPTIONS,
    PRESETS,
    Rules,
    options,
    preset,
    rules_dict,
    rules_from_tuple,
    rules_tuple,
)
from .seating import deal_round, forfeit, hold_deal, leavers, reseat, seated_game
from .serialize import StateFormatError, from_bytes, to_bytes
from .state import BIDDING, DIRECTION, OVER, State, new_game

__all__ = [
    "ACTION_FIELDS",
    "BAD_ACTION",
    "BIDDING",
    "DIRECTION",
    "MAX_SEATS",
    "OVER",
    "PLAY_OPTIONS",
    "PRESETS",
    "RULE_ERROR_CODES",
    "SERVER_SEED_BYTES",
    "Action",
    "Bid",
    "Calza",
    "Direction",
    "Dudo",
    "DudoError",
    "RuleError",
    "Rules",
    "RulesConfigError",
    "SeedError",
    "State",
    "StateFormatError",
    "action_from_dict",
    "all_views",
    "at_least",
    "client_commitment",
    "commitment",
    "count_matching",
    "deal_round",
    "exactly",
    "forfeit",
    "from_bytes",
    "game_secret",
    "hold_deal",
    "leavers",
    "most_needed",
    "new_game",
    "odds",
    "options",
    "preset",
    "private_view",
    "public_client_seed",
    "public_view",
    "reseat",
    "roll",
    "round_seed",
    "rules_dict",
    "rules_from_tuple",
    "rules_tuple",
    "seat_view",
    "seated_game",
    "server_commitment",
    "single_mode",
    "spectator_view",
    "to_bytes",
    "verify",
]
