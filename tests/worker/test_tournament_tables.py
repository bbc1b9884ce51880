"""A tournament's table through a real worker: reports reach the director's inbox with the
commit that makes them (in the commit script, or through the delivery record when a
script may touch one hash slot), and orders and arrivals wait for a round's end."""

from __future__ import annotations

from typing import Any

import pytest

from dudo import wire
from dudo.table import Table
from dudo.wire import keys

from .test_worker import P, make_worker

DIRECTOR = 3
TABLE = "cup-t1"


def send(client: Any, **fields: Any) -> None:
    body = wire.message(fields.pop("type"), table=TABLE, **fields)
    wire.validate(body)
    client.xadd(keys.inbox(keys.partition_of(TABLE, P)), {wire.ENTRY_FIELD: wire.encode(body)})


def stored(client: Any) -> Table:
    return Table.from_bytes(client.hget(keys.table_of(TABLE, P), "s"))


def reports(client: Any) -> list[dict[str, Any]]:
    """The reports in the director's inbox, in order (a commit writes its reports as one
    `reports` entry per tournament)."""
    rows = client.xrange(keys.TOURNAMENTS.inbox(DIRECTOR))
    sent = [wire.decode(fields[b"m"], direction="director") for _, fields in rows]
    assert all(m["type"] == "reports" and m["tournament"] == "cup" for m in sent)
    return [report for m in sent for report in m["reports"]]


def end_round(client: Any, worker: Any, n: list[int]) -> None:
    """The seat in turn bids its lowest legal bid, the next calls Dudo."""
    for _ in range(2):
        table = stored(client)
        game = table.game
        assert game is not None and game.turn is not None
        seat = game.turn
        legal = game.legal(seat)
        if game.bids:
            action: dict[str, Any] = {"type": "dudo"}
        else:
            face = next(f for f, q in enumerate(legal["bid"], start=1) if q is not None)
            action = {"type": "bid", "quantity": legal["bid"][face - 1], "face": face}
        n[0] += 1
        holder = table.seats[seat]
        send(
            client,
            type="act",
            id=f"a{n[0]}",
            gateway=holder.gateway,
            player=holder.handle,
            seat=seat,
            action=action,
        )
        for _ in range(3):
            worker.run_once()


@pytest.mark.parametrize("slot_per_call", [False, True], ids=["in-commit", "delivery-record"])
def test_reports_reach_the_director_and_moves_wait_for_the_round_end(
    client: Any, slot_per_call: bool
) -> None:
    worker = make_worker(client, slot_per_call=slot_per_call)
    players = [
        {"player": f"u{i}", "name": f"U{i}", "dice": 2, "gateway": "gw-1", "bot": None}
        for i in range(3)
    ]
    send(
        client,
        type="create",
        id="c",
        gateway="director",
        rules={"preset": "lizumo", "max_players": 4},
        seats=[{"kind": "open"}] * 4,
        tournament={"id": "cup", "director": DIRECTOR, "players": players, "advance": None},
    )
    for _ in range(3):
        worker.run_once()
    [first] = reports(client)
    assert first["joined"] == ["u0", "u1", "u2"] and first["table"] == TABLE

    send(client, type="order", id="o1", tournament="cup", seq=1, count=1)
    send(
        client,
        type="seat_in",
        id="s2",
        tournament="cup",
        seq=2,
        player="u9",
        name="U9",
        dice=1,
        gateway="gw-2",
        bot=None,
    )
    for _ in range(3):
        worker.run_once()
    assert len(reports(client)) == 1  # nothing happens inside a round
    assert stored(client).arrivals and stored(client).order == [1, 1]

    end_round(client, worker, [0])
    got = reports(client)
    assert len(got) == 2
    report = got[1]
    assert report["done"] == 1 and report["joined"] == ["u9"] and len(report["left"]) == 1
    assert report["version"] > first["version"]
    table = stored(client)
    assert "u9" in [s.player for s in table.seats] and table.order is None
    assert report["left"][0]["player"] not in [s.player for s in table.seats]
    # u9's gateway was told; nothing of this table went to a gateway u9 does not use.
    worker.run_once()
    moved = [
        m
        for _, fields in client.xrange(keys.outbox("gw-2"))
        for m in wire.unpack_batch(fields[b"m"])
        if m["type"] == "moved"
    ]
    assert [(m["player"], m["table"]) for m in moved] == [(wire.public_id("u9"), TABLE)]


def test_a_message_for_another_kind_of_inbox_is_dead_lettered(client: Any) -> None:
    """A director's `report` written to a table inbox (or a table's `act` to a director
    inbox) is refused by the codec for that inbox and dead-lettered; nothing else moves."""
    worker = make_worker(client)
    report = wire.message(
        "report", id="r:1", tournament="cup", table=TABLE, version=1, round=1,
        seated=[], done=0, left=[], joined=[], out=[],
    )  # fmt: skip
    wire.validate(report)
    inbox = keys.inbox(keys.partition_of(TABLE, P))
    client.xadd(inbox, {wire.ENTRY_FIELD: wire.encode(report)})
    for _ in range(3):
        worker.run_once()
    [(_, fields)] = client.xrange(keys.dead_letters(keys.partition_of(TABLE, P)))
    assert fields[b"reason"].startswith(b"bad_message") and client.xlen(inbox) == 0
    assert client.hget(keys.table_of(TABLE, P), "s") is None
