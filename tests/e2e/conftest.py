"""A running `dudo serve` on the test's own redis-server, for browser and terminal tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dudo.ops.fleet import wait_ready

from ..servers import RedisServer, free_port

OUTPUT = Path(__file__).resolve().parents[2] / "test-output"
SECRET = "e2e-secret-0123456789abcdef"  # every gateway of a test shares it, as deploy/'s do


@contextlib.contextmanager
def serving(
    folder: Path, *args: str, solves: bool = False
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`dudo serve` with these arguments on a free port, until the block ends. Without
    the presets' endgame solves (seconds of a core each, at every start) unless
    ``solves`` (tests/e2e/test_serve.py)."""
    port = free_port()
    log = (folder / "serve.log").open("wb")
    args = args if solves else (*args, "--no-endgame-solves")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dudo", "serve", "--port", str(port), *args],
        stdout=log,
        stderr=log,
        env={**os.environ, "DUDO_GATEWAY_SECRET": SECRET},
    )
    base = f"http://127.0.0.1:{port}"
    with _running(proc, log):
        wait_ready(base, proc)
        yield base, proc


@contextlib.contextmanager
def _running(proc: subprocess.Popen[bytes], log: Any) -> Iterator[None]:
    """Until the block ends: then stopped (SIGTERM, SIGKILL after 10 s), its log closed."""
    try:
        yield
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()


@contextlib.contextmanager
def gateway_beside(folder: Path, redis_url: str, gateway_id: str) -> Iterator[str]:
    """A second web gateway (`dudo gateway`) on the Redis a `dudo serve` uses, with the
    same secret: as deploy/ runs two behind one address. Yields its base URL."""
    port = free_port()
    log = (folder / f"{gateway_id}.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dudo", "gateway", "--redis", redis_url, "--port", str(port),
         "--id", gateway_id],
        stdout=log,
        stderr=log,
        env={**os.environ, "DUDO_GATEWAY_SECRET": SECRET},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    with _running(proc, log):
        wait_ready(base, proc)
        yield base


@pytest.fixture
def served(redis_server: RedisServer, tmp_path: Path) -> Iterator[str]:
    """`dudo serve` with a real Redis, quick bots, no hold after a reveal; yields the base
    URL."""
    redis_server.client().flushall()
    quick = ("--bot-think", "0.05,0.15", "--reveal-hold", "0")  # test_browser.py: with a hold
    with serving(tmp_path, "--redis", redis_server.url, *quick) as (base, _):
        yield base


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT
