"""What each seat, and a spectator, may see: the redacted views.

A view is built by inclusion. It lists, field by field, what the viewer may
know; it is never a copy of the state with secrets removed, so a field added
to the state stays private until someone decides to show it here.

Everyone sees: the rules, every seat's dice count, the bids of this round,
whose turn it is, the commitment to this round's dice, and the previous
round's reveal (every die, the count, the seed). A seat additionally sees its
own dice, what it may do, and in assisted mode its odds (the opener choosing
the direction of play: the odds of its opening bids). A seat that is out of the
game sees what a spectator sees, with its seat number: no hand, nothing to do.
"""

from __future__ import annotations

from typing import Any

from .odds import seat_odds
from .rules import rules_dict
from .state import BIDDING, DIRECTION, State

View = dict[str, Any]


def public_view(state: State) -> View:
    """The part of every view that anyone may see. A spectator's view is exactly this."""
    return {
        "version": state.version,
        "phase": state.phase,
        "round": state.round_no,
        "rules": rules_dict(state.rules),
        "dice_counts": list(state.counts),
        "dice_in_play": state.dice_in_play,
        "opener": state.opener,
        "turn": state.turn,
        "direction": state.direction,
        "palifico": state.palifico,
        "commitment": state.commitment,
        "bids": [list(bid) for bid in state.bids],
        "last_round": _copy_round(state.last_round),
        "eliminated": list(state.eliminated),
        "winner": state.winner,
        "standings": state.standings(),
        "chips": state.chips(),
    }


def _copy_round(last: dict[str, Any] | None) -> dict[str, Any] | None:
    # A view is the caller's to keep or change; it must not share lists with the state.
    if last is None:
        return None
    return {**last, "bid": list(last["bid"]), "dice": [list(hand) for hand in last["dice"]]}


def spectator_view(state: State) -> View:
    view = public_view(state)
    view["seat"] = None
    return view


def private_view(state: State, seat: int) -> View:
    """What only ``seat`` may see: its own dice, what it may do, and its odds. A seat
    that is out has nothing of its own left: its view is a spectator's, with its
    seat number (no ``dice``, no ``legal``)."""
    if state.counts[seat] == 0:
        return {"seat": seat}
    view: View = {"seat": seat, "dice": list(state.hands[seat])}
    view["legal"] = legal = state.legal(seat)
    if state.undealt:
        return view  # no dice yet, nothing to weigh
    if state.rules.assisted and state.phase == BIDDING:
        view["odds"] = seat_odds(state, seat, legal)
    elif state.rules.assisted and state.phase == DIRECTION and seat == state.turn:
        # The opener choosing the direction sees the odds of the opening bids.
        opening = {**legal, "bid": state.opening_floors()}
        view["odds"] = seat_odds(state, seat, opening)
    return view


def seat_view(state: State, seat: int, public: View | None = None) -> View:
    """The whole view of ``seat``: the public part plus its private part."""
    return {**(public if public is not None else public_view(state)), **private_view(state, seat)}


def all_views(state: State) -> tuple[View, list[View]]:
    """The spectator view and every seat's view, sharing one public part.

    Built once per version for delivery: the returned views share their public
    lists and dicts with each other (never with the state), so treat them as
    read-only, or copy one before changing it.
    """
    public = public_view(state)
    return {**public, "seat": None}, [seat_view(state, s, public) for s in range(state.seats)]
