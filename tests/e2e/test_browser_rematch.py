"""Rematch (issue 34): at a game's end, one click seats the same people and bots at a new
table. Ana and Bea play with a bot; Ana asks for the rematch and is seated at once; Bea's
page, still on the finished game, is invited ("Ana asks for a rematch") and joins with
one click; the new game starts with the three of them. Alone with bots, the rematch
starts at once with bots of the same level."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .test_browser import ARGS, DESKTOP, PHONE, chromium, enabled, new_page, untranslated
from .test_browser_end import _create


def play_to_the_end(*pages: Any) -> None:
    """Each page plays its turns (doubt when it may, else bid) until every one shows the
    game's end."""
    deadline = time.monotonic() + 120
    while not all(p.query_selector("[data-test=game-over]") for p in pages):
        assert time.monotonic() < deadline, "the game did not finish"
        for page in pages:
            if page.query_selector("[data-test=reveal]"):
                page.keyboard.press("Escape")
            elif page.query_selector("[data-test=your-turn]"):
                page.keyboard.press("d" if enabled(page, "[data-test=dudo]") else "Enter")
        time.sleep(0.05)
    for page in pages:
        if page.query_selector("[data-test=reveal]"):
            page.keyboard.press("Escape")


def ana_and_bea(served: str, ana: Any, bea: Any, **options: str) -> str:
    """Ana's table of three (a bot's seat, Bea's by the table's link; ``options``: the
    form's fields under "more options"), begun once Bea sits. The table's id."""
    ana.goto(served)
    ana.fill("[data-test=name]", "Ana")
    ana.select_option("[data-test=seats]", "3")
    ana.select_option("[data-test=bots]", "1")
    ana.click("summary")
    for field, value in options.items():
        ana.select_option(f"#{field}", value)
    ana.click("[data-test=create]")
    ana.wait_for_selector("[data-test=waiting]")
    table = str(ana.url.rsplit("/", 1)[1])
    bea.goto(f"{served}/#/t/{table}")
    bea.fill("[data-test=name]", "Bea")
    bea.click("[data-test=join-submit]")
    for page in (ana, bea):
        page.wait_for_selector("[data-test=players]", timeout=15_000)
    return table


def _people(page: Any) -> list[str]:
    """The people at the table (not the bots: a bot's name comes with its new seat)."""
    return sorted(
        p.query_selector(".who").inner_text()
        for p in page.query_selector_all("[data-test=players] .player")
        if "bot ·" not in p.inner_text()
    )


def test_a_rematch_in_one_click_each(served: str, output_dir: Path) -> None:
    from playwright import sync_api as playwright

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        ana = new_page(browser, DESKTOP, errors)
        bea = new_page(browser, PHONE, errors)

        # Ana's table of three: Bea by its link, and a hard bot.
        first = ana_and_bea(served, ana, bea, level="hard", start_dice="1")
        people = _people(ana)
        assert people == ["Ana", "Bea"]
        play_to_the_end(ana, bea)

        # Ana: Rematch, and she sits at the new table at once, waiting for Bea.
        ana.click("[data-test=rematch]")
        ana.wait_for_function(f"!location.hash.endsWith('{first}')")
        ana.wait_for_selector("[data-test=waiting]")
        second = ana.url.rsplit("/", 1)[1]
        # Bea, still on the finished game, is invited; one click seats her.
        offer = bea.wait_for_selector("[data-test=rematch-offer]", timeout=15_000)
        assert offer.inner_text().startswith("Ana asks for a rematch.")
        assert not bea.query_selector("[data-test=rematch]")  # (one rematch: Ana's)
        # Issue 53, item 19: one primary action (two red buttons competed).
        primaries = bea.query_selector_all("[data-test=game-over] button.primary")
        assert [b.get_attribute("data-test") for b in primaries] == ["rematch-join"]
        bea.screenshot(path=str(output_dir / "browser-rematch-offer-phone.png"), full_page=True)
        bea.click("[data-test=rematch-join]")
        bea.wait_for_function(f"location.hash.endsWith('{second}')")
        # The three of them again, the bot as hard as before: it starts by itself.
        for page in (ana, bea):
            page.wait_for_selector("[data-test=dock]", timeout=15_000)
            assert _people(page) == people
            assert "bot · hard" in page.inner_text("[data-test=players]")

        # Alone with two bots: the rematch starts at once, with the same bots' levels.
        _create(ana, served, 3, 2, start_dice="1")
        play_to_the_end(ana)
        solo = ana.url.rsplit("/", 1)[1]
        ana.click("[data-test=rematch]")
        ana.wait_for_function(f"!location.hash.endsWith('{solo}')")
        ana.wait_for_selector("[data-test=dock]", timeout=15_000)
        assert ana.inner_text("[data-test=players]").count("bot · hard") == 2  # (as chosen)
        assert untranslated(ana) == [] and untranslated(bea) == [] and errors == []
        browser.close()
