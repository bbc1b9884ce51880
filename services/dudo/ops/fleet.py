"""The processes a chaos run or a benchmark plays on, and the faults done to them.

A :class:`Fleet` is a deployment on one machine: a Redis (its own
``redis-server`` with an append-only file, so it can be restarted, or one given
by URL, which is then never touched), table workers and web gateways, each a
real ``dudo`` process. Its fault methods are what an operator's worst day looks
like: ``kill -9`` and ``SIGSTOP`` of workers, ``kill -9`` of gateways, Redis
restarts. Every process that dies is replaced, as an orchestrator would; nothing
is ever repaired by hand.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..infra import RedisServer, connect, create_groups, ensure_partitions, find_binary, free_port
from ..wire import keys
from . import admin

# Short leases: a dead or frozen worker's partitions move within ~2 s; no reveal hold
# (scripted players read nothing).
WORKER_FLAGS = [
    "--lease-ms", "2000", "--heartbeat", "0.25", "--dead-after-ms", "1200", "--reveal-hold", "0",
]  # fmt: skip


# Gateway flags for scripted clients (benchmarks, chaos runs): they all come from this
# machine, so the per-address limits are off.
ONE_ADDRESS = [
    "--creates-per-min",
    "1e9",
    "--joins-per-min",
    "1e9",
    "--conns-per-address",
    "1000000",
]


def fresh_redis(url: str, partitions: int, *, flush: bool, bench: str) -> Any:
    """A client for an empty Redis set up for ``partitions``; refuses a Redis with data
    unless ``flush`` (benchmarks write the deployment's real key names)."""
    client = connect(url)
    if flush:
        client.flushall()
    elif client.dbsize():
        raise SystemExit(f"dudo bench {bench} needs an empty Redis (or --flush, which erases it)")
    ensure_partitions(client, partitions)
    create_groups(client, partitions, space=keys.TABLES)
    return client


def wait_ready(base: str, proc: subprocess.Popen[Any] | None = None, timeout: float = 20) -> None:
    """Wait until a gateway at ``base`` answers ``/readyz`` with ready."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{base}/readyz", timeout=2) as response:
                if json.load(response)["ready"]:
                    return
        except OSError:
            pass
        if (proc is not None and proc.poll() is not None) or time.monotonic() > deadline:
            raise RuntimeError(f"the gateway at {base} did not become ready")
        time.sleep(0.1)


def stop(procs: list[subprocess.Popen[Any]]) -> None:
    """SIGTERM every process, wait for them (up to 15 s each), kill what remains."""
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


@dataclass
class Fleet:
    folder: Path
    partitions: int = 16
    redis_url: str | None = None  # None: run our own redis-server (restartable)
    secret: str = field(default_factory=lambda: secrets.token_hex(16))
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    redis_server: RedisServer | None = None
    worker_flags: list[str] = field(default_factory=lambda: list(WORKER_FLAGS))
    gateway_flags: list[str] = field(default_factory=list)  # added to every gateway's
    # A checkout's `services/` folder the processes import dudo from instead of this
    # one's (a benchmark comparing commits with one load generator); None: this one.
    code: str | None = None
    serial: int = 0
    # Gateways admitted with a Redis user of their own: their URLs (the rest: the admin's)
    users: dict[str, str] = field(default_factory=dict)
    port_range: range | None = None  # where its Redis and gateways listen (None: anywhere)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)  # the processes' logs go there

    # -- Redis -------------------------------------------------------------------------

    @property
    def owns_redis(self) -> bool:
        return self.redis_server is not None or self.redis_url is None

    def start_redis(self) -> str:
        """Our own redis-server (AOF on, everysec) in ``folder``, or the given URL."""
        if self.redis_url is not None and self.redis_server is None:
            return self.redis_url
        if self.redis_server is None:
            found = find_binary()
            if found is None:
                raise SystemExit("no redis-server on PATH (or give --redis URL)")
            port = free_port(self.port_range, taken=self.ports.values())
            self.redis_server = RedisServer(
                found[0], self.folder / "redis", port=port, aof=True, aclfile=True
            )
        self.redis_url = self.redis_server.start()
        return self.redis_url

    def restart_redis(self, down_for: float) -> None:
        """SIGTERM (Redis finishes its append-only file), ``down_for`` seconds of
        nothing, then the same server again."""
        assert self.redis_server is not None, "not our Redis: never restarted"
        self.redis_server.stop()
        time.sleep(down_for)
        self.start_redis()

    # -- dudo processes ------------------------------------------------------------------

    def spawn(self, name: str, *args: str, module: str = "dudo") -> subprocess.Popen[bytes]:
        """``python -m dudo ARGS`` (or another of our modules) as process ``name``,
        its output in ``name.log``."""
        log = open(self.folder / f"{name}.log", "ab")  # noqa: SIM115 - lives with the process
        proc = subprocess.Popen(
            [sys.executable, "-m", module, *args], stdout=log, stderr=log, env=self._env()
        )
        self.procs[name] = proc
        return proc

    def _env(self) -> dict[str, str]:
        """The processes' environment: the gateways' secret, and :attr:`code` first on
        the import path where it is set."""
        env = {**os.environ, "DUDO_GATEWAY_SECRET": self.secret}
        if self.code is not None:
            env["PYTHONPATH"] = os.pathsep.join([self.code, env.get("PYTHONPATH", "")])
        return env

    def start_worker(self) -> str:
        self.serial += 1
        name = f"worker-{self.serial}"
        self.spawn(
            name, "worker", "--redis", str(self.redis_url), "--partitions", str(self.partitions),
            "--id", name, "--log-level", "warning", *self.worker_flags,
        )  # fmt: skip
        return name

    def start_director(self, table_partitions: int | None = None) -> str:
        """A tournament director (the worker's loop over tournament partitions)."""
        self.serial += 1
        name = f"director-{self.serial}"
        self.spawn(
            name, "director", "--redis", str(self.redis_url), "--id", name,
            "--table-partitions", str(table_partitions or self.partitions),
            "--log-level", "warning", *self.worker_flags,
        )  # fmt: skip
        return name

    def start_gateway(self, name: str) -> str:
        """A gateway (the same port again when restarted); returns its base URL."""
        if name not in self.ports:
            taken = [*self.ports.values(), *([self.redis_server.port] if self.redis_server else [])]
            self.ports[name] = free_port(self.port_range, taken=taken)
        port = self.ports[name]
        self.spawn(
            name, "gateway", "--redis", self.users.get(name, str(self.redis_url)), "--port",
            str(port),
            "--partitions", str(self.partitions), "--id", name, "--log-level", "warning",
            *ONE_ADDRESS, "--reply-timeout", "3", *self.gateway_flags,
        )  # fmt: skip
        return f"http://127.0.0.1:{port}"

    def admit(self, names: list[str], app: str) -> None:
        """Give these gateways Redis users of their own, of app ``app``, as a deployment
        admits an app (entries signed and checked from then on); once the workers stored
        the partition count (the users' inboxes are those)."""

        client = connect(str(self.redis_url))
        try:
            deadline = time.monotonic() + 30
            while client.hget(keys.CONFIG, "partitions") is None:
                if time.monotonic() > deadline:
                    raise RuntimeError("no worker stored the partition count")
                time.sleep(0.1)
            for name in names:
                if self.code is None:
                    password = admin.add_gateway(client, name, app=app)
                else:  # another checkout's processes: its own admin admits them, as its
                    password = self._admit_with_code(name)  # deployments would (its ACL)
                self.users[name] = admin.url_for(str(self.redis_url), name, password)
        finally:
            client.close()

    def _admit_with_code(self, name: str) -> str:
        """``name`` admitted by :attr:`code`'s own ``admin.add_gateway`` (its users'
        rules, its keys); its password."""
        assert self.code is not None
        # That checkout's layout, read from its folders (in layers: dudo.ops and
        # dudo.infra; or flat, as before them), not by trying imports: a module it lacks
        # would be found in this checkout (an editable install's finder looks last).
        layered = (Path(self.code) / "dudo" / "ops").is_dir()
        script = "import sys\n" + (
            "from dudo.ops import admin\nfrom dudo.infra.connection import connect\n"
            if layered else "from dudo import admin\nfrom dudo.connection import connect\n"
        ) + "print(admin.add_gateway(connect(sys.argv[1]), sys.argv[2]))"
        done = subprocess.run(
            [sys.executable, "-c", script, str(self.redis_url), name],
            capture_output=True, text=True, env=self._env(), timeout=60, check=True,
        )  # fmt: skip
        return done.stdout.strip().splitlines()[-1]

    def wait_gateway(self, name: str, timeout: float = 30) -> None:
        wait_ready(f"http://127.0.0.1:{self.ports[name]}", self.procs[name], timeout=timeout)

    def workers(self) -> list[str]:
        return [n for n, p in self.procs.items() if n.startswith("worker-") and p.poll() is None]

    def gateways(self) -> list[str]:
        return [n for n in self.ports if self.procs[n].poll() is None]

    # -- faults ----------------------------------------------------------------------------

    def kill_worker(self, rng: random.Random) -> str:
        """``kill -9`` a worker; a new one starts at once (as an orchestrator would)."""
        victim = rng.choice(self.workers())
        self.procs[victim].kill()
        self.procs[victim].wait(10)
        self.start_worker()
        return victim

    def pause_worker(self, rng: random.Random, seconds: float) -> str:
        """``SIGSTOP`` a worker past its lease (its partitions move), then let it run:
        it must notice it was fenced and commit nothing stale."""
        victim = rng.choice(self.workers())
        proc = self.procs[victim]
        proc.send_signal(signal.SIGSTOP)
        time.sleep(seconds)
        proc.send_signal(signal.SIGCONT)
        return victim

    def kill_gateway(self, rng: random.Random, down_for: float) -> str:
        """``kill -9`` a gateway; it comes back on the same port after ``down_for``."""
        victim = rng.choice(self.gateways())
        self.procs[victim].kill()
        self.procs[victim].wait(10)
        time.sleep(down_for)
        self.start_gateway(victim)
        return victim

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if self.redis_server is not None:
            self.redis_server.stop()

    def alive(self) -> dict[str, bool]:
        return {name: proc.poll() is None for name, proc in self.procs.items()}


def temporary_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="dudo-chaos-"))
