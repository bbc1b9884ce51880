"""Issue 53, item 5: the reveal leads with its result, in headless Chromium on a phone
(touch) and a desktop.

Before: the overlay's title was "Reveal"; the line "9 counted for 10 × fives — Ana loses
a die" was its sixth block, shown only after the dice lit up one by one, when it already
read "Next round in 1 s" (in 4-player reveals "Next round in 3 s" showed while that line
was blank); on a phone each "counted: N" wrapped onto a line of its own."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from ..servers import RedisServer
from .conftest import serving
from .test_browser import ARGS, chromium, enabled, untranslated
from .test_browser_end import _create

HOLD_S = 4  # the server's reveal hold: the table waits while the reveal is read

# Recorded on every change of the page: when each reveal opened, when its countdown first
# said anything, and what it led with then. It runs before the page's own scripts at every
# load: a watcher installed after the page was up could first see a reveal that had opened
# (and counted down) before it, and time it from there.
WATCH = """(() => {
  window.reveals = [];
  let open = null;
  const watch = () => new MutationObserver(() => {
    const overlay = document.querySelector("[data-test=reveal]");
    if (!overlay) { open = null; return; }
    if (!open) {
      const card = overlay.querySelector(".card");
      open = { at: performance.now(), counted: null, title: card.firstElementChild.textContent,
               first: card.firstElementChild.dataset.test,
               second: card.children[1].dataset.test, secondText: card.children[1].textContent,
               size: parseFloat(getComputedStyle(card.firstElementChild).fontSize) /
                 parseFloat(getComputedStyle(document.body).fontSize) };
      window.reveals.push(open);
    }
    const countdown = overlay.querySelector("[data-test=next-round]");
    if (countdown && countdown.textContent && open.counted === null) {
      open.counted = performance.now() - open.at;
    }
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
  document.addEventListener("DOMContentLoaded", watch);
})()"""


def _rows_are_one_line(page: Any) -> list[str]:
    """Rows of the open reveal whose count is not on the name's line."""
    return page.eval_on_selector_all(
        "[data-test=reveal] .reveal-row",
        """rows => rows.filter((row) => {
          const who = row.querySelector(".who").getBoundingClientRect();
          const counted = row.querySelector("[data-test=counted]").getBoundingClientRect();
          return counted.top >= who.bottom || counted.bottom <= who.top;
        }).map((row) => row.textContent)""",
    )


@pytest.mark.parametrize(
    "size",
    [{"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True},
     {"viewport": {"width": 1280, "height": 800}}],
    ids=["phone", "desktop"],
)  # fmt: skip
def test_the_reveal_leads_with_its_result_held_before_any_countdown(
    redis_server: RedisServer, tmp_path: Path, output_dir: Path, size: dict[str, Any]
) -> None:
    from playwright import sync_api as playwright

    redis_server.client().flushall()
    pace = ("--bot-think", "0.05,0.1", "--reveal-hold", str(HOLD_S))
    with serving(tmp_path, "--redis", redis_server.url, *pace) as (base, _), \
            playwright.sync_playwright() as p:  # fmt: skip
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = browser.new_context(**size).new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.add_init_script(WATCH)
        _create(page, base, 4, 3)  # four players: the longest reveal
        checked = 0
        deadline = time.monotonic() + 150
        while checked < 2:
            assert time.monotonic() < deadline, page.evaluate("window.reveals")
            if page.query_selector("[data-test=reveal-result]"):
                assert _rows_are_one_line(page) == []
                if not checked:
                    name = "phone" if size.get("is_mobile") else "desktop"
                    page.screenshot(path=str(output_dir / f"browser-reveal-{name}.png"))
                # Read to its end: it closes by itself when the hold is over.
                page.wait_for_selector("[data-test=reveal]", state="detached", timeout=15_000)
                checked += 1
            elif page.query_selector("[data-test=reveal]"):
                page.keyboard.press("Escape")  # the last one (game over, or Ana out)
            elif page.query_selector("[data-test=game-over]"):
                _create(page, base, 4, 3)
            elif page.query_selector("[data-test=your-turn]"):
                page.keyboard.press("d" if enabled(page, "[data-test=dudo]") else "Enter")
            time.sleep(0.05)
        seen = [r for r in page.evaluate("window.reveals") if r["first"] == "reveal-result"]
        assert len(seen) >= 1, page.evaluate("window.reveals")
        for reveal in seen:
            # The title is the result; the count comes right under it.
            assert reveal["title"] != "Reveal", reveal
            results = ("loses a die", "wins a die", "Nobody")
            assert any(w in reveal["title"] for w in results), reveal
            assert reveal["second"] == "outcome" and " counted for " in reveal["secondText"]
            # Nothing counts down for 2 s: the result alone, still.
            assert reveal["counted"] is None or reveal["counted"] >= 1_900, reveal
            assert reveal["size"] >= 1.3, reveal  # in large type
        assert untranslated(page) == [] and errors == []
        browser.close()
