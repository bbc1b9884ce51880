"""The screenshots of docs/browser.md, taken again: `python -m tests.e2e.screens docs/screens`.

A `dudo serve` of its own (embedded Redis, a free port), then for each language and size
one game of Ana against two bots: the table on her turn, a reveal, the game's end, and its
replay at round 2's second step; and a tournament Olga organizes, at her own table on her
turn (her controls folded under it). JPEG, motion off (nothing caught halfway). Not a
test: run it when the page changes, and commit the pictures."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from .test_browser import ARGS, DESKTOP, PHONE, chromium, enabled

LANGS = ("en", "es", "de")
SIZES = {"desktop": DESKTOP, "phone": PHONE}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _shoot(page: Any, out: Path, name: str) -> None:
    page.screenshot(path=str(out / f"{name}.jpg"), type="jpeg", quality=70)


def _game(page: Any, base: str, out: Path, lang: str, size: str) -> None:
    page.goto(base)
    page.evaluate("localStorage.setItem('dudo.motion', 'off')")
    page.reload()
    page.select_option("#lang", lang)
    page.fill("[data-test=name]", "Ana")
    page.select_option("[data-test=seats]", "3")
    page.click("summary")
    page.select_option("#start_dice", "2")
    page.click("[data-test=play-now]")
    page.wait_for_selector("[data-test=dock]", timeout=15_000)
    shot: set[str] = set()
    deadline = time.monotonic() + 120
    while not page.query_selector("[data-test=game-over]"):
        if time.monotonic() > deadline:
            raise RuntimeError("the game did not finish")
        reveal = page.query_selector("[data-test=reveal]")
        if reveal:
            if "reveal" not in shot and not page.query_selector("[data-test=reveal-winner]"):
                time.sleep(0.3)
                _shoot(page, out, f"{lang}-{size}-reveal")
                shot.add("reveal")
            page.keyboard.press("Escape")
        elif page.query_selector("[data-test=your-turn]"):
            if "turn" not in shot and page.query_selector("[data-test=last-round]"):
                _shoot(page, out, f"{lang}-{size}-turn")
                shot.add("turn")
            page.keyboard.press("d" if enabled(page, "[data-test=dudo]") else "Enter")
        time.sleep(0.05)
    if page.query_selector("[data-test=reveal]"):
        page.keyboard.press("Escape")
    page.evaluate("window.scrollTo(0, 0)")
    _shoot(page, out, f"{lang}-{size}-end")
    page.click("[data-test=replay-link]")
    page.wait_for_selector("[data-test=replay]")
    page.keyboard.press("Shift+ArrowRight")  # round 2's first bid ...
    page.keyboard.press("ArrowRight")  # ... and its second (or its call)
    _shoot(page, out, f"{lang}-{size}-replay")


def _organizer(page: Any, base: str, out: Path, lang: str, size: str) -> None:
    """Olga's tournament of three bots and her, three seats a table: her turn at her table."""
    body = {"name": "Club Night", "host": "Olga", "seats": 3, "bots": "easy",
            "rules": {"preset": "classic", "turn_seconds": 60}}  # fmt: skip
    request = urllib.request.Request(
        f"{base}/api/tournaments", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=15) as got:
        made = json.loads(got.read())
    tid, token = made["tournament"], made["token"]
    page.add_init_script(
        f"localStorage.setItem('dudo.entrants', JSON.stringify({{{tid!r}: {token!r}}}));"
        "localStorage.setItem('dudo.motion', 'off')"
    )
    page.goto(f"{base}/#/c/{tid}")
    page.select_option("#lang", lang)
    page.wait_for_selector("[data-test=host-panel]", timeout=15_000)
    begin = urllib.request.Request(
        f"{base}/api/tournaments/{tid}/begin", json.dumps({"token": token}).encode(),
        {"Content-Type": "application/json"},
    )  # fmt: skip
    urllib.request.urlopen(begin, timeout=15).close()
    deadline = time.monotonic() + 60
    while not page.query_selector("[data-test=your-turn]") or page.query_selector(
        "[data-test=reveal]"
    ):
        if time.monotonic() > deadline:
            raise RuntimeError("Olga's turn never came")
        if page.query_selector("[data-test=reveal]"):
            page.keyboard.press("Escape")
        time.sleep(0.05)
    time.sleep(0.3)  # as the page placed itself for her turn
    _shoot(page, out, f"{lang}-{size}-organizer")


def main(out: Path) -> None:
    from playwright import sync_api as playwright

    out.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "dudo", "serve", "--port", str(port), "--bot-think", "0.2,0.4",
         "--reveal-hold", "1.5", "--no-endgame-solves"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/readyz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
            for lang in LANGS:
                for size, viewport in SIZES.items():
                    page = browser.new_context(viewport=viewport).new_page()
                    _game(page, base, out, lang, size)
                    page.context.close()
                    page = browser.new_context(viewport=viewport).new_page()
                    _organizer(page, base, out, lang, size)
                    page.context.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screens"))
