"""An organizer runs a private tournament from the page (issue 31's proof), in headless
Chromium: the create form, two browser entrants and scripted entrants registering
through two gateways, Begin, Pause, Resume, a Kick, a late registrant, the end, and the
results with their CSV export."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from dudo_client import DudoConnection, DudoError
from dudo_client.examples.bot import choose

from ..servers import RedisServer
from .conftest import gateway_beside, serving
from .test_browser import ARGS, chromium, enabled, new_page, untranslated


def post(base: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        base + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=15) as got:
            return got.status, json.loads(got.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def scripted(
    base: str, token: str, stop: threading.Event, log: list[str], tables: list[str]
) -> threading.Thread:
    """A scripted entrant on the Python client library: plays its turns (a refused move,
    such as one during the pause, is played again at the next view) until the end;
    ``tables``: where it was seated (`moved`, or the `welcome` of a hello that found it
    seated), ``log``: the codes of its refused moves."""

    async def play() -> None:
        async with DudoConnection(base, token) as conn:
            async for msg in conn.messages():
                if stop.is_set():
                    return
                ended = msg["type"] == "tournament" and msg["standings"]["status"] in (
                    "over", "cancelled",
                )  # fmt: skip
                if ended:
                    return
                if msg["type"] == "moved":
                    tables.append(msg["table"])
                elif msg["type"] == "welcome" and msg.get("table"):
                    # Seated before this hello was answered: the gateway joins that seat
                    # and says so in its welcome, with no `moved` (gateway/sockets.py,
                    # _hello_entrant).
                    tables.append(msg["table"])
                if msg["type"] != "view" or not msg.get("game"):
                    continue
                game = msg["game"]
                if "legal" in game and game["turn"] == msg["seat"] and not msg.get("paused"):
                    try:
                        await conn.act(choose(game))
                    except DudoError as refused:
                        log.append(refused.code)

    thread = threading.Thread(target=lambda: asyncio.run(play()), daemon=True)
    thread.start()
    return thread


def host_click(page: Any, control: str) -> None:
    """Click one of the host's controls in one step in the page, unfolding the panel
    first where it is folded. As two steps (unfold, then Playwright's click) the panel
    could fold again in between, when the host's table appeared (later where the table
    first asks its entrants for seeds): the click then waited 30 s for a hidden button."""
    page.wait_for_function(
        """(control) => {
          const p = document.querySelector('details[data-test=host-panel]');
          if (p && !p.open) p.querySelector('summary').click();
          const el = document.querySelector(control);
          if (!el || !el.getClientRects().length) return false;
          el.click();
          return true;
        }""",
        arg=control,
        timeout=15_000,
    )


def host_controls(page: Any, reach: str = "[data-test=host-panel] .actions") -> None:
    """Unfold the host's controls where they wait folded under the host's own table
    (issue 53, item 1; elsewhere they show in full), until ``reach`` shows: the panel
    turns from a card into a folded one when the host's table appears, which may be
    after a first look."""
    page.wait_for_function(
        """(reach) => {
          const p = document.querySelector('details[data-test=host-panel]');
          if (p && !p.open) p.querySelector('summary').click();
          const el = document.querySelector(reach);
          return Boolean(el && el.getClientRects().length);
        }""",
        arg=reach,
        timeout=15_000,
    )


def play_if_my_turn(page: Any) -> None:
    if page.query_selector("[data-test=reveal]"):
        with contextlib.suppress(Exception):
            page.click("[data-test=reveal-ok]", timeout=1000)
        return
    if page.query_selector("[data-test=your-turn]"):
        with contextlib.suppress(Exception):
            if enabled(page, "[data-test=dudo]"):
                page.click("[data-test=dudo]", timeout=1000)
            elif page.query_selector("[data-test=bid]"):
                page.click("[data-test=bid]", timeout=1000)


def test_an_organizer_runs_a_private_tournament_from_the_page(
    redis_server: RedisServer, tmp_path: Path, output_dir: Path
) -> None:
    from playwright import sync_api as playwright

    redis_server.client().flushall()
    quick = ("--bot-think", "0.05,0.15", "--reveal-hold", "0")
    stop, refusals = threading.Event(), []
    with (
        serving(tmp_path, "--redis", redis_server.url, *quick) as (one, _),
        gateway_beside(tmp_path, redis_server.url, "web-2") as two,
        playwright.sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=chromium(), args=ARGS)
        errors: list[str] = []
        olga = new_page(browser, {"width": 1100, "height": 1000}, errors)
        olga.goto(one)
        olga.click("[data-test=new-cup]")
        olga.wait_for_selector("[data-test=cup-form]")
        olga.fill("#cup-name", "Club Night")
        olga.fill("#cup-host", "Olga")
        olga.select_option("#cup-preset", "lizumo")
        olga.select_option("#cup-dice", "2")
        olga.select_option("#cup-clock", "15")
        olga.select_option("#cup-seats", "3")
        olga.fill("#cup-max", "12")
        olga.fill("#cup-buy-in", "10")
        olga.fill("#cup-payouts", "70, 30")
        olga.select_option("#cup-bots", "easy")
        olga.select_option("#cup-late", "5")
        olga.select_option("#cup-reentries", "1")
        olga.check("#cup-private")
        olga.screenshot(path=str(output_dir / "organizer-form.png"), full_page=True)
        # Issue 53, item 10: four groups, not sixteen fields in one grid; a disabled field
        # looks it; the Private box beside its words; the Format options whole.
        assert len(olga.query_selector_all("[data-test=cup-form] fieldset legend")) == 4
        faded = olga.eval_on_selector("#cup-start-at", "e => getComputedStyle(e).opacity")
        assert float(faded) < 0.6, faded
        apart = olga.evaluate("""() => {
          const box = document.querySelector("#cup-private").getBoundingClientRect();
          const range = document.createRange();
          range.selectNodeContents(document.querySelector("#cup-private").parentElement.lastChild);
          const first = range.getClientRects()[0];
          return [first.left - box.right, first.top - box.bottom, box.width]; }""")
        assert 0 <= apart[0] <= 16 and apart[1] < 0, apart
        assert olga.eval_on_selector_all("#cup-format option", "os => os.map((o) => o.text)") == [
            "Elimination", "Heats"]  # fmt: skip
        olga.click("[data-test=cup-create]")
        olga.wait_for_selector("[data-test=host-panel]", timeout=15_000)
        tid = olga.url.split("#/c/", 1)[1]
        invite_link = olga.inner_text("[data-test=cup-invite]")
        assert invite_link.startswith(f"{one}/#/c/{tid}/")
        # Issue 53, item 9: a Copy button beside it (it was bare text).
        olga.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=one)
        olga.click("[data-test=cup-invite-copy]")
        olga.wait_for_selector("#toast:has-text('Link copied')")
        assert olga.evaluate("navigator.clipboard.readText()") == invite_link
        invite = invite_link.rsplit("/", 1)[1]
        # Private: not listed, and nobody registers without the invite.
        with urllib.request.urlopen(one + "/api/tournaments", timeout=10) as got:
            assert tid not in [c["tournament"] for c in json.loads(got.read())["tournaments"]]
        status, refused = post(two, f"/api/tournaments/{tid}/register", {"name": "Mallory"})
        assert (status, refused["code"]) == (401, "unauthorized"), refused

        # Bea registers in her browser through the other gateway, from the invite link.
        bea = new_page(browser, {"width": 900, "height": 1000}, errors)
        bea.goto(f"{two}/#/c/{tid}/{invite}")
        bea.wait_for_selector("[data-test=cup-register]")
        bea.fill("#cup-reg-name", "Bea")
        bea.click("[data-test=cup-register-btn]")
        # Scripted entrants through both gateways; Eli registers and never shows.
        tokens = {}
        for name, base in (("Ciro", two), ("Eli", one)):
            status, got = post(base, f"/api/tournaments/{tid}/register",
                               {"name": name, "invite": invite})  # fmt: skip
            assert status == 200, got
            tokens[name] = got["token"]
        scripted(two, tokens["Ciro"], stop, refusals, [])
        # The organizer sees who registered before the start, then begins.
        olga.wait_for_function(
            "document.querySelectorAll('[data-test=entrant]').length === 4", timeout=15_000
        )
        assert olga.inner_text("[data-test=cup-registered]").count("Kick") == 3  # not herself
        olga.screenshot(path=str(output_dir / "organizer-entrants.png"), full_page=True)
        olga.click("[data-test=cup-begin]")
        olga.wait_for_selector("[data-test=cup-pause]", state="attached", timeout=15_000)

        # Pause: every page says so; a table stops at its round's end; then resume.
        host_click(olga, "[data-test=cup-pause]")
        bea.wait_for_selector("[data-test=cup-paused]", timeout=15_000)
        deadline = time.monotonic() + 60
        while not any(pg.query_selector("[data-test=dock-paused]") for pg in (olga, bea)):
            assert time.monotonic() < deadline, "no table stopped for the pause"
            for pg in (olga, bea):
                play_if_my_turn(pg)
            time.sleep(0.1)
        olga.screenshot(path=str(output_dir / "organizer-paused.png"), full_page=True)
        # While it is paused (so that it surely runs, with two dice each it can end within
        # a minute): a late registrant joins through the first gateway and plays
        # (scripted), and the host kicks the entrant who never showed; then resume.
        status, dora = post(one, f"/api/tournaments/{tid}/register",
                            {"name": "Dora", "invite": invite})  # fmt: skip
        assert status == 200, dora
        dora_tables: list[str] = []
        scripted(one, dora["token"], stop, refusals, dora_tables)
        eli = olga.locator("[data-test=cup-player]", has_text="Eli")
        eli.locator("[data-test=kick]").click()
        olga.click("[data-test=kick-yes]")
        # Out at the end of his table's round: a round where he and the house bots play
        # by the turn clock takes up to its 15 s a turn (issue 34, item 3: a house bot at
        # a clocked table waits its whole clock): one run waited over 120 s.
        deadline = time.monotonic() + 300
        while not olga.query_selector("[data-test=cup-places] li:has-text('Eli')"):
            if time.monotonic() > deadline:  # what the page and the director say then
                with urllib.request.urlopen(f"{two}/api/tournaments/{tid}?invite={invite}",
                                            timeout=10) as got:  # fmt: skip
                    standings = json.loads(got.read())["standings"]
                raise AssertionError(("the kicked entrant was never placed",
                                      olga.inner_text("body"), standings))  # fmt: skip
            for pg in (olga, bea):
                play_if_my_turn(pg)
            time.sleep(0.1)
        host_click(olga, "[data-test=cup-resume]")
        host_controls(olga, "[data-test=cup-pause]")
        bea.wait_for_selector("[data-test=cup-paused]", state="detached", timeout=15_000)

        # An announcement for every entrant.
        host_controls(olga, "#announce-text")
        olga.fill("#announce-text", "Final table at nine")
        host_click(olga, "[data-test=announce]")
        bea.wait_for_selector("[data-test=cup-announcement]", timeout=15_000)
        assert "Final table at nine" in bea.inner_text("[data-test=cup-announcement]")

        deadline = time.monotonic() + 300
        while not olga.query_selector("[data-test=cup-over]"):
            assert time.monotonic() < deadline, "the tournament did not finish"
            for pg in (olga, bea):
                play_if_my_turn(pg)
            time.sleep(0.05)
        stop.set()
        if olga.query_selector("[data-test=reveal]"):
            olga.click("[data-test=reveal-ok]")
        olga.screenshot(path=str(output_dir / "organizer-results.png"), full_page=True)

        # The results: seven places (four people, a late one, two bots), Eli placed out
        # by the kick, the pool of 70 paid 70/30; the CSV says the same as the page.
        # The ratings keeper rates the result a moment after the end: the page then shows
        # each person's rating change (four people: the bots are not rated, nor Eli, whom
        # the host took out; issue 53, item 3), and marks Eli's place and the bots'.
        olga.wait_for_function(
            "document.querySelectorAll('[data-test=cup-rating]').length === 4", timeout=15_000
        )
        kicked = olga.query_selector_all("[data-test=cup-places] li:has([data-test=place-kicked])")
        assert [li.inner_text().split()[0] for li in kicked] == ["Eli"]
        assert len(olga.query_selector_all("[data-test=place-bot]")) == 2
        late = olga.query_selector_all("[data-test=cup-places] li:has([data-test=place-late])")
        # Item 12 (Dora's place may be the winner's, its text then led by the trophy).
        assert len(late) == 1 and "Dora" in late[0].inner_text().split(), late
        shown = [li.inner_text() for li in olga.query_selector_all("[data-test=cup-places] li")]
        assert len(shown) == 7, shown
        # Item 12: the winner stands out, and the results are a click away as JSON too.
        assert olga.query_selector("[data-test=cup-places] li:first-child [data-test=place-winner]")
        href = olga.get_attribute("[data-test=cup-json]", "href")
        assert href is not None and href.startswith(f"/api/tournaments/{tid}/results?")
        with urllib.request.urlopen(one + href, timeout=10) as got:
            assert json.loads(got.read())["status"] == "over"
        # A private tournament's results are its entrants' and its invite holders' (issue
        # 50, item 14): a stranger with its id is refused.
        try:
            urllib.request.urlopen(f"{two}/api/tournaments/{tid}/results", timeout=10)
            raise AssertionError("a stranger read a private tournament's results")
        except urllib.error.HTTPError as exc:
            assert exc.code == 401
        with urllib.request.urlopen(f"{two}/api/tournaments/{tid}/results?invite={invite}",
                                    timeout=10) as got:  # fmt: skip
            results = json.loads(got.read())
        assert results["entrants"] == 7 and results["buy_in"] == 10
        chips = {p["name"]: p["chips"] for p in results["places"]}
        assert sorted(chips.values(), reverse=True)[:2] == [49, 21] and sum(chips.values()) == 70
        assert {"Olga", "Bea", "Ciro", "Eli", "Dora"} <= set(chips)
        assert dora_tables, "the late registrant was never seated"
        href = olga.get_attribute("[data-test=cup-csv]", "href")
        assert href is not None
        with urllib.request.urlopen(one + href, timeout=10) as got:
            rows = list(csv.DictReader(io.StringIO(got.read().decode())))
        assert [(int(r["place"]), r["name"], int(r["chips"])) for r in rows] == [
            (p["place"], p["name"], p["chips"]) for p in results["places"]
        ]
        # Rating changes: the people's, none for a bot, the same in the CSV, and the
        # winner's (a person or a bot: the best placed person) the largest.
        rated = {p["name"]: p["rating_change"] for p in results["places"]
                 if p["rating_change"] is not None}  # fmt: skip
        assert set(rated) == {"Olga", "Bea", "Ciro", "Dora"}, results["places"]
        assert [p["name"] for p in results["places"] if p["kicked"]] == ["Eli"]
        assert [r["name"] for r in rows if r["kicked"] == "yes"] == ["Eli"]
        assert [p["name"] for p in results["places"] if p["late"]] == ["Dora"]
        assert [r["name"] for r in rows if r["late"] == "yes"] == ["Dora"]
        best = min((p for p in results["places"] if p["name"] in rated),
                   key=lambda p: p["place"])  # fmt: skip
        assert rated[best["name"]] == max(rated.values()) > 0
        # Every table's history: Dora sat down late, Eli went out (the kick) at a table.
        rounds = [r for t in results["tables"] for r in t["rounds"]]
        assert any(p["name"] == "Dora" for r in rounds for p in r["joined"]), rounds
        assert [p["name"] for r in rounds for p in r["out"]].count("Eli") == 1, rounds
        assert [r["rating_change"] for r in rows] == [
            "" if p["rating_change"] is None else str(p["rating_change"])
            for p in results["places"]
        ]
        assert all(p["name"] in text for p, text in zip(results["places"], shown, strict=True))
        assert set(refusals) <= {"paused", "not_your_turn", "game_over", "duplicate"}, refusals
        assert untranslated(olga) == [] and untranslated(bea) == [] and errors == []
        browser.close()
