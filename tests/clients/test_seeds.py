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


def committing(asked: list[int], table: str = "cup-1", seat: int = 0) -> dict[str, Any]:
    return view({"server": "0" * 64, "commitments": [None, None], "revealed": [False, False],
                 "asked": asked, "commit_until": 5_000}, seat=seat, table=table)  # fmt: skip


def test_a_tournament_table_gets_a_seed_made_for_it_committed_then_revealed() -> None:
    """The director seated us: the table asks our seat for a commitment; the keeper makes
    a seed for that table (not the seat's own), commits once (again after a reconnect,
    the same seed), reveals it when asked, and makes another for the next table."""
    keeper = SeedKeeper(None)
    sent, _ = keeper.step(committing([0, 1]))
    assert sent is not None and sent["type"] == "commit_seed"
    assert keeper.step(committing([0, 1])) == (None, None)
    keeper.reset()
    assert keeper.step(committing([0, 1]))[0] == sent  # the same seed's commitment again
    assert keeper.step(committing([1])) == (None, None)  # taken: not asked any more
    reveal = view({"server": "0" * 64, "commitments": [sent["commitment"], None],
                   "revealed": [False, False], "until": 9_000}, table="cup-1")  # fmt: skip
    shown, _ = keeper.step(reveal)
    assert shown is not None and seed_commitment(shown["seed"]) == sent["commitment"]
    other, _ = keeper.step(committing([0], table="cup-2"))
    assert other is not None and other["commitment"] != sent["commitment"]


def test_an_empty_seed_brings_none_anywhere_and_never_fails() -> None:
    """``seed=""`` (a token handed to another program): no reveal, no commitment, and a
    view that asks others for theirs is no error (it was a ValueError here)."""
    keeper = SeedKeeper("")
    assert keeper.step(asking(None)) == (None, None)
    assert keeper.step(asking(seed_commitment(SEED))) == (None, None)
    assert keeper.step(committing([0])) == (None, None)


def test_asked_again_after_an_arrival_a_new_seed_is_made_and_revealed_for_that_round() -> None:
    """Someone arrived at the tournament's table: it holds round 4 and asks our seat again
    (`seeds.round`). The seed given for the first deal was seen by the server: a new one
    is made for this ask, committed and revealed; a finished view whose reseed dealt us
    another seed is told."""
    keeper = SeedKeeper(None)
    first, _ = keeper.step(committing([0]))
    again = committing([0])
    again["seeds"].update(round=4, commit_until=9_000)
    second, _ = keeper.step(again)
    assert first is not None and second is not None
    assert second["commitment"] != first["commitment"]
    reveal = view({"server": "0" * 64, "commitments": [second["commitment"], None],
                   "revealed": [False, False], "until": 12_000, "round": 4},
                  table="cup-1")  # fmt: skip
    shown, _ = keeper.step(reveal)
    assert shown is not None and seed_commitment(shown["seed"]) == second["commitment"]
    over = view({"server": "0" * 64, "commitments": [None, None],  # (nothing to tell)
                 "revealed": [False, False], "server_seed": "1" * 64,
                 "client_seeds": ["public:cup-1:0", "public:cup-1:1"],
                 "reseeds": [{"round": 4, "client_seeds": ["public:cup-1:0", "public:cup-1:1"],
                              "client_commitments": [second["commitment"], None]}]},
                table="cup-1")  # fmt: skip
    assert keeper.step(over) == (None, "cup-1")
