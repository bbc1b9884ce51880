"""``dudo bench scale``: horizontal scale, measured on a Redis Cluster of this machine.

It starts a Redis Cluster (``masters`` masters, a replica each: :mod:`dudo.ops.cluster`)
and on it, one after the other:

1. **The path** (:mod:`dudo.bench.path`, Node clients as the peers are driven) at
   ``tables`` tables for each shape of ``SHAPES`` (workers × gateways). Each row
   reports moves/s, latency, every role's CPU µs per move (gateway, worker, redis:
   every node of the cluster, load: the clients) and moves/s per server core, beside
   what the per-core model (:data:`MODEL_US`, docs/benchmarks.md "Per-core model")
   predicts for that shape on this host, and which bound it predicts is hit.
2. **A hosted tournament beside cash tables**: ``players`` bot entrants (played by
   their tables) and ``cash_tables`` tables of four bot seats driven through a link
   (paced: :data:`CASH_RATE` actions a second per table),
   two workers and two directors; mid-run, the master holding the tournament's record
   is failed over to its replica (``CLUSTER FAILOVER``) and then a worker is killed
   (``kill -9``; a new one starts, as an orchestrator would). It checks every
   tournament invariant (:mod:`dudo.bench.tournament`) and counts what was ``lost``
   (a cash action never applied, an entrant never placed) and ``doubled`` (a cash
   table whose game took more steps than its players sent actions, or a refusal of an
   action already applied).

The JSON has ``masters``, ``players``, ``invariants``, ``failover`` (a master failed
over and play went on after it), ``worker_killed`` (likewise, for the kill), ``lost``,
``doubled``, ``model`` (per shape: predicted and measured moves/s) and ``ok``.
"""

from __future__ import annotations

import os
import platform
import random
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import redis

from ..director import OVER, RUNNING
from ..infra import (
    connect,
    create_groups,
    ensure_partitions,
    internal_key,
    redis_version,
    start_signing,
)
from ..link import GatewayLink
from ..ops import Fleet, LocalCluster, fresh_redis, temporary_folder
from ..table import Table
from ..wire import keys
from . import path, tournament
from .driver import TableDriver

# The per-core model (docs/benchmarks.md, "Capacity model"): CPU µs per move of each
# role when it is busy enough to batch (100 tables, at most one process of a role per
# core), from the first two cluster runs of 2026-12-06; every later run checks it.
# "redis": the masters' (their work spreads over them), "replica": the replicas' (each
# replays its master's writes); "load": the Node clients', on this machine with the servers.
MODEL_US = {"gateway": 240.0, "worker": 245.0, "redis": 100.0, "replica": 35.0, "load": 160.0}

SHAPES = ((1, 1), (2, 1), (4, 1), (1, 2), (2, 2))  # (workers, gateways)
SHORT_SHAPES = ((1, 1), (2, 2))
MODEL_FIELDS = ("workers", "gateways", "predicted_moves_per_s", "moves_per_s",
                "measured_over_predicted", "predicted_bound")  # fmt: skip
CASH_RULES = {"preset": "classic", "start_dice": 3}  # no turn clock: only the bots act
CASH_RATE = 3.0  # actions a second per cash table


def predict(workers: int, gateways: int, masters: int, cores: int) -> tuple[float, str]:
    """The model's moves/s for a shape on a host of ``cores``, and the bound it hits:
    the host (every process's CPU, the clients' too, shares the cores), or one role
    (each process is one thread: a role of N processes has at most N cores; Redis's
    work spreads over the masters)."""
    bounds = {
        "host": cores * 1e6 / sum(MODEL_US.values()),
        "gateways": gateways * 1e6 / MODEL_US["gateway"],
        "workers": workers * 1e6 / MODEL_US["worker"],
        "redis": masters * 1e6 / MODEL_US["redis"],
    }
    bound = min(bounds, key=lambda b: bounds[b])
    return bounds[bound], bound


def run(
    *,
    tables: int = 100,
    seats: int = 4,
    seconds: float = 10.0,
    players: int = 10_000,
    cash_tables: int = 200,
    masters: int = 3,
    partitions: int = keys.DEFAULT_PARTITIONS,
    short: bool = False,
    folder: str | None = None,
    timeout: float = 600.0,
    fault_after: float = 2.0,
) -> dict[str, Any]:
    """Measure both parts on one cluster; ``short``: two shapes, the sizes given (CI's
    form passes small ones)."""
    base = Path(folder) if folder else temporary_folder()
    cluster = LocalCluster(base / "cluster", masters=masters, replicas=1)
    started = time.monotonic()
    try:
        url = cluster.start()
        cores = os.cpu_count() or 1
        rows = []
        for workers, gateways in SHORT_SHAPES if short else SHAPES:
            got = path.run(
                tables=tables, seats=seats, seconds=seconds, workers=workers,
                gateways=gateways, redis_url=url, partitions=partitions, flush=True,
                folder=str(base / f"path-{workers}x{gateways}"), redis_roles=cluster.pids(),
            )  # fmt: skip
            rows.append(_row(got, workers, gateways, masters, cores))
        hosted = _hosted(
            cluster, players=players, cash_tables=cash_tables, partitions=partitions,
            folder=base / "hosted", timeout=timeout, fault_after=0.0 if short else fault_after,
        )  # fmt: skip
        version = redis_version(url)
    finally:
        cluster.stop()
    if folder is None:
        shutil.rmtree(base, ignore_errors=True)
    ok = (
        all(hosted["invariants"].values())
        and hosted["failover"]
        and hosted["worker_killed"]
        and hosted["lost"] == 0
        and hosted["doubled"] == 0
        and all(not row["errors"] for row in rows)
    )
    return {
        "bench": "scale",
        "masters": masters,
        "replicas_per_master": 1,
        "redis": version,
        "tables": tables,
        "seats": seats,
        "seconds": seconds,
        "path": rows,
        "model": [{k: row[k] for k in MODEL_FIELDS} for row in rows],
        "model_us_per_move": MODEL_US,
        **hosted,
        "ok": ok,
        "wall_s": round(time.monotonic() - started, 1),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def _row(got: dict[str, Any], workers: int, gateways: int, masters: int, cores: int) -> dict:
    """One shape's figures beside the model's."""
    predicted, bound = predict(workers, gateways, masters, cores)
    rate = got["moves_per_s"]
    by_role = dict(got["server_cpu_us_per_move_by_role"])
    by_role["load"] = round(got["load_cpu_pct"] / 100 * 1e6 / rate, 1) if rate else None
    return {
        "workers": workers,
        "gateways": gateways,
        "moves_per_s": rate,
        "p50_ms": got["p50_ms"],
        "p99_ms": got["p99_ms"],
        "errors": got["errors"],
        "cpu_us_per_move_by_role": by_role,
        "server_cpu_pct": got["server_cpu_pct"],
        "moves_per_s_per_server_core": (
            round(rate / (got["server_cpu_pct"] / 100), 1) if got["server_cpu_pct"] else None
        ),
        "machine_cpu_pct": got["machine_cpu_pct"],
        "predicted_moves_per_s": round(predicted, 1),
        "predicted_bound": bound,
        "measured_over_predicted": round(rate / predicted, 2),
    }


class _Operator(threading.Thread):
    """The operator's bad day, mid-run, beside the play: the master holding ``key`` is
    failed over, then (``pause`` later) a worker is killed and replaced."""

    def __init__(self, cluster: LocalCluster, fleet: Fleet, key: str, pause: float) -> None:
        super().__init__(daemon=True)
        self.cluster, self.fleet, self.key, self.pause = cluster, fleet, key, pause
        self.failed_over: tuple[str, str] | None = None
        self.killed: str | None = None
        self.error: BaseException | None = None
        self.failover_s = 0.0

    def run(self) -> None:
        try:
            begun = time.monotonic()
            self.failed_over = self.cluster.fail_over(self.key)
            self.failover_s = time.monotonic() - begun
            time.sleep(self.pause)
            self.killed = self.fleet.kill_worker(random.Random(7))
        except BaseException as exc:  # reported, and the run fails
            self.error = exc


class _Sampler(threading.Thread):
    """Every half second, players with dice at two tables (:mod:`dudo.bench.tournament`),
    read on a client of its own beside the play."""

    def __init__(self, client: Any) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.clashes = self.samples = self.failed = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.5):
            try:
                self.clashes += tournament.players_at_two_tables(self.client)
            except redis.RedisError:  # a master failing over: this sample is lost, not
                self.failed += 1  # the run (they are counted: `samples_failed`)
                continue
            self.samples += 1

    def stop(self) -> None:
        self.stopped.set()
        self.join(30)
        self.client.close()


def _play_through_faults(
    client: Any, driver: TableDriver, operator: _Operator, started: float, *,
    timeout: float, fault_after: float,
) -> tuple[dict[str, int], float | None]:
    """Play until the tournament is over and every cash game done, the operator's
    faults started once the tournament runs: how many cash actions were applied by
    each fault (``marks``), and the tournament's own wall time."""
    marks: dict[str, int] = {}
    over, tournament_wall = False, None
    while not (over and driver.done):
        if time.monotonic() - started > timeout:
            raise SystemExit(f"the tournament and cash tables did not finish in {timeout} s")
        driver.pump(block_ms=20)
        now = time.monotonic()
        status = tournament.tournament_status(client)
        over = status == OVER
        if over and tournament_wall is None:
            tournament_wall = now - started
        if operator.ident is None and status == RUNNING and now - started > fault_after:
            operator.start()
        for fault, done in (("failover", operator.failed_over), ("kill", operator.killed)):
            if done and f"after_{fault}" not in marks:
                marks[f"after_{fault}"] = driver.applied
                marks[f"tournament_running_at_{fault}"] = int(not over)
    return marks, tournament_wall


def _hosted(
    cluster: LocalCluster,
    *,
    players: int,
    cash_tables: int,
    partitions: int,
    folder: Path,
    timeout: float,
    fault_after: float = 2.0,
) -> dict[str, Any]:
    """Part 2: the tournament and the cash tables, a failover and a kill meanwhile."""
    fleet = Fleet(folder, partitions=partitions, redis_url=cluster.url)
    client = fresh_redis(cluster.url, partitions, flush=True, bench="scale")
    start_signing(client, wait_s=0)  # as deployed: every entry signed and checked
    ensure_partitions(client, tournament.DIRECTOR_PARTITIONS, keys.TOURNAMENTS)
    create_groups(client, tournament.DIRECTOR_PARTITIONS, space=keys.TOURNAMENTS)
    record = keys.tournament_of(tournament.TOURNAMENT, tournament.DIRECTOR_PARTITIONS)
    try:
        for _ in range(2):
            fleet.start_worker()
        directors = [fleet.start_director() for _ in range(2)]
        tournament.wait_registered(client, 2)
        link = GatewayLink(client, "scale-cash", partitions, signer=internal_key(client))
        link.register()
        # Paced as people play (CASH_RATE actions a second per table), so that the cash
        # games are under way through both faults and after them.
        driver = TableDriver(
            link, seats=4, rules=CASH_RULES, seed=5, max_rate=CASH_RATE * cash_tables
        )
        driver.create([f"cash{i}" for i in range(cash_tables)])
        started = time.monotonic()
        tournament.create_bot_tournament(client, players, 6, "elimination", "classic")
        operator = _Operator(cluster, fleet, record, pause=1.0)
        sampler = _Sampler(connect(cluster.url))
        sampler.start()
        marks, tournament_wall = _play_through_faults(
            client, driver, operator, started, timeout=timeout, fault_after=fault_after
        )
        operator.join(60)
        sampler.stop()
        if operator.error is not None:
            raise operator.error
        wall = time.monotonic() - started
        time.sleep(1.0)  # the final table closes
        state = tournament.load_tournament(client)
        assert state is not None
        steps = sum(
            t.game.version for t in tournament.table_records(client)
            if t.game is not None and t.id not in driver.tables
        )  # fmt: skip
        tournament_moves = steps - state.reseats
        cash = _cash_audit(client, driver, partitions)
        dead = sum(client.xlen(keys.dead_letters(p)) for p in range(partitions)) + sum(
            client.xlen(keys.TOURNAMENTS.dead_letters(p))
            for p in range(tournament.DIRECTOR_PARTITIONS)
        )
        alive = fleet.alive()
    finally:
        fleet.stop()
        client.close()
    entrants = list(state.entrants.values())
    unplaced = sum(1 for e in entrants if not e.place)
    # Play went on after each fault: cash actions applied after it (the tournament's
    # own moves are counted only at its end).
    went_on = driver.applied > marks.get("after_kill", driver.applied)
    return {
        "players": len(entrants),
        "cash_tables": cash_tables,
        "workers": 2,
        "directors": len(directors),
        "hosted_wall_s": round(wall, 1),
        "tournament_wall_s": round(tournament_wall or wall, 1),
        "tournament_tables_at_start": state.tables_at_start,
        "tournament_moves": tournament_moves,
        "tournament_moves_per_s": round(tournament_moves / (tournament_wall or wall), 1),
        "cash_moves": driver.applied,
        "invariants": {
            **tournament.result_invariants(state),
            "never_at_two_tables": sampler.clashes == 0 and sampler.samples > 0,
            "seat_changes_between_rounds_only": dead == 0,
            "every_cash_game_finished": cash["finished"] == cash_tables,
        },
        "failover": bool(operator.failed_over)
        and driver.applied > marks.get("after_failover", driver.applied),
        "failover_detail": {
            "master": operator.failed_over[0] if operator.failed_over else None,
            "promoted": operator.failed_over[1] if operator.failed_over else None,
            "seconds": round(operator.failover_s, 2),
            "tournament_running": bool(marks.get("tournament_running_at_failover")),
        },
        "worker_killed": bool(operator.killed) and went_on,
        "worker_kill_detail": {
            "worker": operator.killed,
            "tournament_running": bool(marks.get("tournament_running_at_kill")),
            "directors_alive": all(alive.get(d) for d in directors),
        },
        "lost": cash["pending"] + unplaced,
        "doubled": cash["extra_steps"] + cash["refused"],
        "samples": sampler.samples,
        "samples_failed": sampler.failed,
    }


def _cash_audit(client: Any, driver: TableDriver, partitions: int) -> dict[str, int]:
    """From the cash tables' records: how many finished, how many actions were written
    and never applied (still pending), how many steps beyond the actions sent (an action
    applied twice), and the refusals the players got (none expected: an action applied
    twice would be refused the second time)."""
    pipe = client.pipeline(transaction=False)
    for tid in driver.tables:
        pipe.hget(keys.table_of(tid, partitions), "s")
    records = dict(zip(driver.tables, pipe.execute(), strict=True))
    extra = finished = 0
    for tid, blob in records.items():
        run = driver.tables[tid]
        table = Table.from_bytes(blob) if blob else None
        if table is None or table.game is None:
            continue
        finished += table.status == "over"
        extra += max(0, table.game.version - run.actions)
    pending = sum(1 for run in driver.tables.values() if run.pending and not run.finished)
    return {"finished": finished, "pending": pending, "extra_steps": extra,
            "refused": len(driver.errors)}  # fmt: skip
