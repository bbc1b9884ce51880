"""``dudo bench path``: the whole path, client to client, as the peers are measured.

client → gateway → Redis → worker → Redis → gateway → every client at the
table. It starts (or uses) a Redis, ``workers`` worker processes and
``gateways`` gateway processes (or, with ``embedded``, one ``dudo serve``),
then drives ``tables`` × ``seats`` WebSocket clients (closed loop, the peer
harnesses' policy). Table ``i``'s clients use gateway ``i mod gateways``.

The clients run in Node by default (``load="node"``: ``load.mjs`` beside this
module, one process), as the peers' load generators do, so the three systems
are driven by the same kind of client; ``load="python"`` runs them in this
process instead (:mod:`dudo.bench.players`, which also speaks msgpack).

It reports, as one JSON object:

- ``moves``, ``moves_per_s`` (over the measured phase) and
  ``moves_per_s_median_second``; ``games`` finished meanwhile; ``errors`` the
  clients received, by code (none expected);
- ``p50_ms``, ``p99_ms``, ``max_ms``: from sending ``act`` to the mover's own
  view that shows the move;
- ``server_cpu_pct`` (100 = one core) and ``server_cpu_us_per_move``, in all
  and ``_by_role`` (gateway, worker, redis; or serve), from ``/proc`` (each
  process and its children);
- ``load``: which load generator; ``load_cpu_pct``: its CPU (the Node process,
  or this one); ``machine_cpu_pct``: every core, so that a run disturbed by
  something else shows it;
- ``seeds``: every seat brought a seed of its own (``--seeds``, Node clients), and
  ``start_p50_ms`` / ``start_p99_ms`` (Node clients): from a table's last join
  answered to the first view showing its game, what a seed adds before the deal.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ..infra import free_port, redis_version
from ..ops import ONE_ADDRESS, Fleet, fresh_redis, temporary_folder, wait_ready
from ..wire import DEFAULT_PARTITIONS
from .common import percentile
from .players import Players, measure

TICK = os.sysconf("SC_CLK_TCK")
# Every client of the benchmark comes from this machine and plays as fast as it can.
UNLIMITED = ["--rate-per-s", "1e9", "--burst", "1000000"]


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and every process below it."""
    return sum(_cpu_of(each) for each in [pid, *_descendants(pid)])


def _cpu_of(pid: int) -> float:
    """One process's CPU seconds, to the nanosecond where it can be had.

    ``/proc/PID/stat`` counts in clock ticks (10 ms): a director that spends ~100 ms
    in a run is read to ±10%. Each thread's ``schedstat`` counts nanoseconds, but only
    of threads alive now; should threads have ended with more than two ticks of CPU
    between them (their time stays in ``stat``), the ticks are the better figure."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = (int(fields[11]) + int(fields[12])) / TICK
    try:
        precise = sum(
            int((task / "schedstat").read_text().split()[0])
            for task in Path(f"/proc/{pid}/task").iterdir()
        ) / 1e9
    except (OSError, ValueError, IndexError):
        return ticks
    return precise if precise >= ticks - 2 / TICK else ticks


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def machine_busy() -> float:
    """Seconds of CPU busy on all cores since boot (everything but idle and iowait)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:9]]
    return (sum(values) - values[3] - values[4]) / TICK


class Roles:
    """The server processes measured, by role: name -> pid."""

    def __init__(self, roles: dict[str, list[int]]) -> None:
        self.roles = roles

    def sample(self) -> dict[str, float]:
        return {role: sum(process_cpu(p) for p in pids) for role, pids in self.roles.items()}


LOAD_SCRIPT = Path(__file__).with_name("load.mjs")


def node_command() -> list[str]:
    """How to run the Node load generator (Node 20 needs a flag for WebSocket)."""
    node = shutil.which("node")
    if node is None:
        raise SystemExit("dudo bench path --load node needs Node.js 20+ (or use --load python)")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    major = int(version.strip().lstrip("v").split(".")[0])
    if major < 20:
        raise SystemExit(f"Node.js 20+ needed, found {version.strip()} (or use --load python)")
    return [node, *(["--experimental-websocket"] if major < 22 else []), str(LOAD_SCRIPT)]


class _Measured:
    """One measured phase, whichever load generator: the samples at its start and end
    (server CPU by role, load-generator CPU, machine), moves and their latencies."""

    def __init__(self) -> None:
        self.before: tuple[dict[str, float], float, float] = ({}, 0.0, 0.0)
        self.after: tuple[dict[str, float], float, float] = ({}, 0.0, 0.0)
        self.elapsed = 0.0
        self.rates: list[float] = []
        self.moves = 0
        self.games = 0
        self.ms: list[float] = []
        self.starts: list[float] = []
        self.errors: dict[str, int] = {}


async def _run_python(
    bases: list[str], roles: Roles, tables: int, seats: int, seconds: float, codec: str
) -> _Measured:
    players = Players(bases, tables, seats=seats, codec=codec)
    got = _Measured()

    def sample() -> tuple[dict[str, float], float, float]:
        return roles.sample(), time.process_time(), machine_busy()

    measured = await measure(players, seconds, sample)
    got.before, got.after = measured.before, measured.after
    got.elapsed, got.rates = measured.elapsed, measured.rates
    got.moves, got.games, got.errors = players.applied, players.games, dict(players.errors)
    got.ms = [x * 1000 for x in players.latencies]
    return got


def _run_node(
    bases: list[str], roles: Roles, tables: int, seats: int, seconds: float, seeds: bool
) -> _Measured:
    """Run ``load.mjs``; sample the servers (and the Node process, from /proc) when it
    says the measured phase starts and when it ends."""
    command = [*node_command(), ",".join(bases), str(tables), str(seats), str(seconds)]
    proc = subprocess.Popen([*command, *(["seeds"] if seeds else [])], stdout=subprocess.PIPE,
                            text=True)  # fmt: skip
    got = _Measured()

    def sample() -> tuple[dict[str, float], float, float]:
        return roles.sample(), process_cpu(proc.pid), machine_busy()

    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                said = json.loads(line)
            except json.JSONDecodeError:
                raise SystemExit(f"the load generator said: {line[:300]!r}") from None
            if said["phase"] == "start":
                got.before = sample()
            elif said["phase"] == "end":
                got.after = sample()
                got.elapsed, got.rates = said["elapsed"], said["rates"]
                got.moves, got.games, got.errors = said["moves"], said["games"], said["errors"]
                got.ms, got.starts = said["latencies_ms"], said.get("starts_ms", [])
            else:
                raise SystemExit(f"the load generator failed: {said}")
        if proc.wait(30) != 0 and not got.moves:
            raise SystemExit(f"the load generator exited with {proc.returncode}")
        if not got.after[0]:
            raise SystemExit("the load generator ended before its measured phase did")
    finally:
        if proc.poll() is None:
            proc.kill()
    return got


def _figures(got: _Measured) -> dict[str, Any]:
    (cpu0, load0, busy0), (cpu1, load1, busy1) = got.before, got.after
    elapsed, rates, moves, ms = got.elapsed, got.rates, got.moves, got.ms
    used = {role: cpu1[role] - cpu0[role] for role in cpu0}
    server = sum(used.values())
    per_move = lambda s: round(s / moves * 1e6, 1) if moves else None  # noqa: E731
    return {
        "moves": moves,
        "moves_per_s": round(moves / elapsed, 1),
        "moves_per_s_median_second": round(statistics.median(rates), 1) if rates else 0,
        "p50_ms": round(percentile(ms, 50), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "max_ms": round(max(ms), 2) if ms else None,
        **(
            {
                "start_p50_ms": round(percentile(got.starts, 50), 2),
                "start_p99_ms": round(percentile(got.starts, 99), 2),
            }
            if got.starts
            else {}
        ),
        "games": got.games,
        "errors": got.errors,
        "server_cpu_pct": round(100 * server / elapsed),
        "server_cpu_pct_by_role": {r: round(100 * s / elapsed) for r, s in used.items()},
        "server_cpu_us_per_move": per_move(server),
        "server_cpu_us_per_move_by_role": {r: per_move(s) for r, s in used.items()},
        "load_cpu_pct": round(100 * (load1 - load0) / elapsed),
        "machine_cpu_pct": round(100 * (busy1 - busy0) / elapsed),
    }


def run(
    *,
    tables: int = 10,
    seats: int = 4,
    seconds: float = 20.0,
    workers: int = 1,
    gateways: int = 1,
    redis_url: str | None = None,
    embedded: str | None = None,
    partitions: int = DEFAULT_PARTITIONS,
    codec: str = "json",
    folder: str | None = None,
    flush: bool = False,
    load: str = "node",
    servers_from: str | None = None,
    skeleton: bool = False,
    admitted: bool = False,
    redis_roles: dict[str, list[int]] | None = None,
    ws_layer: str | None = None,
    event_loop: str | None = None,
    seeds: bool = False,
) -> dict[str, Any]:
    """Measure; ``embedded`` (``auto``, ``redis-server`` or ``fakeredis``) runs one
    ``dudo serve`` instead of separate processes; ``redis_url`` uses that Redis (empty,
    or erased first with ``flush``); ``load``: ``node`` or ``python`` clients (JSON
    frames; ``codec`` msgpack needs the Python ones); ``servers_from``: another
    checkout's ``services/`` folder, whose code the server processes run (to
    compare commits driven by the same load generator); ``skeleton``: the same
    path with :mod:`dudo.bench.skeleton`'s gateway and worker, no game in them;
    ``admitted``: the gateways are admitted apps, as deploy/ runs them (a Redis user
    each, every entry signed, checked, counted against its gateway's quota);
    ``redis_roles``: the processes of the Redis at ``redis_url`` by role (a cluster's
    masters and replicas, say), each measured as the others are; ``ws_layer``: what
    serves the gateways' ``/ws`` (``picows`` or ``aiohttp``; None: their default)."""
    if load not in ("node", "python"):
        raise ValueError(f"load must be node or python, not {load!r}")
    if load == "node" and codec != "json":
        raise SystemExit("the Node load generator speaks JSON; use --load python for msgpack")
    if load == "node":
        node_command()  # refuse early, before starting anything
    elif seeds:
        raise SystemExit("--seeds needs the Node load generator (--load node)")
    serving = [
        *(["--ws-layer", ws_layer] if ws_layer else []),
        *(["--event-loop", event_loop] if event_loop else []),
    ]
    fleet = Fleet(
        Path(folder) if folder else temporary_folder(),
        partitions=partitions,
        redis_url=redis_url,
        worker_flags=[],
        gateway_flags=[*UNLIMITED, *serving],
        code=str(Path(servers_from).resolve()) if servers_from else None,
    )
    try:
        if skeleton:
            layers = (ws_layer or "picows", event_loop or "uvloop")
            bases, roles, shape = _start_skeleton(fleet, flush, *layers)
        elif embedded:
            port = free_port()
            proc = fleet.spawn(
                "serve", "serve", "--port", str(port), "--embedded", embedded,
                "--no-endgame-solves",
                "--log-level", "warning", *ONE_ADDRESS, *UNLIMITED,
                *serving,
            )  # fmt: skip
            bases = [f"http://127.0.0.1:{port}"]
            wait_ready(bases[0], proc, timeout=60)
            roles = Roles({"serve": [proc.pid]})
            shape: dict[str, Any] = {"embedded": _embedded_line(fleet.folder / "serve.log")}
        else:
            url = fleet.start_redis()
            fresh_redis(url, partitions, flush=flush, bench="path")
            names = [fleet.start_worker() for _ in range(workers)]
            if admitted:
                fleet.admit([f"gateway-{i + 1}" for i in range(gateways)], "bench")
            bases = [fleet.start_gateway(f"gateway-{i + 1}") for i in range(gateways)]
            for i in range(gateways):
                fleet.wait_gateway(f"gateway-{i + 1}", timeout=60)
            roles = Roles(
                {
                    "gateway": [fleet.procs[f"gateway-{i + 1}"].pid for i in range(gateways)],
                    "worker": [fleet.procs[n].pid for n in names],
                    **(
                        {"redis": [fleet.redis_server.proc.pid]}
                        if fleet.redis_server is not None and fleet.redis_server.proc
                        else redis_roles or {}
                    ),
                }
            )
            shape = {"workers": workers, "gateways": gateways, "redis": redis_version(url),
                     "admitted": admitted, "ws_layer": ws_layer or "picows",
                     "event_loop": event_loop or "uvloop"}  # fmt: skip
        if load == "node":
            got = _run_node(bases, roles, tables, seats, seconds, seeds)
        else:
            got = asyncio.run(_run_python(bases, roles, tables, seats, seconds, codec))
        result = _figures(got)
    except BaseException:
        print(f"dudo bench path: the processes' logs are in {fleet.folder}", file=sys.stderr)
        raise
    finally:
        fleet.stop()
    if folder is None:  # a run's Redis files reach ~60 MB: nothing to keep from one that worked
        shutil.rmtree(fleet.folder, ignore_errors=True)
    return {
        "bench": "path",
        "tables": tables,
        "seats": seats,
        "seconds": seconds,
        "codec": codec,
        "load": load,
        "seeds": seeds,
        **({"servers_from": servers_from} if servers_from else {}),
        **shape,
        **result,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def _start_skeleton(
    fleet: Fleet, flush: bool, layer: str, event_loop: str
) -> tuple[list[str], Roles, dict[str, Any]]:
    """Redis, the skeleton's worker and gateway (one each), ready to be driven."""
    url = fleet.start_redis()
    fresh_redis(url, DEFAULT_PARTITIONS, flush=flush, bench="path")
    worker = fleet.spawn("skeleton-worker", "worker", url, module="dudo.bench.skeleton")
    port = free_port()
    gateway = fleet.spawn(
        "skeleton-gateway", "gateway", url, str(port), layer, event_loop,
        module="dudo.bench.skeleton",
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    wait_ready(base, gateway, timeout=60)
    pids = {"gateway": [gateway.pid], "worker": [worker.pid]}
    if fleet.redis_server is not None and fleet.redis_server.proc:
        pids["redis"] = [fleet.redis_server.proc.pid]
    return [base], Roles(pids), {
        "skeleton": True, "ws_layer": layer, "event_loop": event_loop,
        "redis": redis_version(url),
    }  # fmt: skip


def _embedded_line(log: Path) -> str:
    """What ``dudo serve`` said it embeds (its startup line)."""
    for line in log.read_text().splitlines():
        if "Redis:" in line:
            return line.split("Redis:", 1)[1].strip(" )")
    return "unknown"
