"""Check the seeds' derivation vectors (format ``dudo-fairness-vector/1``,
protocol/vectors/fairness; docs/rules.md, "Seeds from everyone"): each case's
commitments, game secret and rounds made again from its seeds."""

from __future__ import annotations

from typing import Any

from ..engine import (
    SeedError,
    client_commitment,
    commitment,
    game_secret,
    roll,
    round_seed,
    server_commitment,
)

FORMAT = "dudo-fairness-vector/1"


def run_fairness_vector(vector: dict[str, Any]) -> list[str]:
    """What disagreed with the vector's cases (empty when the engine conforms)."""
    problems: list[str] = []
    for case in vector.get("cases") or []:
        name = case.get("name", "?")
        try:
            server_seed = bytes.fromhex(case["server_seed"])
            seeds = list(case["client_seeds"])
            if server_commitment(server_seed) != case["server_commitment"]:
                problems.append(f"{name}: server_commitment")
            if [client_commitment(s) for s in seeds] != case["client_commitments"]:
                problems.append(f"{name}: client_commitments")
            secret = game_secret(server_seed, seeds)
            if secret.hex() != case["game_secret"]:
                problems.append(f"{name}: game_secret")
            for r in case["rounds"]:
                seed = round_seed(secret, int(r["round"]))
                dice = [list(hand) for hand in roll(seed, r["dice_counts"])]
                if (seed.hex(), commitment(seed), dice) != (r["seed"], r["commitment"], r["dice"]):
                    problems.append(f"{name}: round {r['round']}")
        except (KeyError, TypeError, ValueError, SeedError) as exc:
            problems.append(f"{name}: malformed case ({exc})")
    if not vector.get("cases"):
        problems.append("no cases")
    return problems
