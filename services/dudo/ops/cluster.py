"""A Redis Cluster on this machine: masters and their replicas, for the scale bench and tests.

What an operator's cluster is, small: ``masters`` redis-servers that share the 16,384
slots (``redis-cli --cluster create``), each with ``replicas`` of its own, on loopback.
It is started whole and waited for until every node agrees (slots covered, replicas in
sync), so that what runs on it never meets a cluster still forming. :meth:`fail_over`
is the operator's maintenance move: a master hands over to its replica
(``CLUSTER FAILOVER``: writes pause until the replica has every one, then it takes
over), so no acknowledged write is lost by it.
"""

from __future__ import annotations

import random
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from ..infra import RedisServer, bindable, ephemeral_low, find_binary

BUS_OFFSET = 10_000  # a node's cluster bus listens on its port + 10,000


def node_port(taken: set[int]) -> int:
    """A port for a node whose bus port (+10,000) is free too, below the kernel's range for
    outgoing connections (the clients open thousands: none may take a node's port between
    this choice and its bind). Random, so that two processes starting clusters at once
    rarely pick the same; a start that loses the race is retried on another."""
    top = ephemeral_low() - BUS_OFFSET
    for _ in range(500):
        port = random.randrange(10_000, top)
        if port not in taken and bindable(port) and bindable(port + BUS_OFFSET):
            return port
    raise OSError("no free port pair for a cluster node")


@dataclass
class LocalCluster:
    """``masters`` × (1 + ``replicas``) redis-servers on loopback, slots spread evenly."""

    folder: Path
    masters: int = 3
    replicas: int = 0
    node_timeout_ms: int = 2000
    nodes: list[RedisServer] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def pids(self) -> dict[str, list[int]]:
        """The nodes' processes by what they are now: ``redis`` (masters) and ``replica``."""
        roles = self.roles()
        found: dict[str, list[int]] = {"redis": [], "replica": []}
        for node in self.nodes:
            if node.proc is not None:
                of = roles.get(f"127.0.0.1:{node.port}")
                found["replica" if of else "redis"].append(node.proc.pid)
        return found

    def start(self, timeout: float = 30.0) -> str:
        """Start every node, join them, and wait until the cluster says ok; its URL."""
        found = find_binary("redis-server")
        cli = find_binary("redis-cli")
        if found is None or cli is None:
            raise SystemExit("a Redis Cluster needs redis-server and redis-cli")
        taken: set[int] = set()
        for i in range(self.masters * (1 + self.replicas)):
            self.nodes.append(self._node(found[0], self.folder / f"node{i}", taken))
        subprocess.run(
            [cli[0], "--cluster", "create", *[f"127.0.0.1:{n.port}" for n in self.nodes],
             "--cluster-replicas", str(self.replicas), "--cluster-yes"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while not self.settled():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster in {self.folder} did not reach cluster_state:ok")
            time.sleep(0.1)
        return self.url

    def _node(self, binary: str, folder: Path, taken: set[int]) -> RedisServer:
        for attempt in range(3):
            port = node_port(taken)
            node = RedisServer(
                binary, folder, port=port,
                extra=("--cluster-enabled", "yes",
                       "--cluster-config-file", str(folder / "nodes.conf"),
                       "--cluster-node-timeout", str(self.node_timeout_ms)),
            )  # fmt: skip
            try:
                node.start()
            except RuntimeError:
                node.stop()
                if attempt == 2:
                    raise
                continue  # another process took the port first
            taken.add(port)
            return node
        raise AssertionError("unreachable")

    def settled(self) -> bool:
        """Every node agrees: slots covered, every replica known and in sync."""
        for node in self.nodes:
            client = node.client()
            try:
                info = client.execute_command("CLUSTER", "INFO")
                nodes = client.execute_command("CLUSTER", "NODES")
                link = client.info("replication").get("master_link_status")
            except redis.RedisError:
                return False
            finally:
                client.close()
            replicas = len(re.findall(rb"[ ,]slave[ ,]", nodes))
            if b"cluster_state:ok" not in info or replicas != self.masters * self.replicas:
                return False
            if link == "down":
                return False
        return True

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def fail_over(self, key: str, timeout: float = 30.0) -> tuple[str, str]:
        """The master holding ``key`` hands over to a replica of its own (a manual
        failover); returns (old master, new master) as ``host:port``."""
        from redis.cluster import RedisCluster

        client = RedisCluster.from_url(self.url)
        try:
            master = client.get_node_from_key(key).name
        finally:
            client.close()
        replica = next(a for a, of in self.roles().items() if of == master)
        host, port = replica.split(":")
        node = redis.Redis(host=host, port=int(port))
        try:
            node.execute_command("CLUSTER", "FAILOVER")
            deadline = time.monotonic() + timeout
            while node.info("replication")["role"] != "master":
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{replica} did not take over from {master}")
                time.sleep(0.1)
        finally:
            node.close()
        return master, replica

    def roles(self) -> dict[str, str | None]:
        """Each node (``host:port``) and the master it replicates (None for a master),
        from CLUSTER NODES as the first node sees it."""
        client = self.nodes[0].client()
        try:
            return {node: master for node, (_, master) in cluster_nodes(client).items()}
        finally:
            client.close()


def cluster_nodes(conn: Any) -> dict[str, tuple[str, str | None]]:
    """Each node's ``host:port``: its node id, and the master it replicates (None for a
    master), from CLUSTER NODES as ``conn``'s node sees it."""
    lines = conn.execute_command("CLUSTER", "NODES").decode().splitlines()
    fields = [line.split() for line in lines]
    address = {f[0]: f[1].split("@")[0] for f in fields}
    return {address[f[0]]: (f[0], address.get(f[3]) if f[3] != "-" else None) for f in fields}
