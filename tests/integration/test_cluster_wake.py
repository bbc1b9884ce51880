"""An idle worker on a Redis Cluster is woken by the masters' keyspace notifications
(dudo.worker.wake), not by polling every partition every few milliseconds."""

from __future__ import annotations

import time

from dudo.infra.connection import connect
from dudo.wire import keys
from dudo.worker import wake as wake_module
from dudo.worker.wake import KeyspaceWake, configure

from ..servers import RedisCluster


def test_an_entry_in_any_inbox_stream_wakes_the_wait_with_its_partition(
    redis_cluster: RedisCluster,
) -> None:
    client = connect(redis_cluster.url)
    wake = KeyspaceWake(client, keys.TABLES)
    try:
        wake.watch(range(16))
        assert wake.healthy and len(wake.listeners) == 3  # a listener per master
        # Listening from now: every partition is read once (what came before), each
        # master's as its listener subscribes.
        seen: set[int] = set()
        deadline = time.monotonic() + 5
        while seen != set(range(16)) and time.monotonic() < deadline:
            seen |= wake.wait(0.5) or set()
        assert seen == set(range(16))
        assert wake.wait(0.3) == set()  # nothing new: the wait times out
        client.xadd(keys.inbox(5), {"m": "1"})
        assert wake.wait(2.0) == {5}
        client.xadd(keys.inbox(11, "gw-a"), {"m": "1"})  # an admitted gateway's own
        assert wake.wait(2.0) == {11}
        client.xadd(keys.inbox(3), {"m": "1"})  # between two waits: kept for the next
        time.sleep(0.3)
        assert wake.wait(0.05) == {3}
        # Not waited on for QUIET_S (a busy loop): the listeners unsubscribe.
        deadline = time.monotonic() + 10 * wake_module.QUIET_S + 5
        while any(listener.subscribed for listener in wake.listeners.values()):
            assert time.monotonic() < deadline, "a listener stayed subscribed"
            time.sleep(0.05)
        client.xadd(keys.inbox(4), {"m": "1"})  # unheard; waiting again, the listeners
        seen = set()  # subscribe and every partition is read once more
        deadline = time.monotonic() + 5
        while seen != set(range(16)) and time.monotonic() < deadline:
            seen |= wake.wait(0.5) or set()
        assert seen == set(range(16))
        client.xtrim(keys.inbox(5), maxlen=0)  # the loop's own trims wake nobody
        assert wake.wait(0.3) == set()
        wake.watch([5])  # partitions given away: the others no longer wake it
        client.xadd(keys.inbox(6), {"m": "1"})
        assert wake.wait(0.3) == set()
        client.xadd(keys.inbox(5), {"m": "1"})
        assert wake.wait(2.0) == {5}
    finally:
        wake.close()
        client.delete(*(keys.inbox(n, w) for n in range(16) for w in (None, "gw-a")))
        client.close()


def test_a_node_that_refuses_config_leaves_the_loop_polling(redis_cluster: RedisCluster) -> None:
    """A managed Redis may forbid CONFIG: the wake says it cannot, and the loop polls."""
    admin = connect(redis_cluster.url)
    try:
        for node in redis_cluster.nodes:
            node.client().acl_setuser(
                "no-config", enabled=True, passwords=["+pw"], keys=["*"],
                commands=["+@all", "-config"],
            )  # fmt: skip
        host, port = "127.0.0.1", redis_cluster.nodes[0].port
        limited = connect(f"redis://no-config:pw@{host}:{port}/0")
        assert configure(limited.get_redis_connection(limited.get_primaries()[0])) is False
        wake = KeyspaceWake(limited, keys.TABLES)
        wake.watch(range(16))
        assert not wake.healthy and wake.wait(0.1) is None
        asked = dict(wake.refused)
        assert len(asked) == 3  # every master refused, once
        wake.watch(range(16))  # the loop's next idle poll: not asked again so soon
        assert wake.refused == asked and not wake.healthy
        wake.close()
        limited.close()
    finally:
        for node in redis_cluster.nodes:
            node.client().acl_deluser("no-config")
        admin.close()


def test_a_worker_idle_on_a_cluster_waits_on_the_masters_and_wakes_for_a_move(
    redis_cluster: RedisCluster,
) -> None:
    """In-process worker, idle past its polling: it listens on the masters; a table
    created then is served at once (the wait returned with its partition)."""
    import threading

    from dudo.bench.driver import TableDriver
    from dudo.link import GatewayLink
    from dudo.run import table_worker
    from dudo.worker import WorkerSettings

    client = connect(redis_cluster.url)
    client.flushall()
    worker = table_worker(
        WorkerSettings(redis_url=redis_cluster.url, partitions=16, worker_id="wake-w",
                       heartbeat=0.25, lease_ms=2000)
    )  # fmt: skip
    worker.setup()
    thread = threading.Thread(target=worker.run_forever, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not (worker._wake.healthy and worker.partitions):
            assert time.monotonic() < deadline, "the idle worker never listened"
            time.sleep(0.1)
        link = GatewayLink(client, "gw-wake", 16)
        driver = TableDriver(link, seats=2, rules={"preset": "classic", "start_dice": 1})
        driver.create(["wake-t"])
        driver.run_until_done(timeout=30)
        assert driver.errors == [] and driver.applied > 0
    finally:
        worker.stop()
        thread.join(15)
        client.close()
    assert not thread.is_alive() and worker._wake.listeners == {}
