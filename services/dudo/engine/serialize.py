"""Compact msgpack form of a full state, and back.

The full state includes every hand and the game secret: it is for the table's
owner (the worker and Redis), never for a client. Clients get views
(:mod:`dudo.engine.observer`).

Layout: a msgpack array whose first element is the format number, then the
fields in a fixed order. A new field means a new format number; loading an
unknown format is refused rather than guessed.
"""

from __future__ import annotations

import msgspec

from .dice import commitment
from .rules import rules_from_tuple, rules_tuple
from .state import PHASES, State

FORMAT = 1
# msgspec's msgpack codec in C (reused objects, as its docs advise): the bytes are
# plain msgpack, written on every action by the worker.
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder()
_PHASE_CODE = {phase: i for i, phase in enumerate(PHASES)}


class StateFormatError(ValueError):
    """Bytes that are not a state this engine wrote."""


def to_bytes(state: State) -> bytes:
    return _ENCODER.encode(
        [
            FORMAT,
            rules_tuple(state.rules),
            state.counts,
            state.hands,
            state.round_no,
            state.opener,
            state.turn,
            state.direction,
            state.palifico,
            _PHASE_CODE[state.phase],
            state.bids,
            state.secret,
            state.seed,
            state.last_round,
            state.eliminated,
            state.winner,
            state.version,
        ]
    )


def from_bytes(data: bytes) -> State:
    try:
        raw = _DECODER.decode(data)
    except Exception as exc:  # malformed, truncated, trailing bytes
        raise StateFormatError(f"not msgpack: {exc}") from exc
    if not isinstance(raw, list) or not raw or raw[0] != FORMAT:
        raise StateFormatError(f"unknown state format {raw[0] if raw else None!r}")
    if len(raw) != 17:
        raise StateFormatError(f"state format {FORMAT} has 17 fields, got {len(raw)}")
    try:
        state = State()
        (
            _,
            rules,
            state.counts,
            hands,
            state.round_no,
            state.opener,
            state.turn,
            state.direction,
            state.palifico,
            phase,
            bids,
            state.secret,
            state.seed,
            state.last_round,
            state.eliminated,
            state.winner,
            state.version,
        ) = raw
        state.rules = rules_from_tuple(tuple(rules))
        state.hands = [tuple(hand) for hand in hands]
        state.phase = PHASES[phase]
        state.bids = [(s, q, f) for s, q, f in bids]
        state.commitment = commitment(state.seed) if state.seed is not None else None
    except (TypeError, ValueError, IndexError) as exc:
        raise StateFormatError(f"malformed state: {exc}") from exc
    return state
