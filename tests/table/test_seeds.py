"""Dice no one can choose, at a table (dudo.table.seeds; docs/security.md): the server
seed committed to from the table's first view, the seats' commitments fixed before any
seed is revealed, the deal from all of them, and a finished game anyone can verify."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from dudo import wire
from dudo.engine.fairness import client_commitment, game_secret, public_client_seed, verify
from dudo.table import Limits, Table
from dudo_client import log_of_view

from .test_table import NOW, Run, h

ANA, BEN = "ana's own seed ✓", "ben-7f3a"


def commit(seed: str) -> str:
    return hashlib.sha256(b"dudo-client/2:" + seed.encode()).hexdigest()


def views(out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in out if m["type"] == "view"]


def errors(out: list[dict[str, Any]]) -> list[str]:
    return [m["code"] for m in out if m["type"] == "error"]


def play_out(run: Run) -> dict[str, Any]:
    """Play the game to its end (every seat bids once, then Dudo); its last view."""
    at = NOW
    while run.table.game is not None and run.table.status == "playing":
        at += 10
        bids = run.table.game.bids
        action = {"type": "dudo"} if bids else {"type": "bid", "quantity": 1, "face": 2}
        out = run.move(action, at=at)
    return views(out)[-1]


def seated_with_seeds(seeds: list[str | None], **extra: Any) -> Run:
    """A table of len(seeds) seats, each taken with a commitment to its seed (None: none)."""
    run = Run({"preset": "classic", "start_dice": 2}, seats=len(seeds), **extra)
    for i, seed in enumerate(seeds):
        fields = {"seed_commitment": commit(seed)} if seed is not None else {}
        run.send("join", player=f"p{i}", name=f"P{i}", **fields)
    return run


def test_the_server_seed_is_committed_to_in_the_first_view_and_revealed_at_the_end() -> None:
    run = Run({"preset": "classic", "start_dice": 2}, seats=2)
    first = run.inbox["gw-a"][0]["seeds"]
    assert first["commitments"] == [None, None] and first["revealed"] == [False, False]
    server = first["server"]
    run.seat_all()  # nobody brought a seed: dealt at once, as before seeds
    assert run.table.status == "playing"
    last = play_out(run)
    seeds = last["seeds"]
    assert seeds["server"] == server  # the same commitment from the first view to the last
    assert hashlib.sha256(b"dudo-server/2:" + bytes.fromhex(seeds["server_seed"])).hexdigest() \
        == server  # fmt: skip
    assert seeds["client_seeds"] == [public_client_seed("t1", 0), public_client_seed("t1", 1)]
    verdict = verify(log_of_view(last))
    assert verdict.ok and verdict.seeded and verdict.rounds >= 1 and not verdict.notes


def test_no_view_shows_a_seed_before_the_game_is_over() -> None:
    run = seated_with_seeds([ANA, BEN])
    for seat, seed in ((0, ANA), (1, BEN)):
        run.send("seed", player=h(f"p{seat}"), seat=seat, seed=seed)
    assert run.table.status == "playing"
    shown = [view["seeds"] for view in run.inbox["gw-a"] if view["type"] == "view"]
    assert shown and all("server_seed" not in s and "client_seeds" not in s for s in shown)
    text = repr(run.inbox)
    assert ANA not in text and BEN not in text and run.table.server_seed.hex() not in text


def test_seats_with_commitments_reveal_before_the_deal_and_the_last_reveal_deals() -> None:
    run = seated_with_seeds([ANA, BEN])
    assert run.table.status == "open" and run.table.game is None  # waiting for the seeds
    seeds = views(run.send("resync", player=h("p0"), seat=0))[-1]["seeds"]
    assert seeds["commitments"] == [commit(ANA), commit(BEN)]
    assert seeds["until"] == NOW + Limits().seed_reveal_ms
    # Nobody can change what the seeds will be while they are revealed: no seat is taken
    # or freed, no commitment replaced, no early start.
    assert errors(run.send("join", player="p9", name="Late")) == [wire.GAME_STARTED]
    run.send("join", player="p0", name="P0", seed_commitment=commit("another"))
    assert run.table.seats[0].commitment == commit(ANA)
    assert errors(run.send("start", player=h("p0"))) == [wire.GAME_STARTED]
    # A seed that is not the committed one changes nothing.
    version = run.table.version
    assert errors(run.send("seed", player=h("p0"), seat=0, seed="chosen later")) == [
        wire.BAD_SEED
    ]
    assert run.table.version == version and run.table.seats[0].seed is None
    out = run.send("seed", player=h("p0"), seat=0, seed=ANA)
    assert views(out)[-1]["seeds"]["revealed"] == [True, False] and run.table.game is None
    out = run.send("seed", player=h("p1"), seat=1, seed=BEN)  # the last one: dealt now
    assert run.table.status == "playing"
    assert any(e["type"] == "game_start" for e in views(out)[-1]["events"])
    assert "until" not in views(out)[-1]["seeds"]
    last = play_out(run)
    assert last["seeds"]["client_seeds"] == [ANA, BEN]
    verdict = verify(log_of_view(last))
    assert verdict.ok and verdict.seeded and not verdict.notes


def test_a_seat_that_does_not_reveal_in_time_is_dealt_its_public_seed_and_it_shows() -> None:
    run = seated_with_seeds([ANA, None, BEN])
    run.send("seed", player=h("p0"), seat=0, seed=ANA)
    until = run.table.seeding_until
    assert run.table.wake == until  # the table's timer fires then
    run.send("timeout", gateway=None, version=run.table.version, at=until)
    assert run.table.status == "playing"
    assert errors(run.send("seed", player=h("p2"), seat=2, seed=BEN)) == [wire.BAD_SEED]
    last = play_out(run)
    seeds = last["seeds"]
    assert seeds["revealed"] == [True, False, False]
    assert seeds["commitments"] == [commit(ANA), None, commit(BEN)]
    assert seeds["client_seeds"] == [ANA, public_client_seed("t1", 1), public_client_seed("t1", 2)]
    verdict = verify(log_of_view(last))
    assert verdict.ok, verdict.problems
    assert verdict.notes == [
        "seat 2 committed to a seed of its own and was dealt its public one (no reveal in time)"
    ]


def test_a_seed_is_refused_when_none_is_asked_for() -> None:
    run = Run({"preset": "classic"}, seats=3)
    run.send("join", player="p0", name="P0", seed_commitment=commit(ANA))
    # Before every seat is fixed, a reveal would let a later seat choose its seed.
    assert errors(run.send("seed", player=h("p0"), seat=0, seed=ANA)) == [wire.BAD_SEED]
    # A seat that committed to nothing has nothing to reveal.
    run.send("join", player="p1", name="P1")
    run.send("join", player="p2", name="P2", seed_commitment=commit(BEN))
    assert run.table.seeding
    assert errors(run.send("seed", player=h("p1"), seat=1, seed="x")) == [wire.BAD_SEED]
    # Another player's seat: not theirs to reveal.
    assert errors(run.send("seed", player=h("p1"), seat=0, seed=ANA)) == [wire.NOT_SEATED]


def test_a_returning_player_may_bring_a_new_commitment_only_while_the_table_is_open() -> None:
    run = Run({"preset": "classic"}, seats=2)
    run.send("join", player="p0", name="P0", seed_commitment=commit("lost with the tab"))
    run.send("join", player="p0", name="P0", seed_commitment=commit(ANA))
    assert run.table.seats[0].commitment == commit(ANA)
    run.send("join", player="p1", name="P1")
    run.send("seed", player=h("p0"), seat=0, seed=ANA)
    assert run.table.status == "playing" and run.table.dealt[0] == [commit(ANA), ANA]


def test_the_host_starts_early_and_the_commitments_move_with_the_seats() -> None:
    run = Run({"preset": "classic"}, seats=4)
    run.send("join", player="p0", name="P0")
    run.send("join", player="p1", name="P1", seat=3, seed_commitment=commit(BEN))
    run.send("start", player=h("p0"))
    assert run.table.seeding and [s.commitment for s in run.table.seats] == [None, commit(BEN)]
    run.send("seed", player=h("p1"), seat=1, seed=BEN)
    assert run.table.status == "playing" and run.table.dealt == [[None, None], [commit(BEN), BEN]]


def test_leaving_while_the_seeds_are_revealed_keeps_the_seat_for_the_house() -> None:
    run = seated_with_seeds([ANA, BEN])
    run.send("leave", player=h("p1"), seat=1)
    assert run.table.seats[1].taken and run.table.seats[1].away
    run.send("seed", player=h("p0"), seat=0, seed=ANA)
    assert run.table.game is None  # Ben's seed is still awaited until the time is up
    run.send("timeout", gateway=None, version=run.table.version, at=run.table.seeding_until)
    assert run.table.status == "playing" and run.table.dealt[1] == [commit(BEN), None]


def test_the_wait_for_seeds_survives_the_record() -> None:
    run = seated_with_seeds([ANA, BEN])
    run.send("seed", player=h("p0"), seat=0, seed=ANA)
    run.table = Table.from_bytes(run.table.to_bytes())  # a worker restarts in between
    assert run.table.seeding and run.table.seats[0].seed == ANA
    run.send("seed", player=h("p1"), seat=1, seed=BEN)
    again = Table.from_bytes(run.table.to_bytes())
    assert again.dealt == [[commit(ANA), ANA], [commit(BEN), BEN]]
    assert again.server_seed == run.table.server_seed and again.game.secret == run.table.game.secret


def test_a_table_from_before_seeds_plays_on_without_them() -> None:
    run = Run({"preset": "classic", "start_dice": 2}, seats=2)
    raw = wire.unpack(run.table.to_bytes())
    old = [7, *raw[1:-3]]
    old[6] = [seat[:5] for seat in old[6]]  # seats as format 7 kept them
    run.table = Table.from_bytes(wire.encode(old))
    assert run.table.server_seed is None
    out = run.send("join", player="p0", name="P0", seed_commitment=commit(ANA))
    assert "seeds" not in views(out)[-1]
    run.send("join", player="p1", name="P1")
    assert run.table.status == "playing"  # no server seed: no wait, dealt as before
    assert "seeds" not in play_out(run)


def test_a_client_seed_chosen_after_seeing_the_others_is_refused() -> None:
    """The adversary who knows the server seed (the operator's accomplice) sees the other
    seats' reveals before the deal, but can only reveal what it committed to before
    any of them: any other seed is refused and the deal is the committed seeds'."""
    run = seated_with_seeds([ANA, BEN])
    run.send("seed", player=h("p0"), seat=0, seed=ANA)
    for chosen in ("ben-7f3b", "ben-7f3a ", BEN.upper()):
        assert errors(run.send("seed", player=h("p1"), seat=1, seed=chosen)) == [wire.BAD_SEED]
    assert run.table.game is None
    run.send("seed", player=h("p1"), seat=1, seed=BEN)
    assert client_commitment(run.table.dealt[1][1]) == commit(BEN)


def test_a_tournament_table_deals_public_seeds_from_its_server_seed() -> None:
    entrants = [
        {"player": f"e{i}", "name": f"E{i}", "dice": 2, "gateway": "gw-a", "bot": None}
        for i in range(2)
    ]
    tournament = {"id": "tt", "director": 0, "players": entrants, "advance": None}
    run = Run({"preset": "classic", "start_dice": 2}, seats=2, tournament=tournament)
    assert run.table.status == "playing"
    assert run.table.dealt == [[None, None], [None, None]]
    first = next(m for m in run.inbox["gw-a"] if m["type"] == "view")  # the deal's view
    seeds = first["seeds"]
    assert seeds["commitments"] == [None, None] and "server_seed" not in seeds


def test_views_in_the_middle_of_a_game_leave_the_seeds_out() -> None:
    """Shown while the table is open, in the view of the deal and at the end: repeated in
    every view of the game they were a tenth of a move's bytes (docs/benchmarks.md)."""
    run = seated_with_seeds([ANA, BEN])
    run.send("seed", player=h("p0"), seat=0, seed=ANA)
    dealt = views(run.send("seed", player=h("p1"), seat=1, seed=BEN))[-1]
    assert dealt["seeds"]["revealed"] == [True, True]  # each seat sees its seed taken
    server = dealt["seeds"]["server"]
    middle = views(run.move({"type": "bid", "quantity": 1, "face": 2}))
    assert middle and all("seeds" not in view for view in middle)
    assert play_out(run)["seeds"]["server"] == server


def test_a_table_id_of_64_characters_makes_public_seeds_longer_than_a_players() -> None:
    """A public seed is "public:<table>:<seat>": 73 bytes for a 64-character table id,
    past the 64 a player's seed may have. Such a table once could not deal at all."""
    table = "x" * 64
    create = wire.message("create", id="c", table=table, rules={"preset": "classic"},
                          seats=[{"kind": "open"}] * 2, gateway="gw-a")  # fmt: skip
    made = Table.create(create, NOW)
    for i in range(2):
        join = wire.message("join", id=f"j{i}", table=table, gateway="gw-a", player=f"p{i}",
                            name=f"P{i}")  # fmt: skip
        made.handle(join, NOW, random.Random(i))
    assert made.status == "playing" and len(public_client_seed(table, 1).encode()) == 73
    assert made.game.secret == game_secret(made.server_seed, [public_client_seed(table, 0),
                                                              public_client_seed(table, 1)])
