"""The table screen's time, on a phone (issue 34, items 1, 2 and 8): once the person is
out, the rest of the game is played at a pace they can watch (it ran in a blink: no
reveal held and no bot thinking once nobody "played"); the game's last reveal says who
won, with no "next round" counting down over it, and leaves the game's end on screen;
the turn clock counts the server's time and waits for the reveal."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..servers import RedisServer
from .conftest import serving
from .test_browser import ARGS, DESKTOP, PHONE, chromium, enabled, new_page, on_screen, untranslated

HOLD_S = 1.5  # the server's reveal hold (`--reveal-hold`)


def _create(page: object, served: str, seats: int, bots: int, **options: str) -> None:
    """Ana makes a table from the lobby's form (``options``: the form's fields by id,
    under "more options"), and it starts: every seat but hers is a bot's."""
    page.goto(served)
    page.fill("[data-test=name]", "Ana")
    page.select_option("[data-test=seats]", str(seats))
    page.select_option("[data-test=bots]", str(bots))
    page.click("summary")
    for field, value in options.items():
        page.select_option(f"#{field}", value)
    page.click("[data-test=create]")
    page.wait_for_selector("[data-test=dock]", timeout=15_000)


def _turn_passed(page: Any) -> bool:
    """After Ana's key, whether her turn passed (or a reveal opened). A reveal that opened
    between the test's look and its key takes that Enter on its focused OK, as it would a
    player's: the turn is still hers, and the caller's loop plays it again."""
    from playwright.sync_api import TimeoutError as Timeout

    try:
        page.wait_for_function(
            "!document.querySelector('[data-test=your-turn]') || "
            "!!document.querySelector('[data-test=reveal]')",
            timeout=3_000,
        )
    except Timeout:
        return False
    return True


def _lose_a_round(page: object) -> None:
    """Ana's policy, to be out soon: doubt any bid standing (a low bid among three dice
    is likely true), else open with every die a six (a bot doubts that)."""
    if enabled(page, "[data-test=dudo]"):
        page.keyboard.press("d")
        return
    page.keyboard.press("6")
    for _ in range(3):
        page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")


def test_out_and_watching_the_rest_then_the_end_on_a_phone(
    redis_server: RedisServer, tmp_path: Path, output_dir: Path
) -> None:
    from playwright import sync_api as playwright

    redis_server.client().flushall()
    pace = ("--bot-think", "0.05,0.1", "--reveal-hold", str(HOLD_S))
    with serving(tmp_path, "--redis", redis_server.url, *pace) as (served, _), \
            playwright.sync_playwright() as p:  # fmt: skip
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = new_page(browser, PHONE, errors)
        watched = None
        for _attempt in range(6):  # Ana must lose the first round (likely: see above)
            _create(page, served, 3, 2, start_dice="1")
            deadline = time.monotonic() + 60
            while not page.query_selector("[data-test=game-over]"):
                assert time.monotonic() < deadline, "the game did not finish"
                if page.inner_text("[data-test=count-0]").strip() == "out":
                    break
                if page.query_selector("[data-test=your-turn]") and not page.query_selector(
                    "[data-test=reveal]"
                ):
                    _lose_a_round(page)
                elif page.query_selector("[data-test=reveal]"):
                    page.click("[data-test=reveal-ok]")
                time.sleep(0.02)
            seen = time.monotonic()  # Ana out (or the game over already)
            if page.query_selector("[data-test=game-over]"):
                places = page.locator("[data-test=game-over] ol li").all_inner_texts()
                if not places[-1].startswith("Ana"):
                    continue  # Ana won, or lost last: nothing left to watch; another game
            elif sum(page.inner_text(f"[data-test=count-{s}]").strip() != "out"
                     for s in (1, 2)) < 2:  # fmt: skip
                continue
            watched = seen  # Ana went out first: two bots play on
            break
        assert watched is not None, "Ana never went out first in six games"
        if not page.query_selector("[data-test=game-over]"):
            assert "You are out" in page.inner_text("[data-test=out]")  # (under the reveal)
        page.wait_for_selector("[data-test=game-over]", timeout=30_000)
        ended = time.monotonic() - watched
        # Item 2: the two bots' last round waited for the reveal Ana was reading.
        assert ended >= HOLD_S - 0.3, f"the rest of the game took {ended:.2f} s: unwatchable"

        # Item 1: the last reveal says who won; nothing counts down to a next round.
        page.wait_for_selector("[data-test=reveal-winner]", timeout=5_000)
        overlay = page.inner_text("[data-test=reveal]")
        assert "wins!" in overlay and "Next round" not in overlay, overlay
        time.sleep(1.0)  # it stays: no countdown closes it
        assert page.query_selector("[data-test=reveal-winner]")
        page.screenshot(path=str(output_dir / "browser-end-reveal-phone.png"))
        page.click("[data-test=reveal-ok]")
        assert on_screen(page, "[data-test=game-over] h2"), "the winner is off screen"
        assert "wins!" in page.inner_text("[data-test=game-over]")
        page.screenshot(path=str(output_dir / "browser-end-phone.png"))
        assert untranslated(page) == [] and errors == []
        browser.close()


def _clock(page: object) -> int:
    return int(page.inner_text("[data-test=clock]").split()[-2])


def test_the_turn_clock_counts_the_servers_time_and_waits_for_the_reveal(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Issue 34, item 8: the countdown was the deadline minus the device's clock, so a
    phone 12 s fast showed 3 s of a 15 s turn; and during a reveal the clock showed the
    hold and the turn together (18 s of a 15 s clock). The welcome carries the gateway's
    time, and the clock starts when the hold ends."""
    from playwright import sync_api as playwright

    redis_server.client().flushall()
    pace = ("--bot-think", "0.05,0.1", "--reveal-hold", "3")
    with serving(tmp_path, "--redis", redis_server.url, *pace) as (served, _), \
            playwright.sync_playwright() as p:  # fmt: skip
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = new_page(browser, PHONE, errors)
        page.add_init_script("Date.now = ((real) => () => real() + 12000)(Date.now);")
        _create(page, served, 2, 1, clock="15")
        seen_turn = seen_hold = False
        deadline = time.monotonic() + 90
        while not (seen_turn and seen_hold):
            assert time.monotonic() < deadline, (seen_turn, seen_hold)
            reveal = page.query_selector("[data-test=reveal]")
            held = page.query_selector("[data-test=next-round]")  # a reveal holds the table
            if page.query_selector("[data-test=clock]"):
                left = _clock(page)
                # At most 15, and a second for the welcome's trip: its `now` is stamped
                # before it travels, and a page starved of CPU (a loaded CI host) read it
                # a second late once, showing 16. The bugs this guards against are 3 s
                # off and more (the hold and the turn together: 18).
                assert left <= 16, f"{left} s shown of a 15 s clock"
                if held and reveal:
                    seen_hold = True  # (the clock waits for the hold: 15 s, not 18)
                elif page.query_selector("[data-test=your-turn]") and not reveal:
                    if not seen_turn:
                        assert left >= 12, f"{left} s shown at the start of a 15 s turn"
                        seen_turn = True
                    page.keyboard.press("d" if enabled(page, "[data-test=dudo]") else "Enter")
            if reveal and seen_hold:
                page.click("[data-test=reveal-ok]")
            if page.query_selector("[data-test=game-over]"):
                break
            time.sleep(0.05)
        assert seen_turn and seen_hold
        assert errors == []
        browser.close()


def _active(page: object) -> str | None:
    return page.evaluate("document.activeElement?.dataset?.test ?? null")


def test_a_keyboard_only_game_keeps_its_place_and_the_reveal_keeps_the_focus(
    served: str,
) -> None:
    """Issue 34, item 7: every update sent the focus back to the page (11 to 15 Tab
    presses to reach Bid, every turn); the reveal dialog let Tab wander to the page
    behind it; "← Lobby" was a button inside a link (two Tab stops). A game to its end
    with the keyboard alone."""
    from playwright import sync_api as playwright

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = new_page(browser, DESKTOP, errors)
        _create(page, served, 2, 1, start_dice="3")  # (two each once gave one bid turn)
        back = page.eval_on_selector(
            "[data-test=back]", "a => [a.tagName, !!a.querySelector('button')]"
        )
        assert back == ["BUTTON", False], back  # one Tab stop (it asks first: in play)
        turns = reveals = 0
        deadline = time.monotonic() + 120
        while not page.query_selector("[data-test=game-over]"):
            assert time.monotonic() < deadline, "the game did not finish"
            if page.query_selector("[data-test=reveal]") and not page.query_selector(
                "[data-test=reveal-winner]"
            ):
                for _ in range(3):  # Tab stays inside the dialog
                    page.keyboard.press("Tab")
                    assert page.evaluate(
                        "!!document.activeElement.closest('[data-test=reveal]')"
                    ), "Tab left the reveal dialog"
                page.keyboard.press("Escape")
                reveals += 1
                continue
            if page.query_selector("[data-test=your-turn]") and page.query_selector(
                "[data-test=bid]"
            ):
                if turns == 0:  # the first time, from the top of the page, by Tab
                    page.evaluate("document.activeElement.blur()")
                    for _ in range(40):
                        if _active(page) == "bid":
                            break
                        page.keyboard.press("Tab")
                    assert _active(page) == "bid"
                    page.keyboard.press("ArrowUp")  # a redraw (the quantity goes up)...
                    assert _active(page) == "bid", "a redraw took the focus away"  # ...kept
                else:  # later turns: the focus is back on Bid by itself
                    page.wait_for_function(  # (or a reveal came meanwhile: it has the focus)
                        "document.activeElement?.dataset?.test === 'bid' || "
                        "!!document.querySelector('[data-test=reveal]')",
                        timeout=3_000,
                    )
                    if page.query_selector("[data-test=reveal]"):
                        continue
                page.keyboard.press("Enter")  # the focused Bid button
                turns += _turn_passed(page)
            elif page.query_selector("[data-test=your-turn]"):
                page.keyboard.press("d")  # no bid left: Dudo
            time.sleep(0.05)
        assert turns >= 2 and reveals >= 1, (turns, reveals)
        assert errors == []
        browser.close()


def test_on_a_phone_the_action_bar_leaves_the_table_in_view_and_pages_open_at_the_top(
    served: str,
) -> None:
    """Issue 34, item 6: on a phone the action area took about 45% of the screen ("Bid 8
    × sixes" on three lines, Calza on its own row) and hid the bids; and a page kept the
    previous page's scroll ("How to play" opened at its bottom)."""
    from playwright import sync_api as playwright

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        # A phone: touch, no fine pointer (so no keyboard hint in the dock).
        page = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(served)
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        assert page.evaluate("window.scrollY") > 0
        page.click("[data-test=help-link]")
        page.wait_for_selector("[data-test=help]")
        assert page.evaluate("window.scrollY") == 0, "How to play opened scrolled down"
        page.click("[data-test=help] a")
        page.wait_for_selector("[data-test=create-form]")
        _create(page, served, 4, 3, start_dice="5")  # 20 dice: two-digit quantities
        measured = 0
        deadline = time.monotonic() + 90
        while measured < 3:
            assert time.monotonic() < deadline, f"{measured} turns measured"
            if page.query_selector("[data-test=reveal]"):
                page.keyboard.press("Escape")
            elif page.query_selector("[data-test=your-turn]") and page.query_selector(
                "[data-test=bid]"
            ):
                dock = page.locator("[data-test=dock]").bounding_box()
                assert dock is not None
                share = dock["height"] / PHONE["height"]
                assert share <= 0.30, f"the action bar takes {share:.0%} of the screen"
                lines = page.evaluate(  # the line boxes of its label
                    "(b => { const r = document.createRange(); r.selectNodeContents(b); "
                    "return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size; })"
                    "(document.querySelector('[data-test=bid]'))"
                )
                assert lines <= 2, f"Bid on {lines} lines"
                page.keyboard.press("Enter")
                measured += _turn_passed(page)
            elif page.query_selector("[data-test=your-turn]"):
                page.keyboard.press("d")
            if page.query_selector("[data-test=game-over]"):
                break
            time.sleep(0.05)
        assert measured >= 1 and errors == []
        browser.close()
