"""axe-core (the accessibility engine behind Lighthouse and the browsers' own audits, from
the npm registry) on every page a player meets: the lobby, How to play, the table on your
turn, a reveal, the game's end, a tournament's page and a game's replay, each in light and
dark, at desktop and phone size. Nothing serious or critical may be left (issue 34's
proof): the turn clock read at 1.15:1 in dark mode on your turn, "Your turn" at 3.5:1."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from ..servers import RedisServer, require_binary
from .test_browser import ARGS, DESKTOP, PHONE, chromium, enabled
from .test_browser_end import _create

ROOT = Path(__file__).resolve().parents[2]
PREFIX = ROOT / ".pytest_cache" / "axe"  # axe-core, installed once
AXE = PREFIX / "node_modules" / "axe-core" / "axe.min.js"
LOOKS = [(size, scheme) for size in ("desktop", "phone") for scheme in ("light", "dark")]


def axe() -> Path:
    if not AXE.exists():
        npm = require_binary("npm")
        PREFIX.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(PREFIX),
             "axe-core@4"],
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip
    return AXE


def serious(page: Any) -> list[str]:
    """axe-core's serious and critical findings on the page as it is now."""
    if not page.evaluate("!!globalThis.axe"):
        page.add_script_tag(path=str(axe()))
    found = page.evaluate(
        "axe.run(document, {resultTypes: ['violations']}).then((r) => r.violations.map("
        "(v) => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ' ' +"
        " (n.any[0]?.message ?? ''))})))"
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']}: {v['nodes']}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


def audit(page: Any, where: str, found: dict[str, list[str]]) -> None:
    """The page as it is, in each of the four looks; what axe finds goes to ``found``."""
    for size, scheme in LOOKS:
        page.set_viewport_size(PHONE if size == "phone" else DESKTOP)
        page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
        problems = serious(page)
        if problems:
            found[f"{where}, {size}, {scheme}"] = problems


def colour_blind_safe(page: Any) -> None:
    """The reveal's counted dice are marked by a shape (a tick, a star for a wild one)
    and each row says how many count, so the count reads without colours."""
    marks = page.eval_on_selector_all(
        "[data-test=reveal] .die",
        "ds => ds.map((d) => [d.classList.contains('hit') || d.classList.contains('wild'),"
        " getComputedStyle(d, '::after').content])",
    )
    assert marks and all((mark not in ("none", "normal")) == counted for counted, mark in marks)
    rows = page.locator("[data-test=reveal] [data-test=counted]").all_inner_texts()
    counted = sum(int(r.rsplit(" ", 1)[1]) for r in rows)
    assert counted == sum(c for c, _ in marks)
    outcome = page.inner_text("[data-test=reveal] [data-test=outcome]")
    assert outcome.startswith(f"{counted} counted for"), (outcome, rows)


def test_axe_finds_nothing_serious_on_any_page(served: str, output_dir: Path) -> None:
    from playwright import sync_api as playwright

    found: dict[str, list[str]] = {}
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = browser.new_context(viewport=DESKTOP, bypass_csp=True).new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(served)
        page.wait_for_selector("[data-test=create-form]")
        audit(page, "lobby", found)
        page.click("[data-test=help-link]")
        page.wait_for_selector("[data-test=help]")
        audit(page, "how to play", found)

        # A game of two dice each against one bot: your turn, a reveal, the end.
        _create(page, served, 2, 1, start_dice="2", clock="30")
        seen: set[str] = set()
        deadline = time.monotonic() + 120
        while "end" not in seen:
            assert time.monotonic() < deadline, f"the game did not finish (seen: {seen})"
            if page.query_selector("[data-test=reveal-winner]"):
                audit(page, "the last reveal", found)
                page.keyboard.press("Escape")
                page.wait_for_selector("[data-test=game-over]")
                audit(page, "the game's end", found)
                seen.add("end")
            elif page.query_selector("[data-test=game-over]") and not page.query_selector(
                "[data-test=reveal]"
            ):  # the last reveal came as an Escape was pressed for the one before: closed
                audit(page, "the game's end", found)
                seen.add("end")
            elif page.query_selector("[data-test=reveal]"):
                if "reveal" not in seen:
                    audit(page, "a reveal", found)
                    colour_blind_safe(page)
                    seen.add("reveal")
                page.keyboard.press("Escape")
            elif page.query_selector("[data-test=your-turn]"):
                if "turn" not in seen:
                    audit(page, "the table on your turn", found)
                    seen.add("turn")
                # Keys, not clicks: the dock may be drawn again between a look and a click
                # (a click then waits 30 s for a button the new view does not have).
                if page.query_selector("[data-test=bid]"):
                    page.keyboard.press("Enter")
                elif enabled(page, "[data-test=dudo]"):
                    page.keyboard.press("d")
            time.sleep(0.05)
        # The game's history, open at its first round, then its replay.
        page.click("[data-test=history] > summary")
        page.click("[data-test=history-round]:last-child > details > summary")
        audit(page, "the game's history", found)
        page.click("[data-test=replay-link]")
        page.wait_for_selector("[data-test=replay]")
        audit(page, "a replay", found)  # its first bid, every hand shown
        while not page.query_selector("[data-test=replay] [data-test=outcome]"):
            page.click("[data-test=replay-next]")  # bid by bid, to the round's call
        audit(page, "a replay's call", found)
        page.click("[data-test=back]")
        page.wait_for_selector("[data-test=stats]")
        audit(page, "the lobby with your statistics", found)

        # A quick tournament: its page while it runs and at its end.
        page.goto(served)
        page.wait_for_selector("[data-test=create-form]")
        page.click("summary")
        page.select_option("#start_dice", "1")
        page.click("[data-test=quick-cup]")
        page.wait_for_selector("[data-test=cup]", timeout=15_000)
        audit(page, "a tournament", found)
        deadline = time.monotonic() + 180
        while not page.query_selector("[data-test=cup-over]"):
            assert time.monotonic() < deadline, "the tournament did not finish"
            if page.query_selector("[data-test=reveal]"):
                page.keyboard.press("Escape")
            elif page.query_selector("[data-test=your-turn]"):
                page.click("[data-test=dudo]" if enabled(page, "[data-test=dudo]")
                           else "[data-test=bid]")  # fmt: skip
            time.sleep(0.05)
        if page.query_selector("[data-test=reveal]"):
            page.keyboard.press("Escape")
        audit(page, "a tournament's end", found)
        assert errors == []
        browser.close()
    assert found == {}, "\n".join(f"{k}: {v}" for k, v in found.items())


def test_axe_finds_nothing_serious_on_the_organizers_pages(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Issue 53's proof: the invite page, the organizer's running tournament (their table,
    the controls folded under it), a paused table and a cancelled tournament, each in
    light and dark at both sizes."""
    from .test_browser_tournament_states import _open, _there, tournament
    from .test_organizer import host_controls, play_if_my_turn, post

    found: dict[str, list[str]] = {}
    classic = {"preset": "classic", "turn_seconds": 60}
    with tournament(
        redis_server, tmp_path, host="Olga", seats=3, bots="easy", private=True, rules=classic
    ) as (base, made, browser, errors):
        tid, token = made["tournament"], made["token"]
        newcomer = browser.new_context(viewport=DESKTOP, bypass_csp=True).new_page()
        newcomer.on("pageerror", lambda e: errors.append(str(e)))
        newcomer.goto(f"{base}/#/c/{tid}/{made['invite']}")
        newcomer.wait_for_selector("[data-test=cup-info]")
        audit(newcomer, "the invite page", found)

        olga = _open(browser, {"viewport": DESKTOP, "bypass_csp": True}, base, tid, token, errors)
        olga.wait_for_selector("[data-test=host-panel]")
        post(base, f"/api/tournaments/{tid}/begin", {"token": token})
        olga.wait_for_selector("[data-test=dock]", timeout=20_000)
        host_controls(olga)
        audit(olga, "the organizer's running tournament", found)
        post(base, f"/api/tournaments/{tid}/pause", {"token": token})
        deadline = time.monotonic() + 120
        while not _there(olga, "dock-paused"):
            assert time.monotonic() < deadline, "no table stopped for the pause"
            play_if_my_turn(olga)
            time.sleep(0.1)
        audit(olga, "a paused table", found)
        post(base, f"/api/tournaments/{tid}/cancel", {"token": token})
        olga.wait_for_selector("[data-test=cup-cancelled]", timeout=10_000)
        audit(olga, "a cancelled tournament", found)
    assert found == {}, "\n".join(f"{k}: {v}" for k, v in found.items())
