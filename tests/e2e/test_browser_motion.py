"""Motion and sound a player can turn off (issue 34): the cup shaken as a round starts, a
new bid sliding in, the reveal counted die by die within the table's hold, a tone for your
turn and another for the reveal; none of the motion where the system asks for reduced
motion, or once the player turns it off."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..servers import RedisServer
from .conftest import serving
from .test_browser import ARGS, PHONE, chromium, enabled, untranslated
from .test_browser_end import _create

# Every tone the page starts, by its pitch (the page's own AudioContext, watched), and the
# animation of the first shaken hand and the first arriving bid (each lasts one redraw:
# seen by a script in the page, not when the test happens to look).
TONES = """
window.tones = [];
window.moved = {};
const firsts = [["shake", "[data-test=hand].shake"], ["arrive", "[data-test=bids] li.arrive"]];
new MutationObserver(() => {
  for (const [name, selector] of firsts) {
    const el = document.querySelector(selector);
    if (el && !(name in window.moved)) window.moved[name] = getComputedStyle(el).animationName;
  }
}).observe(document, { childList: true, subtree: true });
const start = OscillatorNode.prototype.start;
OscillatorNode.prototype.start = function (...args) {
  window.tones.push(this.frequency.value);
  return start.apply(this, args);
};
"""


def _animation(page: Any, selector: str) -> str:
    return page.eval_on_selector(selector, "el => getComputedStyle(el).animationName")


def _page(browser: Any, errors: list[str], **media: str) -> Any:
    context = browser.new_context(viewport=PHONE, **media)
    context.add_init_script(TONES)
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    return page


def test_motion_and_sound_and_turning_them_off(
    redis_server: RedisServer, tmp_path: Path, output_dir: Path
) -> None:
    from playwright import sync_api as playwright

    redis_server.client().flushall()
    pace = ("--bot-think", "0.3,0.5", "--reveal-hold", "2")  # a hold to count the dice in
    with serving(tmp_path, "--redis", redis_server.url, *pace) as (served, _), \
            playwright.sync_playwright() as p:  # fmt: skip
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = _page(browser, errors, reduced_motion="no-preference")
        page.goto(served)
        assert page.inner_text("[data-test=motion]") == "✦ Motion on"
        page.click("[data-test=sound]")  # sound is off until asked for
        _create(page, served, 3, 2, start_dice="3")

        # The round's hand comes out of a shaken cup; a new bid slides in (Ana bids when
        # she opens the round).
        deadline = time.monotonic() + 30
        while len(page.evaluate("window.moved")) < 2:
            assert time.monotonic() < deadline, page.evaluate("window.moved")
            if page.query_selector("[data-test=your-turn]") and page.query_selector(
                "[data-test=bid]"
            ):
                page.keyboard.press("Enter")
            time.sleep(0.1)
        assert page.evaluate("window.moved") == {"shake": "shake", "arrive": "arrive"}

        # The reveal: the counted dice one after the other, within the hold; its tone.
        deadline = time.monotonic() + 60
        while not page.query_selector("[data-test=reveal] .die.count-in"):
            assert time.monotonic() < deadline, "no reveal with a counted die"
            if page.query_selector("[data-test=reveal]"):
                page.keyboard.press("Escape")
            elif page.query_selector("[data-test=your-turn]"):
                page.keyboard.press("d" if enabled(page, "[data-test=dudo]") else "Enter")
            time.sleep(0.05)
        delays = page.eval_on_selector_all(
            "[data-test=reveal] .die.count-in",
            "ds => ds.map((d) => [parseInt(d.style.getPropertyValue('--at')),"
            " getComputedStyle(d).animationName])",
        )
        assert [name for _, name in delays] == ["counted"] * len(delays)
        steps = [at for at, _ in delays]
        assert steps == sorted(steps) and steps[0] == 0 and len(set(steps)) == len(steps)
        assert steps[-1] < 2000, steps  # all of them within the table's 2 s hold
        page.screenshot(path=str(output_dir / "browser-reveal-counted-phone.png"))
        tones = page.evaluate("window.tones")
        assert 523 in tones and 392 in tones, tones  # the reveal's two notes
        page.keyboard.press("Escape")
        page.wait_for_selector("[data-test=your-turn]", timeout=30_000)
        assert 660 in page.evaluate("window.tones")  # your turn's

        # Motion off: nothing moves (the same elements, styled still at once).
        page.click("[data-test=motion]")
        assert page.inner_text("[data-test=motion]") == "✦ Motion off"
        assert page.evaluate("document.documentElement.classList.contains('motion')") is False
        assert _animation(page, "[data-test=hand]") == "none"
        page.reload()  # and it stays off
        page.wait_for_selector("[data-test=hand]")
        assert _animation(page, "[data-test=hand]") == "none"

        # Where the system asks for reduced motion: off, and the toggle says why.
        still = _page(browser, errors, reduced_motion="reduce")
        _create(still, served, 2, 1, start_dice="2")
        still.wait_for_function("'shake' in window.moved")
        assert still.evaluate("window.moved.shake") == "none"
        assert still.inner_text("[data-test=motion]") == "✦ Motion off"
        assert still.is_disabled("[data-test=motion]")
        assert untranslated(page) == [] and untranslated(still) == [] and errors == []
        browser.close()
