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

from .actions import Action, Bid, Calza, Direction, Dudo, action_from_dict
from .dice import commitment, roll, round_seed
from .errors import RULE_ERROR_CODES, DudoError, RuleError, RulesConfigError
from .observer import all_views, private_view, public_view, seat_view, spectator_view
from .rules import PRESETS, Rules, preset, rules_dict, rules_from_tuple, rules_tuple
from .seating import deal_round, forfeit, hold_deal, leavers, reseat, seated_game
from .serialize import StateFormatError, from_bytes, to_bytes
from .state import BIDDING, DIRECTION, OVER, State, new_game

__all__ = [
    "BIDDING",
    "DIRECTION",
    "OVER",
    "PRESETS",
    "RULE_ERROR_CODES",
    "Action",
    "Bid",
    "Calza",
    "Direction",
    "Dudo",
    "DudoError",
    "RuleError",
    "Rules",
    "RulesConfigError",
    "State",
    "StateFormatError",
    "action_from_dict",
    "all_views",
    "commitment",
    "deal_round",
    "forfeit",
    "from_bytes",
    "hold_deal",
    "leavers",
    "new_game",
    "preset",
    "private_view",
    "public_view",
    "reseat",
    "roll",
    "round_seed",
    "rules_dict",
    "rules_from_tuple",
    "rules_tuple",
    "seat_view",
    "seated_game",
    "spectator_view",
    "to_bytes",
]
