"""A player's statistics on the device (issue 34): games, wins, the best run of wins, Dudo
and Calza calls right, for an anonymous player too. Two games against bots; the lobby's
card says what the games' own logs (read by a spectator's client) say, and opening a
finished game again counts nothing twice."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request
from pathlib import Path
from typing import Any

from dudo_client import DudoConnection

from .test_browser import ARGS, PHONE, chromium, new_page, untranslated
from .test_browser_end import _create
from .test_browser_rematch import play_to_the_end


def _final_view(served: str, table: str) -> dict[str, Any]:
    """The finished game's view as a spectator gets it: its log, its winner."""
    request = urllib.request.Request(f"{served}/api/tables/{table}/watch", b"{}", method="POST")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as got:
        token = json.loads(got.read())["token"]

    async def read() -> dict[str, Any]:
        async with DudoConnection(served, token) as conn:
            return dict(await conn.resync())

    got: list[dict[str, Any]] = []  # (in a thread: Playwright's loop runs in this one)
    thread = threading.Thread(target=lambda: got.append(asyncio.run(read())))
    thread.start()
    thread.join(timeout=30)
    return got[0]


def test_statistics_count_each_game_and_call_once(served: str, output_dir: Path) -> None:
    from playwright import sync_api as playwright

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = new_page(browser, PHONE, errors)
        page.goto(served)
        page.wait_for_selector("[data-test=create-form]")
        assert not page.query_selector("[data-test=stats]")  # nothing yet: no card

        tables = []
        for _ in range(2):
            _create(page, served, 3, 2, start_dice="2")
            play_to_the_end(page)  # Ana doubts whenever she may, else bids
            tables.append(page.url.rsplit("/", 1)[1])
        # The first game opened again (its end is shown anew): counted once all the same.
        page.goto(f"{served}/#/t/{tables[0]}")
        page.wait_for_selector("[data-test=game-over]")

        expected = {"games": 2, "wins": 0, "dudo": [0, 0], "calza": [0, 0]}
        for table in tables:
            final = _final_view(served, table)
            ana = [p["name"] if p else None for p in final["players"]].index("Ana")
            expected["wins"] += final["game"]["winner"] == ana
            for r in final["game"]["log"]:
                if r["caller"] == ana:
                    right = r["loser"] != ana if r["call"] == "dudo" else r["loser"] is None
                    expected[r["call"]][0] += right
                    expected[r["call"]][1] += 1
        assert expected["dudo"][1] > 0  # (Ana doubts whenever she may)

        page.goto(served)
        page.wait_for_selector("[data-test=stats]")
        page.screenshot(path=str(output_dir / "browser-stats-phone.png"), full_page=True)
        # Issue 53, item 17: labels left and numbers right, and a toast covers none of it.
        aligned = page.eval_on_selector(
            "[data-test=stats] table",
            "t => [getComputedStyle(t.querySelector('th')).textAlign,"
            " getComputedStyle(t.querySelector('td')).textAlign]",
        )
        assert aligned == ["left", "right"], aligned
        page.evaluate("""() => {  // the statistics in mid-screen, as after "You left the table"
          const b = document.querySelector("[data-test=stats] table").getBoundingClientRect();
          window.scrollBy(0, b.top - innerHeight * 0.4); }""")
        page.evaluate("document.getElementById('toast').hidden = false")
        page.evaluate("document.getElementById('toast').textContent = 'You left the table.'")
        over = page.evaluate("""() => {
          const a = document.getElementById("toast").getBoundingClientRect();
          const b = document.querySelector("[data-test=stats] table").getBoundingClientRect();
          return a.bottom > b.top && a.top < b.bottom; }""")
        page.evaluate("document.getElementById('toast').hidden = true")
        assert not over, "the toast covers the statistics"

        def shown(test: str) -> str:
            return page.inner_text(f"[data-test={test}]")

        def share(right: int, of: int) -> str:
            return f"{right} / {of} ({int(100 * right / of + 0.5)}%)" if of else "–"  # Math.round

        assert shown("stats-games") == "2"
        assert shown("stats-wins") == share(expected["wins"], 2)
        assert shown("stats-dudo") == share(*expected["dudo"])
        assert shown("stats-calza") == share(*expected["calza"])
        assert shown("stats-best") == str(expected["wins"])  # (of two games: the run is the wins)
        assert untranslated(page) == [] and errors == []
        browser.close()
