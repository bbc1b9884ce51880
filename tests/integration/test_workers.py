"""Real worker processes on a real redis-server: ordering, kill -9, rebalancing, shutdown."""

from __future__ import annotations

import json
import signal
import time
from typing import Any

import msgpack
import redis

from dudo import wire
from dudo.bench.driver import TableDriver
from dudo.engine import seat_view, to_bytes
from dudo.link import GatewayLink
from dudo.table import Table
from dudo.wire import keys

from .procs import P, Workers, owners, wait_for


def test_actions_of_a_table_apply_in_the_order_sent_with_several_workers(
    workers: Workers, real_redis: redis.Redis
) -> None:
    workers.start("w1")
    workers.start("w2")
    wait_for(lambda: len(set(owners(real_redis).values())) == 2, 10, "two workers sharing")
    link = GatewayLink(real_redis, "gw-order", P)
    tables = [f"ord{i}" for i in range(16)]
    driver = TableDriver(link, seats=4)
    driver.create(tables)
    openers: dict[str, int] = {}
    holders: dict[tuple[str, int], str] = {}  # each seat's player, as `joined` names it
    deadline = time.monotonic() + 20
    while len(openers) < len(tables):
        assert time.monotonic() < deadline
        for msg in link.read(block_ms=100):
            if msg["type"] == "joined":
                holders[(msg["table"], msg["seat"])] = msg["player"]
            if msg["type"] == "view" and msg["status"] == "playing":
                openers.setdefault(msg["table"], msg["game"]["opener"])
    # Twelve raises per table, each legal only after the one before it, written
    # back to back without waiting; a third worker joins in the middle.
    raises = [(q, f) for q in (1, 2) for f in (2, 3, 4, 5, 6)] + [(3, 2), (3, 3)]
    for step, (q, f) in enumerate(raises):
        if step == 6:
            workers.start("w3")
        batch = []
        for tid in tables:
            seat = (openers[tid] + step) % 4
            batch.append(
                link.message(
                    "act",
                    id=f"{tid}-o{step}",
                    table=tid,
                    player=holders[(tid, seat)],
                    seat=seat,
                    action={"type": "bid", "quantity": q, "face": f},
                )
            )
        link.send(*batch)

    def all_applied() -> bool:
        return all(
            Table.from_bytes(real_redis.hget(keys.table_of(t, P), "s")).game.version == len(raises)
            for t in tables
        )

    wait_for(all_applied, 20, "every raise applied")
    for tid in tables:
        game = Table.from_bytes(real_redis.hget(keys.table_of(tid, P), "s")).game
        assert [(q, f) for _, q, f in game.bids] == raises
    errors = [m for m in link.read(block_ms=100) if m["type"] == "error"]
    assert errors == []
    wait_for(lambda: len(set(owners(real_redis).values())) == 3, 10, "three workers sharing")


def play(
    workers: Workers, client: redis.Redis, *, kill: bool = False, pause: bool = False
) -> tuple[dict[str, Any], TableDriver]:
    """Forty 4-seat tables played to the end by bots; optionally kill -9 a worker mid-way,
    or pause it (SIGSTOP) past its lease and let it run again (SIGCONT)."""
    client.flushall()
    workers.start("wa", "--seed", "42")
    workers.start("wb", "--seed", "42")
    wait_for(lambda: len(set(owners(client).values())) == 2, 10, "two workers sharing")
    link = GatewayLink(client, "gw-kill", P)
    driver = TableDriver(link, seats=4, seed=9, resend_after=1.5)
    driver.create([f"k{i}" for i in range(40)])
    started = time.monotonic()
    killed = False
    paused_at = None
    deadline = started + 120
    while not driver.done or (pause and paused_at != -1.0):
        assert time.monotonic() < deadline, "games did not finish"
        driver.pump(block_ms=50)
        if kill and not killed and driver.applied > 1500:
            workers.kill("wa")  # in the middle of heavy traffic
            killed = True
        if pause and paused_at is None and driver.applied > 1500:
            workers.procs["wa"].send_signal(signal.SIGSTOP)  # frozen mid-cycle
            paused_at = time.monotonic()
        if paused_at and time.monotonic() - paused_at > 3.0:  # its leases expired meanwhile
            workers.procs["wa"].send_signal(signal.SIGCONT)
            paused_at = -1.0
    assert killed == kill and (paused_at == -1.0) == pause
    if pause:  # give the resumed worker time to try what it was doing when frozen
        time.sleep(1.5)
    if kill:  # the survivor takes over every partition of the dead worker (the games
        # may all be over before the last of its leases has run out)
        wait_for(lambda: set(owners(client).values()) == {"wb"}, 10, "wb holding every lease")
    finals = {}
    for tid in driver.tables:
        table = Table.from_bytes(client.hget(keys.table_of(tid, P), "s"))
        finals[tid] = (table.version, to_bytes(table.game))
        over = table.game is not None and table.game.phase == "over"
        if over:  # the game's log: every round once, none lost nor doubled by the faults
            rounds = table.rounds()
            assert [r["round"] for r in rounds] == list(range(1, table.game.round_no + 1))
        for seat, view in driver.tables[tid].last_views.items():
            assert view["version"] == table.version
            logged = {"log": rounds} if over else {}
            assert view["game"] == {**seat_view(table.game, seat), **logged}
    for name in ("wa", "wb"):
        if workers.procs[name].poll() is None:
            workers.kill(name, signal.SIGTERM)
    return finals, driver


def test_kill_9_loses_nothing_and_applies_everything_once(
    workers: Workers, real_redis: redis.Redis
) -> None:
    calm, calm_driver = play(workers, real_redis)
    rough, rough_driver = play(workers, real_redis, kill=True)
    # The only errors allowed: duplicates of actions resent (after 1.5 s without their
    # effect: while the partitions moved, or, in either run, while a busy host stalled
    # the workers, as four test processes on two cores once did), which took effect once.
    assert {e["code"] for e in calm_driver.errors} <= {"duplicate"}
    assert {e["code"] for e in rough_driver.errors} <= {"duplicate"}
    assert rough == calm, "every table ends exactly as in the run without the kill"
    assert sum(t.actions for t in rough_driver.tables.values()) == sum(
        t.actions for t in calm_driver.tables.values()
    )
    for p in range(P):
        assert real_redis.xpending(keys.inbox(p), keys.CONSUMER_GROUP)["pending"] == 0


def test_a_paused_worker_is_fenced_and_changes_nothing(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """SIGSTOP a worker in the middle of traffic for longer than its lease, then let
    it run: whatever it had read or was about to commit is refused (fencing), its
    partitions were taken over, and every table ends as in a calm run."""
    calm, _ = play(workers, real_redis)
    paused, driver = play(workers, real_redis, pause=True)
    assert {e["code"] for e in driver.errors} <= {"duplicate"}
    assert paused == calm
    log = (workers.folder / "wa.log").read_text()
    assert '"event": "lease_lost"' in log, "the paused worker noticed it had been fenced"


def test_workers_rebalance_when_joining_and_leaving(
    workers: Workers, real_redis: redis.Redis
) -> None:
    workers.start("r1")
    wait_for(
        lambda: set(owners(real_redis).values()) == {"r1"} and len(owners(real_redis)) == P,
        10,
        "r1 holding every partition",
    )
    workers.start("r2")

    def fair() -> bool:
        held = list(owners(real_redis).values())
        return len(held) == P and held.count("r1") == held.count("r2") == P // 2

    wait_for(fair, 10, "an even split")
    workers.kill("r2")  # no goodbye: its leases must expire
    wait_for(lambda: list(owners(real_redis).values()).count("r1") == P, 10, "r1 taking all back")


def test_sigterm_finishes_releases_and_exits(workers: Workers, real_redis: redis.Redis) -> None:
    proc = workers.start("s1")
    wait_for(lambda: len(owners(real_redis)) == P, 10, "leases taken")
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    assert time.monotonic() - started < 5
    assert owners(real_redis) == {}  # released, not left to expire
    assert real_redis.zscore(keys.WORKERS, "s1") is None
    log = (workers.folder / "s1.log").read_text()
    assert '"event": "worker_stopped"' in log and '"worker": "s1"' in log


def test_a_worker_with_another_partition_count_refuses_to_start(
    workers: Workers, real_redis: redis.Redis
) -> None:
    real_redis.hset(keys.CONFIG, mapping={"partitions": 16, "protocol": 1})
    proc = workers.start("m1")
    assert proc.wait(20) == 2
    assert "16 partitions" in (workers.folder / "m1.log").read_text()


def test_structured_logs_carry_table_partition_and_ids(
    workers: Workers, real_redis: redis.Redis
) -> None:
    workers.start("l1", "--log-level", "debug")
    link = GatewayLink(real_redis, "gw-log", P)
    link.send(
        link.message("create", id="c-log", table="logt", rules={}, seats=[{"kind": "open"}] * 2)
    )
    wait_for(lambda: real_redis.hget(keys.table_of("logt", P), "s"), 10, "table created")
    workers.kill("l1", signal.SIGTERM)
    lines = [json.loads(line) for line in (workers.folder / "l1.log").read_text().splitlines()]
    created = [line for line in lines if line.get("event") == "table_created"]
    assert created and created[0]["table"] == "logt" and created[0]["id"] == "c-log"
    assert created[0]["partition"] == keys.partition_of("logt", P)


def test_bad_input_to_a_worker_process_answers_the_sender_only(
    workers: Workers, real_redis: redis.Redis
) -> None:
    workers.start("e1")
    wait_for(lambda: len(owners(real_redis)) == P, 10, "leases taken")
    a = GatewayLink(real_redis, "gw-a", P)
    b = GatewayLink(real_redis, "gw-b", P)
    a.send(
        a.message(
            "create",
            id="c",
            table="bad",
            rules={"preset": "classic", "turn_seconds": 2},
            seats=[{"kind": "open"}] * 2,
        )
    )
    a.send(a.message("join", id="j0", table="bad", player="pa", name="A"))
    b.send(b.message("join", id="j1", table="bad", player="pb", name="B"))
    game = None
    while game is None:  # act at once: the two-second clock is running
        views = b.read(block_ms=100)
        game = next(
            (m["game"] for m in views if m["type"] == "view" and m["status"] == "playing"), None
        )
    turn = game["turn"]
    pa, pb = wire.public_id("pa"), wire.public_id("pb")  # as gateways name them
    link, player = (a, pa) if turn == 0 else (b, pb)
    other, other_player = (b, pb) if turn == 0 else (a, pa)
    a.read(block_ms=None)
    link.send_raw("bad", b"\x00\xff garbage")
    link.send_raw(
        "bad",
        msgpack.packb(
            {
                "v": 1,
                "type": "act",
                "id": "m1",
                "gateway": link.id,
                "table": "bad",
                "seat": turn,
                "player": player,
            }
        ),
    )
    link.send(
        link.message(
            "act",
            id="x1",
            table="bad",
            player=player,
            seat=turn,
            action={"type": "bid", "quantity": 1, "face": 1},
        )
    )  # opening on ones
    other.send(
        other.message(
            "act", id="x2", table="bad", player=other_player, seat=1 - turn, action={"type": "dudo"}
        )
    )  # not its turn
    legal = link.message(
        "act",
        id="x3",
        table="bad",
        player=player,
        seat=turn,
        action={"type": "bid", "quantity": 1, "face": 2},
    )
    link.send(legal)
    link.send(legal)  # the very same message again: it must take effect once
    got = _collect(link, 1.5)
    got_other = _collect(other, 0.5)
    codes = [(m["code"], m["id"]) for m in got if m["type"] == "error"]
    assert codes == [("bad_message", "m1"), ("opening_on_ones", "x1"), ("duplicate", "x3")]
    assert [(m["code"], m["id"]) for m in got_other if m["type"] == "error"] == [
        ("not_your_turn", "x2")
    ]
    p = keys.partition_of("bad", P)
    assert real_redis.xlen(keys.dead_letters(p)) == 2
    table = Table.from_bytes(real_redis.hget(keys.table_of("bad", P), "s"))
    bids = table.game.bids
    assert bids[0] == (turn, 1, 2)  # the one legal action, applied once despite its duplicate
    assert all(seat == 1 - turn for seat, _, _ in bids[1:])  # then only the house bot, if due
    # Nobody answers now: the two-second clock runs out, the house bot plays.
    events = [e for m in _collect(link, 4.0) if m["type"] == "view" for e in m["events"]]
    assert {"type": "house_bot", "seat": 1 - turn} in events


def _collect(link: GatewayLink, seconds: float) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        out.extend(link.read(block_ms=100))
    return out


def test_one_action_traced_across_gateway_and_worker_logs_by_its_id(
    workers: Workers, real_redis: redis.Redis
) -> None:
    """With --log-level debug, an action's message id is in the gateway's log when it is
    sent (act_sent), in the worker's when it is applied (applied), and in the gateway's
    again when its view comes back (act_applied): one action, followed through."""
    import asyncio

    from dudo.run.remote_bot import run as play_remote

    workers.start("t1", "--log-level", "debug")
    workers.bots("tb")
    base = workers.gateway("gw-trace", "--log-level", "debug")
    outcome = asyncio.run(
        play_remote(
            base, level="normal", seed=2, name="Tess", think=(0.0, 0.0),
            create={"rules": {"preset": "classic", "start_dice": 1}, "seats": 2,
                    "bots": ["easy"]},
        )
    )  # fmt: skip
    assert outcome.moves > 0
    read = lambda name: [  # noqa: E731
        json.loads(line) for line in (workers.folder / f"{name}.log").read_text().splitlines()
        if line.startswith("{")
    ]
    sent = [e for e in read("gw-trace") if e["event"] == "act_sent"]
    assert sent and all(e["table"] and e["id"] for e in sent)
    first = sent[0]
    applied = [e for e in read("t1") if e.get("event") == "applied" and e.get("id") == first["id"]]
    assert applied and applied[0]["table"] == first["table"]
    back = [e for e in read("gw-trace") if e["event"] == "act_applied" and e["id"] == first["id"]]
    assert back and back[0]["version"] > 0
