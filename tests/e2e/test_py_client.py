"""The official Python client (dudo_client) against a live gateway: a whole game with the
connection cut mid-game, refusals as typed errors, ids, rate limits, the lobby, and the
README's example bot."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dudo.bots.levels import LEVELS
from dudo.engine.rules import PRESETS_ORDER
from dudo_client import DudoApi, DudoConnection, DudoError
from dudo_client.examples.bot import choose
from dudo_client.messages import PlayerResponse, ServerMessage

from ..clients.typed import problems
from ..servers import RedisServer
from .conftest import serving


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_a_whole_game_survives_a_cut_connection_and_refusals_are_typed(served: str) -> None:
    async def scenario() -> None:
        async with DudoApi(served) as api:
            seat = await api.create_table(
                rules={"preset": "classic", "start_dice": 2}, seats=2, bots=["easy"], name="Py"
            )
            with pytest.raises(DudoError) as missing:
                await api.join_table("nosuchtable", name="Z")
            assert (missing.value.code, missing.value.status) == ("unknown_table", 404)
        async with DudoConnection(served, seat["token"]) as conn:
            assert conn.welcome is not None and conn.welcome["table"] == seat["table"]
            moves, refused = 0, False
            while True:
                view = conn.view or await conn.next("view")
                game = view["game"]
                if game and game["winner"] is not None:
                    break
                if not (game and "legal" in game and game["turn"] == view["seat"]):
                    await conn.next("view")
                    continue
                if not refused:  # an illegal bid: a typed error, nothing changed
                    with pytest.raises(DudoError) as err:
                        await conn.act({"type": "bid", "quantity": 99, "face": 3})
                    assert err.value.code == "bid_out_of_range"
                    refused = True
                shown = await conn.act(choose(game))
                assert shown["version"] > view["version"]  # the view that shows it
                moves += 1
                if moves == 2:  # cut the connection: it reconnects and says hello again
                    assert conn._ws is not None
                    await conn._ws.close()
            assert moves >= 2 and refused

    run(scenario())


def test_ids_rate_limits_leave_and_the_lobby(served: str) -> None:
    async def scenario() -> None:
        async with DudoApi(served) as api:
            seat = await api.create_table(rules={"preset": "classic"}, seats=3, name="Ana")
            async with DudoConnection(served, None) as lobby:
                change = asyncio.ensure_future(lobby.next("lobby", lambda m: "table" in m))
                made = await api.create_table(rules={"preset": "lizumo"}, seats=3, name="Eve")
                news = await asyncio.wait_for(change, 10)
                assert news["table"] == made["table"] and news["entry"]["preset"] == "lizumo"
        async with DudoConnection(served, seat["token"]) as conn:
            pongs = await asyncio.gather(*(conn.ping() for _ in range(50)))  # past the burst
            assert len(pongs) == 50 and all(p["type"] == "pong" and p["id"] for p in pongs)
            assert (await conn.resync())["table"] == seat["table"]
            left = await conn.leave()
            assert left["table"] == seat["table"]
        forged = DudoConnection(served, "forged.token")
        with pytest.raises(DudoError) as err:
            await forged.open()
        assert err.value.code == "unauthorized"
        await forged.close()

    run(scenario())


def test_the_example_bot_of_the_readme_plays_a_game_to_the_end(served: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dudo_client.examples.bot", served],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "played " in done.stdout and " won" in done.stdout


@pytest.mark.parametrize(
    ("readme", "example", "fence"),
    [
        ("protocol/python/README.md", "protocol/python/dudo_client/examples/bot.py", "python"),
        ("protocol/js/README.md", "protocol/js/examples/bot.mjs", "js"),
    ],
)
def test_each_readme_shows_its_example_bot_as_it_is(readme: str, example: str, fence: str) -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = (root / example).read_text(encoding="utf-8").rstrip()
    assert len(code.splitlines()) <= 60
    assert f"```{fence}\n{code}\n```" in (root / readme).read_text(encoding="utf-8")


def test_hundreds_of_moves_every_message_as_the_schemas_say(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Library clients play whole games against each other, four tables at a time, under
    every preset, three seats each, one seat random (it calls calza, chooses directions,
    bids anything legal), one hard and one the README's bot; a spectator watches each
    table. Every message any of them receives is valid against its published schema and
    fits the Python package's type for it (dudo_client.messages), and no seat ever sees
    dice but its own."""
    from .test_gateway import check

    redis_server.client().flushall()
    limits = ("--creates-per-min", "1000", "--joins-per-min", "5000")  # one address here
    # No reveal hold: these clients read each reveal at once (the hold, 3 s a round at
    # tables of people, made this the suite's longest test; tests/e2e/test_browser.py
    # checks the hold itself).
    fast = ("--reveal-hold", "0", "--bot-think", "0,0")
    with serving(tmp_path, "--redis", redis_server.url, *limits, *fast) as (served, _):
        moves, checked, wrong = run(_soak(served, check))
    assert wrong == [], wrong[:3]
    assert moves >= 500, moves
    kinds = set(checked)
    assert {"welcome", "view", "ack"} <= kinds and len(checked) > 3 * moves, kinds


async def _soak(served: str, check: Callable[[str, Any], None]) -> tuple[int, list[str], list[str]]:
    """Play tables four at a time until 500 moves: (moves, message kinds, what was
    wrong with any message)."""
    checked: list[str] = []
    wrong: list[str] = []

    def validator(seat: int | None) -> Callable[[dict[str, Any]], None]:
        def validate(message: dict[str, Any]) -> None:
            checked.append(message["type"])
            try:
                check(f"ws-out-{message['type']}.schema.json", message)
            except Exception as exc:
                wrong.append(f"{exc}: {message}")
            typed = problems(message, ServerMessage)  # the package's generated types too
            if typed:
                wrong.append(f"not a ServerMessage: {typed[0]}: {message}")
            game = message.get("game") if message["type"] == "view" else None
            if not game:
                return
            held = game["dice_counts"][seat] if seat is not None else 0
            if message["seat"] != seat or (
                len(game.get("dice", [])) != held
                if game["phase"] != "over"
                else seat is None and "dice" in game
            ):  # a seat sees its own dice, as many as it holds; a spectator none
                wrong.append(f"seat {seat} was shown: {message}")

        return validate

    def over(view: dict[str, Any] | None) -> bool:
        return bool(view and view["game"] and view["game"]["winner"] is not None)

    async def play(conn: DudoConnection, policy: Callable[..., dict[str, Any]]) -> int:
        rng, moves = random.Random(7), 0
        while True:
            view = conn.view or await conn.next("view")
            game = view["game"]
            if view["status"] == "over" or over(view):
                return moves
            if game and "legal" in game and game["turn"] == view["seat"]:
                with contextlib.suppress(DudoError):  # raced by a turn change: fine
                    await conn.act(policy(view, rng))
                    moves += 1
            else:
                await conn.next("view")

    async def table(api: DudoApi, preset: str) -> int:
        rules = {"preset": preset, "start_dice": 5}
        host = await api.create_table(rules=rules, seats=3, name="Ana")
        tokens = [host["token"]]
        for name in ("Ben", "Cleo"):
            tokens.append((await api.join_table(host["table"], name=name))["token"])
        watch = (await api.watch_table(host["table"]))["token"]
        policies = [LEVELS["easy"], LEVELS["hard"], lambda view, rng: choose(view["game"])]
        async with contextlib.AsyncExitStack() as stack:
            seats = [
                await stack.enter_async_context(
                    DudoConnection(served, token, on_message=validator(n))
                )
                for n, token in enumerate(tokens)
            ]
            watcher = DudoConnection(served, watch, on_message=validator(None))
            await stack.enter_async_context(watcher)
            moves = await asyncio.gather(
                *(play(c, p) for c, p in zip(seats, policies, strict=True))
            )
            if not over(watcher.view):
                await watcher.next("view", over)
        return sum(moves)

    total = 0
    async with DudoApi(served) as api:
        while total < 500:
            total += sum(await asyncio.gather(*(table(api, p) for p in PRESETS_ORDER)))
    return total, checked, wrong


def test_start_returns_the_games_first_view_and_a_guest_is_refused(served: str) -> None:
    async def scenario() -> None:
        async with DudoApi(served) as api:
            ana = await api.create_table(rules={"preset": "classic"}, seats=3, name="Ana")
            ben = await api.join_table(ana["table"], name="Ben", seat=2)
        async with (
            DudoConnection(served, ana["token"]) as host,
            DudoConnection(served, ben["token"]) as guest,
        ):
            with pytest.raises(DudoError) as err:
                await guest.start()
            assert err.value.code == "not_host"
            first = await host.start()
            assert first["status"] == "playing" and first["game"]["round"] == 1
            # Ben moved from seat 2 to 1: told by a new welcome, then shown at seat 1.
            renumbered = await guest.next("welcome", lambda m: m["seat"] == 1)
            assert renumbered["id"] is None
            assert (await guest.next("view", lambda v: v["status"] == "playing"))["seat"] == 1

    run(scenario())


def test_an_organizer_runs_a_tournament_with_the_python_client(served: str) -> None:
    """Issue 31: the host's controls in the Python client, each answered with the
    standings after it; a refusal is a typed DudoError with its HTTP status."""

    async def scenario() -> None:
        async with DudoApi(served) as api:
            made = await api.create_tournament(
                name="Py Club", host="Org", max_players=8, buy_in=5, private=True,
                rules={"preset": "lizumo"},
            )  # fmt: skip
            assert made["invite"]
            with pytest.raises(DudoError) as refused:
                await api.register(made["tournament"], name="Bea")
            assert (refused.value.code, refused.value.status) == ("unauthorized", 401)
            bea = await api.register(made["tournament"], name="Bea", invite=made["invite"])
            cid = await api.register(made["tournament"], name="Cid", invite=made["invite"])
            with pytest.raises(DudoError) as refused:
                await api.pause(made["tournament"], bea["token"])
            assert (refused.value.code, refused.value.status) == ("not_host", 403)
            # Issue 53, item 20: `begin` by an entrant who is not the host answered 409.
            with pytest.raises(DudoError) as refused:
                await api.begin(made["tournament"], bea["token"])
            assert (refused.value.code, refused.value.status) == ("not_host", 403)
            done = await api.kick(made["tournament"], made["token"], cid["player"])
            assert [e["name"] for e in done["standings"]["registered"]] == ["Org", "Bea"]
            await api.begin(made["tournament"], made["token"])
            assert (await api.pause(made["tournament"], made["token"]))["standings"]["paused"]
            done = await api.announce(made["tournament"], made["token"], "Back in five")
            assert done["standings"]["announcement"]["text"] == "Back in five"
            done = await api.resume(made["tournament"], made["token"])
            assert done["standings"]["paused"] is False
            done = await api.cancel(made["tournament"], made["token"])
            assert done["standings"]["status"] == "cancelled"
            with pytest.raises(DudoError) as refused:
                await api.pause(made["tournament"], made["token"])
            assert (refused.value.code, refused.value.status) == ("tournament_over", 409)

    run(scenario())


def test_each_hello_renews_the_token_and_an_expired_one_is_refused(
    served: str, redis_server: RedisServer
) -> None:
    """Issue 33: a seat token lived 7 days from its making and nothing renewed it. The
    welcome now carries a new one, made at the hello; the library keeps it (and says so).
    The token made here is one that would expire within the hour: said hello with, it
    comes back good for 7 days from now; one already expired is refused."""
    from dudo.auth.authority import TOKEN_TTL_S, make_token, read_token
    from dudo.wire import keys

    async def scenario() -> None:
        async with DudoApi(served) as api:
            seat = await api.create_table(rules={"preset": "classic"}, seats=2, name="Ana")
            watcher = await api.watch_table(seat["table"])
        key = bytes.fromhex(redis_server.client().hget(keys.SECRETS, "tokens").decode())
        body = json.loads(base64.urlsafe_b64decode(seat["token"].split(".")[0] + "=="))
        now = int(time.time())
        nearly = make_token(key, {**body, "e": now + 3600})  # six days and 23 hours old
        expired = make_token(key, {**body, "e": now - 1})
        heard: list[tuple[str, str]] = []
        async with DudoConnection(
            served, nearly, on_event=lambda kind, detail: heard.append((kind, detail))
        ) as conn:
            assert conn.welcome is not None
            renewed = conn.welcome["token"]
            assert conn.token == renewed != nearly and heard == [("token", renewed)]
            assert read_token(renewed, key).expires >= now + TOKEN_TTL_S
            assert conn.welcome["seat"] == seat["seat"]
            # ... and the gateway's clock, which the views' deadlines count against
            assert abs(conn.welcome["now"] / 1000 - time.time()) < 5
            assert abs(conn.server_time() - time.time()) < 5
        async with DudoConnection(served, renewed) as again:  # the same seat with it
            assert again.welcome is not None and again.welcome["seat"] == seat["seat"]
        with pytest.raises(DudoError) as refused:
            async with DudoConnection(served, expired, open_timeout=20):
                pass
        assert refused.value.code == "unauthorized"
        async with DudoConnection(served, watcher["token"]) as spectator:
            assert spectator.welcome is not None and spectator.welcome["seat"] is None
            assert spectator.token == spectator.welcome["token"]
            expires = read_token(spectator.token).expires
            assert expires >= read_token(watcher["token"]).expires >= now + TOKEN_TTL_S

    run(scenario())


def test_an_identity_users_statistics_follow_them_across_gateways(
    served: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    """Issue 34 (statistics on the server): Ana, signed in with her app's identity, plays
    a game through one gateway and another through a second one; `api.player(handle)`
    counts both, as her own views showed them: the games, the win, each Dudo call and
    whether it was right. Someone anonymous has no statistics there (their device counts)."""
    from dudo.auth.identity import new_key, public_jwks, sign_identity
    from dudo.ops import admin

    from .conftest import gateway_beside

    key = new_key()
    admin.add_app(redis_server.client(), "web", public_jwks(key))

    async def play(base: str) -> tuple[str, dict[str, Any]]:
        """One game against an easy bot, to its end: Ana's handle and her last view."""
        async with DudoApi(base) as api:
            for _ in range(50):  # until the workers have taken the app's key (a heartbeat)
                try:
                    seat = await api.create_table(
                        rules={"preset": "classic", "start_dice": 2}, seats=2, bots=["easy"],
                        name="Ana", identity=sign_identity("web", key, "ana-7"),
                    )  # fmt: skip
                    break
                except DudoError as refused:
                    assert refused.code == "unauthorized", refused
                    await asyncio.sleep(0.2)
        async with DudoConnection(base, seat["token"]) as conn:
            while True:
                view = conn.view or await conn.next("view")
                game = view["game"]
                if game and game["phase"] == "over" and "log" in game:
                    return seat["player"], view
                if game and "legal" in game and game["turn"] == view["seat"]:
                    await conn.act(choose(game))
                else:
                    await conn.next("view")

    async def scenario() -> None:
        first = await play(served)
        with gateway_beside(tmp_path, redis_server.url, "web-2") as other:
            second = await play(other)
        assert first[0] == second[0]  # the same player, through either gateway
        handle = first[0]
        wins = dudo = right = 0
        for _, view in (first, second):
            seat, game = view["seat"], view["game"]
            wins += game["winner"] == seat
            for logged in game["log"]:
                if logged["caller"] == seat and logged["call"] == "dudo":
                    dudo += 1
                    right += logged["loser"] != seat
        async with DudoApi(served) as api:
            for _ in range(100):  # the ratings keeper counts each result as it comes
                mine = await api.player(handle)
                if mine["games"] == 2:
                    break
                await asyncio.sleep(0.1)
            assert not problems(mine, PlayerResponse)
            assert (mine["games"], mine["wins"], mine["dudo"]) == (2, wins, [right, dudo])
            assert mine["name"] == "Ana" and mine["rating"] is None  # only bots: not rated
            anonymous = await api.create_table(rules={"preset": "classic"}, seats=2, name="Bo")
            with pytest.raises(DudoError) as none:
                await api.player(anonymous["player"])
            assert (none.value.code, none.value.status) == ("unknown_player", 404)

    run(scenario())
