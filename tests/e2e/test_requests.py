"""Every client message may carry an id, and every answer or refusal quotes it (issue 13):
hello → welcome, ping → pong, watch_lobby → lobby, leave → left, a refused start, resync
or act → error; the host's early start renumbers seats and the moved player is told."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import msgpack

from .test_gateway import Client, check, post, run


def test_answers_and_refusals_quote_the_id_they_answer(served: str) -> None:
    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            status, ana = await post(
                session, f"{served}/api/tables",
                {"rules": {"preset": "classic"}, "seats": 3, "name": "Ana"},
            )  # fmt: skip
            assert status == 201, ana
            table = ana["table"]
            status, ben = await post(
                session, f"{served}/api/tables/{table}/join", {"name": "Ben", "seat": 2}
            )
            assert status == 200 and ben["seat"] == 2, ben

            host = await Client(session, served).open()
            await host.send({"v": 1, "type": "hello", "token": ana["token"], "id": "h-a"})
            assert (await host.next("welcome"))["id"] == "h-a"
            guest = await Client(session, served).open()
            await guest.send({"v": 1, "type": "hello", "token": ben["token"], "id": "h-b"})
            welcome = await guest.next("welcome")
            assert (welcome["id"], welcome["seat"]) == ("h-b", 2)
            await guest.next("view", seat=2)

            await guest.send({"v": 1, "type": "ping", "id": "p-1"})
            assert (await guest.next("pong"))["id"] == "p-1"
            await guest.send({"v": 1, "type": "resync", "id": "r-1"})
            await guest.next("view", seat=2)

            # A refused start answers with its id (it used to go unanswered).
            await guest.send({"v": 1, "type": "start", "id": "s-b"})
            refused = await guest.next("error", id="s-b")
            assert refused["code"] == "not_host"

            # The host starts early: the empty seat 1 goes, Ben moves from seat 2 to 1 and
            # is told before any view with the new number.
            await host.send({"v": 1, "type": "start", "id": "s-a"})
            renumbered = await guest.next("welcome")
            assert (renumbered["id"], renumbered["seat"], renumbered["table"]) == (None, 1, table)
            assert renumbered["player"] == ben["player"]
            playing = await guest.next("view", status="playing")
            assert playing["seat"] == 1
            await host.send({"v": 1, "type": "start", "id": "s-a2"})
            assert (await host.next("error", id="s-a2"))["code"] == "game_started"

            # A leave is confirmed, quoting its id; the seat is then no longer this
            # connection's: a resync is refused with its id.
            await guest.send({"v": 1, "type": "leave", "id": "l-b"})
            left = await guest.next("left")
            assert (left["id"], left["table"], left["seat"]) == ("l-b", table, 1)
            await guest.send({"v": 1, "type": "resync", "id": "r-2"})
            too_soon = await guest.next("error", id="r-2")  # one resync a second at most
            assert too_soon["code"] == "rate_limited" and too_soon["retry_ms"] <= 1000
            await asyncio.sleep(too_soon["retry_ms"] / 1000)
            await guest.send({"v": 1, "type": "resync", "id": "r-3"})
            assert (await guest.next("error", id="r-3"))["code"] == "not_seated"

            # The lobby needs no hello; its full list quotes the request's id.
            status, _ = await post(
                session, f"{served}/api/tables",
                {"rules": {"preset": "lizumo"}, "seats": 4, "bots": ["easy"], "name": "Eve"},
            )  # fmt: skip
            assert status == 201
            lobby = await Client(session, served).open()
            await lobby.send({"v": 1, "type": "watch_lobby", "id": "w-1"})
            listing = await lobby.next("lobby")
            assert listing["id"] == "w-1" and len(listing["tables"]) >= 1
            async with session.get(f"{served}/api/tables") as response:
                check("http-tables-response.schema.json", await response.json())
            # Everything received is what the published schemas say (events included).
            for client in (host, guest, lobby):
                await client.close()
                for message in client.seen:
                    check(f"ws-out-{message['type']}.schema.json", message)

    run(scenario())


def test_rate_limited_says_when_to_retry_and_quotes_the_id(served: str) -> None:
    async def scenario() -> list[dict[str, Any]]:
        async with aiohttp.ClientSession() as session:
            client = await Client(session, served).open()
            for i in range(60):  # the burst is 40, then 20 per second
                await client.send({"v": 1, "type": "ping", "id": f"p-{i}"})
            seen = await client.quiet(1.0)
            await client.close()
            return seen

    seen = run(scenario())
    limited = [m for m in seen if m["type"] == "error" and m["code"] == "rate_limited"]
    assert limited, seen
    assert all(m["id"].startswith("p-") and 1 <= m["retry_ms"] <= 1000 for m in limited)
    answered = {m["id"] for m in seen if m["type"] == "pong"}
    assert answered.isdisjoint(m["id"] for m in limited) and len(answered) >= 40


def test_answers_follow_the_kind_of_the_last_frame(served: str) -> None:
    """JSON text in, JSON text out; msgpack binary in, msgpack out; and back again."""

    async def scenario() -> list[tuple[aiohttp.WSMsgType, dict[str, Any]]]:
        async with aiohttp.ClientSession() as session:
            ws = await session.ws_connect(f"{served.replace('http', 'ws')}/ws")
            got = []
            for i, binary in enumerate((False, True, False)):
                ping = {"v": 1, "type": "ping", "id": f"p-{i}"}
                if binary:
                    await ws.send_bytes(msgpack.packb(ping))
                else:
                    await ws.send_str(json.dumps(ping))
                frame = await ws.receive(timeout=5)
                data = frame.data
                got.append((frame.type, msgpack.unpackb(data) if binary else json.loads(data)))
            await ws.close()
            return got

    got = run(scenario())
    assert [t for t, _ in got] == [
        aiohttp.WSMsgType.TEXT,
        aiohttp.WSMsgType.BINARY,
        aiohttp.WSMsgType.TEXT,
    ]
    assert [m["id"] for _, m in got] == ["p-0", "p-1", "p-2"]


def test_an_act_is_acknowledged_before_the_view_that_shows_it(served: str) -> None:
    """`ack` quotes the act's id and the version of the view that shows it (which
    follows); a refused act gets its error and no ack."""

    async def scenario() -> None:
        async with aiohttp.ClientSession() as session:
            status, made = await post(
                session, f"{served}/api/tables",
                {"rules": {"preset": "classic"}, "seats": 2, "bots": ["easy"], "name": "Ana"},
            )  # fmt: skip
            assert status == 201, made
            ana = await Client(session, served).open()
            await ana.send({"v": 1, "type": "hello", "token": made["token"]})
            view = await ana.next("view", status="playing", timeout=15)
            while view["game"]["turn"] != view["seat"]:
                view = await ana.next("view", timeout=15)
            await ana.send(
                {"v": 1, "type": "act", "id": "a-bad", "action": {"type": "bid", "quantity": 99,
                 "face": 3}}
            )  # fmt: skip
            refused = await ana.next("error", id="a-bad")
            assert refused["code"] == "bid_out_of_range"
            # The bot may have opened with the highest bid there is (10 × sixes leaves no
            # raise): then the legal act is Dudo, which the view shows as a reveal.
            raises = [(q, face) for face, q in enumerate(view["game"]["legal"]["bid"], 1) if q]
            action = (
                {"type": "bid", "quantity": raises[0][0], "face": raises[0][1]}
                if raises else {"type": "dudo"}
            )  # fmt: skip
            await ana.send({"v": 1, "type": "act", "id": "a-1", "action": action})
            ack = await ana.next("ack", id="a-1")
            assert ack["table"] == made["table"] and ack["version"] > view["version"]
            shown = await ana.next("view")
            assert shown["version"] == ack["version"]
            if raises:
                assert shown["game"]["bids"][-1] == [view["seat"], *raises[0]]
            else:
                assert shown["events"][0] == {"type": "dudo", "seat": view["seat"]}
            assert not any(m["type"] == "ack" and m["id"] == "a-bad" for m in ana.seen)
            for message in ana.seen:
                check(f"ws-out-{message['type']}.schema.json", message)
            await ana.close()

    run(scenario())
