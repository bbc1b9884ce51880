"""The gateway's client protocol, over real HTTP and WebSocket, against real Redis and a worker."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import aiohttp
import msgpack
import pytest

from dudo.engine import to_bytes
from dudo.table import Table
from dudo.wire import keys

from ..http_schemas import check
from ..servers import RedisServer


class Client:
    """One WebSocket connection, with helpers to wait for a kind of message."""

    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session, self.base = session, base
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.seen: list[dict[str, Any]] = []
        self.binary = False

    async def open(self, token: str | None = None, *, binary: bool = False) -> Client:
        self.ws = await self.session.ws_connect(f"{self.base.replace('http', 'ws')}/ws")
        self.binary = binary
        if token:
            await self.send({"v": 1, "type": "hello", "token": token})
        return self

    async def send(self, message: dict[str, Any]) -> None:
        assert self.ws is not None
        if self.binary:
            await self.ws.send_bytes(msgpack.packb(message))
        else:
            await self.ws.send_str(json.dumps(message))

    async def raw(self, text: str) -> None:
        assert self.ws is not None
        await self.ws.send_str(text)

    async def next(self, kind: str, timeout: float = 5, **match: Any) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            msg = await self.receive(max(0.01, deadline - loop.time()))
            if msg["type"] == kind and all(msg.get(k) == v for k, v in match.items()):
                return msg

    async def receive(self, timeout: float = 5) -> dict[str, Any]:
        """The next message, whatever its kind."""
        assert self.ws is not None
        frame = await asyncio.wait_for(self.ws.receive(), timeout)
        if frame.type == aiohttp.WSMsgType.BINARY:
            msg = msgpack.unpackb(frame.data, raw=False)
        elif frame.type == aiohttp.WSMsgType.TEXT:
            msg = json.loads(frame.data)
        else:
            raise AssertionError(f"connection ended: {frame.type}")
        self.seen.append(msg)
        return msg

    async def quiet(self, seconds: float = 0.4) -> list[dict[str, Any]]:
        """Everything that arrives within ``seconds``."""
        start = len(self.seen)
        with contextlib.suppress(TimeoutError):
            await self.next("__never__", timeout=seconds)
        return self.seen[start:]

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


async def post(session: aiohttp.ClientSession, url: str, body: Any) -> tuple[int, dict[str, Any]]:
    async with session.post(url, json=body) as response:
        data = await response.json()
    if response.status >= 400:
        check("http-error.schema.json", data)
    elif url.endswith("/api/tables"):
        check("http-create-request.schema.json", body)
        check("http-create-response.schema.json", data)
    elif url.endswith("/join"):
        check("http-join-request.schema.json", body)
        check("http-join-response.schema.json", data)
    elif url.endswith("/watch"):
        check("http-watch-response.schema.json", data)
    return response.status, data


async def two_player_table(
    session: aiohttp.ClientSession, base: str, **rules: Any
) -> dict[str, Any]:
    status, ana = await post(
        session,
        f"{base}/api/tables",
        {"rules": {"preset": "classic", **rules}, "seats": 2, "name": "Ana"},
    )
    assert status == 201, ana
    status, ben = await post(session, f"{base}/api/tables/{ana['table']}/join", {"name": "Ben"})
    assert status == 200, ben
    return {"table": ana["table"], "tokens": [ana["token"], ben["token"]]}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def stored(redis_server: RedisServer, table: str) -> Table:
    return Table.from_bytes(redis_server.client().hget(keys.table_of(table, 16), "s"))


def test_join_act_and_views_per_seat(served: str, redis_server: RedisServer) -> None:
    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            game = await two_player_table(session, served)
            a = await Client(session, served).open(game["tokens"][0])
            b = await Client(session, served).open(game["tokens"][1])
            welcome = await a.next("welcome")
            assert (welcome["table"], welcome["seat"]) == (game["table"], 0)
            view_a = await a.next("view", status="playing")
            view_b = await b.next("view", status="playing")
            table = stored(redis_server, game["table"])
            assert view_a["game"]["dice"] == list(table.game.hands[0])
            assert view_b["game"]["dice"] == list(table.game.hands[1])
            turn = view_a["game"]["turn"]
            mover = (a, b)[turn]
            await mover.send(
                {
                    "v": 1,
                    "type": "act",
                    "id": "x1",
                    "action": {"type": "bid", "quantity": 1, "face": 3},
                }
            )
            after = await a.next("view", version=view_a["version"] + 1)
            assert after["game"]["bids"] == [[turn, 1, 3]]
            assert after["events"][0] == {"type": "bid", "seat": turn, "quantity": 1, "face": 3}
            # Out of turn: the refusal says whose turn it is as data (its facts), for a
            # client to word in its player's language.
            await mover.send({"v": 1, "type": "act", "id": "x2", "action": {"type": "dudo"}})
            refused = await mover.next("error")
            assert (refused["id"], refused["code"]) == ("x2", "not_your_turn")
            assert refused["facts"] == {"turn": 1 - turn}
            await a.close()
            await b.close()

    run(scenario())


def test_a_start_and_a_resync_are_answered_quoting_their_ids(served: str) -> None:
    """Issue 33: the guide says whatever answers a message quotes its id, but the view
    that answered a `start` or a `resync` quoted nothing. Each now gets an `ack` with
    its id and the version of the view that answers it, right before that view."""

    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            rules = {"rules": {"preset": "classic"}, "seats": 3, "name": "Ana"}
            status, ana = await post(session, f"{served}/api/tables", rules)
            assert status == 201, ana
            status, _ = await post(session, f"{served}/api/tables/{ana['table']}/join",
                                   {"name": "Ben"})  # fmt: skip
            assert status == 200
            a = await Client(session, served).open(ana["token"])
            await a.next("welcome")
            await a.send({"v": 1, "type": "start", "id": "s1"})
            ack = await a.next("ack")
            assert (ack["id"], ack["table"]) == ("s1", ana["table"])
            begun = await a.receive()  # the very next message: the view it answers
            assert begun["type"] == "view" and begun["status"] == "playing", begun
            assert begun["version"] == ack["version"]
            await asyncio.sleep(1.1)  # resync: one a second
            await a.send({"v": 1, "type": "resync", "id": "r1"})
            ack = await a.next("ack")
            assert (ack["id"], ack["version"]) == ("r1", begun["version"])  # nothing changed
            again = await a.receive()
            assert again["type"] == "view" and again["version"] == begun["version"]
            await a.close()

    run(scenario())


def test_quick_play_fills_a_fitting_open_table_then_makes_another(served: str) -> None:
    """Issue 33: `join_or_create` (POST /api/quickplay) sits people at an open table of
    the preset and size, the fullest first, never at one whose rules differ; a table
    filled (its game begun) is not chosen; none fitting, a table is made."""
    from dudo_client import DudoApi, DudoError

    async def scenario() -> None:
        async with DudoApi(served) as api:
            # A preset and size no open table of earlier tests here has (the lobby is the
            # shared Redis server's).
            lobby = (await api.tables())["tables"]
            preset, seats = next(
                (preset, seats) for seats in (3, 5, 6) for preset in ("lizumo", "cacho")
                if not any(t["preset"] == preset and t["seats"] == seats for t in lobby)
            )  # fmt: skip
            # Somebody's table of the same preset and size but other rules: never chosen.
            other = await api.create_table(
                rules={"preset": preset, "start_dice": 2}, seats=seats, name="Eve"
            )
            ana = await api.join_or_create("Ana", preset=preset, seats=seats)
            assert ana["created"] is True and ana["table"] != other["table"]
            others = [await api.join_or_create(n, preset=preset, seats=seats)
                      for n in ("Ben", "Cleo", "Dora", "Emil", "Finn")[: seats - 1]]  # fmt: skip
            assert [o["created"] for o in others] == [False] * (seats - 1)
            assert {o["table"] for o in others} == {ana["table"]}
            assert {ana["seat"], *(o["seat"] for o in others)} == set(range(seats))
            dan = await api.join_or_create("Dan", preset=preset, seats=seats, bots=["easy"])
            assert dan["created"] is True and dan["table"] not in (ana["table"], other["table"])
            listed = {t["table"]: t for t in (await api.tables())["tables"]}
            assert listed[dan["table"]]["bots"] == 1 and listed[ana["table"]]["taken"] == seats
            wrongs = (({"preset": "nonsense"}, "bad_rules"), ({"seats": 9}, "bad_message"))
            for wrong, code in wrongs:
                with pytest.raises(DudoError) as refused:
                    await api.join_or_create("Zed", **wrong)
                assert (refused.value.code, refused.value.status) == (code, 400)

    run(scenario())


def test_bad_input_gets_typed_errors_and_changes_nothing(
    served: str, redis_server: RedisServer
) -> None:
    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            game = await two_player_table(session, served)
            other = await two_player_table(session, served)
            a = await Client(session, served).open(game["tokens"][0])
            await a.next("view", status="playing")

            def snapshot() -> tuple[int, bytes]:
                table = stored(redis_server, game["table"])
                return table.version, to_bytes(table.game)

            before = snapshot()

            async def expect(code: str, payload: Any, *, raw: bool = False) -> dict[str, Any]:
                if raw:
                    await a.raw(payload)
                else:
                    await a.send(payload)
                error = await a.next("error")
                assert error["code"] == code, (payload if not raw else payload[:40], error)
                return error

            await expect("bad_message", "this is not json", raw=True)
            await expect("bad_message", "[1, 2, 3]", raw=True)
            await expect("bad_message", {"v": 1, "type": "fly"})
            await expect("unsupported_version", {"v": 9, "type": "ping"})
            # What is wrong inside `action` is `bad_action` (docs/rules.md); what is wrong
            # with the message around it is `bad_message`.
            await expect("bad_action", {"v": 1, "type": "act", "id": "w1", "action": "dudo"})
            for i, action in enumerate(
                (
                    {"type": "bid", "quantity": "3", "face": 4},
                    {"type": "fly"},
                    {"type": "dudo", "loud": True},
                )
            ):
                await expect(
                    "bad_action", {"v": 1, "type": "act", "id": f"w2{i}", "action": action}
                )
            await expect("bad_message", {"v": 1, "type": "act", "action": {"type": "dudo"}})
            big = {"v": 1, "type": "act", "id": "w3", "pad": "x" * 5000, "action": {"type": "dudo"}}
            assert (await expect("too_large", big))["id"] is None  # not read: as documented
            await expect("unauthorized", {"v": 1, "type": "hello", "token": "forged.token"})
            # A seat token acts only for its own seat and table: naming another is refused.
            a2 = await Client(session, served).open(game["tokens"][0])
            await a2.next("view")
            for foreign in ({"seat": 1}, {"table": other["table"]}):
                await a2.send(
                    {"v": 1, "type": "act", "id": "f1", "action": {"type": "dudo"}, **foreign}
                )
                error = await a2.next("error")
                assert error["code"] == "unauthorized"
            # A token of another table gives that table's seat, never this one.
            c = await Client(session, served).open(other["tokens"][1])
            assert (await c.next("welcome"))["table"] == other["table"]
            # Unauthenticated actions are refused.
            anon = await Client(session, served).open()
            await anon.send({"v": 1, "type": "act", "id": "n1", "action": {"type": "dudo"}})
            assert (await anon.next("error"))["code"] == "unauthorized"
            # Unknown tables.
            status, body = await post(
                session, f"{served}/api/tables/nosuchtable/join", {"name": "Z"}
            )
            assert (status, body["code"]) == (404, "unknown_table")
            status, body = await post(session, f"{served}/api/tables/nosuchtable/watch", {})
            assert (status, body["code"]) == (404, "unknown_table")
            status, body = await post(
                session,
                f"{served}/api/tables",
                {"rules": {"preset": "cacho"}, "seats": 2, "name": "Z"},
            )
            assert (status, body["code"]) == (400, "bad_rules")
            # A flood: more than the burst allows.
            for _ in range(60):
                await a.send({"v": 1, "type": "ping"})
            got = await a.quiet(0.6)
            assert any(m["type"] == "error" and m["code"] == "rate_limited" for m in got)
            assert snapshot() == before
            for client in (a, a2, c, anon):
                await client.close()

    run(scenario())


def test_resume_after_a_dropped_connection_loses_no_turn(served: str) -> None:
    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            game = await two_player_table(session, served)
            clients = [await Client(session, served).open(t) for t in game["tokens"]]
            view = await clients[0].next("view", status="playing")
            turn = view["game"]["turn"]
            mover = clients[turn]
            await mover.close()  # the connection drops while it is this seat's turn
            other = clients[1 - turn]
            await asyncio.sleep(0.3)
            back = await Client(session, served).open(game["tokens"][turn], binary=True)
            await back.next("welcome", seat=turn)
            snapshot = await back.next("view")
            assert snapshot["game"]["turn"] == turn and snapshot["game"]["legal"]["bid"]
            await back.send(
                {
                    "v": 1,
                    "type": "act",
                    "id": "r1",
                    "action": {"type": "bid", "quantity": 1, "face": 2},
                }
            )
            seen = await other.next("view", version=snapshot["version"] + 1)
            assert seen["game"]["bids"] == [[turn, 1, 2]]
            await back.close()
            await other.close()

    run(scenario())


def test_a_spectator_never_receives_a_die_before_the_reveal(served: str) -> None:
    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            game = await two_player_table(session, served, start_dice=2)
            players = [await Client(session, served).open(t) for t in game["tokens"]]
            status, watch = await post(session, f"{served}/api/tables/{game['table']}/watch", {})
            assert status == 200
            spectator = await Client(session, served).open(watch["token"])
            await spectator.next("welcome", seat=None)
            views: list[dict[str, Any]] = []
            finished = False
            for _ in range(60):
                if finished:
                    break
                view = await players[0].next("view", timeout=5)
                if view["status"] == "over":
                    finished = True
                    break
                game_view = view["game"]
                if game_view["turn"] is None:
                    continue
                mover = players[game_view["turn"]]
                legal = game_view["legal"] if game_view["turn"] == 0 else None
                action = (
                    {"type": "dudo"}
                    if game_view["bids"]
                    else {"type": "bid", "quantity": 1, "face": 2}
                )
                if legal is not None and not legal["dudo"] and game_view["bids"]:
                    action = {"type": "bid", "quantity": game_view["dice_in_play"], "face": 6}
                await mover.send(
                    {"v": 1, "type": "act", "id": f"s{view['version']}", "action": action}
                )
            views = [m for m in await spectator.quiet(0.8) if m["type"] == "view"]
            views += [m for m in spectator.seen if m["type"] == "view"]
            assert views
            for view in views:
                body = view["game"]
                assert view["seat"] is None
                if body is None:
                    continue
                assert "dice" not in body and "legal" not in body and "odds" not in body
                last = body["last_round"]
                assert last is None or last["round"] < body["round"] or body["phase"] == "over"
            for client in (*players, spectator):
                await client.close()

    run(scenario())


def test_health_readiness_and_metrics(served: str) -> None:
    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{served}/healthz") as r:
                assert r.status == 200
            async with session.get(f"{served}/readyz") as r:
                assert r.status == 200 and (await r.json())["ready"]
            game = await two_player_table(session, served)
            a = await Client(session, served).open(game["tokens"][0])
            await a.next("view")
            async with session.get(f"{served}/metrics") as r:
                text = await r.text()
            assert 'dudo_gateway_connections{kind="seat"} 1.0' in text
            assert "dudo_gateway_action_seconds_bucket" in text
            async with session.get(f"{served}/") as r:
                assert r.status == 200 and "app.js" in await r.text()
            async with session.get(f"{served}/api/tables") as r:
                check("http-tables-response.schema.json", await r.json())
            await a.close()

    run(scenario())


def test_spliced_snapshot_text_equals_the_snapshot() -> None:
    """What a client gets is the snapshot encoded whole, byte for byte, whether the
    gateway spliced it from a `view` (pieces it encoded) or from the `frames` a worker
    encoded for it; and a frames message holds nothing a view for that gateway did not."""
    from dudo import wire
    from dudo.wire.frames import SnapshotTexts, encode_json, frames_message

    root = Path(__file__).resolve().parents[2] / "protocol" / "examples"
    for name in ("out-view.json", "out-view-open.json", "out-view-spectator.json"):
        view = json.loads((root / name).read_text(encoding="utf-8"))
        if view["game"] is not None:  # UTF-8 and escapes, spliced as msgspec encodes them
            view["game"]["note"] = 'Ñandú 🎲 "quoted" \\ \n'
        texts = SnapshotTexts.of_view(view)
        frames = wire.unpack(wire.encode(frames_message(view)))  # as it travels
        wire.validate(frames)
        spliced = SnapshotTexts.of_frames(frames)
        pieces = zip(frames["seats"], frames["privates"], strict=True)
        by_seat = {seat: spliced.seat_text(seat, piece.encode()) for seat, piece in pieces}
        assert frames["holders"] == view["holders"]
        for private in view["seats"]:
            snapshot = wire.seat_snapshot(view, private)
            assert texts.seat(private) == encode_json(snapshot) == by_seat[private["seat"]]
            assert json.loads(texts.seat(private)) == snapshot
            assert "holders" not in snapshot  # player ids never reach a client
            if view["game"] is not None:
                del snapshot["game"]["note"]
            check("ws-out-view.schema.json", {"v": 1, **snapshot, "type": "view"})
        spectator = encode_json(wire.spectator_view(view))
        assert texts.spectator() == spectator == spliced.spectator()
        assert json.loads(texts.spectator()) == wire.spectator_view(view)
        assert "holders" not in wire.spectator_view(view)
