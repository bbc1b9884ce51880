"""The game state and its one way to change: :meth:`State.apply`.

A state is plain data (counts, hands, bids, whose turn) plus the rules. It
never draws randomness or reads a clock: round dice come from the game secret
(see :mod:`dudo.engine.dice`), so a state is deterministic and can be stored,
moved between workers and replayed.

``apply`` validates the whole action first and only then mutates, so a refused
action leaves the state (and its serialized bytes) untouched. Every applied
action bumps ``version``; it returns the public events it produced.
"""

from __future__ import annotations

from typing import Any

from . import errors as E
from .actions import Action, Bid, Calza, Direction, Dudo
from .bids import FACES, count_matching, raise_floors
from .dice import SECRET_BYTES, commitment, roll, round_seed
from .errors import RuleError
from .rules import Rules

BIDDING = "bidding"
DIRECTION = "direction"
OVER = "over"
PHASES = (BIDDING, DIRECTION, OVER)

Event = dict[str, Any]
BidRecord = tuple[int, int, int]  # (seat, quantity, face)
Refusal = tuple[str, str] | None  # (error code, message), or None: allowed

# The order of :meth:`State._refusals`' answer.
_KIND_INDEX: dict[type, int] = {Bid: 0, Dudo: 1, Calza: 2, Direction: 3}
_ALL_OVER = ((E.GAME_OVER, "the game is over"),) * 4
_NOT_DEALT = ((E.NOT_YOUR_TURN, "nobody's turn: this round's dice are not dealt yet"),) * 4
_DIRECTION_REQUIRED = (E.DIRECTION_REQUIRED, "choose the direction of play first")
_DIRECTION_FIRST = (_DIRECTION_REQUIRED, _DIRECTION_REQUIRED, _DIRECTION_REQUIRED, None)
_NO_DIRECTION_PENDING = (E.BAD_ACTION, "no direction choice is pending")
_NO_BID_TO_DOUBT = (E.NO_BID_YET, "there is no bid to doubt yet")
_NO_BID_TO_CALL = (E.NO_BID_YET, "there is no bid to call yet")
_OPENING_ON_ONES = (E.OPENING_ON_ONES, "a round may not open on ones")
_NO_CALZA = (E.CALZA_NOT_ALLOWED, "these rules have no Calza")
_LAST_BIDDER_CALZA = (E.CALZA_NOT_ALLOWED, "the last bidder may not call Calza")
_CALZA_NEEDS_LOST_DIE = (E.CALZA_NOT_ALLOWED, "only a player who has lost a die may call Calza")


# "It is seat N's turn", made once per seat number rather than once per view.
_TURN_OF = {seat: (E.NOT_YOUR_TURN, f"it is seat {seat}'s turn") for seat in range(6)}


def _no_seat(seat: int) -> tuple[str, str]:
    return E.BAD_ACTION, f"there is no seat {seat}"


class State:
    """One table's game: who has how many dice, this round's hands and bids, whose turn.

    Create it with :func:`new_game`; change it only with :meth:`apply`.
    Attributes are read freely by the observer and the serializer.
    """

    __slots__ = (
        "bids",
        "commitment",
        "counts",
        "direction",
        "eliminated",
        "hands",
        "last_round",
        "opener",
        "palifico",
        "phase",
        "round_no",
        "rules",
        "secret",
        "seed",
        "turn",
        "version",
        "winner",
    )

    rules: Rules
    counts: list[int]
    hands: list[tuple[int, ...]]
    round_no: int
    opener: int | None
    turn: int | None
    direction: int
    palifico: bool
    phase: str
    bids: list[BidRecord]
    secret: bytes
    seed: bytes | None
    commitment: str | None
    last_round: dict[str, Any] | None
    eliminated: list[int]
    winner: int | None
    version: int

    # -- reading --------------------------------------------------------------

    @property
    def seats(self) -> int:
        return len(self.counts)

    @property
    def dice_in_play(self) -> int:
        return sum(self.counts)

    @property
    def ones_wild(self) -> bool:
        """Do ones count as the bid face this round?"""
        rules = self.rules
        return rules.wild_ones and (not self.palifico or rules.palifico_wild_ones)

    @property
    def between_rounds(self) -> bool:
        """May seats come and go now? Yes once the game is over, and at the start of a
        round before anyone has acted in it (not even the opener's direction choice)."""
        if self.phase == OVER:
            return True
        return not self.bids and not (self.phase == BIDDING and self.rules.loser_chooses_direction)

    @property
    def undealt(self) -> bool:
        """A round held before its deal (:func:`~dudo.engine.seating.hold_deal`): it has
        begun (its number, its opener) but has no dice yet, so it is nobody's turn."""
        return self.phase != OVER and self.turn is None

    @property
    def standing_bid(self) -> BidRecord | None:
        return self.bids[-1] if self.bids else None

    def alive(self, seat: int) -> bool:
        return self.counts[seat] > 0

    def next_alive(self, seat: int) -> int:
        """The next seat after ``seat`` in the direction of play that still has dice."""
        n = len(self.counts)
        step = self.direction
        nxt = (seat + step) % n
        while self.counts[nxt] == 0:
            nxt = (nxt + step) % n
        return nxt

    def standings(self) -> list[int]:
        """Seats from first to last place: the winner, then the latest eliminated first."""
        if self.winner is None:
            return []
        return [self.winner, *reversed(self.eliminated)]

    def chips(self) -> list[int] | None:
        """Chip changes at the end of the game: the winner takes the pot (seed 003)."""
        stake = self.rules.stake
        if self.winner is None or stake == 0:
            return None
        result = [-stake] * len(self.counts)
        result[self.winner] = stake * (len(self.counts) - 1)
        return result

    # -- what may a seat do -----------------------------------------------------

    def _refusals(self, seat: int) -> tuple[Refusal, Refusal, Refusal, Refusal]:
        """Why ``seat`` may not bid, call Dudo, call Calza, or choose the direction now.

        Each entry is ``(code, message)``, or None where the seat may. This one
        function serves both :meth:`apply` (which raises the refusal) and
        :meth:`legal` (which lists what is allowed), so the two never disagree.
        Bid amounts are checked separately by :meth:`_bid_floors`.
        """
        if self.phase == OVER:
            return _ALL_OVER
        if self.turn is None:
            return _NOT_DEALT
        if not 0 <= seat < len(self.counts):
            return (_no_seat(seat),) * 4
        if self.counts[seat] == 0:
            return ((E.NOT_YOUR_TURN, f"seat {seat} is out of the game"),) * 4
        if self.phase == DIRECTION:
            if seat != self.opener:
                return ((E.NOT_YOUR_TURN, f"seat {self.opener} is choosing the direction"),) * 4
            return _DIRECTION_FIRST
        if seat == self.turn:
            bid = None
            dudo = None if self.bids else _NO_BID_TO_DOUBT
        else:
            bid = dudo = _TURN_OF[self.turn]
        return bid, dudo, self._calza_refusal(seat), _NO_DIRECTION_PENDING

    def _calza_refusal(self, seat: int) -> Refusal:
        rules = self.rules
        if rules.calza == "off":
            return _NO_CALZA
        if rules.calza == "turn" and seat != self.turn:
            return _TURN_OF[self.turn]
        if not self.bids:
            return _NO_BID_TO_CALL
        if seat == self.bids[-1][0]:
            return _LAST_BIDDER_CALZA
        if rules.calza_needs_lost_die and self.counts[seat] >= rules.start_dice:
            return _CALZA_NEEDS_LOST_DIE
        return None

    def _may_open_on_ones(self) -> bool:
        if self.palifico:
            return True  # a palifico round may open on any face, ones included
        mode = self.rules.opening_ones
        if mode == "always":
            return True
        return mode == "single_die" and self.opener is not None and self.counts[self.opener] == 1

    def _bid_floors(self) -> list[int | tuple[str, str]]:
        """Per face 1..6, the lowest legal quantity now, or why no bid on that face is legal."""
        if not self.bids:
            return [1 if self._may_open_on_ones() else _OPENING_ON_ONES, 1, 1, 1, 1, 1]
        _, quantity, prev_face = self.bids[-1]
        floors = raise_floors((quantity, prev_face), self.ones_wild)
        if self.palifico:
            locked = self.bids[0][2]
            refusal = (E.PALIFICO_FACE_LOCKED, f"in a palifico round the face stays {locked}")
            return [
                floor if face == locked else refusal
                for face, floor in zip(FACES, floors, strict=True)
            ]
        return list(floors)

    def opening_floors(self) -> list[int | None]:
        """During the opener's direction choice: the lowest quantity per face of the
        opening bid that follows it (None where no opening bid on that face is legal)."""
        total = sum(self.counts)
        return [f if isinstance(f, int) and f <= total else None for f in self._bid_floors()]

    def legal(self, seat: int) -> dict[str, Any]:
        """What ``seat`` may do now, compactly: the plain-data summary the views carry.

        ``bid`` lists, for faces 1..6, the lowest legal quantity or None (every
        quantity from there up to ``max_quantity`` is legal).
        """
        bid, dudo, calza, direction = self._refusals(seat)
        total = sum(self.counts)
        floors: list[int | None] = [None] * 6
        if bid is None:
            for i, floor in enumerate(self._bid_floors()):
                if isinstance(floor, int) and floor <= total:
                    floors[i] = floor
        return {
            "bid": floors,
            "max_quantity": total,
            "dudo": dudo is None,
            "calza": calza is None,
            "direction": direction is None,
        }

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may take now, listed one by one."""
        summary = self.legal(seat)
        result: list[Action] = []
        top = summary["max_quantity"]
        for face, floor in zip(FACES, summary["bid"], strict=True):
            if floor is not None:
                result.extend(Bid(quantity, face) for quantity in range(floor, top + 1))
        if summary["dudo"]:
            result.append(Dudo())
        if summary["calza"]:
            result.append(Calza())
        if summary["direction"]:
            result.extend((Direction(1), Direction(-1)))
        return result

    # -- changing ---------------------------------------------------------------

    def apply(self, seat: int, action: Action) -> list[Event]:
        """Apply ``seat``'s action, or raise :class:`RuleError` and change nothing."""
        kind = type(action)
        index = _KIND_INDEX.get(kind)
        if index is None:
            raise RuleError(E.BAD_ACTION, f"not an action: {action!r}")
        refusal = self._refusals(seat)[index]
        if refusal is not None:
            raise RuleError(*refusal)
        if kind is Bid:
            assert isinstance(action, Bid)
            return self._bid(seat, action)
        if kind is Dudo:
            return self._resolve(seat, "dudo")
        if kind is Calza:
            return self._resolve(seat, "calza")
        assert isinstance(action, Direction)
        return self._choose_direction(seat, action.value)

    def _bid(self, seat: int, bid: Bid) -> list[Event]:
        quantity, face = bid.quantity, bid.face
        total = self.dice_in_play
        if not 1 <= face <= 6:
            raise RuleError(E.BID_OUT_OF_RANGE, f"face must be 1..6, got {face}")
        if not 1 <= quantity <= total:
            raise RuleError(
                E.BID_OUT_OF_RANGE, f"quantity must be 1..{total} (dice in play), got {quantity}"
            )
        floor = self._bid_floors()[face - 1]
        if not isinstance(floor, int):
            raise RuleError(*floor)
        if quantity < floor:
            raise RuleError(
                E.BID_NOT_HIGHER,
                f"{quantity}×{face} does not raise {self.bids[-1][1]}×{self.bids[-1][2]}; "
                f"the lowest raise on {face} is {floor}",
            )
        self.bids.append((seat, quantity, face))
        self.turn = self.next_alive(seat)
        self.version += 1
        return [{"type": "bid", "seat": seat, "quantity": quantity, "face": face}]

    def _choose_direction(self, seat: int, value: int) -> list[Event]:
        if value not in (1, -1):
            raise RuleError(E.BAD_ACTION, f"direction must be 1 or -1, got {value}")
        self.direction = value
        self.phase = BIDDING
        self.turn = seat
        self.version += 1
        return [{"type": "direction", "seat": seat, "value": value}]

    def _resolve(self, caller: int, call: str) -> list[Event]:
        """Reveal every die, settle the challenge, start the next round or end the game."""
        bidder, quantity, face = self.bids[-1]
        count = count_matching(self.hands, face, self.ones_wild)
        loser: int | None = None
        gainer: int | None = None
        if call == "dudo":
            loser = caller if count >= quantity else bidder
        elif count == quantity:
            if self.counts[caller] < self.rules.max_dice:
                gainer = caller
        else:
            loser = caller
        self.last_round = {
            "round": self.round_no,
            "palifico": self.palifico,
            "call": call,
            "caller": caller,
            "bid": [bidder, quantity, face],
            "dice": [list(hand) for hand in self.hands],
            "count": count,
            "loser": loser,
            "gainer": gainer,
            "seed": self.seed.hex() if self.seed is not None else None,
            "commitment": self.commitment,
        }
        events: list[Event] = [
            {"type": call, "seat": caller},
            {"type": "reveal", **self.last_round},
        ]
        next_palifico = False
        if loser is not None:
            self.counts[loser] -= 1
            left = self.counts[loser]
            events.append({"type": "lose_die", "seat": loser, "dice": left})
            if left == 0:
                self.eliminated.append(loser)
                events.append({"type": "eliminated", "seat": loser})
            # The round after a player drops to one die is palifico (every time
            # it happens; see docs/rules.md).
            next_palifico = self.rules.palifico and left == 1
        if gainer is not None:
            self.counts[gainer] += 1
            events.append({"type": "gain_die", "seat": gainer, "dice": self.counts[gainer]})
        self.version += 1
        alive = [s for s, c in enumerate(self.counts) if c > 0]
        if len(alive) == 1:
            self._end(alive[0], events)
            return events
        opener = loser if call == "dudo" else caller
        assert opener is not None
        if self.counts[opener] == 0:
            opener = self.next_alive(opener)
        self.palifico = next_palifico
        events.append(self._start_round(opener))
        return events

    def _stop(self) -> None:
        """No round is played any more: nobody's turn, no dice, no commitment."""
        self.phase = OVER
        self.turn = None
        self.opener = None
        self.palifico = False
        self.bids = []
        self.hands = [() for _ in self.counts]
        self.seed = None
        self.commitment = None

    def _end(self, winner: int, events: list[Event]) -> None:
        self.winner = winner
        self._stop()
        events.append(
            {
                "type": "game_over",
                "winner": winner,
                "standings": self.standings(),
                "chips": self.chips(),
            }
        )

    def _start_round(self, opener: int) -> Event:
        self.round_no += 1
        self.opener = opener
        self.turn = opener
        self.bids = []
        self.phase = DIRECTION if self.rules.loser_chooses_direction else BIDDING
        return self._deal_round()

    def _deal_round(self) -> Event:
        """This round's dice from the game secret, and the event that starts it."""
        self.seed = round_seed(self.secret, self.round_no)
        self.commitment = commitment(self.seed)
        self.hands = roll(self.seed, self.counts)
        return {
            "type": "round_start",
            "round": self.round_no,
            "opener": self.opener,
            "palifico": self.palifico,
            "direction": self.direction,
            "dice_counts": list(self.counts),
            "commitment": self.commitment,
        }

    def deal(self, hands: list[list[int]] | list[tuple[int, ...]]) -> None:
        """Replace this round's dice with given ones, before its first action.

        For replaying recorded rounds (conformance vectors, tests): a dealt round
        has no seed, so its views carry no commitment and its reveal no seed.
        """
        if self.phase == OVER:
            raise ValueError("the game is over")
        if not self.between_rounds:
            raise ValueError("dice can only be dealt before the round's first action")
        if len(hands) != len(self.counts):
            raise ValueError(f"expected {len(self.counts)} hands, got {len(hands)}")
        dealt: list[tuple[int, ...]] = []
        for seat, hand in enumerate(hands):
            if len(hand) != self.counts[seat]:
                raise ValueError(
                    f"seat {seat} has {self.counts[seat]} dice, {len(hand)} were dealt"
                )
            if any(not isinstance(d, int) or isinstance(d, bool) or not 1 <= d <= 6 for d in hand):
                raise ValueError(f"seat {seat}: dice must be integers 1..6, got {hand!r}")
            dealt.append(tuple(sorted(hand)))
        self.hands = dealt
        self.seed = None
        self.commitment = None


def new_game(
    rules: Rules,
    seats: int,
    secret: bytes,
    *,
    opener: int = 0,
    dice_counts: list[int] | None = None,
    palifico: bool = False,
    direction: int = 1,
) -> State:
    """A game at the start of its first round.

    ``secret`` (at least 16 random bytes, from the caller's RNG) fixes every
    round's dice. ``dice_counts``, ``palifico`` and ``direction`` let a game
    start mid-way (conformance vectors, tournaments resuming a table).
    """
    if not isinstance(rules, Rules):
        raise TypeError("rules must be a Rules object")
    if not rules.seats_allowed(seats):
        raise ValueError(
            f"these rules seat {rules.min_players}..{rules.max_players} players, not {seats}"
        )
    if not isinstance(secret, bytes) or len(secret) < 16:
        raise ValueError(f"secret must be at least 16 bytes (use {SECRET_BYTES} random bytes)")
    counts = list(dice_counts) if dice_counts is not None else [rules.start_dice] * seats
    if len(counts) != seats:
        raise ValueError(f"dice_counts has {len(counts)} entries for {seats} seats")
    if any(not isinstance(c, int) or not 0 <= c <= rules.max_dice for c in counts):
        raise ValueError(f"dice counts must be 0..{rules.max_dice}, got {counts}")
    if sum(1 for c in counts if c > 0) < 2:
        raise ValueError("at least two seats need dice to play")
    if direction not in (1, -1):
        raise ValueError(f"direction must be 1 or -1, got {direction}")
    if not 0 <= opener < seats or counts[opener] == 0:
        raise ValueError(f"opener {opener} is not a seat with dice")
    state = State()
    state.rules = rules
    state.counts = counts
    state.secret = secret
    state.round_no = 0
    state.direction = direction
    state.palifico = bool(palifico)
    state.eliminated = [s for s, c in enumerate(counts) if c == 0]
    state.winner = None
    state.last_round = None
    state.version = 0
    state._start_round(opener)
    return state
