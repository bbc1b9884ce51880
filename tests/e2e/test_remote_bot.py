"""`dudo bot`: our bot levels playing from outside through the official Python library,
at a table of their own, through a whole tournament, and through the conformance kit."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from typing import Any

from dudo.conformance.client import run as conformance
from dudo.run.remote_bot import run
from dudo_client import DudoApi, DudoConnection


def test_a_bot_creates_a_table_and_plays_it_to_the_end(served: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dudo", "bot", served, "--level", "hard", "--seed", "7",
         "--seats", "3", "--house", "easy"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.fullmatch(r"table (\S+), seat 0: (won|lost \(seat [12] won\)) \((\d+) moves\)\n",
                         done.stdout)  # fmt: skip
    assert found, done.stdout
    assert int(found[3]) >= 1

    async def final() -> dict[str, Any]:
        async with DudoApi(served) as api:
            watch = await api.watch_table(found[1])
        async with DudoConnection(served, watch["token"]) as conn:
            return conn.view or await conn.next("view")

    view = asyncio.run(final())  # the table agrees: over, with the winner the bot named
    assert view["game"]["winner"] is not None
    assert (view["game"]["winner"] == 0) == (found[2] == "won")


def test_bots_register_for_a_tournament_and_play_it_out(served: str) -> None:
    async def scenario() -> list:
        async with DudoApi(served) as api:
            created = await api.create_tournament(
                name="Bot cup", rules={"preset": "classic", "start_dice": 2},
                seats=3, start_players=5, max_players=5, buy_in=10, payouts=[70, 30],
            )  # fmt: skip
        levels = ["easy", "normal", "hard", "hard", "normal"]
        return await asyncio.wait_for(
            asyncio.gather(
                *(
                    run(served, level=level, seed=n, name=f"B{n}", tournament=created["tournament"])
                    for n, level in enumerate(levels)
                )
            ),
            180,
        )

    outcomes = asyncio.run(scenario())
    assert sorted(o.place for o in outcomes) == [1, 2, 3, 4, 5]  # each placed exactly once
    assert all(o.moves >= 1 for o in outcomes)  # every one played its own seat
    assert sum(o.refused for o in outcomes) == 0  # no move from a stale or foreign table
    assert len({o.tournament for o in outcomes}) == 1


def test_the_bot_passes_the_conformance_kit() -> None:
    verdict = conformance(
        [sys.executable, "-m", "dudo", "bot", "{url}", "--token", "{token}", "--level", "hard"]
    )
    assert verdict.ok, verdict.text()
