"""A third-party gateway in another language: docs/examples/gateway.mjs (Node, ioredis and
@msgpack/msgpack from the npm registry) plays a whole game against a live worker and bot
service through the stream protocol alone, as a Redis user of its own (`dudo admin
gateway add`), with nothing refused by Redis's ACL and its outbox trimmed behind it; and
the gateway kit (`dudo conformance gateway`) passes it, and fails a careless gateway
for what it does wrong."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from dudo import wire
from dudo.conformance.gateway import check
from dudo.infra import keyring
from dudo.infra.connection import xread
from dudo.link import GatewayLink
from dudo.ops import admin
from dudo.wire import keys, signing

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


def run_node(
    node: str, script: Path, server: RedisServer, gateway: str, password: str
) -> subprocess.CompletedProcess[str]:
    """The example, as gateway ``gateway`` under its own Redis user, to its game's end."""
    return subprocess.run(
        [node, str(script)],
        env={"DUDO_REDIS_URL": admin.url_for(server.url, gateway, password),
             "DUDO_GATEWAY_ID": gateway, "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_the_node_example_is_short() -> None:
    assert len(EXAMPLE.read_text().splitlines()) <= 150


@pytest.fixture
def live(redis_server: RedisServer, real_redis: redis.Redis, tmp_path: Path) -> Iterator[Workers]:
    """A worker and a bot service (as the deployment's admin user) to play against, in a
    deployment that already checks who wrote each entry (an app was admitted before)."""
    real_redis.hset(
        keys.GATEWAY_KEYS,
        mapping={signing.INTERNAL: signing.new_internal_key(), signing.CHECKING: 1},
    )
    group = Workers(redis_server.url, tmp_path)
    group.start("w1")
    group.bots("b1")
    try:
        yield group
    finally:
        group.stop_all()
        for name in admin.gateways(real_redis):
            admin.revoke_gateway(real_redis, name)
        real_redis.execute_command("ACL", "LOG", "RESET")


def test_a_node_gateway_plays_a_whole_game_as_its_own_redis_user(
    redis_server: RedisServer, real_redis: redis.Redis, live: Workers
) -> None:
    node, script = require_binary("node"), install()
    password = admin.add_gateway(real_redis, "node-1")
    run = run_node(node, script, redis_server, "node-1", password)
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


def careless_gateway(client: redis.Redis, gateway: str, seconds: float) -> None:
    """A gateway that gets two things wrong: it acts on every view of its turn, even one
    delivered twice, and it never trims its outbox."""
    link = GatewayLink(client, gateway, 8, signer=keyring.internal_key(client))
    link.register()
    link.send(
        link.message("create", id="c", table="care1", rules={"preset": "classic"},
                     seats=[{"kind": "open"}, {"kind": "bot", "level": "normal"}]),
        link.message("join", id="j", table="care1", player="pc", name="Care"),
    )  # fmt: skip
    last, n, deadline = "0-0", 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        link.register()
        for _stream, entries in xread(client, {link.outbox: last}, count=50, block=200) or []:
            for entry_id, fields in entries:
                last = entry_id.decode()
                for msg in wire.unpack_batch(fields[wire.ENTRY_FIELD]):
                    game = msg.get("game") if msg["type"] == "view" else None
                    mine = [s for s in msg.get("seats", []) if s.get("legal")]
                    if not game or not mine or game["turn"] != mine[0]["seat"]:
                        continue
                    legal = mine[0]["legal"]
                    faces = [f for f, q in enumerate(legal["bid"], 1) if q is not None]
                    action = ({"type": "bid", "quantity": legal["bid"][faces[0] - 1],
                               "face": faces[0]} if faces else {"type": "dudo"})  # fmt: skip
                    n += 1
                    link.send(link.message("act", id=f"a{n}", table="care1",
                                           player=wire.public_id("pc"),  # as joined names it
                                           seat=mine[0]["seat"], action=action))  # fmt: skip


def test_the_gateway_kit_passes_the_node_gateway_and_fails_a_careless_one(
    redis_server: RedisServer, real_redis: redis.Redis, live: Workers
) -> None:
    node, script = require_binary("node"), install()
    password = admin.add_gateway(real_redis, "node-2")
    verdicts: dict[str, Any] = {}

    def watch(name: str, seconds: float) -> None:
        verdicts[name] = check(redis.Redis.from_url(redis_server.url), name, seconds, 8)

    kit = threading.Thread(target=watch, args=("node-2", 12.0))
    kit.start()
    run = run_node(node, script, redis_server, "node-2", password)
    kit.join()
    assert run.returncode == 0, run.stderr
    assert verdicts["node-2"].ok, verdicts["node-2"].text()

    kit = threading.Thread(target=watch, args=("careless", 12.0))
    kit.start()
    careless_gateway(real_redis, "careless", 10.0)
    kit.join()
    verdict = verdicts["careless"]
    failed = {name for name, (passed, _) in verdict.checks.items() if not passed}
    assert failed == {"drops duplicates", "is never refused", "trims its outbox"}, verdict.text()
