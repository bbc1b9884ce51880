"""A running `dudo serve` on the test's own redis-server, for browser and terminal tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..servers import RedisServer, free_port

OUTPUT = Path(__file__).resolve().parents[2] / "test-output"


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{base}/readyz", timeout=2) as response:
                if json.load(response)["ready"]:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("dudo serve did not become ready")
        time.sleep(0.1)


@pytest.fixture
def served(redis_server: RedisServer, tmp_path: Path) -> Iterator[str]:
    """`dudo serve` with a real Redis, quick bots; yields the base URL."""
    redis_server.client().flushall()
    port = free_port()
    log = open(tmp_path / "serve.log", "wb")  # noqa: SIM115 - lives with the process
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dudo",
            "serve",
            "--redis",
            redis_server.url,
            "--port",
            str(port),
            "--bot-think",
            "0.05,0.15",
        ],
        stdout=log,
        stderr=log,
        env={**os.environ, "DUDO_GATEWAY_SECRET": "e2e-secret-0123456789abcdef"},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, proc)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT
