"""Seats coming and going between rounds: what a tournament's table balancing needs.

A tournament moves players between tables, and a moved player keeps their dice
count. The engine allows it only *between rounds*: once the game is over, or at
the start of a round before anyone has acted in it (see
:attr:`State.between_rounds`). A service that wants "after this round" applies
the change in the same step as the action that ends the round, so that no view
of the new round is ever seen with the old seating.

What a reseat does (docs/rules.md, "Seats between rounds"):

- ``leave`` seats give up their dice: their count becomes 0. They are *vacant*,
  not eliminated (they did not lose), so they are not in ``eliminated``.
- ``join`` puts a player with ``dice`` dice into a seat whose count is 0 (a
  vacant seat, an eliminated one, or one a ``leave`` of the same call emptied).
  A reused eliminated seat leaves ``eliminated``.
- The round in progress keeps its number and its seed (so its commitment still
  holds): every seat's dice are rolled again from that seed, and since each
  seat's dice depend only on the seed and the seat (:func:`dice.roll`), the
  seats that stayed keep exactly the dice they had. Palifico stays as it was.
- The opener stays if they still have dice, else the next seat with dice in the
  direction of play opens; ``opener`` overrides that.
- Fewer than two seats with dice: the game *halts* (phase ``over`` without a new
  winner, nobody's turn, no dice). A later reseat that brings two or more seats
  back starts a new round; so does one that fills a game that was over.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import errors as E
from .dice import roll
from .errors import RuleError
from .rules import Rules
from .state import OVER, Event, State, new_game


def reseat(
    state: State,
    leave: Iterable[int] = (),
    join: Iterable[tuple[int, int]] = (),
    *,
    opener: int | None = None,
) -> list[Event]:
    """Take ``leave`` seats out and put ``join`` ``(seat, dice)`` pairs in, between rounds.

    Raises :class:`RuleError` (``not_between_rounds`` or ``bad_action``) and
    changes nothing if the change is not allowed.
    """
    leaving = list(leave)
    joining = [(seat, dice) for seat, dice in join]
    counts = _new_counts(state, leaving, joining)
    alive = [s for s, c in enumerate(counts) if c > 0]
    if opener is not None and opener not in alive:
        raise RuleError(E.BAD_ACTION, f"opener {opener} is not a seat with dice")
    was_over = state.phase == OVER
    held = state.undealt  # (a held round stays held: its dice come at deal_round)
    if not was_over and joining and state.seed is None and not held:
        raise RuleError(E.BAD_ACTION, "a round with dealt dice cannot seat anyone new")

    # Validated: from here on nothing raises.
    events: list[Event] = [
        {"type": "seat_out", "seat": seat, "dice": state.counts[seat]} for seat in leaving
    ]
    events.extend({"type": "seat_in", "seat": seat, "dice": dice} for seat, dice in joining)
    state.counts = counts
    joined = {seat for seat, _ in joining}
    state.eliminated = [seat for seat in state.eliminated if seat not in joined]
    state.version += 1
    if len(alive) < 2:
        if not was_over:
            state._stop()  # halted: over without a new winner
            events.append({"type": "halted", "dice_counts": list(counts)})
        return events
    if opener is None:
        opener = _default_opener(state, alive, was_over)
    if was_over:
        state.winner = None
        state.palifico = False
        events.append(state._start_round(opener))
        return events
    state.opener = opener
    state.turn = None if held else opener
    if state.seed is not None:
        state.hands = roll(state.seed, counts)
    else:  # dealt dice (or none yet, held), nobody new dealt: the seats that stayed keep theirs
        state.hands = [hand if counts[s] else () for s, hand in enumerate(state.hands)]
    return events


def hold_deal(state: State) -> None:
    """Take this round's dice back before anyone has seen them used: the round keeps its
    number, opener and palifico, but has no dice, seed or commitment, and it is nobody's
    turn (:attr:`State.undealt`) until :func:`deal_round`. A tournament's table does this
    after someone arrived, to deal the round from seeds given after the change
    (docs/security.md, "Arrivals"). Raises :class:`RuleError`
    (``not_between_rounds``) and changes nothing outside a round's start."""
    if state.phase == OVER or not state.between_rounds or state.undealt:
        raise RuleError(E.NOT_BETWEEN_ROUNDS, "only a round not yet played can be held")
    state.seed = state.commitment = state.turn = None
    state.hands = [() for _ in state.counts]
    state.version += 1


def deal_round(state: State, secret: bytes) -> Event:
    """Deal the held round from ``secret``, which from now on deals every round after it
    too; the ``round_start`` event of the round, as :func:`new_game` and a reveal give
    it. Raises :class:`RuleError` (``bad_action``) when no round is held, ValueError
    for a secret shorter than 16 bytes."""
    if not state.undealt:
        raise RuleError(E.BAD_ACTION, "no round is held for a deal")
    if not isinstance(secret, bytes) or len(secret) < 16:
        raise ValueError("secret must be at least 16 bytes")
    state.secret = secret
    state.turn = state.opener
    state.version += 1
    return state._deal_round()


def forfeit(state: State, seats: Iterable[int]) -> list[Event]:
    """Take ``seats`` out of the game between rounds, as *eliminated* (a table's idle
    policy: a person whose turns the house played too often in a row). Unlike a
    ``leave`` they are placed: last among those out so far, in the order given. With
    one seat left it wins (``game_over``); the round otherwise goes on as after a
    reseat (same seed, the others keep their dice). Raises :class:`RuleError`
    (``not_between_rounds``, ``bad_action``: no such seat with dice, or nobody would
    be left) and changes nothing then."""
    out = list(dict.fromkeys(seats))
    counts = _new_counts(state, out, [])
    alive = [s for s, c in enumerate(counts) if c > 0]
    if not alive:
        raise RuleError(E.BAD_ACTION, "a forfeit must leave somebody playing")
    if len(alive) > 1:
        events = reseat(state, leave=out)
        events = [e for e in events if e["type"] != "seat_out"]  # out, not vacant
    else:
        events = []
        state.counts = counts
        state.version += 1
    state.eliminated += out
    events = [{"type": "eliminated", "seat": seat} for seat in out] + events
    if len(alive) == 1:
        state._end(alive[0], events)
    return events


def seated_game(rules: Rules, dice_counts: list[int], secret: bytes, *, opener: int) -> State:
    """A game at a table with room: the seats without dice are vacant, not eliminated
    (a tournament seats players there later)."""
    state = new_game(rules, len(dice_counts), secret, opener=opener, dice_counts=dice_counts)
    state.eliminated = []
    return state


def leavers(state: State, count: int) -> list[int]:
    """Which ``count`` seats a table gives up when told to send that many away.

    The seats that would act last in the round about to be played: the play
    order from the opener in the direction of play, taken from its end, so the
    opener (who lost the last round and earned the first word) stays. All seats
    with dice when ``count`` is as many or more."""
    alive = [s for s, c in enumerate(state.counts) if c > 0]
    if count >= len(alive):
        return alive
    if count <= 0:
        return []
    start = state.opener if state.opener is not None and state.counts[state.opener] else alive[0]
    order = [start]
    while len(order) < len(alive):
        order.append(state.next_alive(order[-1]))
    return sorted(order[-count:])


def _new_counts(state: State, leaving: list[int], joining: list[tuple[int, int]]) -> list[int]:
    """The dice counts after the change, or the reason it is refused."""
    if not state.between_rounds:
        raise RuleError(E.NOT_BETWEEN_ROUNDS, "seats change only between rounds")
    seats = len(state.counts)
    counts = list(state.counts)
    for seat in leaving:
        if not _is_int(seat) or not 0 <= seat < seats:
            raise RuleError(E.BAD_ACTION, f"there is no seat {seat!r}")
        if counts[seat] == 0:
            raise RuleError(E.BAD_ACTION, f"seat {seat} has no dice to leave with")
        counts[seat] = 0
    taken: set[int] = set()
    for seat, dice in joining:
        if not _is_int(seat) or not 0 <= seat < seats:
            raise RuleError(E.BAD_ACTION, f"there is no seat {seat!r}")
        if counts[seat] != 0 or seat in taken:
            raise RuleError(E.BAD_ACTION, f"seat {seat} is not free")
        if not _is_int(dice) or not 1 <= dice <= state.rules.max_dice:
            raise RuleError(
                E.BAD_ACTION, f"a player joins with 1..{state.rules.max_dice} dice, not {dice!r}"
            )
        taken.add(seat)
        counts[seat] = dice
    return counts


def _default_opener(state: State, alive: list[int], was_over: bool) -> int:
    """Who opens after a reseat: the opener if still in, else the next seat with dice."""
    if was_over or state.opener is None:
        return alive[0]
    opener = state.opener
    if state.counts[opener] > 0:
        return opener
    return state.next_alive(opener)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
