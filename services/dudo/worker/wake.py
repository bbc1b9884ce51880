"""Waking an idle loop on a Redis Cluster: each master tells it when an inbox gets an entry.

On one Redis an idle loop waits in one blocking XREAD over every inbox stream it owns.
A cluster refuses that (one command may touch one hash slot; each partition is a slot of
its own), so the loop polled: a read of every partition after sleeps of 0.5 ms doubling
to 5 ms. That cost a light-load move ~5 ms and an idle worker a script call per
partition every few milliseconds (docs/benchmarks.md, "Scale-out on a Redis Cluster").

Redis publishes keyspace notifications where the key lives: with ``notify-keyspace-events``
holding ``K`` (keyspace channel) and ``t`` (stream commands), an XADD to
``dudo:{p3}:in`` is published on that master as ``__keyspace@0__:dudo:{p3}:in`` with the
message ``xadd``. So a listener per master the loop's partitions live on, one thread each
(blocked in a socket read, off the GIL), subscribes to its partitions' inbox streams and
marks the partition woken; :meth:`KeyspaceWake.wait` returns the moment one is.

Nothing depends on a notification arriving: the loop reads every partition at each
heartbeat and after every busy cycle, so a notification lost in a failover or a
resubscription costs latency, never an entry. Where the nodes refuse ``CONFIG SET`` (a
managed Redis), the operator sets ``notify-keyspace-events Kt`` or the loop polls.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable
from typing import Any

import redis

from ..wire import keys

CHANNEL_PREFIX = "__keyspace@0__:"  # a cluster has one database: 0
EVENTS = "Kt"  # keyspace channel, stream commands
QUIET_S = 0.2  # a listener not waited on this long unsubscribes (the loop is busy)
ASK_AGAIN_S = 60.0  # a node that refused CONFIG is asked again after this long


def configure(node: Any) -> bool:
    """Make sure ``node`` publishes stream commands on the keyspace channel (adding to
    what it already publishes); False if it may not be told (no CONFIG for us)."""
    try:
        current = str(node.config_get("notify-keyspace-events").get("notify-keyspace-events", ""))
        has_streams = "t" in current or "A" in current
        if "K" not in current or not has_streams:
            node.config_set("notify-keyspace-events", current + EVENTS)
        return True
    except redis.RedisError:
        return False


class _Listener(threading.Thread):
    """One master's notifications for the inbox streams of the partitions it holds. It
    subscribes when the loop first waits on it (``armed``), and once the loop has not
    waited for ``QUIET_S`` (busy: its cycles follow each other) it unsubscribes, so that
    nothing is published to it, nor handled in this thread, while the loop is busy."""

    def __init__(self, node: Any, space: keys.Space, woke: Any, armed: threading.Event) -> None:
        super().__init__(daemon=True, name="dudo-wake")
        self.node = node
        self.space = space
        self.woke = woke
        self.armed = armed
        self.lock = threading.Lock()
        self.wanted: set[int] = set()
        self.stopped = threading.Event()
        self.broken = False
        self.subscribed: set[int] = set()  # the partitions it hears now

    def want(self, partitions: set[int]) -> None:
        with self.lock:
            self.wanted = set(partitions)

    def pattern(self, number: int) -> str:
        """Every inbox stream of a partition: the deployment's and each gateway's."""
        return f"{CHANNEL_PREFIX}{self.space.inbox(number)}*"

    def run(self) -> None:
        pubsub = self.node.pubsub(ignore_subscribe_messages=True)
        quiet_since: float | None = None
        try:
            while not self.stopped.is_set():
                if not self.armed.is_set():
                    quiet_since = quiet_since or time.monotonic()
                    if self.subscribed and time.monotonic() - quiet_since > QUIET_S:
                        pubsub.punsubscribe()  # busy: nothing need be published to us
                        self.subscribed = set()
                    if not self.subscribed:
                        self.armed.wait(0.25)
                        continue
                    # Still subscribed: what comes now is kept for the next wait (an entry
                    # after the loop's last read and before it waits must wake it).
                else:
                    quiet_since = None
                with self.lock:
                    wanted = set(self.wanted) if self.armed.is_set() else self.subscribed
                if wanted - self.subscribed:
                    pubsub.psubscribe(*(self.pattern(n) for n in wanted - self.subscribed))
                    for number in wanted - self.subscribed:  # what came before we listened
                        self.woke(number)
                if self.subscribed - wanted:
                    pubsub.punsubscribe(*(self.pattern(n) for n in self.subscribed - wanted))
                self.subscribed = wanted
                message = pubsub.get_message(timeout=0.1)
                if message is None or message.get("type") != "pmessage":
                    continue
                if keys.as_text(message["data"]) != "xadd":
                    continue  # a trim or a delete (the loop's own): nothing new to read
                stream = keys.as_text(message["channel"])[len(CHANNEL_PREFIX) :]
                number = self.space.partition_of_inbox(stream)
                with self.lock:
                    ours = number in self.wanted and not self.stopped.is_set()
                if ours:  # (not one given away since: its subscription goes when it waits)
                    self.woke(number)
        except (redis.RedisError, OSError, ValueError):
            self.broken = True  # the node went away (a failover?): the loop replaces us
            self.woke(None)
        finally:
            with contextlib.suppress(redis.RedisError, OSError):
                pubsub.close()

    def stop(self) -> None:
        self.stopped.set()


class KeyspaceWake:
    """Waits for an entry in any owned partition's inbox, on a Redis Cluster."""

    def __init__(self, client: Any, space: keys.Space) -> None:
        self.client = client
        self.space = space
        self.listeners: dict[str, _Listener] = {}
        # Nodes that would not publish (no CONFIG for us), and when they said so: the loop
        # polls, and asks again only after ASK_AGAIN_S (not at every idle poll).
        self.refused: dict[str, float] = {}
        self.lock = threading.Lock()
        self.event = threading.Event()
        self.armed = threading.Event()  # the loop waits: the listeners listen
        self.woken: set[int] = set()
        self.healthy = False

    def _woke(self, number: int | None) -> None:
        with self.lock:
            if number is not None:
                self.woken.add(number)
            self.event.set()

    def watch(self, partitions: Iterable[int]) -> None:
        """Listen on the masters that hold these partitions now (cheap when nothing
        moved: the client's slot map, read locally). A listener whose node left, or
        that broke, is replaced; a node that refuses to publish makes :meth:`wait`
        give up until it does."""
        by_node: dict[str, tuple[Any, set[int]]] = {}
        for number in partitions:
            node = self.client.get_node_from_key(self.space.inbox(number))
            by_node.setdefault(node.name, (node, set()))[1].add(number)
        for name, listener in list(self.listeners.items()):
            if name not in by_node or listener.broken or not listener.is_alive():
                listener.stop()
                del self.listeners[name]
        for name, (node, numbers) in by_node.items():
            if name not in self.listeners:
                if time.monotonic() - self.refused.get(name, -ASK_AGAIN_S) < ASK_AGAIN_S:
                    continue
                connection = self.client.get_redis_connection(node)
                if not configure(connection):
                    self.refused[name] = time.monotonic()
                    continue
                self.refused.pop(name, None)
                listener = _Listener(connection, self.space, self._woke, self.armed)
                listener.want(numbers)
                listener.start()
                self.listeners[name] = listener
            else:
                self.listeners[name].want(numbers)
        self.healthy = bool(by_node) and all(name in self.listeners for name in by_node)

    def wait(self, timeout: float) -> set[int] | None:
        """The partitions that got an entry, as soon as one does (empty after
        ``timeout``); None when it cannot listen (the caller polls)."""
        if not self.healthy:
            return None
        self.armed.set()
        try:
            self.event.wait(timeout)
        finally:
            self.armed.clear()
        with self.lock:
            woken, self.woken = self.woken, set()
            self.event.clear()
        return woken

    def close(self) -> None:
        for listener in self.listeners.values():
            listener.stop()
        self.listeners.clear()
        self.healthy = False
