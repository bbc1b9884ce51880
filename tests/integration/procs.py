"""Real service processes for the integration tests: start, signal, kill, wait."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from dudo.ops.fleet import wait_ready
from dudo.wire import keys

from ..servers import free_port

P = 8
FAST = ["--lease-ms", "1500", "--heartbeat", "0.2", "--dead-after-ms", "1000", "--reveal-hold", "0"]


class Workers:
    """Starts and stops `dudo` service processes (workers, gateways, bot services); their
    logs go to the test's temp dir, one file per process name."""

    SECRET = "integration-secret-0123456789abcdef"

    def __init__(self, url: str, folder: Path, partitions: int = P) -> None:
        self.url = url
        self.folder = folder
        self.partitions = partitions
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.ports: dict[str, int] = {}

    def spawn(
        self, name: str, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """``python -m dudo ARGS`` as the process ``name`` (a name may be reused once
        the previous process of that name has ended: its log is appended to)."""
        log = open(self.folder / f"{name}.log", "ab")  # noqa: SIM115 - lives with the process
        proc = subprocess.Popen(
            [sys.executable, "-m", "dudo", *args],
            stdout=log,
            stderr=log,
            env={**os.environ, "DUDO_GATEWAY_SECRET": self.SECRET, **(env or {})},
        )
        self.procs[name] = proc
        return proc

    def start(self, name: str, *extra: str) -> subprocess.Popen[bytes]:
        """A table worker with short leases (failures are noticed within a second or two)."""
        return self.spawn(
            name,
            "worker",
            "--redis",
            self.url,
            "--partitions",
            str(self.partitions),
            "--id",
            name,
            "--log-level",
            "info",
            *FAST,
            *extra,
            env={"DUDO_INSECURE_SEED": "1"},
        )

    def gateway(self, name: str, *extra: str, port: int | None = None) -> str:
        """A web gateway (same port again on a restart); returns its base URL once ready."""
        port = port or self.ports.get(name) or free_port()
        self.ports[name] = port
        proc = self.spawn(
            name,
            "gateway",
            "--redis",
            self.url,
            "--port",
            str(port),
            "--partitions",
            str(self.partitions),
            "--id",
            name,
            *extra,
        )
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, proc)
        return base

    def bots(self, name: str, *extra: str, solves: bool = False) -> subprocess.Popen[bytes]:
        """A bot service; without the presets' endgame solves unless ``solves`` (two
        against one costs a minute or two of a core each: no test here needs them), and
        without a pause before each move unless ``extra`` gives one (tests play whole
        games against bots)."""
        quick = () if solves else ("--no-endgame-solves",)
        if "--think-min" not in extra:
            quick += ("--think-min", "0", "--think-max", "0")
        return self.spawn(
            name, "bots", "--redis", self.url, "--partitions", str(self.partitions), *quick,
            *extra,
        )  # fmt: skip

    def irc(
        self,
        name: str,
        server: str,
        *extra: str,
        url: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        """A chat gateway (``dudo irc``) with gateway id ``name`` on the IRC server at
        ``server`` (HOST:PORT), under ``url``'s Redis user (default: the admin's); returns
        once it said it started."""
        log = self.folder / f"{name}.log"
        before = log.read_text() if log.exists() else ""
        self.spawn(
            name, "irc", "--server", server, "--redis", url or self.url, "--id", name,
            "--partitions", str(self.partitions), "--log-level", "debug", *extra, env=env,
        )  # fmt: skip
        wait_for(
            lambda: "irc_registered" in log.read_text()[len(before) :]
            or self.procs[name].poll() is not None,
            30,
            f"the chat gateway {name}",
        )
        assert self.procs[name].poll() is None, log.read_text()

    def matrix(
        self, name: str, homeserver: str, user: str, *extra: str, url: str | None = None,
        password: str = "secret-pw",
    ) -> None:  # fmt: skip
        """A chat gateway (``dudo matrix``) with gateway id ``name``, logged in as
        ``user`` on ``homeserver`` (the password in its environment, as the operator's
        guide says); returns once it synced."""
        log = self.folder / f"{name}.log"
        before = log.read_text() if log.exists() else ""
        self.spawn(
            name, "matrix", "--homeserver", homeserver, "--user", user, "--redis",
            url or self.url, "--id", name, "--partitions", str(self.partitions),
            "--log-level", "debug", *extra, env={"DUDO_MATRIX_PASSWORD": password},
        )  # fmt: skip
        wait_for(
            lambda: "matrix_synced" in log.read_text()[len(before) :]
            or self.procs[name].poll() is not None,
            30,
            f"the Matrix gateway {name}",
        )
        assert self.procs[name].poll() is None, log.read_text()

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


def ready(base: str) -> bool:
    """Does the HTTP server at ``base`` answer its /readyz with 200 (ready to serve)?"""
    try:
        with urllib.request.urlopen(f"{base}/readyz", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False
