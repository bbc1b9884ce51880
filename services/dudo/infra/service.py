"""What every long-running service shares: surviving Redis outages, health, a graceful stop.

Redis goes away: it restarts, a failover moves the master, a proxy drops idle
connections, an operator runs ``CLIENT KILL``. None of that may end a process.
A service built on :func:`run_until_stopped` calls its ``step`` in a loop; when a
step fails, the service says so once (``redis_unavailable``), reports not-ready,
lets the service drop whatever in-memory state may now be ahead of Redis
(``recover``), waits with exponential backoff and jitter (so a fleet does not
reconnect in lockstep), and tries again, until a step succeeds
(``redis_recovered``) or the service is asked to stop.

Redis clients are made with the library's own retries turned off
(:func:`dudo.infra.connection.connect`): a resent script or ``XADD`` whose first reply
was lost would run twice. Each service decides what a failure means instead.

:class:`Health` answers ``/healthz`` (the loop is turning) and ``/readyz`` (it can
do its work) over HTTP, for orchestrators and load balancers.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import redis
import structlog
from prometheus_client import CollectorRegistry
from prometheus_client.process_collector import ProcessCollector

# Failures that mean "Redis cannot be reached or cannot serve right now": retry.
REDIS_DOWN: tuple[type[BaseException], ...] = (
    redis.ConnectionError,  # includes BusyLoadingError (LOADING after a restart)
    redis.TimeoutError,
    redis.ReadOnlyError,  # a replica during a failover
    redis.exceptions.ClusterDownError,
    redis.exceptions.TryAgainError,
    redis.exceptions.MasterDownError,
    ConnectionError,
    OSError,
)


class Backoff:
    """Exponential backoff with "equal jitter": each wait is between half and all of
    ``base * 2**attempt`` (capped), so that many processes retrying do not align."""

    def __init__(self, base: float = 0.05, cap: float = 2.0, rng: random.Random | None = None):
        self.base, self.cap = base, cap
        self.attempt = 0
        self.rng = rng or random.Random()

    def next(self) -> float:
        ceiling = min(self.cap, self.base * 2**self.attempt)
        self.attempt += 1
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)

    def reset(self) -> None:
        self.attempt = 0


def metrics_registry() -> CollectorRegistry:
    """A process's own page of Prometheus metrics, served with its health at ``/metrics``:
    every long-running process makes its one registry here, with its CPU, memory and
    start time on it (``process_*``: a restart shows as a new start time). A metric is
    declared beside the code that counts it, on its process's registry; the dashboards
    and alerts in deploy/ use the names (``tests/test_deploy.py`` holds them to what the
    processes export)."""
    registry = CollectorRegistry()
    ProcessCollector(registry=registry)
    return registry


class Health:
    """A process's liveness and readiness, served over HTTP when a port is given.

    ``/healthz``: 200 while the main loop keeps turning (it calls :meth:`beat`);
    503 once it has been stuck for ``stall_after`` seconds (a deadlock, a hung
    call): an orchestrator should restart the process. ``/readyz``: 200 only
    while the service can do its work (Redis reachable); the body says why not.
    ``/metrics``: the process's Prometheus metrics, when it has a ``registry``.
    """

    def __init__(self, name: str, stall_after: float = 30.0, registry: Any = None) -> None:
        self.name = name
        self.registry = registry  # Prometheus metrics to serve at /metrics (None: no page)
        self.held: str | None = None
        self.stall_after = stall_after
        self.ready = False
        self.reason = "starting"
        self.details: dict[str, Any] = {}
        self._beat = time.monotonic()
        self._server: ThreadingHTTPServer | None = None

    def beat(self) -> None:
        self._beat = time.monotonic()

    def set_ready(self, ready: bool, reason: str = "") -> None:
        self.ready, self.reason = ready, ("" if ready else reason)

    def hold(self, reason: str | None) -> None:
        """Not ready for ``reason`` whatever the loop says (a drained worker), until
        ``hold(None)``."""
        self.held = reason

    @property
    def alive(self) -> bool:
        return time.monotonic() - self._beat < self.stall_after

    def status(self) -> dict[str, Any]:
        # The details first: a detail named like a verdict ("ready", said of one part:
        # the chat gateway's outbox reader) must never stand for the process's own.
        return {
            **self.details,
            "service": self.name,
            "alive": self.alive,
            "ready": self.ready and self.alive and not self.held,
            "reason": self.held or self.reason,
        }

    def serve(self, port: int, host: str = "0.0.0.0") -> int:
        """Answer ``/healthz`` and ``/readyz`` on ``port`` (0: any free one) in a daemon
        thread; returns the port."""
        health = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the name http.server calls
                if self.path == "/metrics" and health.registry is not None:
                    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

                    page = generate_latest(health.registry)
                    self.send_response(200)
                    self.send_header("Content-Type", CONTENT_TYPE_LATEST)
                    self.send_header("Content-Length", str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
                    return
                status = health.status()
                if self.path == "/healthz":
                    ok = status["alive"]
                elif self.path == "/readyz":
                    ok = status["ready"]
                else:
                    self.send_error(404)
                    return
                body = json.dumps(status).encode()
                self.send_response(200 if ok else 503)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:  # quiet: probes come every second
                return

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="health", daemon=True).start()
        return int(self._server.server_address[1])

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def run_until_stopped(
    step: Callable[[], Any],
    *,
    stopping: Callable[[], bool],
    health: Health,
    recover: Callable[[], None] = lambda: None,
    log: Any = None,
    backoff: Backoff | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Call ``step`` until ``stopping()``; survive every failure of a step.

    A Redis failure (:data:`REDIS_DOWN`) is expected: it is logged once per
    outage, readiness drops, and the loop retries with backoff. Any other
    exception is our bug: it is logged with its traceback and treated the same
    way, so that one bad cycle never ends the process. ``recover`` runs after
    every failure, before the wait: drop whatever state may be ahead of Redis.
    """
    log = log or structlog.get_logger("dudo.infra.service")
    backoff = backoff or Backoff()
    down_since: float | None = None
    while not stopping():
        health.beat()
        try:
            step()
        except REDIS_DOWN as exc:
            if down_since is None:
                down_since = time.monotonic()
                log.warning("redis_unavailable", error=f"{exc.__class__.__name__}: {exc}")
            health.set_ready(False, f"redis unavailable: {exc.__class__.__name__}")
        except Exception:
            log.exception("cycle_failed")
            health.set_ready(False, "a cycle failed; retrying")
            if down_since is None:
                down_since = time.monotonic()
        else:
            if down_since is not None:
                log.info("redis_recovered", down_s=round(time.monotonic() - down_since, 3))
                down_since = None
                backoff.reset()
            health.set_ready(True)
            continue
        try:
            recover()
        except REDIS_DOWN:
            pass  # still down: it runs again after the next failure
        except Exception:
            log.exception("recover_failed")
        sleep(backoff.next())


def retry_until_ready(
    attempt: Callable[[], Any],
    *,
    stopping: Callable[[], bool] = lambda: False,
    log: Any = None,
    what: str = "redis",
    backoff: Backoff | None = None,
) -> bool:
    """Call ``attempt`` until it succeeds without a Redis failure (a process starting
    while Redis is still down waits for it instead of exiting). False if stopped."""
    log = log or structlog.get_logger("dudo.infra.service")
    backoff = backoff or Backoff()
    waited = False
    while not stopping():
        try:
            attempt()
        except REDIS_DOWN as exc:
            if not waited:
                log.warning(
                    "waiting_for_redis", what=what, error=f"{exc.__class__.__name__}: {exc}"
                )
                waited = True
            time.sleep(backoff.next())
            continue
        return True
    return False
