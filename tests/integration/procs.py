"""Real service processes for the integration tests: start, signal, kill, wait."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from dudo import keys

P = 8
FAST = ["--lease-ms", "1500", "--heartbeat", "0.2", "--dead-after-ms", "1000"]


class Workers:
    """Starts and stops `dudo worker` processes; their logs go to the test's temp dir."""

    def __init__(self, url: str, folder: Path) -> None:
        self.url = url
        self.folder = folder
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, *extra: str) -> subprocess.Popen[bytes]:
        log = open(self.folder / f"{name}.log", "wb")  # noqa: SIM115 - lives with the process
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dudo",
                "worker",
                "--redis",
                self.url,
                "--partitions",
                str(P),
                "--id",
                name,
                "--log-level",
                "info",
                *FAST,
                *extra,
            ],
            stdout=log,
            stderr=log,
        )
        self.procs[name] = proc
        return proc

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        self.procs[name].send_signal(sig)
        self.procs[name].wait(10)

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


def owners(client: redis.Redis) -> dict[int, str]:
    """Partition -> worker holding a live lease."""
    out = {}
    for p in range(P):
        raw = client.get(keys.lease(p))
        if raw:
            _, owner, _ = raw.decode().split("|")
            if owner:
                out[p] = owner
    return out


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
