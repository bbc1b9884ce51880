"""Every long-running process exports Prometheus metrics: a worker's entries applied,
commits, leases, partitions held and inbox lag; a director's the same under its role; a
dead letter counted where it was made (real processes, a real redis-server)."""

from __future__ import annotations

import signal
import urllib.request

import redis
from prometheus_client.parser import text_string_to_metric_families

from dudo.link import GatewayLink
from dudo.wire import keys

from ..servers import free_port
from .procs import P, Workers, owners, wait_for


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """(sample name, labels) -> value, from a process's /metrics (none while it does not
    answer yet)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
            text = page.read().decode()
    except OSError:
        return {}
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_a_worker_exports_its_entries_commits_leases_and_inbox_lag(
    workers: Workers, real_redis: redis.Redis
) -> None:
    port = free_port()
    workers.start("m1", "--health-port", str(port))
    wait_for(lambda: len(owners(real_redis)) == P, 10, "leases taken")
    link = GatewayLink(real_redis, "gw-m", P)
    link.send(link.message("create", id="c-m", table="mt", rules={"preset": "classic"},
                           seats=[{"kind": "open"}] * 2))  # fmt: skip
    link.send_raw("mt", b"\x00 not a message")  # a dead letter
    wait_for(lambda: value(scrape(port), "dudo_entries_total", role="worker") >= 2, 10, "counts")
    samples = scrape(port)
    assert value(samples, "dudo_partitions_owned", role="worker") == P
    assert value(samples, "dudo_lease_changes_total", role="worker", change="taken") == P
    assert value(samples, "dudo_dead_letters_total", role="worker") == 1
    assert value(samples, "dudo_commit_seconds_count", role="worker") >= 1
    assert value(samples, "process_start_time_seconds") > 0
    # Lag and pending of every held inbox (sampled every few seconds): each once.
    wait_for(
        lambda: sum(1 for (name, _), _v in scrape(port).items() if name == "dudo_inbox_lag") == P,
        15,
        "every inbox sampled",
    )
    partition = str(keys.partition_of("mt", P))
    assert value(scrape(port), "dudo_inbox_pending", role="worker", partition=partition) == 0
    # Entries waiting while nobody reads them show as lag.
    workers.procs["m1"].send_signal(signal.SIGSTOP)  # it reads nothing meanwhile
    try:
        for i in range(5):
            link.send(link.message("watch", id=f"w{i}", table="mt", on=True))
        lag = real_redis.xinfo_groups(keys.inbox(int(partition)))[0]["lag"]
        assert lag == 5
    finally:
        workers.procs["m1"].send_signal(signal.SIGCONT)
    wait_for(
        lambda: value(scrape(port), "dudo_entries_total", role="worker") >= 7, 15, "caught up"
    )


def test_a_director_exports_the_same_under_its_role(
    workers: Workers, real_redis: redis.Redis
) -> None:
    port = free_port()
    workers.spawn("d1", "director", "--redis", workers.url, "--partitions", "4",
                  "--table-partitions", str(P), "--health-port", str(port))  # fmt: skip
    wait_for(
        lambda: value(scrape(port), "dudo_partitions_owned", role="director") == 4,
        20,
        "the director's partitions",
    )
    samples = scrape(port)
    assert value(samples, "dudo_lease_changes_total", role="director", change="taken") == 4
    # The ratings keeper beside it, in the same process and page.
    assert value(samples, "dudo_partitions_owned", role="rater") == 1
