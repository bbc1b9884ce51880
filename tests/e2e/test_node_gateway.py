"""A third-party gateway in another language: docs/examples/gateway.mjs (Node, ioredis and
@msgpack/msgpack from the npm registry) plays a whole game against a live worker and bot
service through the stream protocol alone, as a Redis user of its own (`dudo admin
gateway add`), with nothing refused by Redis's ACL and its outbox trimmed behind it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import redis

from dudo import admin, keys

from ..integration.procs import Workers
from ..servers import RedisServer, require_binary

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "gateway.mjs"
PREFIX = ROOT / ".pytest_cache" / "node-gateway"  # its npm packages, installed once
PACKAGES = ("ioredis@5", "@msgpack/msgpack@3")


def install() -> Path:
    npm = require_binary("npm")
    if not (PREFIX / "node_modules" / "ioredis" / "package.json").exists() or not (
        PREFIX / "node_modules" / "@msgpack" / "msgpack" / "package.json"
    ).exists():
        PREFIX.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(PREFIX),
             *PACKAGES],
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip
    # ES modules resolve packages from the script's own folder: run a copy from there.
    script = PREFIX / EXAMPLE.name
    shutil.copyfile(EXAMPLE, script)
    return script


def test_the_node_example_is_short() -> None:
    assert len(EXAMPLE.read_text().splitlines()) <= 150


def test_a_node_gateway_plays_a_whole_game_as_its_own_redis_user(
    redis_server: RedisServer, real_redis: redis.Redis, tmp_path: Path
) -> None:
    node = require_binary("node")
    script = install()
    password = admin.add_gateway(real_redis, "node-1")
    group = Workers(redis_server.url, tmp_path)
    try:
        group.start("w1")
        group.bots("b1")
        run = subprocess.run(
            [node, str(script)],
            env={"REDIS_URL": admin.url_for(redis_server.url, "node-1", password),
                 "GATEWAY_ID": "node-1", "PATH": "/usr/bin:/bin"},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        result = json.loads(run.stdout.strip().splitlines()[-1])
        assert result["winner"] in (0, 1) and result["seat"] in (0, 1)
        assert result["sent"] >= 3 and result["refused"] == 0, run.stderr  # create, join, acts
        refused = [e for e in real_redis.acl_log(count=100)
                   if e.get("username") == admin.user_of("node-1")]  # fmt: skip
        assert refused == []
        assert real_redis.xlen(keys.outbox("node-1")) <= 1  # trimmed behind it
        # Its entries were checked (an app was admitted) and bore its signature.
        dead = [real_redis.xlen(keys.dead_letters(p)) for p in range(8)]
        assert real_redis.hget(keys.GATEWAY_KEYS, "node-1") and dead == [0] * 8
    finally:
        group.stop_all()
        admin.revoke_gateway(real_redis, "node-1")
        real_redis.execute_command("ACL", "LOG", "RESET")
