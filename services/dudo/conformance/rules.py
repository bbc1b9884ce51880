"""Replay rules conformance vectors (format ``dudo-rules-vector/1``, docs/rules.md).

A vector is one JSON file: rules, seats, an optional starting position, and
rounds with their dice, the actions taken (some of which must be refused with
a given error code) and what must hold after each round. Any implementation in
any language can replay the same files; this module is ours.

``run_paths`` collects ``*.json`` files from files and folders, replays each,
and reports one line per failure.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine import (
    OVER,
    RuleError,
    Rules,
    RulesConfigError,
    State,
    action_from_dict,
    new_game,
    reseat,
    to_bytes,
)
from .fairness import FORMAT as FAIRNESS_FORMAT
from .fairness import run_fairness_vector

FORMAT = "dudo-rules-vector/1"
# A fixed secret: vectors deal their dice explicitly, so it only has to be valid.
_SECRET = b"dudo-conformance-vector-secret!!"
EXPECT_KEYS = (
    "count",
    "loser",
    "gainer",
    "dice_counts",
    "eliminated",
    "next_opener",
    "next_palifico",
    "winner",
)


class VectorError(Exception):
    """The vector itself is malformed (as opposed to the engine disagreeing with it)."""


@dataclass
class Report:
    passed: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.passed > 0

    def summary(self) -> str:
        return f"{self.passed} passed, {self.failed} failed"


def vector_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Every vector file named by ``paths`` (files as given, folders searched recursively)."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.json") if p.is_file())
        else:
            yield path


def run_paths(paths: Iterable[str | Path]) -> Report:
    report = Report()
    for path in vector_files(paths):
        try:
            vector = json.loads(path.read_text(encoding="utf-8"))
            problems = run_vector(vector)
        except FileNotFoundError:
            problems = ["no such file"]
        except (OSError, ValueError) as exc:  # JSONDecodeError is a ValueError
            problems = [f"cannot read vector: {exc}"]
        except VectorError as exc:
            problems = [f"malformed vector: {exc}"]
        if problems:
            report.failed += 1
            report.failures.extend(f"FAIL {path}: {problem}" for problem in problems)
        else:
            report.passed += 1
    return report


def run_vector(vector: Any) -> list[str]:
    """Replay one vector; return what disagreed (empty when the engine conforms). A
    seeds' derivation vector is checked as :mod:`.fairness` says."""
    if isinstance(vector, dict) and vector.get("format") == FAIRNESS_FORMAT:
        return run_fairness_vector(vector)
    if not isinstance(vector, dict) or vector.get("format") != FORMAT:
        raise VectorError(f"format must be {FORMAT!r} or {FAIRNESS_FORMAT!r}")
    try:
        rules = Rules.from_dict(vector.get("rules", {}))
    except RulesConfigError as exc:
        raise VectorError(f"bad rules: {exc}") from exc
    seats = _int(vector, "seats")
    rounds = vector.get("rounds")
    if not isinstance(rounds, list) or not rounds:
        raise VectorError("rounds must be a non-empty list")
    start = vector.get("start") or {}
    if not isinstance(start, dict):
        raise VectorError("start must be an object")
    first_opener = rounds[0].get("opener", 0) if isinstance(rounds[0], dict) else 0
    try:
        state = new_game(
            rules,
            seats,
            _SECRET,
            opener=first_opener,
            dice_counts=start.get("dice_counts"),
            palifico=bool(start.get("palifico", False)),
            direction=start.get("direction", 1),
        )
    except (TypeError, ValueError) as exc:
        raise VectorError(f"bad start: {exc}") from exc

    problems: list[str] = []
    for r, rnd in enumerate(rounds):
        where = f"round {r}"
        if not isinstance(rnd, dict):
            raise VectorError(f"{where} must be an object")
        if "reseat" in rnd:
            problem = _reseat(state, rnd["reseat"], f"{where} reseat")
            if problem:
                problems.append(problem)
                break
        playing = "steps" in rnd or "dice" in rnd
        if state.phase == OVER and playing:
            problems.append(f"{where}: the game is already over")
            break
        if "opener" in rnd and rnd["opener"] != state.opener:
            problems.append(f"{where}: opener is {state.opener}, the vector says {rnd['opener']}")
            break
        if "dice" in rnd:
            try:
                state.deal(rnd["dice"])
            except (TypeError, ValueError) as exc:
                raise VectorError(f"{where}: bad dice: {exc}") from exc
        round_no = state.round_no
        for s, step in enumerate(rnd.get("steps", [])):
            problem = _play_step(state, step, f"{where} step {s}")
            if problem:
                problems.append(problem)
                return problems
        expect = rnd.get("expect")
        if expect is not None:
            if playing and state.round_no == round_no and state.phase != OVER:
                problems.append(f"{where}: the round did not end, so its expectations cannot hold")
                break
            problems.extend(_check_expect(state, expect, where))
    return problems


def _reseat(state: State, change: Any, where: str, wanted: str | None = None) -> str | None:
    """Apply a ``reseat`` object ({"leave": [seat], "join": [[seat, dice]], "opener": seat})."""
    if not isinstance(change, dict) or set(change) - {"leave", "join", "opener"}:
        raise VectorError(f"{where}: reseat takes 'leave', 'join' and 'opener'")
    join = change.get("join", [])
    if not isinstance(join, list) or any(not isinstance(p, list) or len(p) != 2 for p in join):
        raise VectorError(f"{where}: join is a list of [seat, dice] pairs")
    return _refused_or_not(
        state,
        lambda: reseat(
            state, change.get("leave", []), [(s, d) for s, d in join], opener=change.get("opener")
        ),
        where,
        wanted,
    )


def _play_step(state: State, step: Any, where: str) -> str | None:
    if isinstance(step, dict) and "reseat" in step:
        if "error" not in step or set(step) != {"reseat", "error"}:
            raise VectorError(f"{where}: a reseat step is a refusal: 'reseat' and 'error'")
        return _reseat(state, step["reseat"], where, step["error"])
    if not isinstance(step, dict) or "action" not in step:
        raise VectorError(f"{where}: a step needs 'seat' and 'action'")
    seat = _int(step, "seat")

    def act() -> None:
        state.apply(seat, action_from_dict(step["action"]))

    return _refused_or_not(state, act, where, step.get("error"))


def _refused_or_not(
    state: State, change: Callable[[], object], where: str, wanted: str | None
) -> str | None:
    """Make ``change``; it must be refused with ``wanted`` (and change nothing), or succeed."""
    before = to_bytes(state)
    try:
        change()
    except RuleError as exc:
        if wanted is None:
            return f"{where}: refused with {exc.code} ({exc.message}), the vector expects it legal"
        if exc.code != wanted:
            return f"{where}: refused with {exc.code} ({exc.message}), the vector expects {wanted}"
        if to_bytes(state) != before:
            return f"{where}: the refused action changed the state"
        return None
    if wanted is not None:
        return f"{where}: accepted, the vector expects {wanted}"
    return None


def _check_expect(state: State, expect: Any, where: str) -> list[str]:
    if not isinstance(expect, dict):
        raise VectorError(f"{where}: expect must be an object")
    unknown = set(expect) - set(EXPECT_KEYS)
    if unknown:
        raise VectorError(f"{where}: unknown expect keys {sorted(unknown)}")
    last = state.last_round or {}
    over = state.phase == OVER
    actual = {
        "count": last.get("count"),
        "loser": last.get("loser"),
        "gainer": last.get("gainer"),
        "dice_counts": list(state.counts),
        "eliminated": sorted(state.eliminated),
        "next_opener": None if over else state.opener,
        "next_palifico": False if over else state.palifico,
        "winner": state.winner,
    }
    problems = []
    for key in EXPECT_KEYS:
        if key not in expect:
            continue
        want = sorted(expect[key]) if key == "eliminated" else expect[key]
        if actual[key] != want:
            problems.append(f"{where}: {key} is {actual[key]!r}, the vector expects {want!r}")
    return problems


def _int(obj: dict[str, Any], key: str) -> int:
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise VectorError(f"{key} must be an integer")
    return value
