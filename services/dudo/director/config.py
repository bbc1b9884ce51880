"""A tournament's settings, as its creator asked for them and checked once.

Everything a ``tournament_create`` may say, refused with a clear code when it would
make a tournament that cannot work (no turn clock, payouts that do not add up, a start
that never comes) and stored as the tournament's ``config`` (plain data).
"""

from __future__ import annotations

import secrets
from typing import Any

from .. import wire
from ..engine import Rules, RulesConfigError, rules_dict
from ..wire import Refusal
from .prizes import PayoutError, check_payouts

LATE_MINUTES_MAX = 240
TOURNAMENT_ID_MAX = 48  # its tables are named "<id>-<n>", and ids are at most 64 characters


# The turn clock of a tournament's tables when its creator names none. A tournament has
# no table without one: an entrant who never shows would hold every table that waits
# for theirs, and the whole tournament with them (docs/tournaments.md).
TURN_SECONDS = 30


def default_advance(seats: int) -> int:
    """Heats: the most players per table that can go through and still make every heat
    smaller (a table of a balanced seating always holds more than this)."""
    return max(1, (seats + 1) // 2 - 1)


def config_of(msg: dict[str, Any], now: int) -> dict[str, Any]:
    """The settings of the tournament a ``tournament_create`` asks for, or
    :class:`Refusal` (``bad_message``, ``bad_rules``)."""
    tid = msg["tournament"]
    if len(tid) > TOURNAMENT_ID_MAX:
        raise Refusal(wire.BAD_MESSAGE, f"a tournament id has 1..{TOURNAMENT_ID_MAX} chars")
    given = msg["rules"]
    if given.get("turn_seconds", TURN_SECONDS) == 0:
        raise Refusal(
            wire.BAD_RULES,
            "rules.turn_seconds: a tournament's tables keep a turn clock (1..3600 s; "
            f"left out: {TURN_SECONDS})",
        )
    try:
        rules = Rules.from_dict(
            {"turn_seconds": TURN_SECONDS, **given, "max_players": msg["seats"]}
        )
        check_payouts(msg["payouts"])
    except (RulesConfigError, PayoutError) as exc:
        raise Refusal(wire.BAD_RULES, str(exc)) from exc
    start_players, start_at = msg.get("start_players"), msg.get("start_at")
    if start_players is not None and start_players > msg["max_players"]:
        raise Refusal(
            wire.BAD_MESSAGE,
            f"start_players ({start_players}) is more than max_players "
            f"({msg['max_players']}): it would never start",
        )
    if start_at is not None and start_at <= now:
        raise Refusal(wire.BAD_MESSAGE, "start_at is past: give a time to come (ms)")
    late, reentries = msg.get("late_minutes") or 0, msg.get("reentries") or 0
    if msg["format"] == "heats" and (late or reentries):
        raise Refusal(wire.BAD_RULES, "late registration and re-entry are for elimination")
    if reentries and not late:
        raise Refusal(wire.BAD_RULES, "re-entry is within late registration: give late_minutes")
    if late > LATE_MINUTES_MAX:
        raise Refusal(wire.BAD_RULES, f"late_minutes is at most {LATE_MINUTES_MAX}")
    advance = msg.get("advance")
    if msg["format"] == "heats":
        advance = advance or default_advance(msg["seats"])
        if advance > default_advance(msg["seats"]):
            raise Refusal(
                wire.BAD_RULES,
                f"with {msg['seats']} seats at most {default_advance(msg['seats'])} "
                "per table can go through",
            )
    config = {
        "name": msg["name"],
        "rules": rules_dict(rules),
        "seats": msg["seats"],
        "format": msg["format"],
        "advance": advance if msg["format"] == "heats" else None,
        "start_players": msg.get("start_players"),
        "start_at": msg.get("start_at"),
        "max_players": msg["max_players"],
        "buy_in": msg["buy_in"],
        "payouts": list(msg["payouts"]),
        "bots": msg.get("bots"),
        "private": bool(msg.get("private")),
        # A private tournament's invite code: registering needs it (the host gets it)
        "invite": secrets.token_urlsafe(9) if msg.get("private") else None,
        "late_minutes": late,
        "reentries": reentries,
    }
    return config
