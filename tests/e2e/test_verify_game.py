"""Issue 55 end to end: a player's own seed made by the Python client package, committed
when it sits, revealed by its connection when the table asks, the game dealt from it and
the server's seed; then anyone verifies the finished game with `dudo verify` given its
replay link or its table id, from the gateway's spectator view alone."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

from dudo_client import DudoApi, DudoConnection, verify
from dudo_client.examples.bot import choose


def dudo_verify(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dudo", "verify", *args],
                          capture_output=True, text=True, timeout=60)  # fmt: skip


async def play_a_game(served: str) -> tuple[str, str, dict[str, Any]]:
    """Ana and an easy bot, two dice each; the table's id, Ana's seed and the last view."""
    async with DudoApi(served) as api:
        seat = await api.create_table(
            rules={"preset": "classic", "start_dice": 2}, seats=2, bots=["easy"], name="Ana"
        )
        seed = api.seated(seat["token"])
        assert seed is not None and len(seed) == 32
    async with DudoConnection(served, seat["token"]) as conn:
        view = await conn.play(choose)
    return seat["table"], seed, dict(view)


def test_a_seed_made_by_the_package_deals_the_game_and_anyone_verifies_it(served: str) -> None:
    table, seed, last = asyncio.run(play_a_game(served))
    seeds = last["seeds"]
    assert seeds["revealed"] == [True, False]  # Ana's own seed was taken; the bot's is public
    assert seeds["client_seeds"] == [seed, f"public:{table}:1"]
    assert verify(last) == []  # the package's own check, from the view

    done = dudo_verify(f"{served}/#/replay/{table}")  # the replay's link, as shared
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every seat's seed match the commitments shown" in done.stdout
    done = dudo_verify(table, "--gateway", served)
    assert done.returncode == 0, done.stdout + done.stderr
    done = dudo_verify("nosuchtable", "--gateway", served)
    assert done.returncode == 2 and "unknown_table" in done.stderr


def test_a_seat_that_missed_the_wait_is_dealt_its_public_seed_and_its_client_says_so(
    served: str,
) -> None:
    """The connection opens only after the wait for seeds is over (a phone asleep): the
    table dealt the seat its public seed at `until`; the finished game verifies, and the
    package tells its program the seat's own seed was not taken (`seed_not_taken`)."""

    async def scenario() -> tuple[str, dict[str, Any], list[tuple[str, str]]]:
        async with DudoApi(served) as api:
            seat = await api.create_table(
                rules={"preset": "classic", "start_dice": 1}, seats=2, bots=["easy"], name="Ana"
            )
            while (await api.tables())["tables"] and any(
                entry["table"] == seat["table"] and entry["status"] == "open"
                for entry in (await api.tables())["tables"]
            ):  # the bot sits, the table waits for Ana's seed, then deals without it
                await asyncio.sleep(0.2)
        events: list[tuple[str, str]] = []
        conn = DudoConnection(served, seat["token"], on_event=lambda *e: events.append(e))
        async with conn:
            view = await conn.play(choose)
        return seat["table"], dict(view), events

    table, last, events = asyncio.run(scenario())
    assert last["seeds"]["revealed"] == [False, False]
    assert last["seeds"]["client_seeds"] == [f"public:{table}:0", f"public:{table}:1"]
    assert verify(last) == []  # fair dealing all the same
    assert ("seed_not_taken", table) in events
    done = dudo_verify(f"{served}/#/replay/{table}")
    assert done.returncode == 0 and "note: seat 0 committed to a seed of its own" in done.stdout


def test_a_malformed_seed_commitment_is_refused_and_seats_nobody(served: str) -> None:
    """Over HTTP a commitment is 64 lowercase hex digits (a SHA-256), else 400 bad_seed,
    before any table or seat is made."""
    from dudo_client import DudoError

    async def scenario() -> list[tuple[str, int | None]]:
        refused = []
        async with DudoApi(served) as api:
            made = await api.create_table(rules={"preset": "classic"}, seats=3, name="Ana")
            for bad in ("A" * 64, "a" * 63, "zz" * 32, 7):
                try:
                    await api.join_table(made["table"], name="Ben", seed_commitment=bad)  # type: ignore[typeddict-item]
                except DudoError as exc:
                    refused.append((exc.code, exc.status))
            listed = next(e for e in (await api.tables())["tables"] if e["table"] == made["table"])
            assert listed["taken"] == 1  # nobody else sat
        return refused

    assert asyncio.run(scenario()) == [("bad_seed", 400)] * 4


def test_an_entrant_brings_a_seed_to_its_tournament_table_and_the_results_prove_its_rounds(
    served: str,
) -> None:
    """Issue 55, item 5: the package registers its entrant as bringing seeds (the
    default); the director seats Ana with two bots; the table asks her seat for a
    commitment, her connection makes a seed for that table, commits, then reveals, and
    the deal takes it. Once the table closes, the results give its seeds, and every round
    seed Ana saw revealed is the one those seeds make."""
    from dudo.engine import round_seed
    from dudo.engine.fairness import game_secret

    async def scenario() -> tuple[dict[str, Any], dict[int, str], list[dict[str, Any]]]:
        seen: list[dict[str, Any]] = []
        async with DudoApi(served) as api:
            made = await api.create_tournament(
                name="Seeded Cup", host="Ana", rules={"preset": "classic", "start_dice": 2},
                seats=3, start_players=3, max_players=3, bots="easy", buy_in=0,
            )  # fmt: skip
            tid, token = made["tournament"], made["token"]
            async with DudoConnection(served, token, on_message=seen.append) as conn:
                await api.begin(tid, token)
                await conn.play(choose)
            for _ in range(200):  # the table closes, then its history reaches the director
                results = await api.results(tid)
                if results["tables"] and results["status"] == "over":
                    break
                await asyncio.sleep(0.1)
        views = [m for m in seen if m["type"] == "view"]
        reveals = {v["game"]["last_round"]["round"]: v["game"]["last_round"]["seed"]
                   for v in views if v.get("game") and v["game"].get("last_round")}  # fmt: skip
        return dict(results), reveals, views

    results, reveals, views = asyncio.run(scenario())
    asked = next(v["seeds"] for v in views if "asked" in v.get("seeds", {}))
    seat = next(v["seat"] for v in views if isinstance(v.get("seat"), int))
    assert asked["asked"] == [seat] and asked["commitments"][seat] is None
    dealt = next(v["seeds"] for v in views if v.get("seeds", {}).get("revealed", [False])[seat])
    (table,) = results["tables"]
    seeds = table["seeds"]
    assert seeds["client_commitments"][seat] == dealt["commitments"][seat] is not None
    mine = seeds["client_seeds"][seat]
    assert not mine.startswith("public:")  # her own, made by her connection for this table
    others = [s for n, s in enumerate(seeds["client_seeds"]) if n != seat]
    assert all(s.startswith("public:") for s in others)  # the bots brought none
    secret = game_secret(bytes.fromhex(seeds["server_seed"]), seeds["client_seeds"])
    assert reveals and all(round_seed(secret, n).hex() == seed for n, seed in reveals.items())


def test_players_who_arrive_at_a_table_are_dealt_from_seeds_given_after_they_came(
    served: str,
) -> None:
    """Issue 55, item 5, end to end: five people through the package (each brings seeds,
    the default), three seats, one die each, so two tables. Once the players left fit one
    table, the director breaks the other and its players arrive at the first: that table
    holds its next round and asks its people again, their connections make new seeds,
    commit and reveal, and the held round is dealt from them. The results give every
    table's seeds with that reseed, and every table's rounds verify from them."""
    from dudo.engine.fairness import verify as server_verify

    async def person(token: str, seen: list[dict[str, Any]]) -> None:
        async with DudoConnection(served, token, on_message=seen.append) as conn:
            while True:  # from table to table, until the tournament is over
                await conn.play(choose)
                await conn.next("view")

    async def scenario() -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
        async with DudoApi(served) as api:
            made = await api.create_tournament(
                name="Arrivals", host="P0", rules={"preset": "classic", "start_dice": 1},
                seats=3, max_players=5, buy_in=0,
            )  # fmt: skip
            tid, tokens = made["tournament"], [made["token"]]
            for n in range(1, 5):
                tokens.append((await api.register(tid, name=f"P{n}"))["token"])
            seen: list[list[dict[str, Any]]] = [[] for _ in tokens]
            tasks = [asyncio.create_task(person(t, s)) for t, s in zip(tokens, seen, strict=True)]
            await asyncio.sleep(0.5)  # every connection open before the tables are made
            await api.begin(tid, tokens[0])
            try:
                for _ in range(1200):
                    results = await api.results(tid)
                    if results["status"] == "over" and len(results["tables"]) >= 2:
                        break
                    await asyncio.sleep(0.1)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
        return dict(results), seen

    results, seen = asyncio.run(scenario())
    assert results["status"] == "over" and len(results["tables"]) == 2
    reseeded = [t for t in results["tables"] if t["seeds"].get("reseeds")]
    assert reseeded, "no table was dealt again after an arrival"
    for again in reseeded[0]["seeds"]["reseeds"]:
        own = [s for s in again["client_seeds"] if not s.startswith("public:")]
        assert own  # seeds the people's connections made after the arrival
        assert not set(own) & set(reseeded[0]["seeds"]["client_seeds"])  # new ones
    # A held round was seen by the people there: nobody's turn, no dice, asked again.
    views = [m for ms in seen for m in ms if m["type"] == "view" and m.get("game")]
    held = [v for v in views if v["game"]["turn"] is None and v["game"]["phase"] != "over"]
    assert held and all(v["game"]["commitment"] is None for v in held)
    assert any(v.get("seeds", {}).get("round", 1) > 1 for v in held)
    # Every table's rounds verify, from its closed view (a spectator's, as `dudo verify`
    # asks it) and from the results' seeds with those rounds.
    from dudo.cli.finished import finished_view

    for table in results["tables"]:
        closed = finished_view(served, table["table"])
        assert closed["seeds"].get("reseeds") == table["seeds"].get("reseeds")
        assert verify(closed) == []
        log = {"table": table["table"], "rounds": closed["game"]["log"], **table["seeds"]}
        verdict = server_verify(log)
        assert verdict.ok and verdict.rounds == len(log["rounds"]) > 0, verdict.problems
