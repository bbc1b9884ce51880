"""The verdict of a chaos run, from what Redis holds and what the players saw.

For each table the players' decisions are replayed on the engine from the
table's own secret: the first decision's seat opened the game, and decision
``v`` is the action applied at game version ``v``. The replay must equal the
stored game byte for byte: then every accepted action was applied exactly
once, in order. A table whose clients saw a version the stored game does not
reach lost actions (a rollback); a stored game that the decisions do not
reproduce had an action applied that nobody decided, or one applied twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine import RuleError, action_from_dict, new_game, to_bytes
from ..table import Table
from ..wire import keys
from .players import TableRun


@dataclass
class Verdict:
    tables: int = 0
    finished: int = 0
    applied: int = 0  # game actions the stored games hold
    decided: int = 0  # decisions the players took
    lost: int = 0  # actions seen applied that the stored game does not hold
    doubled: int = 0  # tables whose game the decisions do not reproduce
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.lost == 0 and self.doubled == 0 and self.finished == self.tables


def audit(client: Any, runs: dict[str, TableRun], partitions: int) -> Verdict:
    verdict = Verdict(tables=len(runs))
    for tid, run in runs.items():
        verdict.decided += len(run.decisions)
        raw = client.hget(keys.table_of(tid, partitions), "s")
        if raw is None:
            verdict.problems.append(f"{tid}: no record")
            verdict.lost += max(0, run.max_seen)
            continue
        table = Table.from_bytes(raw)
        game = table.game
        if game is None:
            verdict.problems.append(f"{tid}: never started ({table.status})")
            continue
        verdict.applied += game.version
        if table.status == "over" and game.winner is not None:
            verdict.finished += 1
        else:
            verdict.problems.append(f"{tid}: unfinished at version {game.version}")
        if run.max_seen > game.version:
            verdict.lost += run.max_seen - game.version
            verdict.problems.append(
                f"{tid}: clients saw version {run.max_seen}, the record holds {game.version}"
            )
        missing = [v for v in range(game.version) if v not in run.decisions]
        if missing:
            verdict.doubled += 1
            verdict.problems.append(f"{tid}: versions {missing[:5]} applied, never decided")
            continue
        opener = run.decisions[0][0] if run.decisions else game.opener
        replay = new_game(table.rules, len(table.seats), game.secret, opener=opener)
        try:
            for version in range(game.version):
                seat, action = run.decisions[version]
                replay.apply(seat, action_from_dict(action))
        except RuleError as exc:
            verdict.doubled += 1
            verdict.problems.append(f"{tid}: the replay was refused at {replay.version}: {exc}")
            continue
        if to_bytes(replay) != to_bytes(game):
            verdict.doubled += 1
            verdict.problems.append(f"{tid}: the stored game differs from its replay")
    return verdict
