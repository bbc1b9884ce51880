"""The bot service's pacing: its bots wait for a reveal's hold before they move."""

from __future__ import annotations

import time

import fakeredis
import msgpack

from dudo.run.bots import BotSeat, BotService

from ..test_table import NOW, person_and_bot


def test_a_bot_waits_until_the_reveal_stops_holding_the_table() -> None:
    run = person_and_bot(reveal_hold_ms=3_000)
    run.move({"type": "bid", "quantity": 1, "face": 2})
    run.move({"type": "dudo"})
    if run.turn() == 0:
        run.move({"type": "bid", "quantity": 1, "face": 2})
    assert run.turn() == 1 and run.table.hold_until == NOW + 3_000
    (view,) = [msgpack.unpackb(data, raw=False) for gw, data in run.last.outputs if gw == "gw-bots"]
    # The same view as the table sent it, its hold shifted to three seconds from now.
    view["reveal_until"] = int(time.time() * 1000) + 3_000
    service = BotService(fakeredis.FakeRedis(), 16, service_id="gw-bots")
    service.bots["bot-1"] = BotSeat("t1", 1, "bot-1", "hard")
    service._on_view(view)
    (due,) = service.due
    assert 2.5 < due[0] - time.monotonic() <= 3.0  # not before the hold ends
    del view["reveal_until"]  # without a hold it moves at once (no think time set)
    view["version"] += 1
    service.due.clear()
    service._on_view(view)
    (due,) = service.due
    assert due[0] - time.monotonic() <= 0.01


def test_bots_think_aloud_for_people_even_out_and_play_on_at_full_speed_once_they_left() -> None:
    """Issue 34, item 2: once the person was out, the bots played the rest at once (ten
    rounds in 0.38 s), so "Keep watching" had nothing to watch. They keep their pace while
    the person holds the seat, out or not, and go at full speed once the seat is left."""
    run = person_and_bot()
    if run.turn() == 0:
        run.move({"type": "bid", "quantity": 1, "face": 2})
    (view,) = [msgpack.unpackb(data, raw=False) for gw, data in run.last.outputs if gw == "gw-bots"]
    service = BotService(fakeredis.FakeRedis(), 16, service_id="gw-bots", think=(2.0, 2.0))
    service.bots["bot-1"] = BotSeat("t1", 1, "bot-1", "hard")

    def delay() -> float:
        view["version"] += 1
        service.due.clear()
        service._on_view(view)
        return service.due[0][0] - time.monotonic()

    assert 1.9 < delay() <= 2.0  # Ana plays: the bot thinks
    view["game"]["dice_counts"][0] = 0  # Ana is out, and watches
    assert 1.9 < delay() <= 2.0
    view["players"][0]["away"] = True  # Ana left: nobody to think for
    assert delay() <= 0.01
