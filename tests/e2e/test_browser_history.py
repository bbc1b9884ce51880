"""A game's history and its replay (issue 34): the table screen's history panel lists every
round that has ended (its bids, the call, the dice), kept through a reload; once the game
is over the table's own log fills it, and "Replay" opens the finished game at a link that
another person, on another device, steps through round by round. The link opened while
the game runs says so; a table no longer kept says that."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .test_browser import ARGS, PHONE, chromium, enabled, new_page, untranslated
from .test_browser_end import _create


def _rounds(page: Any) -> tuple[int, int]:
    """The round under way ("Round 4", top of the table) and how many rounds the history
    panel lists ("Game history · 3 rounds"; 0 without a panel), read together."""
    return tuple(page.evaluate("""() => {
      const number = (el) => (el ? Number(el.textContent.match(/\\d+/)[0]) : 0);
      return [number(document.querySelector(".row.top .muted")),
              number(document.querySelector("[data-test=history] > summary"))];
    }"""))


def test_the_history_panel_then_the_replay_at_its_link(served: str, output_dir: Path) -> None:
    from playwright import sync_api as playwright

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = new_page(browser, PHONE, errors)
        _create(page, served, 3, 2, start_dice="2")
        table = page.url.rsplit("/", 1)[1]
        other = new_page(browser, PHONE, errors)  # someone else, on another device

        # The replay's link while the game runs: it says the game is on, and where to watch.
        other.goto(f"{served}/#/replay/{table}")
        other.wait_for_selector("[data-test=replay-playing]")
        assert other.get_attribute("[data-test=replay-playing] [data-test=watch]", "href") == (
            f"#/w/{table}"
        )

        reloaded = False
        deadline = time.monotonic() + 120
        while not page.query_selector("[data-test=game-over]"):
            assert time.monotonic() < deadline, "the game did not finish"
            if page.query_selector("[data-test=reveal]"):
                page.keyboard.press("Escape")
                continue
            playing, listed = _rounds(page)
            if playing and page.query_selector("[data-test=dock]"):
                # Every round ended so far, and no more: the round under way is not in it.
                assert listed == playing - 1, (playing, listed)
                if not reloaded and playing >= 3:  # kept on the device through a reload
                    page.reload()
                    page.wait_for_selector("[data-test=history]")
                    assert _rounds(page)[1] >= playing - 1
                    reloaded = True
            if page.query_selector("[data-test=your-turn]"):
                if enabled(page, "[data-test=dudo]"):
                    page.keyboard.press("d")
                elif page.query_selector("[data-test=bid]"):
                    page.keyboard.press("Enter")
            time.sleep(0.05)
        assert reloaded, "the game ended before its third round"
        if page.query_selector("[data-test=reveal]"):
            page.keyboard.press("Escape")

        # Over: the table's log, every round of the game, each with its bids and dice.
        last, listed = _rounds(page)
        assert listed == last
        page.click("[data-test=history] > summary")
        first = page.query_selector_all("[data-test=history-round]")[-1]  # newest first
        first.query_selector("summary").click()
        first_bids = first.inner_text()
        assert "Round 1" in first_bids and first.query_selector("[data-test=round-bids] li")
        # Issue 53, item 13: each round numbered once, by its own number ("18. ▸ Round 9").
        style = "e => getComputedStyle(e).listStyleType"
        assert page.eval_on_selector(".history .rounds", style) == "none"
        assert first_bids.lstrip().startswith("Round 1")
        page.screenshot(path=str(output_dir / "browser-history-phone.png"), full_page=True)

        # The replay, from its link at the game's end, on the other device.
        link = page.get_attribute("[data-test=replay-link]", "href")
        assert link == f"#/replay/{table}"
        other.goto(f"{served}/{link}")
        other.reload()
        other.wait_for_selector("[data-test=replay]")
        # Item 15: bid by bid. Round 1's first bid, every hand shown (the game is over),
        # then each bid in turn, then the call with the reveal.
        step = "[data-test=replay-step]"
        bids_of_1 = len(first.query_selector_all("[data-test=round-bids] li"))
        assert other.inner_text(step) == f"Round 1 of {last} · bid 1 of {bids_of_1}"
        assert other.is_disabled("[data-test=replay-prev]")
        assert other.is_disabled("[data-test=replay-prev-round]")
        assert len(other.query_selector_all("[data-test=round-bids] li")) == 1
        assert other.query_selector_all("[data-test=replay-hand]")
        assert not other.query_selector("[data-test=outcome]")  # the call comes after the bids
        # Previous and Next on one row on a phone (Next wrapped, and moved).
        boxes = [other.locator(f"[data-test=replay-{b}]").bounding_box() for b in ("prev", "next")]
        tops = [box["y"] for box in boxes if box is not None]
        assert abs(tops[0] - tops[1]) < 2, tops
        assert not other.query_selector("[data-test=replay-winner]")  # the end comes last
        other.keyboard.press("ArrowRight")
        if bids_of_1 > 1:
            assert other.inner_text(step) == f"Round 1 of {last} · bid 2 of {bids_of_1}"
            assert len(other.query_selector_all("[data-test=round-bids] li")) == 2
        for _ in range(bids_of_1 - 1):
            other.click("[data-test=replay-next]")
        # Round 1 as the history told it: the same bids and the same dice, counted.
        assert " by " in other.inner_text(step)  # "Round 1 of 9 · Dudo! by Ana"
        assert other.query_selector("[data-test=outcome]")
        told = first.query_selector("[data-test=round-bids]").inner_text()
        assert other.inner_text("[data-test=round-bids]").split() == told.split()
        dice = "rs => rs.map((r) => [...r.querySelectorAll('.die')].map((d) => d.ariaLabel))"
        told_dice = first.eval_on_selector_all(".reveal-row", dice)
        assert told_dice and other.eval_on_selector_all(".reveal-row", dice) == told_dice
        # Round by round: a button, or Shift+→, goes to the next round's first bid.
        other.click("[data-test=replay-next-round]")
        assert other.inner_text(step).startswith(f"Round 2 of {last} · bid 1 of ")
        for _ in range(last - 2):
            other.keyboard.press("Shift+ArrowRight")
        assert other.inner_text(step).startswith(f"Round {last} of {last} · bid 1 of ")
        assert other.is_disabled("[data-test=replay-next-round]")
        while not other.is_disabled("[data-test=replay-next]"):
            other.keyboard.press("ArrowRight")
        assert " by " in other.inner_text(step)
        assert "wins!" in other.inner_text("[data-test=replay-winner]")
        assert other.inner_text("[data-test=replay-share]").endswith(f"/#/replay/{table}")
        other.screenshot(path=str(output_dir / "browser-replay-phone.png"), full_page=True)
        other.click("[data-test=replay-prev-round]")
        assert other.inner_text(step).startswith(f"Round {last - 1} of {last} · bid 1 of ")

        # Issue 55: "Verify these dice", computed in this browser from the view alone
        # (Web Crypto), in each language. Ana's page brought a seed of its own and
        # revealed it before the deal: the game's seeds hold hers, not a public one.
        said = {
            "en": f"the dice of all {last} rounds come from the server's seed",
            "es": f"los dados de las {last} rondas salen de la semilla del servidor",
            "de": f"die Würfel aller {last} Runden stammen aus dem Seed des Servers",
        }
        for code, words in said.items():
            other.select_option("#lang", code)
            other.click("[data-test=verify-dice]")
            result = other.wait_for_selector("[data-test=verify-result]")
            assert words in result.inner_text(), result.inner_text()
            assert result.get_attribute("class") == "verify good"
            if code == "en":  # every person revealed in time: no public seed used
                assert "did not reveal" not in result.inner_text()
        other.screenshot(path=str(output_dir / "browser-replay-verified-phone.png"), full_page=True)
        # Ana's page kept her seat's seed with its token until the deal (a reload between
        # her seat and the deal would still reveal it).
        kept = page.evaluate("() => JSON.parse(localStorage.getItem('dudo.seeds') || '{}')")
        assert len(kept.get(table, "")) == 32, kept
        other.select_option("#lang", "en")

        # A table no longer kept (or never made) says so.
        other.goto(f"{served}/#/replay/nosuchtable")
        other.wait_for_selector("[data-test=replay-gone]")
        assert untranslated(page) == [] and untranslated(other) == [] and errors == []
        browser.close()
