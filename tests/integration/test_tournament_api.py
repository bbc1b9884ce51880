"""Tournaments through a gateway's HTTP API, with real worker, director and gateway
processes: create (the creator registers and hosts), list, register, begin, standings
live and final."""

from __future__ import annotations

import csv
import io
import json
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
import redis

from dudo.engine.fairness import server_commitment
from dudo.wire import keys

from ..http_schemas import check_call
from .procs import FAST, P, Workers, wait_for

D = 2


def call(base: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        base + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            status, answer = response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        status, answer = exc.code, json.load(exc)
    check_call(method, path, body, status, answer)  # every body as published
    return status, answer


def start_services(workers: Workers, real_redis: redis.Redis) -> str:
    """A worker, a director and a gateway; the gateway's base URL once all are up."""
    workers.start("w1")
    workers.spawn(
        "d1", "director", "--redis", workers.url, "--partitions", str(D),
        "--table-partitions", str(P), "--id", "d1", *FAST,
    )  # fmt: skip
    base = workers.gateway("g1", "--director-partitions", str(D))
    wait_for(lambda: real_redis.zcard(keys.DIRECTORS) == 1, 30, "the director")
    return base


def test_create_register_begin_and_follow_the_standings_to_the_end(
    workers: Workers, real_redis: redis.Redis
) -> None:
    base = start_services(workers, real_redis)

    for wrong, code in (
        ({"seats": 3}, "bad_message"),  # no name
        ({"name": "X", "seats": "3"}, "bad_message"),
        ({"name": "X", "seats": True}, "bad_message"),
        ({"name": "X", "payouts": [60, 60]}, "bad_rules"),
        ({"name": "X", "rules": {"preset": "nope"}}, "bad_rules"),
        ({"name": "X", "host": "Ana", "seeds": "yes"}, "bad_message"),  # a boolean
    ):
        status, refused = call(base, "POST", "/api/tournaments", wrong)
        assert (status, refused["code"]) == (400, code), (wrong, refused)
    status, created = call(
        base, "POST", "/api/tournaments",
        {"name": "Cup", "host": "Ana", "rules": {"preset": "lizumo", "start_dice": 1,
         "turn_seconds": 1}, "seats": 3, "max_players": 5, "buy_in": 5, "payouts": [70, 30]},
    )  # fmt: skip
    assert status == 201, created
    tid, host_token = created["tournament"], created["token"]
    status, listing = call(base, "GET", "/api/tournaments")
    [entry] = [t for t in listing["tournaments"] if t["tournament"] == tid]
    assert entry["status"] == "registering" and entry["entrants"] == 1 and entry["seats"] == 3

    status, refused = call(base, "POST", f"/api/tournaments/{tid}/register",
                           {"name": "Zed", "seeds": 1})  # fmt: skip
    assert (status, refused["code"]) == (400, "bad_message")
    for name in ("Bea", "Ciro", "Dora"):
        status, answer = call(base, "POST", f"/api/tournaments/{tid}/register", {"name": name})
        assert status == 200 and answer["token"], answer
    status, refused = call(base, "POST", f"/api/tournaments/{tid}/begin", {"token": "forged.x"})
    assert (status, refused["code"]) == (401, "unauthorized")
    status, begun = call(base, "POST", f"/api/tournaments/{tid}/begin", {"token": host_token})
    assert status == 200 and begun["standings"]["status"] == "running", begun
    assert begun["standings"]["entrants"] == 4 and len(begun["standings"]["tables"]) == 2
    status, late = call(base, "POST", f"/api/tournaments/{tid}/register", {"name": "Eli"})
    assert (status, late["code"]) == (409, "game_started")

    # Nobody plays: each turn clock runs out and the house plays; the tournament ends.
    deadline = time.monotonic() + 90
    while True:
        status, state = call(base, "GET", f"/api/tournaments/{tid}")
        assert status == 200
        # Over, and rated a moment later: each place then shows its rating change.
        over = state["standings"]["status"] == "over"
        if over and all("rating_change" in p for p in state["standings"]["places"]):
            break
        assert time.monotonic() < deadline, state
        time.sleep(0.5)
    places = state["standings"]["places"]
    assert [p["place"] for p in places] == [1, 2, 3, 4]
    # The organizer's records (issue 31): the same places and payouts as JSON and CSV.
    status, results = call(base, "GET", f"/api/tournaments/{tid}/results")
    assert status == 200 and results["status"] == "over" and results["buy_in"] == 5
    marked = [{**p, **{k: p.get(k, False) for k in ("bot", "late", "kicked")}} for p in places]
    assert results["places"] == marked and results["payouts"] == [70, 30]
    with urllib.request.urlopen(f"{base}/api/tournaments/{tid}/results?format=csv") as got:
        assert got.headers["Content-Type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(got.read().decode())))
    assert [(int(r["place"]), r["name"], int(r["chips"])) for r in rows] == [
        (p["place"], p["name"], p["chips"]) for p in places
    ]
    assert [float(r["rating_change"]) for r in rows] == [p["rating_change"] for p in places]
    assert places[0]["rating_change"] > 0 > places[-1]["rating_change"]
    # Every table's history, by name and handle: the two first tables' four players sat
    # down with their dice, and everyone but the winner went out once.
    tables = results["tables"]
    assert len(tables) >= 2 and all(t["rounds"] for t in tables)
    # ... and what each table's dice came from (issue 55): its server seed, the one it
    # committed to, and a seed for every seat (public ones here: nobody brought one).
    for t in tables:
        seeds = t["seeds"]
        assert seeds["server_commitment"] == server_commitment(bytes.fromhex(seeds["server_seed"]))
        assert seeds["client_seeds"] == [f"public:{t['table']}:{n}" for n in range(3)]
    rounds = [r for t in tables for r in t["rounds"]]
    first = [p for t in tables[:2] for p in t["rounds"][0]["joined"]]
    assert sorted(p["name"] for p in first) == ["Ana", "Bea", "Ciro", "Dora"]
    assert {p["handle"] for p in first} == {p["handle"] for p in places}
    out = sorted(p["name"] for r in rounds for p in r["out"])
    assert out == sorted(p["name"] for p in places[1:])
    status, refused = call(base, "GET", f"/api/tournaments/{tid}/results?format=xls")
    assert (status, refused["code"]) == (400, "bad_message")
    assert sorted(p["name"] for p in places) == ["Ana", "Bea", "Ciro", "Dora"]
    assert [p["chips"] for p in places] == [14, 6, 0, 0]  # 70/30 of 4 x 5
    status, missing = call(base, "GET", "/api/tournaments/nope")
    assert (status, missing["code"]) == (404, "unknown_tournament")

    # The director keeps the ratings too: the four are rated, the winner above the last.
    def rated() -> Any:
        status, board = call(base, "GET", "/api/leaderboard?limit=10")
        return board["leaderboard"] if status == 200 and len(board["leaderboard"]) == 4 else None

    board = wait_for(rated, 20, "the ratings")
    by_name = {row["name"]: row for row in board}
    assert by_name[places[0]["name"]]["mu"] > by_name[places[3]["name"]]["mu"]
    assert all(row["games"] == 1 for row in board)
    # Chips by double entry through the ratings keeper: won minus the buy-in of 5.
    assert {row["name"]: row["chips"] for row in board} == {
        p["name"]: p["chips"] - 5 for p in places
    }
    assert call(base, "GET", "/api/leaderboard?limit=0")[0] == 400


def test_an_apps_user_is_rated_as_one_player_across_tournaments(
    workers: Workers, real_redis: redis.Redis, monkeypatch: Any
) -> None:
    """Identity from the gateway: the user an app signs for is one player in every
    tournament (rated across them); the same user id of another app is someone
    else; a forged identity is refused and registers nobody."""
    from dudo.auth.identity import new_key, public_jwks, sign_identity
    from dudo.ops import admin

    web, chat = new_key(), new_key()  # each app's backend's private key
    admin.add_app(real_redis, "web", public_jwks(web))  # the deployment: public keys only
    admin.add_app(real_redis, "chat", public_jwks(chat))
    base = start_services(workers, real_redis)
    ana = sign_identity("web", web, "42")
    # At tables too: the same player (public handle) at two tables; a forgery refused.
    status, made = call(base, "POST", "/api/tables", {"name": "Ana", "identity": ana, "seats": 2})
    assert status == 201, made
    status, other = call(base, "POST", "/api/tables", {"seats": 2})
    assert status == 201, other
    status, joined = call(
        base, "POST", f"/api/tables/{other['table']}/join", {"name": "Ana", "identity": ana}
    )
    assert status == 200 and joined["player"] == made["player"], joined
    status, refused = call(
        base, "POST", f"/api/tables/{other['table']}/join", {"name": "Eve", "identity": "x.y"}
    )
    assert (status, refused["code"]) == (401, "unauthorized")
    tids = []
    for cup, others in (("One", [("Bea", None)]), ("Two", [("Anna", "chat"), ("Ciro", None)])):
        status, created = call(
            base, "POST", "/api/tournaments",
            {"name": cup, "rules": {"preset": "lizumo", "start_dice": 1, "turn_seconds": 1},
             "seats": 3, "max_players": 3, "start_players": len(others) + 1},
        )  # fmt: skip
        assert status == 201, created
        tid = created["tournament"]
        tids.append(tid)
        forged = sign_identity("web", chat, "42")  # signed with another app's key
        status, refused = call(
            base, "POST", f"/api/tournaments/{tid}/register", {"name": "Eve", "identity": forged}
        )
        assert (status, refused["code"]) == (401, "unauthorized")
        status, first = call(
            base, "POST", f"/api/tournaments/{tid}/register", {"name": "Ana", "identity": ana}
        )
        assert status == 200, first
        for name, app in others:
            body: dict[str, Any] = {"name": name}
            if app:
                body["identity"] = sign_identity(app, chat, "42")
            status, answer = call(base, "POST", f"/api/tournaments/{tid}/register", body)
            assert status == 200, answer
    # Nobody plays: the turn clocks run out, the house plays, both tournaments end.
    deadline = time.monotonic() + 90
    for tid in tids:
        while call(base, "GET", f"/api/tournaments/{tid}")[1]["standings"]["status"] != "over":
            assert time.monotonic() < deadline
            time.sleep(0.5)

    def rated() -> Any:
        status, board = call(base, "GET", "/api/leaderboard?limit=10")
        return board["leaderboard"] if status == 200 and len(board["leaderboard"]) == 4 else None

    board = wait_for(rated, 20, "the ratings")
    games = {row["name"]: row["games"] for row in board}
    assert games == {"Ana": 2, "Bea": 1, "Anna": 1, "Ciro": 1}  # no Eve: refused

    # Statistics (issue 34): the user's, by handle, counted across both tournaments; the
    # same user id of another app's is someone else's; an anonymous player has none.
    handles = {row["name"]: row["handle"] for row in board}
    status, mine = call(base, "GET", f"/api/players/{made['player']}")
    assert status == 200, mine
    assert handles["Ana"] == mine["handle"] == made["player"] and mine["name"] == "Ana"
    assert (mine["tournaments"], mine["rating"]["games"]) == (2, 2)
    winners = [
        call(base, "GET", f"/api/tournaments/{tid}/results")[1]["places"][0]["name"]
        for tid in tids
    ]
    assert mine["tournament_wins"] == winners.count("Ana") and mine["games"] == 0
    status, anna = call(base, "GET", f"/api/players/{handles['Anna']}")
    assert status == 200 and anna["handle"] != mine["handle"], anna
    assert (anna["tournaments"], anna["tournament_wins"]) == (1, winners.count("Anna"))
    for handle in (handles["Bea"], handles["Ciro"], "A" * 16):
        status, refused = call(base, "GET", f"/api/players/{handle}")
        assert (status, refused["code"]) == (404, "unknown_player"), handle
    status, refused = call(base, "GET", "/api/players/u-x")
    assert (status, refused["code"]) == (400, "bad_message")


@pytest.mark.parametrize("when", ["hello-then-begin", "begin-at-once", "full-then-hello"])
def test_an_entrant_who_registers_through_one_gateway_plays_through_another(
    workers: Workers, real_redis: redis.Redis, when: str
) -> None:
    """Issue 31, item 1: deploy/'s load balancer spreads requests without stickiness, so
    an entrant may register through one gateway and open the WebSocket through another,
    before the start (its hello answered first, or racing the begin) or after it (the
    tournament started when it filled). It plays where it said hello: `moved` or its
    seat, then views with its own die, there."""
    import asyncio

    import aiohttp

    from ..e2e.test_gateway import Client

    base = start_services(workers, real_redis)
    other = workers.gateway("g2", "--director-partitions", str(D))
    full = {"start_players": 3} if when == "full-then-hello" else {}
    status, created = call(
        base, "POST", "/api/tournaments",
        {"name": "Cup", "host": "Ana", "rules": {"preset": "lizumo", "start_dice": 1,
         "turn_seconds": 5}, "seats": 3, "max_players": 3, **full},
    )  # fmt: skip
    assert status == 201, created
    tid = created["tournament"]
    status, ciro = call(base, "POST", f"/api/tournaments/{tid}/register", {"name": "Ciro"})
    assert status == 200, ciro
    status, bea = call(base, "POST", f"/api/tournaments/{tid}/register", {"name": "Bea"})
    assert status == 200, bea

    def begin() -> None:
        status, begun = call(base, "POST", f"/api/tournaments/{tid}/begin",
                             {"token": created["token"]})  # fmt: skip
        assert status == 200, begun

    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            ws = await Client(session, other).open(bea["token"])  # through the other one
            if when == "hello-then-begin":
                welcome = await ws.next("welcome", timeout=15)
                assert welcome["tournament"] == tid and welcome["table"] is None
                await asyncio.to_thread(begin)
            elif when == "begin-at-once":
                await asyncio.to_thread(begin)
            await seated_with_its_die(ws)  # through g2

    asyncio.run(scenario())


async def seated_with_its_die(ws: Any, seconds: float = 25) -> list[str]:
    """Wait until ``ws`` gets a view of its seat with its own single die; the types of
    the messages that came until then. AssertionError if none comes in time."""
    import asyncio

    seen: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        msg = await ws.receive(timeout=max(0.1, deadline - loop.time()))
        seen.append(msg)
        game = msg.get("game") if msg["type"] == "view" else None
        if game and msg["seat"] is not None and len(game.get("dice", [])) == 1:
            return [m["type"] for m in seen]
    raise AssertionError(f"never seated through the other gateway: {seen}")


def test_the_api_refuses_what_would_never_work_and_lets_an_entrant_leave(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """Issue 31, item 7: a body over the cap is 413 (it was 400); a start before now, or
    after more players than may register, is refused (it made a tournament over at once,
    or one that never starts); an entrant may unregister through the API (the director
    could, the gateway had no route), once, before the start."""
    base = start_services(workers, real_redis)
    huge = {"name": "X", "pad": "x" * 70_000}
    for path in ("/api/tournaments", "/api/tables"):
        status, refused = call(base, "POST", path, huge)
        assert (status, refused["code"]) == (413, "too_large"), (path, refused)
    status, refused = call(base, "POST", "/api/tournaments",
                           {"name": "X", "start_players": 9, "max_players": 8})  # fmt: skip
    assert (status, refused["code"]) == (400, "bad_message"), refused
    assert "max_players" in refused["message"]
    now_ms = int(time.time() * 1000)
    status, refused = call(base, "POST", "/api/tournaments",
                           {"name": "X", "start_at": now_ms - 60_000})  # fmt: skip
    assert (status, refused["code"]) == (400, "bad_message"), refused
    status, later = call(base, "POST", "/api/tournaments",
                         {"name": "Later", "start_at": now_ms + 3_600_000})  # fmt: skip
    assert status == 201, later

    status, created = call(base, "POST", "/api/tournaments",
                           {"name": "Cup", "host": "Ana", "buy_in": 5})  # fmt: skip
    assert status == 201, created
    tid = created["tournament"]
    status, bea = call(base, "POST", f"/api/tournaments/{tid}/register", {"name": "Bea"})
    assert status == 200, bea
    status, left = call(base, "POST", f"/api/tournaments/{tid}/unregister", {"token": bea["token"]})
    assert (status, left["entrants"]) == (200, 1), left
    status, state = call(base, "GET", f"/api/tournaments/{tid}")
    assert state["standings"]["entrants"] == 1 and state["standings"]["pool"] == 5
    status, again = call(base, "POST", f"/api/tournaments/{tid}/unregister",
                         {"token": bea["token"]})  # fmt: skip
    assert status == 409 and again["code"] == "not_seated", again
    status, forged = call(base, "POST", f"/api/tournaments/{tid}/unregister", {"token": "x.y"})
    assert (status, forged["code"]) == (401, "unauthorized")

    async def through_the_client_library() -> None:
        from dudo_client import DudoApi, DudoError

        async with DudoApi(base) as api:
            ciro = await api.register(tid, name="Ciro")
            assert (await api.unregister(tid, ciro["token"]))["entrants"] == 1
            try:
                await api.unregister(tid, ciro["token"])
            except DudoError as exc:
                assert exc.code == "not_seated"
            else:
                raise AssertionError("unregistered twice")
            results = await api.results(tid)
            assert results["status"] == "registering" and results["places"] == []
            assert results["entrants"] == 1 and results["buy_in"] == 5

    import asyncio

    asyncio.run(through_the_client_library())


def test_the_listing_is_bounded_and_shows_what_one_may_join_first(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """Issue 31, item 6: 2,000 tournaments made the listing every lobby polls 1.15 MB.
    It lists at most the gateway's --lobby-max, those open to register first."""
    workers.start("w1")
    workers.spawn(
        "d1", "director", "--redis", workers.url, "--partitions", str(D),
        "--table-partitions", str(P), "--id", "d1", *FAST,
    )  # fmt: skip
    base = workers.gateway("g1", "--director-partitions", str(D), "--lobby-max", "2")
    wait_for(lambda: real_redis.zcard(keys.DIRECTORS) == 1, 30, "the director")
    status, first = call(base, "POST", "/api/tournaments",
                         {"name": "A", "host": "Ana", "bots": "normal"})  # fmt: skip
    assert status == 201, first
    status, begun = call(base, "POST", f"/api/tournaments/{first['tournament']}/begin",
                         {"token": first["token"]})  # fmt: skip
    assert status == 200, begun
    made = [call(base, "POST", "/api/tournaments", {"name": n})[1]["tournament"] for n in "BC"]

    def listed() -> Any:
        status, listing = call(base, "GET", "/api/tournaments")
        found = listing["tournaments"]
        return found if status == 200 and {t["tournament"] for t in found} == set(made) else None

    found = wait_for(listed, 20, "the listing")
    assert [t["status"] for t in found] == ["registering", "registering"]  # not the running
