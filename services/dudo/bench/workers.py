"""``dudo bench workers``: table workers under load from bot seats, and the Redis floor.

Phases, all in one run against one Redis:

1. **warm-up**: start the workers, create ``tables`` 4-seat tables whose seats
   are bot clients of one benchmark gateway, wait until every game is under
   way, then read Redis memory per active table;
2. **saturated**: every table always has one action outstanding (a closed
   loop); ``actions_per_s`` is the median of one-second slices;
3. **half load**: the same tables, actions released at half that rate; after
   two seconds to drain the saturated backlog, ``p50_ms`` / ``p99_ms`` are
   action written → view showing it received;
4. **floor**: the workers stop, and a plain redis-py loop issues the same
   command mix with no engine work: the same number of actions per worker
   cycle and per outbox read as measured in phase 2 (from ``INFO
   commandstats``), the same scripts, records and delivery payloads of the
   measured sizes. ``floor_actions_per_s`` is what Redis and the client alone
   allow on this machine for that mix.

The Redis used must be empty (or pass ``--flush``): the bench writes the
deployment's real key names.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .. import wire
from ..infra import (
    Batch,
    Client,
    create_groups,
    ensure_partitions,
    is_cluster,
    quiet_collector,
    settle_heap,
)
from ..link import GatewayLink
from ..ops import fresh_redis, stop
from ..wire import keys
from ..worker import (
    Scripts,
    Section,
    Stream,
    Write,
    commit_call,
    commit_groups,
    commit_section,
    read_call,
    read_groups,
)
from .common import percentile
from .driver import TableDriver

SEATS = 4


def run(
    redis_url: str,
    *,
    tables: int = 1000,
    seconds: float = 10.0,
    workers: int = 1,
    partitions: int = keys.DEFAULT_PARTITIONS,
    flush: bool = False,
    log_dir: str | None = None,
) -> dict[str, Any]:
    client = fresh_redis(redis_url, partitions, flush=flush, bench="workers")
    quiet_collector()  # the bots' gateway allocates like a worker: same tuning
    memory_before = used_memory(client)
    procs = start_workers(redis_url, workers, partitions, log_dir)
    try:
        link = GatewayLink(client, "bench", partitions)
        link.register()
        driver = TableDriver(link, seats=SEATS, replace_finished=True, seed=1)
        warm_up(driver, tables)
        memory_per_table = (used_memory(client) - memory_before) / tables
        record_bytes = mean_record_bytes(client, partitions, driver)

        bytes_before, applied_before = link.bytes_read, driver.applied
        cpu_before, calls_before = cpu_seconds(procs, client), command_calls(client)
        rates, saturated = measure(driver, seconds)
        applied = max(1, driver.applied - applied_before)
        cpu_after, calls = cpu_seconds(procs, client), command_calls(client)
        cpu = {k: (cpu_after[k] - cpu_before[k]) * 1e6 / applied for k in cpu_after}
        mix = {k: (v - calls_before.get(k, 0)) / applied for k, v in calls.items()}
        # The floor repeats the real command mix: as many actions per worker cycle
        # (one read script per partition per cycle) and per outbox read as measured.
        cycle_actions = max(1, round(partitions / max(mix.get("xreadgroup", 0), 1e-9)))
        read_actions = max(1, round(1 / max(mix.get("xread", 0), 1e-9)))
        view_bytes = (link.bytes_read - bytes_before) / applied
        rate = statistics.median(rates)

        driver.max_rate = rate / 2
        measure(driver, 2.0)  # let the saturated phase's backlog drain first
        half_rates, latencies = measure(driver, seconds)
    finally:
        stop(procs)
    floor = floor_rate(
        client,
        partitions,
        tables,
        seconds,
        int(record_bytes),
        int(view_bytes),
        cycle_actions=cycle_actions,
        read_actions=read_actions,
    )
    ms = [x * 1000 for x in latencies]
    sat = [x * 1000 for x in saturated]
    return {
        "bench": "workers",
        "tables": tables,
        "seats": SEATS,
        "workers": workers,
        "partitions": partitions,
        "seconds": seconds,
        "actions_per_s": round(rate),
        "actions_per_s_slices": [round(r) for r in rates],
        "half_load_actions_per_s": round(statistics.median(half_rates)),
        "p50_ms": round(percentile(ms, 50), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "saturated_p50_ms": round(percentile(sat, 50), 2),
        "saturated_p99_ms": round(percentile(sat, 99), 2),
        "redis_bytes_per_table": round(memory_per_table),
        "record_bytes": round(record_bytes),
        "outbox_bytes_per_action": round(view_bytes),
        "cpu_us_per_action": {k: round(v, 1) for k, v in cpu.items()},
        "redis_calls_per_action": {k: round(v, 3) for k, v in mix.items() if v >= 0.001},
        "actions_per_worker_cycle": cycle_actions,
        "actions_per_outbox_read": read_actions,
        "floor_actions_per_s": round(floor),
        # Of the published (rounded) rates, so that the printed figures agree.
        "ratio_to_floor": round(round(rate) / round(floor), 3) if round(floor) else None,
        "ratio_ceiling": ratio_ceiling(cpu, workers, floor),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def ratio_ceiling(cpu_us: dict[str, float], workers: int, floor: float) -> dict[str, float] | None:
    """The highest ``ratio_to_floor`` this run's CPU costs allow, whatever the scheduling.

    Two ceilings, from the CPU each process used per applied action in the
    saturated phase: ``one_process_per_worker`` — each worker is one Python
    thread, so ``workers`` of them apply at most ``workers / worker CPU per
    action`` even with a core each and no waiting; ``all_cores`` — the
    workers, the bots' gateway and Redis share this machine's cores. They are
    derived figures, not measurements: they say how far scheduling and waiting
    are from costing anything, and how much CPU per action a target needs.
    """
    total = sum(cpu_us.values())
    if not floor or cpu_us.get("workers", 0) <= 0 or total <= 0:
        return None
    cores = os.cpu_count() or 1
    per_worker = min(workers, cores) * 1e6 / cpu_us["workers"]
    return {
        "one_process_per_worker": round(per_worker / floor, 3),
        "all_cores": round(cores * 1e6 / total / floor, 3),
    }


def used_memory(client: Client) -> int:
    info = client.info("memory")
    if isinstance(info, dict) and "used_memory" in info:
        return int(info["used_memory"])
    return sum(int(node["used_memory"]) for node in info.values())  # cluster: per node


def command_calls(client: Client) -> dict[str, int]:
    """Calls per Redis command so far (INFO commandstats, summed over cluster nodes)."""
    info = client.info("commandstats")
    per_node = list(info.values()) if is_cluster(client) else [info]
    totals: dict[str, int] = {}
    for node in per_node:
        for key, value in node.items():
            if key.startswith("cmdstat_"):
                name = key.removeprefix("cmdstat_")
                totals[name] = totals.get(name, 0) + int(value["calls"])
    return totals


def cpu_seconds(procs: list[subprocess.Popen], client: Client) -> dict[str, float]:
    """CPU time used so far by the workers, this process (the bots' gateway) and Redis."""
    tick = os.sysconf("SC_CLK_TCK")

    def of(pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    info = client.info("cpu")
    redis_cpu = float(info.get("used_cpu_sys", 0)) + float(info.get("used_cpu_user", 0))
    return {
        "workers": sum(of(p.pid) for p in procs),
        "bots_gateway": of(os.getpid()),
        "redis": redis_cpu,
    }


def start_workers(url: str, n: int, partitions: int, log_dir: str | None) -> list[subprocess.Popen]:
    procs = []
    for i in range(n):
        out = open(Path(log_dir) / f"worker{i}.log", "wb") if log_dir else subprocess.DEVNULL  # noqa: SIM115
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dudo",
                    "worker",
                    "--redis",
                    url,
                    "--partitions",
                    str(partitions),
                    "--id",
                    f"bench-w{i}",
                    "--log-level",
                    "warning",
                ],
                stdout=out,
                stderr=out,
            )
        )
    return procs


def warm_up(driver: TableDriver, tables: int, timeout: float = 60) -> None:
    driver.create([f"b{i}" for i in range(tables)])
    deadline = time.monotonic() + timeout
    while sum(1 for t in driver.tables.values() if t.last_views) < tables:
        if time.monotonic() > deadline:
            raise SystemExit("tables did not start: are the workers running?")
        driver.pump(block_ms=20)
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        driver.pump(block_ms=20)


def mean_record_bytes(client: Client, partitions: int, driver: TableDriver) -> float:
    ids = [t for t, run in driver.tables.items() if not run.finished][:100]
    batch = Batch(client)
    for tid in ids:
        key = keys.table_of(tid, partitions)
        batch.add(key, "HSTRLEN", key, "s")
    sizes = [s for s in batch.execute() if isinstance(s, int) and s]
    return statistics.mean(sizes) if sizes else 1000.0


def measure(driver: TableDriver, seconds: float) -> tuple[list[float], list[float]]:
    """Pump for ``seconds``; return per-second rates of applied actions and the latencies."""
    driver.latencies = []
    rates = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        slice_end = min(end, time.monotonic() + 1.0)
        started, applied = time.monotonic(), driver.applied
        settle_heap()  # as the worker does: keep full collections short
        while time.monotonic() < slice_end:
            driver.pump(block_ms=5)
        rates.append((driver.applied - applied) / (time.monotonic() - started))
    return rates, driver.latencies


def floor_rate(
    client: Client,
    partitions: int,
    tables: int,
    seconds: float,
    record_bytes: int,
    view_bytes: int,
    *,
    cycle_actions: int,
    read_actions: int,
) -> float:
    """The same Redis command mix as workers and bots' gateway, with no engine work at all.

    Each cycle: the gateway writes ``cycle_actions`` inbox entries; the worker
    runs the fenced read script on every partition, one commit script per
    partition with entries (table records and delivery record of the measured
    sizes), one outbox entry; the gateway reads and trims its outbox once per
    ``read_actions`` actions.
    """
    client.flushall()
    ensure_partitions(client, partitions)
    create_groups(client, partitions, space=keys.TABLES)
    scripts = Scripts(client)
    cluster = is_cluster(client)
    me = "floor"
    generation = {
        p: int(scripts.run("acquire", [keys.lease(p)], [me, 60_000])) for p in range(partitions)
    }
    link = GatewayLink(client, "floor-gw", partitions)
    ids = [f"f{i}" for i in range(tables)]
    versions = dict.fromkeys(ids, 0)
    act = wire.encode(
        link.message(
            "act",
            id="x" * 20,
            table="f0",
            player=wire.public_id("f0-p0"),
            seat=0,
            action={"type": "bid", "quantity": 3, "face": 4},
        )
    )
    record = b"r" * record_bytes
    view = b"v" * max(1, view_bytes)
    delivered: dict[int, list[str]] = {}
    outbox, last = keys.outbox(link.id), "0-0"
    actions = unread = 0
    cursor = 0
    own = [Stream(None, 256)]  # the deployment's inbox, as the bench's entries are
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        chunk = [ids[(cursor + i) % tables] for i in range(cycle_actions)]
        cursor += cycle_actions
        pipe = client.pipeline(transaction=False)
        for tid in chunk:
            pipe.xadd(keys.inbox(keys.partition_of(tid, partitions)), {wire.ENTRY_FIELD: act})
        pipe.execute()
        by_partition: dict[int, list[str]] = {}
        for tid in chunk:
            by_partition.setdefault(keys.partition_of(tid, partitions), []).append(tid)
        read = Batch(client)
        for p in range(partitions):
            if delivered.get(p):
                ids_ = delivered.pop(p)
                read.add(keys.deliveries(p), "XDEL", keys.deliveries(p), *ids_)
        deletions = len(read)
        # Read as the worker does: one call for every partition (one each on a Cluster).
        calls = read_groups(partitions, cluster=cluster)
        for group in calls:
            k, a = read_call(
                me, me, [(p, generation[p], "new", own) for p in group], space=keys.TABLES
            )
            read.add(k[0], *scripts.raw("read", k, a))
        entries = {}
        replies = read.execute()[deletions:]
        for group, reply in zip(calls, replies, strict=True):
            for p, flat in zip(group, reply, strict=True):
                # after the "more pending" flag and the trims: (stream, id, m, s, size)
                entries[p] = {None: flat[3::5]}
        sections = {}
        for p, tids in by_partition.items():
            writes = []
            for tid in tids:
                writes.append(Write(tid, versions[tid], versions[tid] + 1, record))
                versions[tid] += 1
            sections[p] = commit_section(
                p,
                generation[p],
                Section(acks=entries[p], writes=writes, record=view * len(tids)),
                space=keys.TABLES,
            )
        # Committed as the worker does: partitions grouped into calls the same way.
        parts = list(sections)
        sizes = [len(by_partition[p]) for p in parts]
        groups = [[parts[i] for i in g] for g in commit_groups(sizes, cluster=cluster)]
        commit = Batch(client)
        for group in groups:
            k, a = commit_call(me, [sections[p] for p in group], space=keys.TABLES)
            commit.add(k[0], *scripts.raw("commit", k, a))
        for group, reply in zip(groups, commit.execute(), strict=True):
            for p, result in zip(group, reply, strict=True):
                delivered[p] = [result[1]]
        client.xadd(outbox, {wire.ENTRY_FIELD: view * cycle_actions}, maxlen=5000, approximate=True)
        actions += cycle_actions
        unread += cycle_actions
        if unread >= read_actions:  # the gateway side: trim what it read, read on
            unread = 0
            client.xtrim(outbox, minid=last, approximate=False)
            for _stream, got in client.xread({outbox: last}, count=1000) or []:
                last = got[-1][0]
    return actions / (time.monotonic() - started)
