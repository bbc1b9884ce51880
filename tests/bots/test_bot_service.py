"""The bot service's pacing: its bots wait for a reveal's hold before they move."""

from __future__ import annotations

import json
import time

import fakeredis
import msgpack

from dudo.run.bots import BotSeat, BotService
from dudo.wire import keys, solves

from ..table.test_table import NOW, person_and_bot


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


class _Solving:
    """The progress of an Endgames' launch solves (its two counters), set by hand."""

    warm_done = 0
    warm_asked = 0


def test_a_service_says_how_far_its_endgame_solves_are_until_they_are_done() -> None:
    """Issue 53, item 21: the page says what a hard bot plays while the presets' endgames
    are solved; it reads each service's progress (wire.solves) through the gateway."""
    redis = fakeredis.FakeRedis()
    games = _Solving()
    service = BotService(redis, 16, service_id="gw-bots", endgames=games)  # type: ignore[arg-type]
    service._report_solves()
    assert redis.hgetall(keys.BOT_SOLVES) == {}  # none asked (--no-endgame-solves)
    # A service killed long ago left its entry: it goes with the next change.
    now = int(time.time() * 1000)
    redis.hset(keys.BOT_SOLVES, "gone", solves.entry(1, 15, now - solves.FRESH_MS - 1))
    games.warm_asked = 15
    service._report_solves()
    values = redis.hgetall(keys.BOT_SOLVES)
    assert list(values) == [b"gw-bots"]
    assert solves.summary(values.values(), now) == {"done": 0, "of": 15}
    games.warm_done = 7
    service._report_solves()
    assert solves.summary(redis.hvals(keys.BOT_SOLVES), now) == {"done": 7, "of": 15}
    # Another service, half-way too: the page counts both.
    redis.hset(keys.BOT_SOLVES, "other", solves.entry(3, 15, now))
    assert solves.summary(redis.hvals(keys.BOT_SOLVES), now) == {"done": 10, "of": 30}
    redis.hdel(keys.BOT_SOLVES, "other")
    # Renewed while nothing changes (an entry not renewed is a service gone) ...
    at = json.loads(redis.hget(keys.BOT_SOLVES, "gw-bots"))["at"]
    assert service._solves_said is not None
    service._solves_said = (service._solves_said[0], time.time() - solves.RENEW_MS / 1000)
    time.sleep(0.002)
    service._report_solves()
    assert json.loads(redis.hget(keys.BOT_SOLVES, "gw-bots"))["at"] > at
    # ... and gone once all are done: nothing under way.
    games.warm_done = 15
    service._report_solves()
    assert redis.hgetall(keys.BOT_SOLVES) == {}
    assert solves.summary([], now) is None


def test_an_entry_too_old_or_malformed_counts_for_nothing() -> None:
    now = 10_000_000
    fresh, old = solves.entry(2, 6, now - 1_000), solves.entry(1, 6, now - solves.FRESH_MS - 1)
    assert solves.summary([fresh, old, b"{", b'{"done": 9, "of": 6, "at": 0}'], now) == {
        "done": 2, "of": 6
    }  # fmt: skip
    assert solves.stale({b"a": fresh, b"b": old, b"c": b"{"}, now) == [b"b", b"c"]
    assert solves.summary([solves.entry(6, 6, now)], now) is None  # done: nothing under way
