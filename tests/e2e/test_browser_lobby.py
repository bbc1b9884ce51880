"""The lobby as a newcomer meets it, on a phone (issue 34, item 10): a heading and what the
game is, with How to play on the first screen (it was a plain link at the very bottom); a
sound toggle that says its state in words (a bare struck-through note); Play now saying
everything it will start, as the form changes (the level and the clock changed nothing
on screen); and "← Lobby" in the middle of a game asking whether to give the seat up, so
that games left that way end instead of piling up under "Games being played"."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

from .test_browser import ARGS, PHONE, chromium, new_page, on_screen, untranslated


def _listed(served: str, table: str) -> dict[str, Any] | None:
    """The table's entry in the lobby's list (open and running games), if any."""
    with urllib.request.urlopen(f"{served}/api/tables", timeout=10) as got:
        tables = json.loads(got.read())["tables"]
    return next((e for e in tables if e["table"] == table), None)


def test_the_lobby_says_what_it_starts_and_a_left_game_ends(served: str, output_dir: Any) -> None:
    from playwright import sync_api as playwright

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = new_page(browser, PHONE, errors)
        page.goto(served)
        page.wait_for_selector("[data-test=create-form]")

        # A heading, what the game is, and its rules one tap away on the first screen.
        assert page.inner_text("h1") == "Dudo, the game of liar's dice"
        assert "call Dudo!" in page.inner_text("[data-test=intro]")
        assert on_screen(page, "[data-test=help-link]"), "How to play is below the fold"
        page.screenshot(path=str(output_dir / "browser-lobby-phone.png"))

        # The sound toggle's words are its state.
        assert page.inner_text("[data-test=sound]") == "♪ Sound off"
        page.click("[data-test=sound]")
        assert page.inner_text("[data-test=sound]") == "♪ Sound on"
        page.click("[data-test=sound]")

        # Issue 53, item 18: the two toggles at one size; "Your own table" clear of Play now.
        sizes = [page.eval_on_selector(f"[data-test={b}]", "e => getComputedStyle(e).fontSize")
                 for b in ("sound", "motion")]  # fmt: skip
        assert sizes[0] == sizes[1], sizes
        gap = page.evaluate("""() => {
          const play = document.querySelector("[data-test=play-now]").getBoundingClientRect();
          const own = document.querySelector(".form-section").getBoundingClientRect();
          return own.top - play.bottom; }""")
        assert gap >= 24, gap
        # Play now says what it starts, whatever changes in the form.
        hint = "[data-test=play-hint]"
        assert page.inner_text(hint) == "You and 3 bots (normal), Classic (Perudo): starts at once."
        page.select_option("[data-test=level]", "hard")
        assert "(hard)" in page.inner_text(hint)
        page.select_option("[data-test=seats]", "2")
        page.select_option("#clock", "60")
        page.click("summary")
        page.select_option("#start_dice", "2")
        assert page.inner_text(hint) == (
            "You and 1 bot (hard), Classic (Perudo), 60 s a turn, Dice each 2: starts at once."
        )
        page.fill("[data-test=name]", "Ana")
        page.click("[data-test=play-now]")
        page.wait_for_selector("[data-test=dock]", timeout=15_000)
        assert "bot · hard" in page.inner_text("[data-test=players]")
        page.wait_for_selector("[data-test=clock]:not(:empty)")
        table = page.url.rsplit("/", 1)[1]

        # "← Lobby" in the middle of the game asks; giving the seat up lets it end.
        page.click("[data-test=back]")
        assert "give up your seat" in page.inner_text("[data-test=leave-confirm]")
        assert page.query_selector("[data-test=keep-seat]")
        page.click("[data-test=leave-yes]")
        page.wait_for_selector("[data-test=create-form]")
        assert not page.query_selector(f"[data-test=game-{table}]")  # not among "your games"
        deadline = time.monotonic() + 60
        while (entry := _listed(served, table)) is not None:
            # Without the leave, the game waited out Ana's 60 s clock at each of her turns
            # (and, with no clock, two hours): listed as playing all that time.
            assert time.monotonic() < deadline, f"a left game still listed: {entry}"
            time.sleep(0.5)
        assert untranslated(page) == [] and errors == []
        browser.close()
