"""`dudo conformance client`: the kit a client author points at their client. Both
official libraries' example bots pass it; a client that does not reconnect or retry fails
it, and one that sends again before ``retry_ms`` is up fails the rate-limit check."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from dudo.conformance.client import run

# Plays its seat like the example bots, but gives up when the connection drops.
NAIVE = textwrap.dedent(
    """
    import asyncio, json, sys
    import aiohttp

    async def main(url, token):
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(url.replace("http", "ws") + "/ws") as ws:
                await ws.send_str(json.dumps({"v": 1, "type": "hello", "token": token}))
                n = 0
                async for frame in ws:
                    msg = json.loads(frame.data)
                    game = msg.get("game") if msg["type"] == "view" else None
                    if game and "legal" in game and game["turn"] == msg["seat"]:
                        legal = game["legal"]
                        face = next((f for f, q in enumerate(legal["bid"], 1) if q), None)
                        action = ({"type": "bid", "quantity": legal["bid"][face - 1],
                                   "face": face} if face else {"type": "dudo"})
                        n += 1
                        await ws.send_str(json.dumps(
                            {"v": 1, "type": "act", "id": f"n{n}", "action": action}))

    asyncio.run(main(*sys.argv[1:3]))
    """
)

# The Python example bot, with the library's rate-limit wait taken out.
HASTY = textwrap.dedent(
    """
    import asyncio, sys
    from dudo_client import _connection
    from dudo_client.examples import bot

    wait = _connection.DudoConnection._later
    _connection.DudoConnection._later = lambda self, seconds, message: wait(self, 0, message)
    asyncio.run(bot.main(*sys.argv[1:3]))
    """
)
CHECKS = 6


def test_a_client_that_does_not_reconnect_fails_the_kit(tmp_path: Path) -> None:
    naive = tmp_path / "naive.py"
    naive.write_text(NAIVE, encoding="utf-8")
    # It never answers after a refusal, a rate limit or a restart: each time its clock runs
    # out, so a short one (its moves take milliseconds; 4 s is ample for them).
    verdict = run([sys.executable, str(naive), "{url}", "{token}"], turn_seconds=4)
    assert not verdict.ok
    assert verdict.checks["renumbering: the client acted at its new seat"]
    assert not verdict.checks["reconnect: the client acted after the server restarted"]
    assert not verdict.checks["refusal: the client played a legal move after a refused one"]
    assert not verdict.checks["rate limit: the client waited retry_ms and sent again"]


def test_a_client_that_sends_again_at_once_when_rate_limited_fails_that_check(
    tmp_path: Path,
) -> None:
    hasty = tmp_path / "hasty.py"
    hasty.write_text(HASTY, encoding="utf-8")
    verdict = run([sys.executable, str(hasty), "{url}", "{token}"])
    failed = [name for name, good in verdict.checks.items() if not good]
    assert failed == ["rate limit: the client waited retry_ms and sent again"], verdict.text()
