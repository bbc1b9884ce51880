"""The page as a phone app, in headless Chromium at phone size: Chromium itself finds it
installable (manifest, icons, a service worker answering its navigations); with the
server gone the page still opens from the worker's copy and says it is reconnecting,
then plays on when the server is back; every control a finger uses is at least
44 × 44 CSS pixels on the lobby, a table in play and the help page."""

from __future__ import annotations

import json
import struct
import urllib.request
from pathlib import Path
from typing import Any

from dudo.gateway.pwa import ICON_SIZES

from ..servers import RedisServer
from .conftest import serving
from .test_browser import ARGS, PHONE, chromium, new_page

# Every control a finger may need: buttons, fields, menus, and links that stand alone
# (a link inside a sentence is exempt, as WCAG 2.5.8 allows).
SMALL_TARGETS = """() => {
  const small = [];
  const inSentence = (el) => el.tagName === "A" && [...el.parentElement.childNodes].some(
    (n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());  // words beside it
  for (const el of document.querySelectorAll(
      "button, select, input:not([type=hidden]), textarea, summary, [role=button], a[href]")) {
    if (inSentence(el)) continue;
    const label = el.matches("input[type=checkbox], input[type=radio]") && el.closest("label");
    const r = (label || el).getBoundingClientRect();  // a checkbox's target: its label
    const style = getComputedStyle(el);
    if (!r.width || !r.height || style.visibility === "hidden") continue;  // not shown
    const name = el.dataset.test || el.id || el.textContent.trim().slice(0, 20);
    const size = `${Math.round(r.width)}x${Math.round(r.height)}`;
    if (r.width < 44 || r.height < 44) small.push(`${el.tagName.toLowerCase()}[${name}] ${size}`);
  }
  return small;
}"""


def fetch(url: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.headers["Content-Type"], response.read()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_the_manifest_and_icons_are_what_an_install_needs(served: str) -> None:
    kind, body = fetch(served + "/manifest.webmanifest")
    assert kind.startswith("application/manifest+json")
    manifest = json.loads(body)
    assert manifest["start_url"] == "/" and manifest["scope"] == "/"
    assert manifest["display"] == "standalone" and manifest["name"] and manifest["short_name"]
    sizes = set()
    for icon in manifest["icons"]:
        kind, png = fetch(served + icon["src"])
        width, height = png_size(png)
        assert kind == "image/png" and icon["type"] == "image/png"
        assert icon["sizes"] == f"{width}x{height}"  # what it says is what it is
        sizes.add(width)
    assert sizes >= {192, 512} and sizes == set(ICON_SIZES)
    _, page = fetch(served + "/")
    assert b'rel="manifest" href="/manifest.webmanifest"' in page
    assert f'name="theme-color" content="{manifest["theme_color"]}"'.encode() in page
    _, worker = fetch(served + "/sw.js")
    assert b"__SHELL__" not in worker and b'"/static/app.js"' in worker


def test_installable_opens_offline_and_plays_on_when_the_server_is_back(
    redis_server: RedisServer, tmp_path: Path, output_dir: Path
) -> None:
    from playwright import sync_api as playwright

    redis_server.client().flushall()
    quick = ("--redis", redis_server.url, "--bot-think", "0.05,0.15", "--reveal-hold", "0")
    with playwright.sync_playwright() as p:
        # A profile on disk, as a phone's browser has: Chromium installs nothing from
        # an incognito window (a plain Playwright context is one).
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=chromium(), args=ARGS, viewport=PHONE
        )
        errors: list[str] = []
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        with serving(tmp_path, *quick) as (base, _):
            page.goto(base)
            page.wait_for_selector("[data-test=name]")
            page.evaluate("navigator.serviceWorker.ready")
            page.reload()  # from now on the worker answers the page's requests
            page.wait_for_selector("[data-test=name]")
            assert page.evaluate("Boolean(navigator.serviceWorker.controller)")
            cdp = page.context.new_cdp_session(page)
            errors_found = cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
            assert errors_found == [], errors_found
        # The server is gone (not merely a flag in the browser): the copy answers.
        page.reload()
        page.wait_for_selector("[data-test=name]")
        page.wait_for_function(
            "document.getElementById('status').textContent.includes('reconnecting')"
        )
        page.screenshot(path=str(output_dir / "pwa-offline-phone.png"))
        with serving(tmp_path, *quick) as (base2, _):
            page.goto(base2)  # a new port: a new origin, so a fresh install there
            page.wait_for_selector("[data-test=name]")
            page.fill("[data-test=name]", "Ana")
            page.click("[data-test=play-now]")
            page.wait_for_selector("[data-test=players]", timeout=15_000)
        assert errors == []
        context.close()


def test_every_control_is_big_enough_for_a_finger(served: str, output_dir: Path) -> None:
    from playwright import sync_api as playwright

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = new_page(browser, PHONE, errors)
        page.goto(served)
        page.wait_for_selector("[data-test=name]")
        page.click("summary")  # the lobby's options, open
        small: dict[str, Any] = {"lobby": page.evaluate(SMALL_TARGETS)}
        page.fill("[data-test=name]", "Ana")
        page.click("[data-test=play-now]")
        page.wait_for_selector("[data-test=your-turn]", timeout=30_000)
        small["table"] = page.evaluate(SMALL_TARGETS)
        page.screenshot(path=str(output_dir / "pwa-table-phone.png"))
        page.goto(served + "/#/help")
        page.wait_for_selector("[data-test=help]")
        small["help"] = page.evaluate(SMALL_TARGETS)
        too_small = [f"{where}: {what}" for where, found in small.items() for what in found]
        assert too_small == [], "\n".join(too_small)
        assert errors == []
        browser.close()
