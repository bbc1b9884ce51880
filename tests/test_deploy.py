"""deploy/: every file checked by the tool made for it, and the compose topology run for
real — as plain processes on this machine, from the compose file itself (tests/compose.py)
— with a game played through its load balancer and another in its IRC channel."""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis
import yaml

from dudo.ops import admin
from dudo.ops.fleet import wait_ready
from dudo.run.remote_bot import run as play_remote
from dudo.wire import keys

from .compose import Topology, interpolate, load
from .http_status import status
from .integration.procs import Workers, ready, wait_for
from .integration.test_gateway_acl import denied
from .integration.test_irc import open_and_play, play_until_over
from .irc import IrcPerson, IrcServer
from .servers import free_port, require_binary

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
COMPOSE = DEPLOY / "compose.yaml"


def _tool(name: str) -> str:
    """A checker installed with the test extras (beside this Python)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} is installed with the test extras (pip install -e '.[test]')"
    return found


def test_the_dockerfile_passes_hadolint() -> None:
    result = subprocess.run(
        [_tool("hadolint"), str(DEPLOY / "Dockerfile")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_compose_file_follows_the_compose_specification() -> None:
    result = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", str(COMPOSE)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_interpolation_as_compose_does_it() -> None:
    given = {"SET": "x", "EMPTY": ""}
    assert interpolate("${SET}-${EMPTY}-${MISSING}", given) == "x--"
    assert interpolate("${EMPTY:-d} ${EMPTY-d} ${MISSING-d} ${SET:-d}", given) == "d  d x"
    assert interpolate("$$HOME ${SET}", given) == "$HOME x"
    with pytest.raises(ValueError, match="MISSING: set it"):
        interpolate("${MISSING:?set it}", given)
    with pytest.raises(ValueError, match="EMPTY"):
        interpolate("${EMPTY:?set it}", given)
    # Every secret the file needs is asked for, never defaulted.
    with pytest.raises(ValueError, match="REDIS_PASSWORD"):
        load(COMPOSE, {})


@pytest.fixture
def topology(tmp_path: Path) -> Iterator[tuple[Topology, IrcServer, dict[str, str]]]:
    require_binary("haproxy")
    irc = IrcServer(tmp_path / "ngircd")
    variables = {
        name: secrets.token_urlsafe(18)
        for name in ("REDIS_PASSWORD", "WEB_1_REDIS_PASSWORD", "WEB_2_REDIS_PASSWORD",
                     "IRC_REDIS_PASSWORD", "DUDO_GATEWAY_SECRET")
    }  # fmt: skip
    ports = ("REDIS_PORT", "GATEWAY_1_PORT", "GATEWAY_2_PORT", "LB_PORT", "WORKER_1_HEALTH_PORT",
             "WORKER_2_HEALTH_PORT", "DIRECTOR_HEALTH_PORT", "BOTS_HEALTH_PORT",
             "IRC_HEALTH_PORT")  # fmt: skip
    variables.update({name: str(free_port()) for name in ports})
    variables.update(IRC_SERVER=irc.address, IRC_TLS="0", IRC_CHANNEL="#dudo")
    folder = tmp_path / "compose"
    folder.mkdir()
    stack = Topology(COMPOSE, variables, folder)
    try:
        yield stack, irc, variables
    finally:
        stack.down()
        irc.stop()


def test_the_compose_topology_as_processes_plays_through_its_load_balancer_and_irc(
    topology: tuple[Topology, IrcServer, dict[str, str]],
) -> None:
    stack, irc, variables = topology
    stack.up()
    base = f"http://127.0.0.1:{variables['LB_PORT']}"
    admin_url = f"redis://default:{variables['REDIS_PASSWORD']}@127.0.0.1:{variables['REDIS_PORT']}/0"
    client = redis.Redis.from_url(admin_url)
    # setup made a Redis user for each gateway, kept in Redis's ACL file.
    assert sorted(admin.gateways(client)) == ["irc-1", "web-1", "web-2"]
    wait_for(lambda: ready(base), 60, "the load balancer to a ready gateway")

    # A game from the web, through HAProxy to either gateway, against the bot service.
    outcome = asyncio.run(
        play_remote(
            base, level="normal", seed=5, name="Ana", think=(0.0, 0.0),
            create={"rules": {"preset": "classic", "start_dice": 2}, "seats": 3,
                    "bots": ["normal", "easy"]},
        )
    )  # fmt: skip
    assert outcome.winner is not None and outcome.refused == 0, outcome.text()

    # Issue 50, item 11: behind HAProxy (--trust-proxy), a client's own X-Forwarded-For
    # was believed: refused 429, it made 40 more tables under made-up addresses. Past
    # its 30 creates a minute at each gateway (the balancer spreads it over two), every
    # made-up address is refused just the same.
    began = time.monotonic()
    codes = [_create(base, f"10.1.{i // 250}.{i % 250}") for i in range(80)]
    # 30 a minute at each of two gateways, and what their buckets refilled meanwhile
    # (one a second between them): believed, the 80 addresses would all be 201.
    refilled = math.ceil(time.monotonic() - began)
    assert set(codes) <= {201, 429} and codes.count(201) <= 60 + refilled, codes

    # A game in the IRC channel, through the chat gateway.
    wait_for(lambda: "irc_registered" in stack.log("irc"), 30, "the chat gateway on IRC")
    ben = IrcPerson(irc.port, "ben", "#dudo")
    open_and_play(ben, moves=1)
    assert play_until_over({"ben": ben}, "#dudo") is not None

    # Each gateway did only what its user may: nothing refused, nothing dead-lettered.
    for name in ("web-1", "web-2", "irc-1"):
        assert denied(client, admin.user_of(name)) == [], name
    assert [client.xlen(keys.dead_letters(p)) for p in range(16)] == [0] * 16
    # A Redis restart keeps the users (the ACL file) and the data (the append-only file).
    stack.stop("redis")
    stack.start("redis")
    wait_for(lambda: stack._healthy("redis"), 30, "redis back")
    assert sorted(admin.gateways(client)) == ["irc-1", "web-1", "web-2"]
    # SIGTERM: every dudo process stops cleanly, the workers handing their leases back.
    services = ("irc", "lb", "gateway-2", "gateway-1", "bots", "director", "worker-2", "worker-1")
    codes = {name: stack.stop(name) for name in services}
    assert all(codes[name] == 0 for name in services if name != "lb"), codes
    assert client.zcard(keys.WORKERS) == 0
    leases = [client.get(keys.lease(p)) for p in range(16)]
    assert all(lease is None or lease.split(b"|")[1] == b"" for lease in leases), leases


def _create(base: str, forwarded_for: str) -> int:
    """POST a table through the load balancer, the client claiming ``forwarded_for``."""
    import urllib.request

    return status(urllib.request.Request(
        f"{base}/api/tables", data=b'{"seats": 2}', method="POST",
        headers={"Content-Type": "application/json", "X-Forwarded-For": forwarded_for},
    ))  # fmt: skip


def test_an_instance_named_at_start_connects_with_a_password_derived_from_its_apps_secret(
    real_redis: redis.Redis, redis_server: Any, tmp_path: Path
) -> None:
    """`dudo admin gateway add web-0 --derive-from-env S` and a gateway started with
    `$DUDO_REDIS_USER_SECRET` (and `$DUDO_ID` web-0) meet: it serves as user gateway-web-0.
    Another app's secret derives nothing that works."""
    env = {**os.environ, "APP_SECRET": "the web app's instances share this"}
    made = subprocess.run(
        [sys.executable, "-m", "dudo", "admin", "gateway", "add", "web-0", "--redis",
         redis_server.url, "--derive-from-env", "APP_SECRET"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "APP_SECRET" in made.stdout and admin.derived_password(
        env["APP_SECRET"], "web-0"
    ) not in made.stdout  # the password is never printed
    try:
        password = admin.derived_password(env["APP_SECRET"], "web-0")
        own = redis.Redis.from_url(admin.url_for(redis_server.url, "web-0", password))
        assert own.xlen(keys.outbox("web-0")) == 0  # its user, its outbox
        other = admin.derived_password("another app's secret", "web-0")
        with pytest.raises(redis.AuthenticationError):
            redis.Redis.from_url(admin.url_for(redis_server.url, "web-0", other)).ping()
        real_redis.execute_command("ACL", "LOG", "RESET")  # (that refusal is logged too)
        workers = Workers(redis_server.url, tmp_path)
        try:
            port = free_port()
            proc = workers.spawn(
                "web-0", "gateway", "--redis", redis_server.url, "--port", str(port),
                "--partitions", "8",
                env={"DUDO_REDIS_USER_SECRET": env["APP_SECRET"], "DUDO_ID": "web-0"},
            )  # fmt: skip
            workers.start("w1")
            wait_ready(f"http://127.0.0.1:{port}", proc, timeout=30)
            assert real_redis.get(keys.presence("web-0")) == b"frames"  # registered itself
            clients = real_redis.execute_command("CLIENT", "LIST")
            clients = clients.decode() if isinstance(clients, bytes) else clients
            assert "user=gateway-web-0" in clients  # connected as its own user
            assert denied(real_redis, "gateway-web-0") == []  # nothing it did was refused
        finally:
            workers.stop_all()
    finally:
        admin.revoke_gateway(real_redis, "web-0")


K8S = DEPLOY / "k8s"


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def test_every_kubernetes_manifest_passes_kubernetes_strict_validation() -> None:
    files = sorted(K8S.rglob("*.yaml"))
    result = subprocess.run(
        [_tool("kubernetes-validate"), "--strict", "--quiet", *map(str, files)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    core = [f for f in files if f.name not in ("kustomization.yaml", "autoscaling.yaml")]
    assert len(core) >= 7 and "passed" not in result.stdout  # --quiet: failures only


def test_the_kustomizations_name_files_that_exist_and_every_role_is_deployed() -> None:
    kinds: dict[str, str] = {}
    for kustomization in K8S.rglob("kustomization.yaml"):
        (spec,) = _documents(kustomization)
        for resource in spec.get("resources", []):
            assert (kustomization.parent / resource).exists(), (kustomization, resource)
        for patch in spec.get("patches", []):
            assert "path" not in patch or (kustomization.parent / patch["path"]).exists()
    for path in K8S.glob("*.yaml"):
        for doc in _documents(path):
            if doc["kind"] != "Kustomization":
                kinds[f"{doc['kind']}/{doc['metadata']['name']}"] = path.name
    for role in ("Deployment/worker", "Deployment/director", "StatefulSet/bots",
                 "StatefulSet/web", "StatefulSet/irc", "StatefulSet/redis", "Job/dudo-setup",
                 "PodDisruptionBudget/worker", "PodDisruptionBudget/web",
                 "ScaledObject/worker"):  # fmt: skip
        assert role in kinds, role
    # Every dudo container says whether it is alive and ready, and has a size.
    for path in K8S.glob("*.yaml"):
        for doc in _documents(path):
            if doc["kind"] not in ("Deployment", "StatefulSet"):
                continue
            (container,) = doc["spec"]["template"]["spec"]["containers"]
            assert container.get("readinessProbe") and container.get("livenessProbe"), path
            assert container["resources"]["requests"]["cpu"], path
            assert container["securityContext"]["allowPrivilegeEscalation"] is False


def test_the_workers_scale_on_the_lag_of_every_partition_inbox() -> None:
    """KEDA's triggers name exactly the deployment's inboxes, in its consumer group (a
    renamed key would leave the autoscaler watching nothing)."""
    for path in (K8S / "autoscaling.yaml", K8S / "external-redis-cluster" / "autoscaling.yaml"):
        (scaled,) = [d for d in _documents(path) if d["kind"] == "ScaledObject"]
        triggers = scaled["spec"]["triggers"]
        on_streams = [t for t in triggers if t["type"] != "prometheus"]
        streams = [t["metadata"]["stream"] for t in on_streams]
        assert streams == [keys.inbox(p) for p in range(keys.DEFAULT_PARTITIONS)], path
        assert {t["metadata"]["consumerGroup"] for t in on_streams} == {keys.CONSUMER_GROUP}
        # The admitted gateways' own inboxes, by the lag the workers export of every one.
        [summed] = [t for t in triggers if t["type"] == "prometheus"]
        assert _metric_names(summed["metadata"]["query"]) <= _exported_names()
        assert "dudo_inbox_lag" in summed["metadata"]["query"]
        assert scaled["spec"]["maxReplicaCount"] == keys.DEFAULT_PARTITIONS


PROMETHEUS = DEPLOY / "prometheus"


def test_the_alert_rules_pass_promtool_and_fire_when_they_should() -> None:
    """`promtool check rules`, and `promtool test rules`: each alert fires on the series
    that should fire it, only after its `for`, and not before."""
    promtool = require_binary("promtool")
    for args in (["check", "rules", "alerts.yaml"], ["test", "rules", "alerts.test.yaml"],
                 ["check", "config", "prometheus.yml"]):  # fmt: skip
        result = subprocess.run(
            [promtool, *args], cwd=PROMETHEUS, capture_output=True, text=True
        )
        assert result.returncode == 0, (args, result.stdout + result.stderr)


def _exported_names() -> set[str]:
    """Every sample name the processes' registries export (with _total, _bucket...)."""
    from prometheus_client import CollectorRegistry

    from dudo.chat.gateway import ChatGateway, ChatSettings
    from dudo.gateway.clients import Metrics
    from dudo.run.bots import BotService
    from dudo.worker.metrics import REGISTRY, LoopMetrics

    LoopMetrics("worker", 16)  # label children, so every family has samples
    registries: list[CollectorRegistry] = [
        REGISTRY,
        Metrics().registry,
        ChatGateway(ChatSettings()).registry,
        BotService(fakeredis.FakeRedis(), 16).registry,
    ]
    names = set()
    for registry in registries:
        for family in registry.collect():  # (a labelled family may have no sample yet)
            names.add(family.name)
            suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum")}
            names.update(family.name + end for end in suffixes.get(family.type, ()))
            names.update(sample.name for sample in family.samples)
    return names


def _metric_names(expr: str) -> set[str]:
    words = set(re.findall(r"\b(?:dudo|process)_[a-z_]+\b", expr))
    return words


def test_the_dashboard_and_the_alerts_use_only_metrics_that_are_exported() -> None:
    exported = _exported_names()
    dashboard = json.loads((DEPLOY / "grafana" / "dudo.json").read_text())
    used: set[str] = set()
    for panel in dashboard["panels"]:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            used |= _metric_names(target["expr"])
    rules = yaml.safe_load((PROMETHEUS / "alerts.yaml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            used |= _metric_names(rule["expr"])
    # Histograms are queried by their _bucket samples, counters by their _total.
    missing = {name for name in used if name not in exported}
    assert not missing, missing
    assert {"dudo_inbox_lag", "dudo_dead_letters_total", "dudo_lease_changes_total",
            "dudo_gateway_connections", "dudo_gateway_send_queue",
            "dudo_commit_seconds_bucket"} <= used  # fmt: skip
    # Panels laid out without overlap, on Grafana's 24 columns.
    cells = set()
    for panel in dashboard["panels"]:
        box = panel["gridPos"]
        assert box["x"] + box["w"] <= 24
        for x in range(box["x"], box["x"] + box["w"]):
            for y in range(box["y"], box["y"] + box["h"]):
                assert (x, y) not in cells, panel["title"]
                cells.add((x, y))


async def _entrants_across_the_gateways(variables: dict[str, str], count: int = 8) -> None:
    """The issue's own setting, made certain: entrants on the Python client library,
    each registering through one gateway and connecting through the other (a load
    balancer without stickiness may do that to anyone), the tournament created and
    begun through the load balancer. Every one is seated with their die."""
    from dudo_client import DudoApi, DudoConnection

    balancer = f"http://127.0.0.1:{variables['LB_PORT']}"
    gateways = [f"http://127.0.0.1:{variables[p]}" for p in ("GATEWAY_1_PORT", "GATEWAY_2_PORT")]
    async with DudoApi(balancer) as host:
        made = await host.create_tournament(
            name="Spread", host="Host", seats=4, max_players=count + 1,
            rules={"preset": "lizumo", "start_dice": 1, "turn_seconds": 5})  # fmt: skip
    tid = made["tournament"]
    connections = []
    try:
        for n in range(count):
            async with DudoApi(gateways[n % 2]) as api:
                token = (await api.register(tid, name=f"Player {n}"))["token"]
            connections.append(DudoConnection(gateways[(n + 1) % 2], token))  # the other
        for conn in connections:
            welcome = await conn.open()
            assert welcome["tournament"] == tid and welcome["table"] is None, welcome
        async with DudoApi(balancer) as host:
            await host.begin(tid, made["token"])

        def own_die(view: dict[str, Any]) -> bool:  # (the first views may ask for seeds)
            game = view["game"]
            return view["seat"] is not None and game is not None and len(game.get("dice", [])) == 1

        await asyncio.wait_for(
            asyncio.gather(*(conn.next("view", own_die) for conn in connections)), 30
        )
    finally:
        for conn in connections:
            await conn.close()


def test_the_load_balancers_configuration_is_valid_haproxy() -> None:
    haproxy = require_binary("haproxy")
    env = {**os.environ, "LB_PORT": "8080", "GATEWAY_1": "127.0.0.1:8001",
           "GATEWAY_2": "127.0.0.1:8002"}  # fmt: skip
    result = subprocess.run(
        [haproxy, "-c", "-f", str(DEPLOY / "haproxy.cfg")], env=env, capture_output=True,
        text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_kubernetes_scrape_job_keeps_annotated_dudo_pods_under_dudo_jobs() -> None:
    """Debian's promtool has no Kubernetes discovery, so this file is read here: it keeps
    pods annotated prometheus.io/scrape and names their jobs dudo-<app> (the alerts
    select on that), and every dudo pod of deploy/k8s carries the annotations."""
    config = yaml.safe_load((PROMETHEUS / "prometheus-kubernetes.yml").read_text())
    (job,) = config["scrape_configs"]
    relabel = {tuple(r["source_labels"]): r for r in job["relabel_configs"]}
    keep = relabel[("__meta_kubernetes_pod_annotation_prometheus_io_scrape",)]
    assert keep["action"] == "keep" and keep["regex"] == "true"
    assert relabel[("__meta_kubernetes_pod_label_app_kubernetes_io_name",)]["replacement"] == (
        "dudo-$1"
    )
    for path in K8S.glob("*.yaml"):
        for doc in _documents(path):
            if doc["kind"] in ("Deployment", "StatefulSet") and doc["metadata"]["name"] != "redis":
                notes = doc["spec"]["template"]["metadata"]["annotations"]
                assert notes["prometheus.io/scrape"] == "true", path
                (container,) = doc["spec"]["template"]["spec"]["containers"]
                ports = {str(p["containerPort"]) for p in container["ports"]}
                assert notes["prometheus.io/port"] in ports, path


def test_an_entrant_registered_through_one_gateway_plays_through_the_other_as_deployed(
    topology: tuple[Topology, IrcServer, dict[str, str]],
) -> None:
    """Issue 31, item 1, as deploy/ runs it: two admitted web gateways (a Redis user and a
    signing key each, the same app), the director checking every entry's writer. An
    entrant registered through one gateway who says hello through the other, before the
    start, is seated there: `moved`, then views with their own die."""
    from .e2e.test_gateway import Client
    from .integration.test_tournament_api import call, seated_with_its_die

    stack, _, variables = topology
    stack.up()
    one = f"http://127.0.0.1:{variables['GATEWAY_1_PORT']}"
    two = f"http://127.0.0.1:{variables['GATEWAY_2_PORT']}"
    wait_for(lambda: ready(one) and ready(two), 60, "both web gateways")
    status, made = call(one, "POST", "/api/tournaments", {
        "name": "Cup", "host": "Ana", "seats": 3, "max_players": 3,
        "rules": {"preset": "lizumo", "start_dice": 1, "turn_seconds": 5}})  # fmt: skip
    assert status == 201, made
    tid = made["tournament"]
    status, bea = call(one, "POST", f"/api/tournaments/{tid}/register", {"name": "Bea"})
    assert status == 200, bea
    status, ciro = call(two, "POST", f"/api/tournaments/{tid}/register", {"name": "Ciro"})
    assert status == 200, ciro

    async def scenario() -> None:
        import aiohttp

        async with aiohttp.ClientSession() as session:
            ws = await Client(session, two).open(bea["token"])  # the other gateway
            welcome = await ws.next("welcome", timeout=15)
            assert welcome["tournament"] == tid and welcome["table"] is None
            status, begun = await asyncio.to_thread(
                call, one, "POST", f"/api/tournaments/{tid}/begin", {"token": made["token"]}
            )
            assert status == 200, begun
            assert "moved" in await seated_with_its_die(ws)

    asyncio.run(scenario())
    asyncio.run(_entrants_across_the_gateways(variables))
    client = redis.Redis.from_url(
        f"redis://default:{variables['REDIS_PASSWORD']}@127.0.0.1:{variables['REDIS_PORT']}/0"
    )
    for name in ("web-1", "web-2"):  # neither gateway was refused anything it did
        assert denied(client, admin.user_of(name)) == [], name
