"""Issue 55: a game's secret from the server seed and every seat's client seed, and a
finished game's log checked against them (dudo.engine.fairness).

The vectors (protocol/vectors/fairness) are the contract for other implementations: the
test derives each one again from the formula as docs/rules.md publishes it, with hashlib
and hmac alone, and from the module. A log with one die, one seed, one commitment or one
client seed changed is refused, and at the right round."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import random
from pathlib import Path
from typing import Any

import pytest

from dudo.engine import OVER, deal_round, hold_deal, new_game, preset
from dudo.engine.dice import commitment, roll, round_seed
from dudo.engine.fairness import (
    SeedError,
    client_commitment,
    game_secret,
    public_client_seed,
    server_commitment,
    verify,
)

from .helpers import legal_moves, pick

VECTORS = Path(__file__).parents[2] / "protocol" / "vectors" / "fairness" / "derivation.json"


def _by_the_formula(server_seed: bytes, client_seeds: list[str]) -> bytes:
    reveals = b"".join(hashlib.sha256(b"dudo-reveal/2:" + s.encode()).digest()
                       for s in client_seeds)  # fmt: skip
    return hmac.new(server_seed, b"dudo-game/2:" + reveals, hashlib.sha256).digest()


def test_the_published_vectors_hold_by_the_formula_and_by_the_engine() -> None:
    cases = json.loads(VECTORS.read_text())["cases"]
    assert len(cases) >= 3
    for case in cases:
        server_seed = bytes.fromhex(case["server_seed"])
        seeds = case["client_seeds"]
        assert (
            case["server_commitment"]
            == server_commitment(server_seed)
            == (hashlib.sha256(b"dudo-server/2:" + server_seed).hexdigest())
        )
        assert (
            case["client_commitments"]
            == [client_commitment(s) for s in seeds]
            == [hashlib.sha256(b"dudo-client/2:" + s.encode()).hexdigest() for s in seeds]
        )
        secret = game_secret(server_seed, seeds)
        assert case["game_secret"] == secret.hex() == _by_the_formula(server_seed, seeds).hex()
        for r in case["rounds"]:
            seed = round_seed(secret, r["round"])
            assert r["seed"] == seed.hex() and r["commitment"] == commitment(seed)
            assert r["dice"] == [list(hand) for hand in roll(seed, r["dice_counts"])]
    # One byte of one seat's seed changes every hand (the last two cases).
    assert cases[1]["rounds"][0]["dice"] != cases[2]["rounds"][0]["dice"]


def test_seeds_are_bounded_and_bots_get_a_public_one() -> None:
    with pytest.raises(SeedError):
        client_commitment("")
    with pytest.raises(SeedError):
        client_commitment("x" * 65)
    client_commitment("ñ" * 32)  # 64 bytes of UTF-8
    with pytest.raises(SeedError):
        client_commitment("ñ" * 33)
    with pytest.raises(SeedError):
        server_commitment(b"short")
    assert public_client_seed("k2n8q4", 2) == "public:k2n8q4:2"


def played_log(seed: int = 3, seats: int = 3) -> dict[str, Any]:
    """A whole game dealt from seeds, its log as a finished game shows it."""
    rng = random.Random(seed)
    server_seed = rng.randbytes(32)
    seeds = [f"seat {s} · {rng.random()}" for s in range(seats - 1)]
    seeds.append(public_client_seed("t1", seats - 1))
    state = new_game(preset("classic"), seats, game_secret(server_seed, seeds))
    rounds = []
    while state.phase != OVER:
        for event in state.apply(*pick(rng, legal_moves(state))):
            if event["type"] == "reveal":
                rounds.append({k: v for k, v in event.items() if k != "type"})
    return {
        "table": "t1",
        "server_seed": server_seed.hex(),
        "server_commitment": server_commitment(server_seed),
        "client_seeds": seeds,
        # The last seat brought no seed (a bot's): dealt its public one, no commitment.
        "client_commitments": [client_commitment(s) for s in seeds[:-1]] + [None],
        "rounds": rounds,
    }


def reseeded_log(seed: int = 5, at: int = 3) -> dict[str, Any]:
    """A game whose seats changed before round ``at`` (a tournament's table): that round
    is held undealt and dealt from seeds given afterwards, and so is every later round."""
    log = played_log(seed, seats=3)
    rng = random.Random(seed)
    server_seed = bytes.fromhex(log["server_seed"])
    state = new_game(preset("classic"), 3, game_secret(server_seed, log["client_seeds"]))
    again = [f"again {s} · {rng.random()}" for s in range(2)] + [public_client_seed("t1", 2)]
    rounds: list[dict[str, Any]] = []
    reseeded = None
    while state.phase != OVER:
        if state.round_no == at and len(rounds) == at - 1 and state.seed != reseeded:
            hold_deal(state)
            assert state.undealt and not any(state.hands) and state.commitment is None
            event = deal_round(state, game_secret(server_seed, again))
            assert event["type"] == "round_start" and event["round"] == at
            reseeded = state.seed
        for event in state.apply(*pick(rng, legal_moves(state))):
            if event["type"] == "reveal":
                rounds.append({k: v for k, v in event.items() if k != "type"})
    assert len(rounds) > at
    return {
        **log,
        "rounds": rounds,
        "reseeds": [
            {
                "round": at,
                "client_seeds": again,
                "client_commitments": [client_commitment(s) for s in again[:-1]] + [None],
            }
        ],
    }


def test_a_table_reseeded_after_its_seats_changed_is_verified_by_stretches() -> None:
    """Every round from the reseed on comes from the seeds given after the change; a
    reseed's seed changed is refused where it is, and without its reseeds the same log's
    later rounds are not the first seeds' (so the change of secret is real)."""
    log = reseeded_log()
    assert verify(log).ok, verify(log).problems
    changed = copy.deepcopy(log)
    changed["reseeds"][0]["client_seeds"][1] = "picked after the reveal"
    assert verify(changed).problems == ["from round 3: seat 1's seed does not match its commitment"]
    hidden = {k: v for k, v in log.items() if k != "reseeds"}
    late = [r["round"] for r in log["rounds"] if r["round"] >= 3]
    assert verify(hidden).problems == [
        f"round {r}: the seed is not the one the seeds make" for r in late
    ]
    nameless = copy.deepcopy(log)
    nameless["reseeds"][0]["round"] = True
    assert verify(nameless).problems == ["reseed 0 names no round"]


def test_a_held_round_has_no_dice_nobody_acts_and_seats_may_change() -> None:
    state = new_game(preset("classic"), 3, bytes(32))
    seed = state.seed
    hold_deal(state)
    assert state.undealt and state.turn is None and state.commitment is None
    from dudo.engine import Bid, RuleError, reseat, seat_view

    view = seat_view(state, state.opener or 0)
    assert view["dice"] == [] and view["commitment"] is None and view["turn"] is None
    with pytest.raises(RuleError) as refused:
        state.apply(state.opener or 0, Bid(1, 2))
    assert refused.value.code == "not_your_turn"
    with pytest.raises(RuleError):
        hold_deal(state)  # held already
    reseat(state, leave=[2], join=[])
    assert state.undealt and state.hands == [(), (), ()]
    deal_round(state, bytes(32))
    assert state.seed == seed and not state.undealt and state.turn == state.opener
    with pytest.raises(RuleError):
        deal_round(state, bytes(32))  # nothing held


def test_public_seeds_are_checked_and_an_unrevealed_commitment_is_told() -> None:
    """A seat that brought no seed must have been dealt its public one (the operator
    cannot pick it); a seat that committed and was dealt its public one (no reveal in
    time) is fair dealing, told as a note (only its player knows whether it revealed)."""
    log = played_log()
    last = len(log["client_seeds"]) - 1
    chosen = copy.deepcopy(log)
    chosen["client_seeds"][last] = "picked by the operator"
    assert verify(chosen).problems == [
        f"seat {last} brought no seed and was not dealt its public one"
    ]
    nameless = copy.deepcopy(log)
    del nameless["table"]  # no table: no public seed to check against
    assert verify(nameless).problems == [
        f"seat {last} brought no seed and was not dealt its public one"
    ]
    told = copy.deepcopy(log)
    told["client_commitments"][last] = client_commitment("kept to myself")
    verdict = verify(told)
    assert verdict.ok and verdict.notes == [
        f"seat {last} committed to a seed of its own and was dealt its public one "
        "(no reveal in time)"
    ]


def test_a_played_game_is_verified_round_by_round() -> None:
    log = played_log()
    verdict = verify(log)
    assert verdict.ok and verdict.seeded, verdict.problems
    assert verdict.rounds == len(log["rounds"]) >= 5


def test_a_changed_die_seed_commitment_or_client_seed_is_refused_where_it_is() -> None:
    log = played_log()
    third = log["rounds"][2]["round"]

    die = copy.deepcopy(log)
    hand = next(h for h in die["rounds"][2]["dice"] if h)
    hand[0] = hand[0] % 6 + 1
    assert any(p.startswith(f"round {third}: seat") for p in verify(die).problems)

    seed = copy.deepcopy(log)  # a seed and its commitment made again, consistently
    other = hashlib.sha256(b"chosen").digest()
    counts = [len(h) for h in seed["rounds"][2]["dice"]]
    dealt = [list(h) for h in roll(other, counts)]
    seed["rounds"][2].update(seed=other.hex(), commitment=commitment(other), dice=dealt)
    assert verify(seed).problems == [f"round {third}: the seed is not the one the seeds make"]

    shown = copy.deepcopy(log)
    shown["rounds"][2]["commitment"] = "0" * 64
    assert verify(shown).problems == [
        f"round {third}: the seed does not match the commitment shown"
    ]

    client = copy.deepcopy(log)  # a seat's seed swapped after the commitments were fixed
    client["client_seeds"][0] = "a seed picked later"
    assert verify(client).problems == ["seat 0's seed does not match its commitment"]


def test_the_operator_cannot_choose_the_server_seed_after_seeing_the_players() -> None:
    """A server seed other than the one committed before the players brought theirs is
    refused; one committed and kept gives dice no one chose: each seat's seed moves
    every hand."""
    log = played_log()
    later = copy.deepcopy(log)
    later["server_seed"] = hashlib.sha256(b"picked after the seeds").hexdigest()
    assert verify(later).problems == ["the server seed does not match its commitment"]
    # A player who knows the server seed, choosing their seed before the others' are
    # revealed, cannot see the deal it makes: the deal moves with every other seed.
    server_seed = bytes.fromhex(log["server_seed"])
    mine = log["client_seeds"][0]
    deals = set()
    for n in range(40):
        secret = game_secret(server_seed, [mine, f"ben's seed {n}", "public:t1:2"])
        deals.add(roll(round_seed(secret, 1), [5, 5, 5])[0])
    assert len(deals) > 20  # my own hand depends on a seed I have not seen


def test_a_log_from_before_the_seeds_is_checked_round_by_round_alone() -> None:
    log = played_log()
    old = {"rounds": log["rounds"]}
    verdict = verify(old)
    assert verdict.ok and not verdict.seeded
    old["rounds"][0]["seed"] = None
    assert verify(old).problems[0].endswith("no seed revealed")
