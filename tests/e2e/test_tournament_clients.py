"""Two people and four bots play a whole tournament through `dudo serve`: each person's
WebSocket follows them from table to table (`moved`), sees only their own dice, gets the
standings, and the tournament ends with everyone placed."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from .test_gateway import Client, check, post, run


async def play(client: Client, name: str, log: list[str]) -> dict[str, Any]:
    """Act whenever it is our turn (the lowest raise, or Dudo once there is a bid);
    return the final standings. Checks every message on the way."""
    table: str | None = None
    my_dice = 0
    while True:
        msg = await client.receive(timeout=90)
        kind = msg["type"]
        check(f"ws-out-{kind}.schema.json", msg)
        if kind == "moved":
            assert msg["from"] == table, (name, msg, table)
            table = msg["table"]
            log.append(f"{name} -> {table}")
        elif kind == "view":
            assert msg["table"] == table, f"{name} got a view of {msg['table']}, sits at {table}"
            game = msg["game"]
            if game is None:
                continue
            seat = msg["seat"]
            if seat is None:  # our own call ended the round that sent us away: its reveal
                assert game["last_round"] is not None and "dice" not in game, msg
                continue
            # Never anyone else's dice: exactly as many as this seat has, and the other
            # seats' hands appear only in the public reveal of the last round.
            my_dice = game["dice_counts"][seat]
            if my_dice == 0:  # out: a spectator's view, no hand at all
                assert "dice" not in game and "legal" not in game
                continue
            assert len(game["dice"]) == (my_dice if game["phase"] != "over" else 0)
            if game["turn"] == seat and game["phase"] == "bidding" and my_dice:
                legal = game["legal"]
                if legal["dudo"]:
                    action: dict[str, Any] = {"type": "dudo"}
                else:
                    face = next(f for f, q in enumerate(legal["bid"], 1) if q is not None)
                    action = {"type": "bid", "quantity": legal["bid"][face - 1], "face": face}
                act = {"v": 1, "type": "act", "id": f"a{game['version']}", "action": action}
                await client.send(act)
        elif kind == "tournament" and msg["standings"]["status"] == "over":
            return msg["standings"]
        elif kind == "error":
            assert msg["code"] in ("not_your_turn", "game_over", "duplicate"), msg


def test_people_follow_their_seats_through_a_tournament(served: str) -> None:
    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            status, created = await post(
                session,
                f"{served}/api/tournaments",
                {"name": "Cup", "host": "Ana", "rules": {"preset": "lizumo", "start_dice": 2},
                 "seats": 3, "start_players": 6, "max_players": 6, "bots": "normal",
                 "buy_in": 10, "payouts": [60, 40]},
            )  # fmt: skip
            assert status == 201, created
            tid = created["tournament"]
            status, bea = await post(
                session, f"{served}/api/tournaments/{tid}/register", {"name": "Bea"}
            )
            assert status == 200, bea
            ana_ws = await Client(session, served).open(created["token"])
            bea_ws = await Client(session, served).open(bea["token"])
            for ws in (ana_ws, bea_ws):
                welcome = await ws.next("welcome")
                assert welcome["tournament"] == tid and welcome["table"] is None
            status, begun = await post(
                session, f"{served}/api/tournaments/{tid}/begin", {"token": created["token"]}
            )
            assert status == 200, begun
            log: list[str] = []
            final_ana, final_bea = await asyncio.wait_for(
                asyncio.gather(play(ana_ws, "Ana", log), play(bea_ws, "Bea", log)), 240
            )
            assert final_ana["places"] == final_bea["places"]
            places = final_ana["places"]
            assert [p["place"] for p in places] == list(range(1, 7))
            assert {"Ana", "Bea"} <= {p["name"] for p in places}
            assert sum(p["chips"] for p in places) == 60
            assert any(entry.startswith("Ana -> ") for entry in log)
            await ana_ws.close()
            await bea_ws.close()
            # The two people are rated (bots are not), the better placed one higher.
            for _ in range(100):
                async with session.get(f"{served}/api/leaderboard") as response:
                    board = (await response.json())["leaderboard"]
                if len(board) == 2:
                    break
                await asyncio.sleep(0.1)
            assert sorted(row["name"] for row in board) == ["Ana", "Bea"]
            place = {p["name"]: p["place"] for p in places}
            better = min(("Ana", "Bea"), key=place.__getitem__)
            assert board[0]["name"] == better

    run(scenario())


def test_an_entrant_reconnecting_mid_tournament_gets_its_seat_back(served: str) -> None:
    """A reload: the new connection says hello with the same entrant token and is seated
    again at the table the tournament has the player at now, with its own dice."""

    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            status, created = await post(
                session,
                f"{served}/api/tournaments",
                {"name": "Cup", "host": "Ana", "rules": {"preset": "classic"}, "seats": 3,
                 "start_players": 6, "max_players": 6, "bots": "normal"},
            )  # fmt: skip
            assert status == 201, created
            tid, token = created["tournament"], created["token"]
            first = await Client(session, served).open(token)
            await first.next("welcome", tournament=tid)
            status, _ = await post(
                session, f"{served}/api/tournaments/{tid}/begin", {"token": token}
            )
            assert status == 200
            moved = await first.next("moved", timeout=10)
            await first.next("view", timeout=10, table=moved["table"])
            await first.close()

            again = await Client(session, served).open(token)
            welcome = await again.next("welcome", timeout=10)
            assert welcome["tournament"] == tid and welcome["table"] == moved["table"]
            assert welcome["seat"] == moved["seat"]
            view = await again.next("view", timeout=10, table=moved["table"])
            check("ws-out-view.schema.json", view)
            game = view["game"]
            assert view["seat"] == moved["seat"]
            assert len(game["dice"]) == game["dice_counts"][view["seat"]] > 0
            await again.close()

    run(scenario())
