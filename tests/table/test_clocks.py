"""Every table wakes up by itself when nothing happens: turn clocks, silent bot seats,
open tables nobody fills, games everybody walked away from (issue 10, defects 10
and 11). All of it goes through the one timer per table, so it is ordered with
every other entry and fenced like every commit."""

from __future__ import annotations

from typing import Any

from dudo import wire
from dudo.table import DEFAULT_LIMITS, Limits

from .test_table import NOW, Run, h, msg, person_and_bot

LIMITS = DEFAULT_LIMITS


def fire(run: Run, at: int) -> list[dict[str, Any]]:
    """The table's timer fires at ``at`` (as the partition owner would send it)."""
    run.table.handle(
        msg("timeout", None, table="t1", id=f"t:{run.table.version}", version=run.table.version),
        at,
        run.rng,
    )
    return run.flush()


def events(out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for m in out if m["type"] == "view" for e in m["events"]]


def test_an_open_table_nobody_fills_closes_and_leaves_the_lobby() -> None:
    run = Run(seats=3)
    assert run.last.timer_add == (f"t1|{run.table.version}", NOW + LIMITS.open_ttl_ms)
    run.send("join", player="p0", name="Ana")  # something happens: its life starts again
    assert run.table.wake == NOW + LIMITS.open_ttl_ms
    assert run.last.timer_add == (f"t1|{run.table.version}", NOW + LIMITS.open_ttl_ms)
    out = fire(run, NOW + LIMITS.open_ttl_ms)
    assert run.table.status == "over" and {"type": "expired"} in events(out)
    assert run.last.lobby is None and run.last.finished  # unlisted, the record expires
    assert run.last.timer_add is None and run.last.timer_remove is not None


def test_a_game_without_a_clock_nobody_plays_is_abandoned() -> None:
    run = Run(seats=2)
    run.seat_all()
    assert run.table.deadline is None  # no turn clock shown to anyone
    assert run.table.wake == NOW + LIMITS.idle_ttl_ms
    out = fire(run, NOW + LIMITS.idle_ttl_ms)
    assert run.table.status == "over" and {"type": "abandoned"} in events(out)
    assert run.last.finished and run.table.game.version == 0  # nobody played for them


def test_a_silent_bot_seat_is_played_by_the_house_bot_after_its_grace() -> None:
    """Defect 10: with no turn clock, a bot seat whose bot service died waited forever."""
    run = Run(seats=2, plan=[{"kind": "open"}, {"kind": "bot", "level": "hard"}])
    run.send("join", player="p0", name="Ana")
    run.send("join", "gw-bots", player="bot-1", name="Rocío", bot="hard")
    assert run.table.status == "playing"
    if run.turn() == 0:  # make it the bot's turn
        run.act(0, {"type": "bid", "quantity": 1, "face": 2})
    assert run.table.deadline is None and run.table.wake == NOW + LIMITS.bot_grace_ms
    out = fire(run, NOW + LIMITS.bot_grace_ms)
    assert {"type": "house_bot", "seat": 1} in events(out)
    assert run.table.status == "playing" and run.turn() == 0


def test_a_stale_timer_changes_nothing() -> None:
    run = Run(seats=2)
    run.seat_all()
    version = run.table.version
    run.act(run.turn(), {"type": "bid", "quantity": 1, "face": 2})
    run.table.handle(msg("timeout", None, table="t1", id="t:x", version=version), NOW * 9, run.rng)
    assert run.flush() == [] and run.table.status == "playing"


def test_limits_are_the_workers_to_choose() -> None:
    run = Run(seats=2)
    run.table.limits = Limits(open_ttl_ms=5, idle_ttl_ms=7, bot_grace_ms=3)
    run.send("join", player="p0", name="Ana")
    assert run.table.wake == NOW + 5
    run.send("join", player="p1", name="Ben")
    assert run.table.wake == NOW + 7


def test_records_of_the_previous_format_still_load() -> None:
    run = Run({"preset": "classic", "turn_seconds": 20}, seats=2)
    run.seat_all()
    raw = wire.unpack(run.table.to_bytes())
    old = wire.encode([1, *raw[1:13]])  # format 1: no `wake`; the deadline was the timer
    loaded = type(run.table).from_bytes(old)
    assert loaded.wake == loaded.deadline == NOW + 20_000
    assert loaded.timer_member == f"t1|{loaded.version}"


def _end_round(run: Run, at: int = NOW) -> list[dict[str, Any]]:
    """The seat in turn bids, the next calls dudo (at ``at``): the round ends."""
    run.move({"type": "bid", "quantity": 1, "face": 2})
    out = run.move({"type": "dudo"}, at=at)
    assert any(e["type"] == "reveal" for e in events(out))  # the call was taken
    return out


HOLD = Limits(reveal_hold_ms=4_000)


def test_a_reveal_holds_the_next_turns_clock_where_people_play() -> None:
    """Issue 14: the next round and its clock ran under the reveal people were reading."""
    run = Run({"preset": "classic", "turn_seconds": 20}, seats=2)
    run.table.limits = HOLD
    run.seat_all()
    assert run.table.deadline == NOW + 20_000  # no reveal yet: no hold
    out = _end_round(run, NOW + 1_000)
    assert any(e["type"] == "reveal" for e in events(out))
    assert run.table.hold_until == NOW + 5_000
    assert run.table.deadline == NOW + 5_000 + 20_000  # the clock starts when the hold ends
    assert run.table.wake == run.table.deadline
    views = [m for m in out if m["type"] == "view"]
    assert views and all(v["reveal_until"] == NOW + 5_000 for v in views)
    # The table comes back from its record holding the same.
    loaded = type(run.table).from_bytes(run.table.to_bytes())
    assert loaded.hold_until == NOW + 5_000
    # A person may act during the hold; the next clock still starts at its end.
    run.move({"type": "bid", "quantity": 1, "face": 3}, at=NOW + 2_000)
    assert run.table.deadline == NOW + 5_000 + 20_000
    # Once the hold is over, the next change forgets it.
    out = run.move({"type": "bid", "quantity": 2, "face": 3}, at=NOW + 6_000)
    assert run.table.hold_until is None and run.table.deadline == NOW + 6_000 + 20_000
    assert all("reveal_until" not in m for m in out if m["type"] == "view")


def test_a_reveal_holds_a_silent_bot_seats_grace_too() -> None:
    run = person_and_bot(reveal_hold_ms=4_000)
    _end_round(run)  # Ana is a person, so the reveal holds
    assert run.table.hold_until == NOW + 4_000
    if run.turn() == 0:
        run.move({"type": "bid", "quantity": 1, "face": 2})  # Ana may act during the hold
    assert run.turn() == 1
    assert run.table.wake == NOW + 4_000 + LIMITS.bot_grace_ms  # the bot's grace waits too


def test_no_hold_without_people_nor_after_the_last_round() -> None:
    bots = Run(seats=2, plan=[{"kind": "bot", "level": "hard"}] * 2)
    bots.table.limits = HOLD
    for seat in range(2):
        bots.send("join", "gw-bots", player=f"p{seat}", name=f"B{seat}", bot="hard")
    _end_round(bots)
    assert bots.table.hold_until is None  # nobody to read it: bots play on
    last = Run({"preset": "classic", "start_dice": 1}, seats=2)
    last.table.limits = HOLD
    last.seat_all()
    _end_round(last)
    assert last.table.status == "over" and last.table.hold_until is None


def test_a_person_out_but_still_at_the_table_is_held_for_and_one_who_left_is_not() -> None:
    """Issue 34, item 2: once the person was out, the rest of the game ran in a blink
    (no hold: nobody "played"), though the page offers to keep watching. A person out
    who still holds the seat is watching: the reveals are held for them; once they left
    the seat, the bots play on without pauses."""
    run = Run({"preset": "classic", "start_dice": 1}, seats=3,
              plan=[{"kind": "open"}, {"kind": "bot", "level": "hard"},
                    {"kind": "bot", "level": "hard"}])  # fmt: skip
    run.table.limits = HOLD
    run.send("join", player="p0", name="Ana")
    for seat in (1, 2):
        run.send("join", "gw-bots", player=f"p{seat}", name=f"B{seat}", bot="hard")
    assert run.table.status == "playing"
    at = NOW
    while run.table.game.counts[0] > 0:  # Ana bids past the dice; a bot calls: she is out
        at += 10
        turn = run.turn()
        bid = run.table.game.bids[-1] if run.table.game.bids else None
        action = ({"type": "dudo"} if turn != 0 and bid and bid[0] == 0
                  else {"type": "bid", "quantity": 3, "face": 6} if turn == 0
                  else {"type": "bid", "quantity": 1, "face": 2})  # fmt: skip
        run.move(action, at=at)
    assert run.table.status == "playing" and not run.table.seats[0].away
    assert run.table.hold_until == at + HOLD.reveal_hold_ms  # held for Ana, watching
    run.send("leave", player=h("p0"), seat=0, at=at)  # she leaves the seat
    assert run.table.seats[0].away
    hold = run.table.hold_until
    at += 5_000
    while run.table.status == "playing":
        turn = run.turn()
        bid = run.table.game.bids[-1] if run.table.game.bids else None
        action = {"type": "dudo"} if bid else {"type": "bid", "quantity": 1, "face": 2}
        run.move(action, at=at)
        at += 10
    assert run.table.hold_until in (None, hold)  # no new hold for nobody


def test_records_before_the_hold_still_load() -> None:
    run = Run({"preset": "classic", "turn_seconds": 20}, seats=2)
    run.seat_all()
    raw = wire.unpack(run.table.to_bytes())
    loaded = type(run.table).from_bytes(wire.encode([3, *raw[1:-11]]))
    assert loaded.hold_until is None and loaded.deadline == NOW + 20_000
    before_idle = type(run.table).from_bytes(wire.encode([4, *raw[1:-10]]))  # format 4
    assert before_idle.idle == [] and before_idle.label is None
    assert before_idle.deadline == NOW + 20_000


def play_with_one_absent(seats: int, absent: int = 0) -> tuple[Run, list[dict[str, Any]]]:
    """Everyone acts in turn but ``absent``, whose turns the clock hands to the house;
    until that seat is vacated or the game ends. Every event, as seat 1 saw them."""
    run = Run({"preset": "classic", "turn_seconds": 20, "start_dice": 3}, seats=seats)
    run.seat_all()
    seen: list[dict[str, Any]] = []
    at = NOW
    while run.table.status == "playing" and not any(e["type"] == "vacated" for e in seen):
        at += 1000
        game = run.table.game
        assert game is not None
        if run.turn() == absent:
            seen += seat_events(fire(run, run.table.wake or at), 1)
            continue
        legal = game.legal(run.turn())
        face = next(f for f in (2, 3, 4, 5, 6, 1) if legal["bid"][f - 1] is not None)
        action = {"type": "dudo"} if legal["dudo"] and game.bids[-1][1] > 2 else {
            "type": "bid", "quantity": legal["bid"][face - 1], "face": face}  # fmt: skip
        seen += seat_events(run.move(action, at=at), 1)
    return run, seen


def seat_events(out: list[dict[str, Any]], seat: int) -> list[dict[str, Any]]:
    return [e for m in out if m["type"] == "view" and m["seat"] == seat for e in m["events"]]


def test_a_person_the_house_played_for_three_turns_running_is_out_at_the_rounds_end() -> None:
    """Issue 32, item 6: an absent player's seat was played by the house indefinitely,
    and could win. Three turns in a row played for them: out when the round ends
    (eliminated and placed), and with one player left that player wins."""
    run, seen = play_with_one_absent(2)
    vacated = [e for e in seen if e["type"] == "vacated"]
    assert vacated == [{"type": "vacated", "seat": 0, "turns": LIMITS.vacate_after}]
    after = seen[seen.index(vacated[0]) :]
    assert {"type": "eliminated", "seat": 0} in after
    game = run.table.game
    assert game is not None and game.winner == 1 and game.standings() == [1, 0]
    assert run.table.status == "over" and run.table.idle == []
    # The vacating came at a round's end: after its reveal, before the next round's
    # first move (the round that began is played without them).
    kinds = [e["type"] for e in seen]
    at = kinds.index("vacated")
    assert "reveal" in kinds[at - 4 : at] and kinds[at - 1] == "round_start", kinds[at - 5 :]


def test_at_a_larger_table_the_others_play_on_and_acting_starts_the_count_again() -> None:
    run, _ = play_with_one_absent(3)
    game = run.table.game
    assert game is not None and game.counts[0] == 0 and 0 in game.eliminated
    assert run.table.status == "playing" and sum(c > 0 for c in game.counts) == 2
    assert game.turn != 0 and game.hands[0] == ()  # the new round goes on without them
    # Acting clears a seat's count: two house turns, a move, two more: not vacated.
    run = Run({"preset": "classic", "turn_seconds": 20}, seats=2)
    run.seat_all()
    run.table.idle = [[0, LIMITS.vacate_after - 1]]
    run.table._not_idle(0)
    assert run.table.idle == []
    # A record keeps the count (a worker may die between two turns).
    run.table.idle = [[1, 2]]
    assert type(run.table).from_bytes(run.table.to_bytes()).idle == [[1, 2]]


def test_no_vacating_with_the_policy_off() -> None:
    run = Run({"preset": "classic", "turn_seconds": 20, "start_dice": 1}, seats=2)
    run.table.limits = Limits(vacate_after=0)
    run.seat_all()
    at = NOW
    seen: list[dict[str, Any]] = []
    while run.table.status == "playing":  # the house plays both seats to the end
        at += 1000
        seen += events(fire(run, run.table.wake or at))
    assert not any(e["type"] == "vacated" for e in seen)
