"""Quick reactions in the browser (issue 34): Ana reacts, and Bea at the same table and a
spectator see it by Ana's name; a second one at once waits for the table's 1.5 s; a
spectator has no buttons."""

from __future__ import annotations

import time
from pathlib import Path

from dudo.wire.fields import EMOTES

from .test_browser import ARGS, DESKTOP, PHONE, chromium, new_page, untranslated
from .test_browser_rematch import ana_and_bea


def test_a_reaction_is_seen_by_everyone_at_the_table(served: str, output_dir: Path) -> None:
    from playwright import sync_api as playwright

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        ana, bea, watcher = (new_page(browser, size, errors) for size in (DESKTOP, PHONE, PHONE))
        table = ana_and_bea(served, ana, bea)
        watcher.goto(f"{served}/#/w/{table}")
        watcher.wait_for_selector("[data-test=players]")
        assert not watcher.query_selector("[data-test=reactions]")  # a spectator watches

        seat = next(  # Ana's seat, as the table numbers it
            i for i in range(3) if "Ana" in ana.inner_text(f"[data-test=player-{i}] .who")
        )
        sent = time.monotonic()
        ana.click("[data-test=react-haha]")
        for page in (ana, bea, watcher):
            shown = page.wait_for_selector(f"[data-test=bubble-{seat}]", timeout=10_000)
            assert shown.get_attribute("data-emote") == "haha"
            assert shown.get_attribute("aria-label") == "Haha"
            assert shown.query_selector("svg path, svg circle")  # drawn: no emoji font needed
        # Issue 53, item 14: every button a picture the page draws (👍 🤔 👏 were empty
        # boxes without an emoji font), drawn at its size, and the protocol's six emotes.
        drawn = bea.eval_on_selector_all(
            "[data-test=reactions] button",
            "bs => bs.map((b) => [b.dataset.test, b.textContent.trim(),"
            " b.querySelector('svg')?.getBoundingClientRect().width ?? 0])",
        )
        assert [name for name, _, _ in drawn] == [f"react-{e}" for e in EMOTES]
        assert all(text == "" and width >= 20 for _, text, width in drawn), drawn
        bea.screenshot(path=str(output_dir / "browser-reaction-phone.png"))

        # A second one at once: the table takes one a seat every 1.5 s (it refuses
        # `rate_limited`, and the client library sends it again a second later).
        ana.click("[data-test=react-wow]")
        bea.wait_for_function(
            f"document.querySelector('[data-test=bubble-{seat}]')?.dataset.emote === 'wow'"
        )
        assert time.monotonic() - sent >= 1.4
        # Gone again after a few seconds.
        bea.wait_for_selector(f"[data-test=bubble-{seat}]", state="detached", timeout=10_000)
        assert untranslated(ana) == [] and untranslated(bea) == [] and errors == []
        browser.close()
