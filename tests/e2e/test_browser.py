"""Two people in headless Chromium and two bots play a whole game through the page's buttons."""

from __future__ import annotations

import random
import shutil
import time
from pathlib import Path

from ..servers import require_binary

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        require_binary("chromium")  # skips outside CI, fails in CI
    assert path is not None
    return path


def test_two_players_and_two_bots_play_to_a_winner(served: str, output_dir: Path) -> None:
    from playwright import sync_api as playwright

    rng = random.Random(7)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        ana = browser.new_context(viewport={"width": 390, "height": 844}).new_page()  # a phone
        ben = browser.new_context(viewport={"width": 1024, "height": 900}).new_page()
        for page in (ana, ben):
            page.on("pageerror", lambda e: errors.append(str(e)))

        ana.goto(served)
        ana.fill("[data-test=name]", "Ana")
        ana.select_option("[data-test=seats]", "4")
        ana.select_option("[data-test=bots]", "2")
        ana.click("summary")
        ana.select_option("#start_dice", "2")
        ana.click("[data-test=create]")
        ana.wait_for_selector("[data-test=waiting]")
        table = ana.url.split("#/t/")[1]

        ben.goto(served)
        ben.select_option("#lang", "es")  # Ben plays in Spanish
        ben.fill("[data-test=name]", "Ben")
        ben.wait_for_selector(f"[data-test=table-{table}] [data-test=join]")
        ben.click(f"[data-test=table-{table}] [data-test=join]")
        for page in (ana, ben):
            page.wait_for_selector("[data-test=players]", timeout=15_000)

        shots = {"table": False, "reveal": False}
        spanish = {
            "as",
            "tonto",
            "tren",
            "cuadra",
            "quina",
            "cena",
            "ases",
            "tontos",
            "trenes",
            "cuadras",
            "quinas",
            "cenas",
        }
        spanish_seen = False
        deadline = time.monotonic() + 180
        while not all(page.query_selector("[data-test=game-over]") for page in (ana, ben)):
            assert time.monotonic() < deadline, "the game did not finish"
            for page in (ana, ben):
                reveal = page.query_selector("[data-test=reveal]")
                if reveal:
                    if not shots["reveal"]:
                        page.wait_for_selector("[data-test=verify].good, [data-test=verify].bad")
                        page.screenshot(path=str(output_dir / "browser-reveal.png"))
                        shots["reveal"] = True
                        # the page checked the revealed seed against the round's commitment
                        assert page.query_selector("[data-test=verify].good")
                    page.click("[data-test=reveal-ok]")
                    continue
                if not page.query_selector("[data-test=your-turn]"):
                    continue
                if not shots["table"]:
                    page.screenshot(path=str(output_dir / "browser-table.png"))
                    shots["table"] = True
                if page.query_selector("[data-test=direction]"):
                    page.click("[data-test=direction-right]")
                elif page.is_enabled("[data-test=dudo]") and rng.random() < 0.4:
                    page.click("[data-test=dudo]")
                elif page.query_selector("[data-test=bid]"):
                    if page is ben:  # the traditional names of seed 003
                        words = set(page.inner_text("[data-test=bid]").lower().split())
                        spanish_seen = spanish_seen or bool(words & spanish)
                        assert page.inner_text("[data-test=dudo]") == "¡Dudo!"
                    page.click("[data-test=bid]")
                elif page.is_enabled("[data-test=dudo]"):
                    page.click("[data-test=dudo]")
            time.sleep(0.05)

        winners = [p.get_attribute("[data-test=game-over]", "data-winner") for p in (ana, ben)]
        for page in (ana, ben):
            if page.query_selector("[data-test=reveal]"):
                page.click("[data-test=reveal-ok]")
        ana.screenshot(path=str(output_dir / "browser-game-over.png"), full_page=True)
        assert winners[0] == winners[1] and winners[0] in {"0", "1", "2", "3"}
        assert "wins!" in ana.inner_text("[data-test=game-over]")
        assert "¡Gana" in ben.inner_text("[data-test=game-over]")
        assert shots["table"] and shots["reveal"]
        assert spanish_seen, "Ben's page named the faces in Spanish"
        assert errors == []
        browser.close()


def test_a_quick_tournament_from_the_page_played_to_the_end(served: str, output_dir: Path) -> None:
    """One person and five bots: the page creates and begins the tournament, seats the
    person, moves them when their table breaks, and shows their place at the end."""
    from playwright import sync_api as playwright

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = browser.new_context(viewport={"width": 1024, "height": 900}).new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(served)
        page.fill("[data-test=name]", "Ana")
        page.click("summary")
        page.select_option("#start_dice", "1")
        page.click("[data-test=quick-cup]")
        page.wait_for_selector("[data-test=cup]", timeout=15_000)
        assert "#/c/" in page.url
        deadline = time.monotonic() + 180
        seated = False
        while not page.query_selector("[data-test=cup-over]"):
            assert time.monotonic() < deadline, "the tournament did not finish"
            if page.query_selector("[data-test=reveal]"):
                page.click("[data-test=reveal-ok]")
                continue
            seated = seated or bool(page.query_selector("[data-test=players]"))
            if page.query_selector("[data-test=your-turn]"):
                if page.is_enabled("[data-test=dudo]"):
                    page.click("[data-test=dudo]")
                elif page.query_selector("[data-test=bid]"):
                    page.click("[data-test=bid]")
            time.sleep(0.05)
        page.screenshot(path=str(output_dir / "browser-tournament.png"), full_page=True)
        assert seated, "the page never showed Ana's table"
        places = page.inner_text("[data-test=cup-places]")
        assert "Ana" in places and len(page.query_selector_all("[data-test=cup-places] li")) == 6
        assert page.query_selector("[data-test=my-place]")
        page.click("[data-test=cup] a")  # back to the lobby, then the leaderboard
        page.click("[data-test=leaderboard-link]")
        page.wait_for_selector("[data-test=leaderboard]")
        assert errors == []
        browser.close()
