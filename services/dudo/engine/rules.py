"""Rules configuration: the four presets, overrides and validation (docs/rules.md, "Options").

A table is created with a rules object: a preset name plus overrides. The
presets come from the seed documents; every difference between the seeds is
an option here, so one engine plays them all. Anything that cannot describe a
playable table is rejected with a :class:`RulesConfigError` naming the field.
"""

from __future__ import annotations

from dataclasses import Field, asdict, dataclass, field, fields, replace
from functools import lru_cache
from typing import Any, Literal

from .errors import RulesConfigError

OpeningOnes = Literal["never", "single_die", "always"]
CalzaMode = Literal["off", "turn", "anyone"]

PRESETS_ORDER = ("classic", "lizumo", "cacho", "liars-dice")
OPENING_ONES = ("never", "single_die", "always")
CALZA_MODES = ("off", "turn", "anyone")

MAX_SEATS = 6
MIN_SEATS = 2
MAX_TURN_SECONDS = 3600
MAX_DICE_CAP = 10
MAX_STAKE = 1_000_000


def _option(
    default: Any,
    doc: str = "",
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    choices: tuple[str, ...] | None = None,
    play: bool = False,
) -> Any:
    """One rule option: its default and what the published schema says of it (its
    bounds or choices, a description), and whether it changes a round's play (the
    endgame solver keys its solves by those: ``PLAY_OPTIONS``).

    The default is also what a record stored before the option existed is read with
    (:meth:`Rules.from_tuple`): it must be the game as played without the option.
    """
    meta = {"doc": doc, "minimum": minimum, "maximum": maximum, "choices": choices, "play": play}
    return field(default=default, metadata=meta)


@dataclass(frozen=True, slots=True)
class Rules:
    """One table's rules. Build it with :meth:`Rules.from_dict` or :func:`preset`.

    Each option is declared here once (docs/architecture.md, "Where to add..."): the
    schema ``protocol/schemas/rules.schema.json`` is written from these declarations,
    and a stored tuple is read in this order. A new option goes at the end, with a
    default that plays as before it existed (``tests/test_extensions.py`` holds both).
    """

    preset: str = _option("classic", choices=PRESETS_ORDER)
    start_dice: int = _option(5, minimum=1, maximum=5, play=True)
    max_dice: int = _option(
        5, "at least start_dice; defaults to start_dice", minimum=1, maximum=MAX_DICE_CAP,
        play=True,
    )
    min_players: int = _option(2, minimum=MIN_SEATS, maximum=MAX_SEATS)
    max_players: int = _option(6, minimum=MIN_SEATS, maximum=MAX_SEATS)
    wild_ones: bool = _option(True, play=True)
    opening_ones: OpeningOnes = _option("never", choices=OPENING_ONES, play=True)
    calza: CalzaMode = _option("turn", choices=CALZA_MODES, play=True)
    calza_needs_lost_die: bool = _option(False, play=True)
    palifico: bool = _option(True, play=True)
    palifico_wild_ones: bool = _option(False, play=True)
    loser_chooses_direction: bool = _option(False, play=True)
    turn_seconds: int = _option(0, minimum=0, maximum=MAX_TURN_SECONDS)
    # Extensions beyond the first options (table options the engine carries for the
    # services; only ``stake`` and ``assisted`` change what the engine reports).
    assisted: bool = _option(False, "extension: odds in each seat's view")
    bots_fill: bool = _option(False, "extension: the lobby fills empty seats with bots")
    stake: int = _option(
        0, "extension: chips each seat puts in; the winner takes the pot",
        minimum=0, maximum=MAX_STAKE,
    )

    # -- construction -------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Any) -> Rules:
        """Resolve ``{"preset": ..., **overrides}`` into validated rules."""
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise RulesConfigError("preset", "rules must be an object")
        name = data.get("preset", "classic")
        if not isinstance(name, str) or name not in _PRESETS:
            raise RulesConfigError(
                "preset", f"unknown preset {name!r}; expected one of {', '.join(PRESETS_ORDER)}"
            )
        base = _PRESETS[name]
        overrides: dict[str, Any] = {}
        for key, value in data.items():
            if key == "preset":
                continue
            if not isinstance(key, str) or key not in _FIELD_TYPES:
                raise RulesConfigError(str(key)[:40], "unknown field")
            overrides[key] = _check_type(key, value)
        if "max_dice" not in overrides:
            # A Calza wins back a die that was lost: by default the cap is the
            # starting count (the seeds start at five and cap at five).
            overrides["max_dice"] = overrides.get("start_dice", base.start_dice)
        rules = replace(base, **overrides)
        rules.validate()
        return _intern(rules)

    def to_dict(self) -> dict[str, Any]:
        """Every field, resolved: feeding it back to :meth:`from_dict` gives equal rules."""
        return asdict(self)

    def to_tuple(self) -> tuple[Any, ...]:
        """Field values in declaration order, for compact serialization."""
        return tuple(getattr(self, f.name) for f in fields(self))

    @classmethod
    def from_tuple(cls, values: Any) -> Rules:
        """Rules from :meth:`to_tuple`'s values, or from a record stored before the last
        options were added (a shorter tuple): those are read at their defaults."""
        names = [f.name for f in fields(cls)]
        if not isinstance(values, (list, tuple)) or not 1 <= len(values) <= len(names):
            raise RulesConfigError("preset", "serialized rules have the wrong shape")
        stored = dict(zip(names, values, strict=False))
        return cls.from_dict({**_DEFAULTS, **stored} if len(values) < len(names) else stored)

    # -- validation ---------------------------------------------------------

    def validate(self) -> None:
        """Raise :class:`RulesConfigError` unless these rules describe a playable table."""
        for name in _FIELD_TYPES:
            _check_type(name, getattr(self, name))
        if not 1 <= self.start_dice <= 5:
            raise RulesConfigError("start_dice", f"must be 1..5, got {self.start_dice}")
        if not self.start_dice <= self.max_dice <= MAX_DICE_CAP:
            raise RulesConfigError(
                "max_dice",
                f"must be between start_dice ({self.start_dice}) and {MAX_DICE_CAP}, "
                f"got {self.max_dice}",
            )
        for name in ("min_players", "max_players"):
            value = getattr(self, name)
            if not MIN_SEATS <= value <= MAX_SEATS:
                raise RulesConfigError(name, f"must be {MIN_SEATS}..{MAX_SEATS}, got {value}")
        if self.min_players > self.max_players:
            raise RulesConfigError(
                "min_players",
                f"min_players ({self.min_players}) exceeds max_players ({self.max_players})",
            )
        if self.opening_ones not in OPENING_ONES:
            raise RulesConfigError(
                "opening_ones",
                f"must be one of {', '.join(OPENING_ONES)}, got {self.opening_ones!r}",
            )
        if self.calza not in CALZA_MODES:
            raise RulesConfigError(
                "calza", f"must be one of {', '.join(CALZA_MODES)}, got {self.calza!r}"
            )
        if self.calza_needs_lost_die and self.calza == "off":
            raise RulesConfigError("calza_needs_lost_die", "has no effect with calza 'off'")
        if self.palifico_wild_ones and not self.palifico:
            raise RulesConfigError("palifico_wild_ones", "has no effect without palifico")
        if self.palifico_wild_ones and not self.wild_ones:
            raise RulesConfigError("palifico_wild_ones", "has no effect without wild_ones")
        if not 0 <= self.turn_seconds <= MAX_TURN_SECONDS:
            raise RulesConfigError(
                "turn_seconds", f"must be 0..{MAX_TURN_SECONDS}, got {self.turn_seconds}"
            )
        if not 0 <= self.stake <= MAX_STAKE:
            raise RulesConfigError("stake", f"must be 0..{MAX_STAKE}, got {self.stake}")

    # -- derived ------------------------------------------------------------

    def seats_allowed(self, seats: int) -> bool:
        return self.min_players <= seats <= self.max_players


def options() -> tuple[Field[Any], ...]:
    """Every option's declaration, in stored order (``preset`` first)."""
    return fields(Rules)


# What changes the game of a round; the rest (clocks, stakes, seats) does not.
PLAY_OPTIONS: tuple[str, ...] = tuple(f.name for f in fields(Rules) if f.metadata["play"])
_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(Rules)}

_FIELD_TYPES: dict[str, type] = {
    f.name: (bool if f.type == "bool" else int if f.type == "int" else str)
    for f in fields(Rules)
    if f.name != "preset"
}


def _check_type(name: str, value: Any) -> Any:
    expected = _FIELD_TYPES[name]
    # bool is a subclass of int in Python; a rules object from JSON must not
    # turn ``true`` into one die, nor ``1`` into a yes.
    ok = isinstance(value, expected) and (expected is bool or not isinstance(value, bool))
    if not ok:
        raise RulesConfigError(name, f"must be {expected.__name__}, got {value!r}")
    return value


_PRESETS: dict[str, Rules] = {
    # Seeds 000 (German) and 002 (English): five dice, wild Pacos, no opening on
    # Pacos, Calza in turn with capped regain, palifico rounds.
    "classic": Rules(preset="classic"),
    # Seed 001 (Spanish, Lizumo): three dice (1..5 allowed), wild aces, no
    # opening on aces, no Calza, no palifico.
    "lizumo": Rules(
        preset="lizumo",
        start_dice=3,
        max_dice=3,
        calza="off",
        palifico=False,
    ),
    # Seed 003 (Argentine Cacho): three to six seats filled by bots, opening on
    # aces only with a single die, Calza in turn, no palifico, winner takes the pot.
    "cacho": Rules(
        preset="cacho",
        min_players=3,
        opening_ones="single_die",
        palifico=False,
        bots_fill=True,
        stake=100,
    ),
    # The English-speaking variant (seeds 000/002 "Liar's Dice"): aces are an
    # ordinary face unless overridden, no Calza, no palifico.
    "liars-dice": Rules(
        preset="liars-dice",
        wild_ones=False,
        opening_ones="always",
        calza="off",
        palifico=False,
    ),
}


_INTERNED: dict[Rules, Rules] = {}
_FORMS: dict[int, tuple[Rules, dict[str, Any], tuple[Any, ...]]] = {}
_BOUND = 4096  # distinct rule sets are few in practice; the caches are cleared past this


def _intern(rules: Rules) -> Rules:
    """One shared object per distinct rules value (tables with equal rules share it)."""
    if len(_INTERNED) >= _BOUND:
        _INTERNED.clear()
    return _INTERNED.setdefault(rules, rules)


def _forms(rules: Rules) -> tuple[Rules, dict[str, Any], tuple[Any, ...]]:
    """The dict and tuple forms of ``rules``, found by identity.

    Every view and every record a worker builds needs them; hashing twenty
    fields each time (an ``lru_cache`` key) was a measurable part of a cycle.
    The entry holds the object, so its id cannot be reused while cached.
    """
    entry = _FORMS.get(id(rules))
    if entry is None or entry[0] is not rules:
        if len(_FORMS) >= _BOUND:
            _FORMS.clear()
        entry = _FORMS[id(rules)] = (rules, rules.to_dict(), rules.to_tuple())
    return entry


def rules_dict(rules: Rules) -> dict[str, Any]:
    """``rules.to_dict()``, computed once per rules object. Do not modify it."""
    return _forms(rules)[1]


def rules_tuple(rules: Rules) -> tuple[Any, ...]:
    """``rules.to_tuple()``, computed once per rules object (for serializers)."""
    return _forms(rules)[2]


@lru_cache(maxsize=512)
def rules_from_tuple(values: tuple[Any, ...]) -> Rules:
    """``Rules.from_tuple`` with validation done once per distinct stored value."""
    return Rules.from_tuple(values)


def preset(name: str, **overrides: Any) -> Rules:
    """Shorthand for ``Rules.from_dict({"preset": name, **overrides})``."""
    return Rules.from_dict({"preset": name, **overrides})


PRESETS: tuple[str, ...] = PRESETS_ORDER
