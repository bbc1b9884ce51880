"""Issue 53, item 21: while the bot services still solve the presets' heads-up endgames
(minutes of a core after a start), a hard bot plays its heuristic in such a round; the
table says so, from what the services write (dudo.wire.solves) through ``GET /api/bots``.
Before, only the log said anything, and nothing on the page."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from typing import Any

from dudo.wire import keys, solves

from ..http_schemas import check_call
from ..servers import RedisServer
from .test_browser import ARGS, PHONE, chromium, untranslated
from .test_browser_end import _create


def _bots(base: str) -> Any:
    with urllib.request.urlopen(f"{base}/api/bots", timeout=5) as got:
        answer = json.loads(got.read())
    check_call("GET", "/api/bots", None, got.status, answer)
    return answer


async def _through_the_library(base: str) -> Any:
    from dudo_client import DudoApi

    async with DudoApi(base) as api:
        return (await api.bot_solves())["endgame_solves"]


def test_a_table_with_a_hard_bot_says_what_it_plays_while_the_endgames_are_solved(
    served: str, redis_server: RedisServer
) -> None:
    from playwright import sync_api as playwright

    assert _bots(served) == {"endgame_solves": None}  # `dudo serve --no-endgame-solves`
    # A bot service half-way through its launch solves, as it writes its progress.
    now = int(time.time() * 1000)
    redis_server.client().hset(keys.BOT_SOLVES, "bots-x", solves.entry(4, 15, now))
    assert _bots(served) == {"endgame_solves": {"done": 4, "of": 15}}
    assert asyncio.run(_through_the_library(served)) == {"done": 4, "of": 15}
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        page = browser.new_context(viewport=PHONE, has_touch=True).new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        _create(page, served, 2, 1, level="normal")
        page.wait_for_selector("[data-test=players]")
        page.wait_for_timeout(500)
        assert not page.query_selector("[data-test=bot-solves]")  # no hard bot here
        page.select_option("#lang", "es")
        _create(page, served, 2, 1, level="hard")
        note = page.wait_for_selector("[data-test=bot-solves]", timeout=5_000)
        assert "4 de 15" in note.inner_text(), note.inner_text()
        assert untranslated(page) == [] and errors == []
        browser.close()
