"""The Python package's seat seed (dudo_client._seeds): a reveal sent once per wait and
again after a reconnect, only for the seed the seat committed to; a finished game that
dealt the seat another seed told once."""

from __future__ import annotations

from typing import Any

from dudo_client._seeds import SeedKeeper, make_seed, seed_commitment

SEED = make_seed()


def view(seeds: dict[str, Any], seat: int = 0, table: str = "t1") -> dict[str, Any]:
    return {"type": "view", "table": table, "seat": seat, "seeds": seeds}


def asking(commitment: str | None, revealed: bool = False) -> dict[str, Any]:
    return view({"server": "0" * 64, "commitments": [commitment, None],
                 "revealed": [revealed, False], "until": 5_000})  # fmt: skip


def test_a_reveal_is_sent_once_per_wait_and_again_after_a_reconnect() -> None:
    keeper = SeedKeeper(SEED)
    assert keeper.step(asking(seed_commitment(SEED))) == ({"type": "seed", "seed": SEED}, None)
    assert keeper.step(asking(seed_commitment(SEED))) == (None, None)  # sent already
    keeper.reset()  # welcomed again: the reveal may have been lost with the connection
    assert keeper.step(asking(seed_commitment(SEED)))[0] == {"type": "seed", "seed": SEED}
    assert keeper.step(asking(seed_commitment(SEED), revealed=True)) == (None, None)


def test_only_the_committed_seed_is_revealed() -> None:
    assert SeedKeeper(SEED).step(asking(seed_commitment("another"))) == (None, None)
    assert SeedKeeper(SEED).step(asking(None)) == (None, None)
    assert SeedKeeper(None).step(asking(seed_commitment(SEED))) == (None, None)


def test_a_finished_game_that_dealt_another_seed_is_told_once() -> None:
    over = view({"server": "0" * 64, "commitments": [seed_commitment(SEED), None],
                 "revealed": [False, False], "server_seed": "1" * 64,
                 "client_seeds": ["public:t1:0", "public:t1:1"]})  # fmt: skip
    keeper = SeedKeeper(SEED)
    assert keeper.step(over) == (None, "t1")
    assert keeper.step(over) == (None, None)
    taken = {**over, "seeds": {**over["seeds"], "client_seeds": [SEED, "public:t1:1"]}}
    assert SeedKeeper(SEED).step(taken) == (None, None)
