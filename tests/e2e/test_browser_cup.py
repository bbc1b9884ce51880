"""A tournament's page read as a player reads it (issue 34, item 9), in Spanish on a phone:
where you play ("Jugás en la mesa 2", not "moved to table 2" at the start), one way back to
the lobby, who plays at which table with their dice (not "#2: Ana (3), Bot 2 (3)"), as many
players listed as "left" says (the ones waiting for a table counted), the quick
tournament's name and its bots' names as the table's are (not "Ana Cup" and "Bot 2"),
and, once the person is out, their place instead of the table they left (which had stayed
on screen with its turn clock and "next round in 4 s"), with no "0 left" at the end."""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
from pathlib import Path
from typing import Any

from dudo_client import DudoConnection, DudoError
from dudo_client.examples.bot import choose

from ..servers import RedisServer
from .conftest import serving
from .test_browser import ARGS, PHONE, chromium, enabled, new_page, untranslated
from .test_organizer import post

# Checked on every change of the page (a script in it), not when the test happens to look:
# bots play a tournament's last tables in a blink. Out while the tournament runs, a player
# sees their place and the standings; the table they left is gone, and its last reveal
# (the round that put them out) counts down no next round. The standings list every
# player still in, or count them as waiting ("quedan 4 · 1 esperando mesa").
WATCH = """() => {
  const q = (s) => document.querySelector(s);
  window.cupSeen = { placedRunning: false, wrong: [] };
  new MutationObserver(() => {
    const left = q("[data-test=cup-left]");
    if (left) {
      const [n, ...waiting] = left.textContent.match(/\\d+/g).map(Number);
      const listed = document.querySelectorAll("[data-test=cup-player]").length;
      if (n !== listed + waiting.reduce((a, b) => a + b, 0)) {
        cupSeen.wrong.push(`${left.textContent}: ${listed} listed`);
      }
    }
    for (const p of document.querySelectorAll("[data-test=cup-player]")) {
      const text = p.textContent;
      if (!/\\S \\d+ dados? /.test(text) || /^Bot /.test(text)) cupSeen.wrong.push(text);
    }
    if (!q("[data-test=my-place]") || q("[data-test=cup-over]")) return;
    cupSeen.placedRunning = true;
    for (const gone of ["players", "dock", "out", "next-round", "your-turn"]) {
      const there = q(`[data-test=${gone}]`);
      if (there) cupSeen.wrong.push(`${gone}: ${there.closest(".card, .overlay").textContent}`);
    }
    const place = q("[data-test=my-place]").textContent;
    if (!/^Terminaste en el puesto [2-6] de 6$/.test(place)) cupSeen.wrong.push(place);
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
}"""


def _lose(page: Any) -> None:
    """Ana's policy, to be out soon: bid every die in play a six (a bot doubts it, and is
    right but for a table of sixes and ones), else doubt."""
    page.keyboard.press("6")
    for _ in range(12):  # up to the dice in play (the page's cap)
        page.keyboard.press("ArrowUp")
    if enabled(page, "[data-test=bid]"):
        page.keyboard.press("Enter")
    elif enabled(page, "[data-test=dudo]"):
        page.keyboard.press("d")


def _play_to_the_end(page: Any, then: threading.Event | None = None) -> dict[str, Any]:
    """Ana plays to lose until the tournament is over; ``then`` is set once her page has
    shown her place while it ran. What the watching script saw."""
    page.evaluate(WATCH)
    deadline = time.monotonic() + 150
    while not page.query_selector("[data-test=cup-over]"):
        assert time.monotonic() < deadline, "the tournament did not finish"
        if then is not None and page.evaluate("cupSeen.placedRunning"):
            then.set()
        if page.query_selector("[data-test=reveal]"):
            page.keyboard.press("Escape")
        elif page.query_selector("[data-test=your-turn]"):
            _lose(page)
        time.sleep(0.05)
    seen = page.evaluate("cupSeen")
    assert seen["wrong"] == [], seen["wrong"]
    return seen


def _bea(base: str, token: str, go: threading.Event) -> threading.Thread:
    """A second person, on the Python client: she holds her table (never acting; the
    house plays for her when her turn clock runs out) until ``go``, then plays on.
    Her table keeps the tournament running while Ana's page shows Ana out."""

    async def play() -> None:
        async with DudoConnection(base, token) as conn:
            latest: dict[str, Any] = {}
            acted = -1

            async def read() -> None:
                async for msg in conn.messages():
                    if msg["type"] == "view" and msg.get("game"):
                        latest.update(msg)
                    if msg["type"] == "tournament" and msg["standings"]["status"] == "over":
                        return

            reader = asyncio.create_task(read())
            while not reader.done():
                await asyncio.sleep(0.1)
                game = latest.get("game")
                turn = bool(game and "legal" in game and game["turn"] == latest["seat"])
                if go.is_set() and turn and latest["version"] != acted:
                    acted = latest["version"]
                    # Refused when played already (the house, at her clock's end).
                    with contextlib.suppress(DudoError):
                        await conn.act(choose(game))

    thread = threading.Thread(target=lambda: asyncio.run(play()), daemon=True)
    thread.start()
    return thread


def test_a_tournaments_page_in_spanish_on_a_phone(
    redis_server: RedisServer, tmp_path: Path, output_dir: Path
) -> None:
    from playwright import sync_api as playwright

    redis_server.client().flushall()
    quick = ("--bot-think", "0.05,0.15", "--reveal-hold", "0")
    with serving(tmp_path, "--redis", redis_server.url, *quick) as (
        served, _), playwright.sync_playwright() as p:  # fmt: skip
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = new_page(browser, PHONE, errors)

        # A quick tournament from the lobby, in Spanish.
        page.goto(served)
        page.select_option("#lang", "es")
        page.fill("[data-test=name]", "Ana")
        page.click("summary")
        page.select_option("#start_dice", "2")
        page.click("[data-test=quick-cup]")
        page.wait_for_selector("[data-test=players]", timeout=15_000)
        header = page.inner_text("[data-test=cup]")
        assert re.search(r"Jugás en la mesa \d+", header) and "Te pasaron" not in header, header
        assert page.inner_text(".cup-name") == "Copa de Ana"
        # One way back to the lobby: the tournament's (the table under it had a second).
        assert page.locator("#app a[href='#/']").count() == 1
        _play_to_the_end(page)
        end = page.inner_text("[data-test=cup]")
        assert "Terminó el torneo" in end and "quedan" not in end, end  # no "0 left"
        assert re.search(r"Terminaste en el puesto [2-6] de 6|¡Ganaste el torneo!", end), end
        assert len(page.query_selector_all("[data-test=cup-places] li")) == 6
        assert not page.query_selector("[data-test=players]")

        # A tournament Ana's app made (as the page's quick one does, through the API),
        # with Bea on her own client: Ana goes out while Bea's table plays on.
        status, made = post(served, "/api/tournaments", {
            "name": "Martes", "host": "Ana",
            "rules": {"preset": "classic", "start_dice": 2, "turn_seconds": 10},
            "seats": 3, "start_players": 6, "max_players": 6, "bots": "normal", "payouts": [100],
        })  # fmt: skip
        assert status == 201, made
        cup = made["tournament"]
        page.evaluate(
            "([c, token]) => localStorage.setItem('dudo.entrants', JSON.stringify({ [c]: token }))",
            [cup, made["token"]],
        )
        status, bea = post(served, f"/api/tournaments/{cup}/register", {"name": "Bea"})
        assert status in (200, 201), bea
        go = threading.Event()
        thread = _bea(served, bea["token"], go)
        status, begun = post(served, f"/api/tournaments/{cup}/begin", {"token": made["token"]})
        assert status in (200, 201), begun
        page.goto(f"{served}/#/c/{cup}")
        page.wait_for_selector("[data-test=players]", timeout=15_000)
        seen = _play_to_the_end(page, then=go)
        thread.join(timeout=30)
        assert seen["placedRunning"], "Ana's place never showed while the tournament ran"
        page.screenshot(path=str(output_dir / "browser-cup-es-phone.png"), full_page=True)
        assert untranslated(page) == [] and errors == []
        browser.close()
