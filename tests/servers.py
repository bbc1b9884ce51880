"""Real redis-server processes for the tests: free ports, temp dirs, nothing persisted.

Tests never touch the machine's default Redis on 6379. Without a
``redis-server`` binary these tests skip with the reason, except in CI
(``CI`` set), where a missing binary is a failure: ``.ci/run`` installs one.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis


def require_binary(name: str = "redis-server") -> str:
    path = shutil.which(name)
    if path is None:
        needs = "Chromium" if "chromium" in name else "Redis"
        message = f"{name} binary not found: install {needs} to run the tests that use it"
        if os.environ.get("CI"):
            pytest.fail(message + " (in CI this is a failure, not a skip)")
        pytest.skip(message)
    return path


def free_port(below: int = 65536) -> int:
    """A port nobody listens on; ``below`` bounds it (a cluster node also needs port+10000)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0 if below == 65536 else random.randrange(20000, below)))
            port = s.getsockname()[1]
        if port < below:
            return port
    raise RuntimeError("no free port found")


class RedisServer:
    """One redis-server on 127.0.0.1, with no persistence, in its own directory."""

    def __init__(self, folder: Path, *extra: str, cluster_node: bool = False) -> None:
        self.binary = require_binary()
        self.port = free_port(below=55536 if cluster_node else 65536)
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(folder),
                "--save",
                "",
                "--appendonly",
                "no",
                "--logfile",
                str(folder / "redis.log"),
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"redis://127.0.0.1:{self.port}/0"
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis(port=self.port).ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"redis-server on {self.port} did not start") from None
                time.sleep(0.02)

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()


class RedisCluster:
    """Three masters, no replicas, slots spread by ``redis-cli --cluster create``."""

    def __init__(self, folder: Path, masters: int = 3) -> None:
        cli = require_binary("redis-cli")
        self.nodes = [
            RedisServer(
                folder / f"node{i}",
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                str(folder / f"node{i}" / "nodes.conf"),
                "--cluster-node-timeout",
                "2000",
                cluster_node=True,
            )
            for i in range(masters)
        ]
        subprocess.run(
            [
                cli,
                "--cluster",
                "create",
                *[f"127.0.0.1:{n.port}" for n in self.nodes],
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
        deadline = time.monotonic() + 20
        while any(
            b"cluster_state:ok" not in n.client().execute_command("CLUSTER", "INFO")
            for n in self.nodes
        ):
            if time.monotonic() > deadline:
                raise RuntimeError("the test cluster did not reach cluster_state:ok")
            time.sleep(0.1)
        self.url = self.nodes[0].url

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
