"""The ``dudo`` command: one entry point, one subcommand per job.

Each subcommand imports what it needs when it runs, so ``dudo conformance``
starts without loading Redis clients or web servers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import Any


def _conformance(args: argparse.Namespace) -> int:
    if args.paths[:1] == ["client"]:  # dudo conformance client [--] CMD ... {url} {token}
        from .conformance.client import run as check_client

        command = args.paths[1:]
        if command[:1] == ["--"]:
            command = command[1:]
        if not command:
            print("usage: dudo conformance client -- CMD ... {url} {token}", file=sys.stderr)
            return 2
        verdict = check_client(command)
        print(verdict.text())
        return 0 if verdict.ok else 1
    if args.paths[:1] == ["gateway"]:  # dudo conformance gateway --redis URL --gateway NAME
        return _conformance_gateway(args.paths[1:])
    from .conformance import run_paths

    report = run_paths(args.paths)
    for line in report.failures:
        print(line)
    if report.passed + report.failed == 0:
        print(f"no vector files under {' '.join(args.paths)}", file=sys.stderr)
    print(report.summary())
    return 0 if report.ok else 1


def _conformance_gateway(argv: list[str]) -> int:
    from .conformance.gateway import check
    from .infra.connection import connect

    p = argparse.ArgumentParser(
        prog="dudo conformance gateway",
        description="watch a gateway's stream handling while it plays (run beside it)",
    )
    p.add_argument("--redis", default=DEFAULT_REDIS, help="an admin's Redis URL")
    p.add_argument("--gateway", required=True, help="the gateway id under test")
    p.add_argument("--seconds", type=float, default=20.0, help="how long to watch it")
    args = p.parse_args(argv)
    verdict = check(connect(args.redis), args.gateway, args.seconds)
    print(verdict.text())
    return 0 if verdict.ok else 1


# In a container every process of a deployment is told its Redis (and its health port)
# by the environment: the URL may hold a password, which `ps` would show in an argument.
DEFAULT_REDIS = os.environ.get("DUDO_REDIS_URL") or "redis://127.0.0.1:6379/0"
HEALTH_PORT = int(os.environ["DUDO_HEALTH_PORT"]) if os.environ.get("DUDO_HEALTH_PORT") else None
# Seconds a round's reveal holds the table where people play (Limits.reveal_hold_ms):
# time to read the dice before the next turn's clock runs.
REVEAL_HOLD_S = 3.0


def _bench(args: argparse.Namespace) -> int:
    from .infra.log import configure

    configure("warning")  # stdout is the figures' (--json): what is logged goes to stderr
    if args.target == "engine":
        from .bench.engine import run

        result = run(
            seconds=args.seconds, preset=args.preset or "classic", seats=args.seats, seed=args.seed
        )
    elif args.target == "workers":
        from .bench import workers

        result = workers.run(
            args.redis or DEFAULT_REDIS,
            tables=args.tables or 1000,
            seconds=args.seconds,
            workers=args.workers,
            partitions=args.partitions,
            flush=args.flush,
            log_dir=args.log_dir,
        )
    elif args.target == "path":
        from .bench import path

        result = path.run(
            tables=args.tables or 10,
            seats=args.seats,
            seconds=args.seconds,
            workers=args.workers,
            gateways=args.gateways,
            redis_url=args.redis,
            embedded=args.embedded,
            partitions=args.partitions,
            codec=args.codec,
            folder=args.log_dir,
            flush=args.flush,
            load=args.load,
            servers_from=args.servers_from,
            skeleton=args.skeleton,
            admitted=args.admitted,
        )
    elif args.target == "exploitability":
        from .bench import exploitability

        result = exploitability.run(
            preset=args.preset or "liars-dice",
            dice=args.dice,
            iterations=args.iterations,
            rules=_rule_options(args.rule),
        )
    elif args.target == "tournament":
        from .bench import tournament

        result = tournament.run(
            players=args.players,
            seats=args.seats if args.seats != 4 else 6,
            workers=args.workers if args.workers != 1 else 2,
            fmt=args.format,
            preset=args.preset or "classic",
            redis_url=args.redis,
            partitions=args.partitions,
            flush=args.flush,
            folder=args.log_dir,
            signed=not args.unsigned,
        )
    elif args.target == "gateway":
        from .bench import gateway

        result = gateway.run(
            args.redis or DEFAULT_REDIS,
            clients=args.clients,
            seconds=args.seconds,
            think_ms=args.think_ms,
            flush=args.flush,
            partitions=args.partitions,
        )
    else:  # pragma: no cover - argparse restricts the choices
        raise SystemExit(f"unknown bench target {args.target}")
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>20}: {value}")
    return 0


def _chaos(args: argparse.Namespace) -> int:
    from .chaos import run

    low, _, high = args.fault_every.partition(",")
    result = run(
        args.redis,
        seconds=args.seconds,
        tables=args.tables,
        workers=args.workers,
        gateways=args.gateways,
        partitions=args.partitions,
        fault_every=(float(low), float(high or low)),
        seed=args.seed,
        folder=args.keep,
        flush=args.flush,
    )
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>24}: {value}")
    return 0 if result["ok"] else 1


def _worker(args: argparse.Namespace) -> int:
    """``dudo worker`` and ``dudo director``: one partition loop (tables or tournaments)."""
    from .infra.connection import ConfigMismatch
    from .infra.log import configure
    from .infra.service import retry_until_ready
    from .worker import Worker, WorkerSettings

    configure(args.log_level)
    role = "director" if args.func is _director else "worker"
    if args.seed is not None and os.environ.get("DUDO_INSECURE_SEED") != "1":
        print(
            f"dudo {role}: --seed makes every die of every table computable by anyone who "
            "knows the seed and the table id (a spectator does): it is for tests and "
            "benchmarks only. Set DUDO_INSECURE_SEED=1 to use it anyway.",
            file=sys.stderr,
        )
        return 2
    settings = WorkerSettings(
        redis_url=args.redis,
        partitions=args.partitions,
        batch=args.batch,
        lease_ms=args.lease_ms,
        heartbeat=args.heartbeat,
        dead_after_ms=args.dead_after_ms,
        seed=args.seed,
        slow_cycle_ms=args.slow_ms,
        slot_per_call=args.slot_per_call,
        max_deliveries=args.max_deliveries,
        gateway_entries_per_s=args.gateway_entries_per_s,
        gateway_bytes_per_s=args.gateway_bytes_per_s,
    )
    if args.id:
        settings.worker_id = args.id

    loops: list[Worker] = []
    try:  # connecting needs Redis (to tell a Cluster node): wait for it
        if role == "director":
            from .run.director import run

            run(settings, args.table_partitions, args.health_port)
            return 0
        from .run import table_worker
        from .table import Limits

        limits = Limits(
            open_ttl_ms=int(args.open_ttl * 1000),
            idle_ttl_ms=int(args.idle_ttl * 1000),
            bot_grace_ms=int(args.bot_grace * 1000),
            reveal_hold_ms=int(args.reveal_hold * 1000),
            partitions=settings.partitions,
        )
        retry_until_ready(lambda: loops.append(table_worker(settings, limits=limits)))
        loops[0].run(health_port=args.health_port)
    except ConfigMismatch as exc:
        print(f"dudo {role}: {exc}", file=sys.stderr)
        return 2
    return 0


def _director(args: argparse.Namespace) -> int:
    return _worker(args)


def _loop_arguments(p: argparse.ArgumentParser, partitions: int) -> None:
    """The options of a partition loop: ``dudo worker`` and ``dudo director``."""
    p.add_argument("--redis", default=DEFAULT_REDIS, help="Redis URL")
    p.add_argument("--partitions", type=int, default=partitions)
    p.add_argument("--batch", type=int, default=256, help="entries per partition per read")
    p.add_argument("--lease-ms", type=int, default=5000, help="lease time to live")
    p.add_argument("--heartbeat", type=float, default=0.5, help="seconds between renewals")
    p.add_argument(
        "--dead-after-ms", type=int, default=3000, help="silence after which a worker is gone"
    )
    p.add_argument("--slow-ms", type=float, default=100.0, help="log cycles slower than this (ms)")
    p.add_argument(
        "--seed",
        type=int,
        help="reproducible table randomness: INSECURE, tests and benchmarks only "
        "(needs DUDO_INSECURE_SEED=1)",
    )
    p.add_argument(
        "--slot-per-call",
        action="store_true",
        help="one partition per script call (for proxies that refuse multi-slot scripts; "
        "automatic on a Redis Cluster)",
    )
    p.add_argument(
        "--open-ttl", type=float, default=3600, help="seconds an unchanged open table lives"
    )
    p.add_argument(
        "--idle-ttl",
        type=float,
        default=7200,
        help="seconds a game without a turn clock waits for a move before it is abandoned",
    )
    p.add_argument(
        "--bot-grace",
        type=float,
        default=15,
        help="seconds a bot seat may stay silent before the house bot plays it",
    )
    p.add_argument(
        "--reveal-hold",
        type=float,
        default=REVEAL_HOLD_S,
        help="seconds a round's reveal holds the next turn's clock and the bots, where "
        "people play (0: no hold)",
    )
    p.add_argument(
        "--max-deliveries",
        type=int,
        default=5,
        help="an inbox entry read this many times without a commit is dead-lettered",
    )
    p.add_argument(
        "--gateway-entries-per-s",
        type=float,
        default=5000.0,
        help="entries one admitted gateway may write to this worker's partitions a second "
        "(bursts of twice that; past it they are dropped; 0: no quota)",
    )
    p.add_argument(
        "--gateway-bytes-per-s",
        type=float,
        default=8_000_000.0,
        help="bytes of entries one admitted gateway may write a second (likewise)",
    )
    _process_arguments(p, "worker id", "host-pid-random")


def _process_arguments(
    p: argparse.ArgumentParser, what: str, otherwise: str, *, health: bool = True
) -> None:
    """What every long-running process is given: its id (kept across restarts),
    where it answers health checks (a web gateway answers on its own port), and how
    much it logs."""
    p.add_argument(
        "--id",
        default=os.environ.get("DUDO_ID"),
        help=f"{what} (default: $DUDO_ID, else {otherwise})",
    )
    if health:
        p.add_argument(
            "--health-port",
            type=int,
            default=HEALTH_PORT,
            help="serve /healthz and /readyz on this port (default: $DUDO_HEALTH_PORT)",
        )
    p.add_argument("--log-level", default="info")


def _identity(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .auth.identity import sign_identity

    try:
        private = Path(args.key).read_text()
        print(sign_identity(args.app, private, args.user, args.ttl, kid=args.kid))
    except (OSError, ValueError) as exc:
        print(f"dudo identity: {exc}", file=sys.stderr)
        return 2
    return 0


def _schemas(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import wire
    from .wire.client import CLIENT_MESSAGES
    from .wire.reference import sync

    schemas = {**wire.json_schemas(), **wire.json_schemas(CLIENT_MESSAGES)}
    folder = Path(args.folder)
    write = args.action == "write"
    stale = [str(folder / name) for name in wire.sync_schema_files(schemas, folder, write=write)]
    guide = Path(args.guide) if args.guide else folder.parent.parent / "docs" / "protocol.md"
    if sync(guide, folder.parent, write=write):
        stale.append(f"{guide} (its reference part)")
    for name in stale:
        print(f"{'written' if write else 'stale'}: {name}", file=sys.stderr)
    return 1 if stale and not write else 0


def _gateway(args: argparse.Namespace) -> int:
    from .gateway.app import GatewaySettings, run
    from .infra.log import configure

    configure(args.log_level)
    settings = GatewaySettings(
        redis_url=args.redis,
        host=args.host,
        port=args.port,
        partitions=args.partitions,
        director_partitions=args.director_partitions,
        send_queue=args.send_queue,
        reply_timeout=args.reply_timeout,
        ws_compress=args.ws_compress,
        frames=not args.no_frames,
        **_limits(args),
    )
    if args.id:
        settings.gateway_id = args.id
    return _run_gateway("gateway", run, settings)


def _run_gateway(command: str, run: Any, settings: Any) -> int:
    """Run a gateway until it stops; exit status 2 with the reason if it was started with
    another partition count than the deployment's.

    With ``$DUDO_REDIS_USER_SECRET`` it connects as its own Redis user, ``gateway-<id>``,
    with the password derived from that secret and its id (instances named when they
    start: ``dudo admin gateway add --derive-from-env``)."""
    from .infra.connection import ConfigMismatch
    from .ops import admin

    secret = os.environ.get("DUDO_REDIS_USER_SECRET")
    if secret:
        password = admin.derived_password(secret, settings.gateway_id)
        settings.redis_url = admin.url_for(settings.redis_url, settings.gateway_id, password)

    try:
        run(settings)
    except ConfigMismatch as exc:
        print(f"dudo {command}: {exc}", file=sys.stderr)
        return 2
    return 0


def _irc(args: argparse.Namespace) -> int:
    """``dudo irc``: the chat gateway (the IRC server password, if any: DUDO_IRC_PASSWORD)."""
    from .chat.gateway import ChatSettings, run
    from .infra.log import configure

    configure(args.log_level)
    host, _, port = args.server.rpartition(":")
    if not host or not port.isdigit():
        print(f"dudo irc: --server HOST:PORT, not {args.server!r}", file=sys.stderr)
        return 2
    settings = ChatSettings(
        redis_url=args.redis,
        server=host,
        port=int(port),
        tls=args.tls,
        server_password=os.environ.get("DUDO_IRC_PASSWORD") or None,
        nick=args.nick,
        channels=args.channel or ["#dudo"],
        lang=args.lang,
        network=args.network,
        app=args.app,
        identity_key=os.environ.get("DUDO_IRC_IDENTITY_KEY") or None,
        nick_lines_per_s=args.nick_lines_per_s,
        channel_lines_per_s=args.channel_lines_per_s,
        turn_seconds=args.turn_seconds,
        lines_per_s=args.lines_per_s,
        burst=args.burst,
        health_port=args.health_port,
        partitions=args.partitions,
        director_partitions=args.director_partitions,
        gateway_id=args.id or re.sub(r"[^A-Za-z0-9_-]", "-", f"irc-{host}")[:64],
    )
    return _run_gateway("irc", run, settings)


def _bots(args: argparse.Namespace) -> int:
    import signal

    from .infra.connection import ConfigMismatch, connect, ensure_partitions
    from .infra.log import configure
    from .infra.service import retry_until_ready
    from .run.bots import BotService

    configure(args.log_level)
    stopping: list[bool] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.append(True))
    clients: list[Any] = []

    def connected() -> None:  # Redis may not be up yet: wait for it
        client = connect(args.redis)
        ensure_partitions(client, args.partitions)
        clients.append(client)

    try:
        if not retry_until_ready(connected, stopping=lambda: bool(stopping)):
            return 0
    except ConfigMismatch as exc:
        print(f"dudo bots: {exc}", file=sys.stderr)
        return 2
    from .bots.endgame import ENDGAMES

    ENDGAMES.warm()  # the presets' one-die endgames, solved in the background meanwhile
    service = BotService(clients[0], args.partitions, think=(args.think_min, args.think_max))
    if args.id:
        service.rename(args.id)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: service.stop())
    if args.health_port is not None:
        service.health.serve(args.health_port)
    service.run()
    return 0


def _serve(args: argparse.Namespace) -> int:
    from .infra.log import configure
    from .run.serve import serve

    configure(args.log_level, json=False)
    low, _, high = args.bot_think.partition(",")
    serve(
        port=args.port,
        redis_url=args.redis,
        host=args.host,
        bot_think=(float(low), float(high or low)),
        reveal_hold=args.reveal_hold,
        embedded_kind=args.embedded,
        gateway_options=_limits(args),
    )
    return 0


def _play(args: argparse.Namespace) -> int:
    from .run.play import main as play

    options = {
        "name": args.name,
        "create": args.create,
        "join": args.join,
        "bots": args.bots,
        "level": args.level,
        "seats": args.seats,
        "preset": args.preset,
        "start_dice": args.start_dice,
        "odds": args.odds,
        "clock": args.clock,
        "rules": _rule_options(args.rule),
        "lang": args.lang,
    }
    return play(args.url, options)


def _rule_options(items: list[str] | None) -> dict[str, Any]:
    """``--rule key=value`` options (numbers, true/false and lists as JSON)."""
    rules = {}
    for item in items or []:
        key, _, value = item.partition("=")
        rules[key] = json.loads(value) if value[:1] in "0123456789-[{tfn" else value
    return rules


def _bot(args: argparse.Namespace) -> int:
    import asyncio

    from .client import DudoError
    from .run.remote_bot import run

    low, _, high = args.think.partition(",")
    create = {
        "rules": {"preset": args.preset},
        "seats": args.seats,
        "bots": [args.house] * (args.seats - 1),
    }
    try:
        outcome = asyncio.run(
            run(
                args.url, level=args.level, seed=args.seed, name=args.name,
                think=(float(low), float(high or low)), table=args.join, token=args.token,
                tournament=args.tournament, create=create,
            )
        )  # fmt: skip
    except DudoError as exc:
        print(f"dudo bot: {exc.code}: {exc}", file=sys.stderr)
        return 1
    print(outcome.text())
    return 0


def _healthcheck(args: argparse.Namespace) -> int:
    """``dudo healthcheck``: exit 0 if this machine's process answers /healthz (or, with
    ``--ready``, /readyz) with 200 (a container's HEALTHCHECK; no curl in the image)."""
    import urllib.request

    port = args.port or HEALTH_PORT or 8081
    path = "/readyz" if args.ready else "/healthz"
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=3) as answer:
            return 0 if answer.status == 200 else 1
    except OSError as exc:
        print(f"dudo healthcheck: {path} on port {port}: {exc}", file=sys.stderr)
        return 1


def _admin_app(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .auth import identity
    from .infra.connection import connect
    from .ops import admin

    client = connect(args.redis)
    if args.action == "list":
        for name, kids in admin.apps(client).items():
            print(f"{name}: keys {', '.join(kids)}")
        return 0
    if args.name is None:
        print(f"dudo admin app {args.action}: which app? (NAME)", file=sys.stderr)
        return 2
    if args.action == "remove":
        if not admin.remove_app(client, args.name):
            print(f"no app {args.name}", file=sys.stderr)
            return 1
        print(f"removed {args.name}: its identities are refused from now on")
        return 0
    try:
        if (args.jwks is None) == (args.generate is None):
            raise ValueError("give --jwks FILE (its public keys) or --generate KEYFILE")
        if args.generate is not None:
            private = identity.new_key()
            target = Path(args.generate)
            target.touch(mode=0o600, exist_ok=False)
            target.write_text(private)
            jwks = identity.public_jwks(private)
        else:
            jwks = identity.read_jwks(Path(args.jwks).read_text())
        admin.add_app(client, args.name, jwks)
    except (OSError, ValueError) as exc:
        print(f"dudo admin app add: {exc}", file=sys.stderr)
        return 2
    print(f"app {args.name}: {len(jwks['keys'])} public key(s) registered")
    if args.generate:
        print(f"its private key is in {args.generate}: give it to the app's backend only")
    return 0


def _admin_gateway(args: argparse.Namespace) -> int:
    from .infra.connection import connect
    from .ops import admin

    client = connect(args.redis)  # a Cluster node: users go to every node
    if args.action == "list":
        for name in admin.gateways(client):
            print(name)
        return 0
    if args.name is None:
        print(f"dudo admin gateway {args.action}: which gateway? (NAME)", file=sys.stderr)
        return 2
    if args.action == "revoke":
        if not admin.revoke_gateway(client, args.name):
            print(f"no gateway user {admin.user_of(args.name)}", file=sys.stderr)
            return 1
        print(f"revoked {args.name}: its connections are closed")
        return 0
    password = None
    for var in filter(None, (args.password_env, args.derive_from_env)):
        if not os.environ.get(var):
            print(f"dudo admin gateway add: ${var} is empty", file=sys.stderr)
            return 2
    if args.password_env:
        password = os.environ[args.password_env]
    elif args.derive_from_env:
        password = admin.derived_password(os.environ[args.derive_from_env], args.name)
    try:
        password = admin.add_gateway(client, args.name, password, app=args.app)
    except ValueError as exc:
        print(f"dudo admin gateway add: {exc}", file=sys.stderr)
        return 2
    print(f"gateway {args.name}: Redis user {admin.user_of(args.name)}; run it with")
    print(f"  dudo gateway --id {args.name} --redis URL")
    print("where URL is")
    if args.password_env or args.derive_from_env:  # the password stays out of the logs
        print(admin.url_for(args.redis, args.name, "PASSWORD"))
        print(f"with PASSWORD from ${args.password_env or args.derive_from_env}")
    else:
        print(admin.url_for(args.redis, args.name, password))
    if not admin.acl_file(client):
        print("note: this Redis keeps no ACL file: the user is gone after a restart "
              "(docs/operations.md, 'Admitting an app')", file=sys.stderr)  # fmt: skip
    return 0


def _arena(args: argparse.Namespace) -> int:
    from .bots.arena import run
    from .infra.log import configure

    configure("warning")  # stdout is the result's (--json)

    rules = _rule_options(args.rule)
    result = run(
        args.a,
        args.b,
        seats=args.seats,
        games=args.games,
        preset=args.preset,
        seed=args.seed,
        rules=rules,
        workers=args.workers,
    )
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{args.a} vs {args.b}: {result['win_rate_a']:.1%} of {result['games']} games "
            f"(95% CI {result['ci95_low']:.1%}..{result['ci95_high']:.1%}; chance "
            f"{result['chance']:.1%})"
        )
    return 0


LIMITS = (
    "creates_per_min",
    "joins_per_min",
    "hello_timeout",
    "conns_per_token",
    "conns_per_address",
    "http_conns_per_address",
    "request_timeout",
    "costly_every",
    "lobby_max",
    "trust_proxy",
    "rate_per_s",
    "burst",
)


def _limits(args: argparse.Namespace) -> dict[str, Any]:
    """The gateway limits given on the command line, as GatewaySettings fields."""
    return {name: getattr(args, name) for name in LIMITS}


def _add_limits(parser: argparse.ArgumentParser) -> None:
    """What one client may cost a gateway (``dudo gateway`` and ``dudo serve``)."""
    limits = parser.add_argument_group("limits (per gateway instance; docs/operations.md)")
    limits.add_argument("--creates-per-min", type=float, default=30.0, help="per address")
    limits.add_argument(
        "--joins-per-min", type=float, default=120.0, help="joins and watch tokens per address"
    )
    limits.add_argument("--hello-timeout", type=float, default=10.0, help="seconds to say hello")
    limits.add_argument("--conns-per-token", type=int, default=4, help="open sockets per token")
    limits.add_argument(
        "--conns-per-address", type=int, default=256, help="open sockets per address"
    )
    limits.add_argument(
        "--http-conns-per-address",
        type=int,
        default=512,
        help="TCP connections (HTTP and WebSocket) per address (not with --trust-proxy)",
    )
    limits.add_argument(
        "--request-timeout",
        type=float,
        default=10.0,
        help="seconds a connection has to send a whole request",
    )
    limits.add_argument(
        "--costly-every", type=float, default=1.0, help="seconds between resyncs/lobby lists"
    )
    limits.add_argument("--lobby-max", type=int, default=500, help="open tables listed at most")
    limits.add_argument(
        "--trust-proxy",
        action="store_true",
        help="take the client address from X-Forwarded-For (only behind your own proxy)",
    )
    limits.add_argument(
        "--rate-per-s", type=float, default=20.0, help="client messages per second per socket"
    )
    limits.add_argument("--burst", type=int, default=40, help="messages a socket may send at once")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dudo", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    conf = sub.add_parser(
        "conformance",
        help="replay rules conformance vectors (files or folders); or `conformance client -- "
        "CMD {url} {token}`: check a client's handling of reconnects and renumbering; or "
        "`conformance gateway --redis URL --gateway NAME`: watch a gateway's stream handling",
    )
    conf.add_argument("paths", nargs=argparse.REMAINDER, metavar="PATH")
    conf.set_defaults(func=_conformance)

    schemas = sub.add_parser("schemas", help="write or check the generated JSON Schemas")
    schemas.add_argument("action", choices=["write", "check"])
    schemas.add_argument("folder", nargs="?", default="protocol/schemas")
    schemas.add_argument(
        "--guide", help="the guide whose reference part is generated too (docs/protocol.md)"
    )
    schemas.set_defaults(func=_schemas)

    serve = sub.add_parser("serve", help="everything in one process, playable in a browser")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--redis", help="use this Redis instead of an embedded one")
    serve.add_argument("--log-level", default="warning")
    serve.add_argument("--bot-think", default="0.6,1.4", help="MIN,MAX seconds a bot waits")
    serve.add_argument(
        "--reveal-hold",
        type=float,
        default=REVEAL_HOLD_S,
        help="seconds a round's reveal holds the next turn's clock and the bots (0: none)",
    )
    serve.add_argument(
        "--embedded",
        choices=["auto", "redis-server", "fakeredis"],
        default="auto",
        help="the embedded Redis: a redis-server if one is found (auto), or this one",
    )
    _add_limits(serve)
    serve.set_defaults(func=_serve)

    ident = sub.add_parser(
        "identity",
        help="sign an identity (a JWT) for a user of an app, with the app's private key "
        "(as its backend does; dudo admin app add --generate makes one)",
    )
    ident.add_argument("--app", required=True)
    ident.add_argument("--key", required=True, help="the app's private key (PEM file)")
    ident.add_argument("--kid", default="1", help="the key's id in the app's key set")
    ident.add_argument("--user", required=True, help="the app's own user id")
    ident.add_argument("--ttl", type=int, default=300, help="seconds it stays valid")
    ident.set_defaults(func=_identity)

    play = sub.add_parser("play", help="play in the terminal through a gateway")
    play.add_argument("url", nargs="?", default="http://127.0.0.1:8000")
    play.add_argument("--name", help="your name (asked if missing)")
    play.add_argument("--create", action="store_true", help="create a table instead of joining")
    play.add_argument("--join", metavar="TABLE", help="join this table")
    play.add_argument("--bots", type=int, default=2, help="with --create: bot seats")
    play.add_argument(
        "--level", choices=("easy", "normal", "hard"), default="normal", help="the bots' level"
    )
    play.add_argument("--odds", action="store_true", help="with --create: show your odds")
    play.add_argument("--clock", type=int, help="with --create: seconds per turn")
    play.add_argument(
        "--rule", action="append", metavar="KEY=VALUE", help="with --create: any rule option"
    )
    play.add_argument("--seats", type=int, default=3, help="with --create: seats in all")
    play.add_argument("--preset", default="classic", help="with --create: rules preset")
    play.add_argument("--start-dice", type=int, help="with --create: dice each")
    play.add_argument(
        "--lang", choices=("en", "es", "de"), default="en", help="the text's language"
    )
    play.set_defaults(func=_play)

    bot = sub.add_parser(
        "bot", help="one bot playing through a gateway, as a client (the Python library)"
    )
    bot.add_argument("url", nargs="?", default="http://127.0.0.1:8000")
    bot.add_argument("--level", choices=("easy", "normal", "hard"), default="normal")
    seat = bot.add_mutually_exclusive_group()
    seat.add_argument("--join", metavar="TABLE", help="join this table")
    seat.add_argument("--token", help="play the seat (or tournament entry) of this token")
    seat.add_argument("--tournament", metavar="ID", help="register for it and play it out")
    bot.add_argument("--name", help="the name it plays under")
    bot.add_argument("--seed", type=int, help="its random choices, for a game you can replay")
    bot.add_argument("--think", default="0", help="MIN[,MAX] seconds before each move")
    bot.add_argument("--seats", type=int, default=2, help="a new table's seats (default)")
    bot.add_argument("--house", default="normal", help="a new table's house bots' level")
    bot.add_argument("--preset", default="classic", help="a new table's rules preset")
    bot.set_defaults(func=_bot)

    gateway = sub.add_parser("gateway", help="run a web gateway (HTTP + WebSocket)")
    gateway.add_argument("--redis", default=DEFAULT_REDIS)
    gateway.add_argument("--host", default="127.0.0.1")
    gateway.add_argument("--port", type=int, default=8000)
    gateway.add_argument("--partitions", type=int, default=16)
    gateway.add_argument(
        "--director-partitions", type=int, default=4, help="the deployment's director partitions"
    )
    _add_limits(gateway)
    gateway.add_argument(
        "--reply-timeout",
        type=float,
        default=5.0,
        help="seconds a create, join or hello waits for a worker's answer",
    )
    gateway.add_argument(
        "--send-queue",
        type=int,
        default=256,
        help="messages queued for one client before it is closed as too slow (code 4002)",
    )
    gateway.add_argument(
        "--ws-compress",
        action="store_true",
        help="compress WebSocket messages for clients that ask (costs CPU per message)",
    )
    gateway.add_argument(
        "--no-frames",
        action="store_true",
        help="take views as stream `view` messages and encode the clients' JSON here "
        "(default: workers send `frames`, the JSON encoded once for every gateway)",
    )
    _process_arguments(gateway, "gateway instance id", "host-pid-random", health=False)
    gateway.set_defaults(func=_gateway)

    irc = sub.add_parser("irc", help="run a chat gateway: Dudo in IRC channels")
    irc.add_argument("--server", default="127.0.0.1:6667", help="the IRC server, HOST:PORT")
    irc.add_argument(
        "--tls",
        action="store_true",
        default=os.environ.get("DUDO_IRC_TLS", "").lower() in ("1", "true", "yes"),
        help="connect with TLS (default: $DUDO_IRC_TLS)",
    )
    irc.add_argument("--nick", default="dudo")
    irc.add_argument(
        "--channel", action="append", help="a channel to play in (repeat for more; '#dudo')"
    )
    irc.add_argument("--lang", choices=("en", "es", "de"), default="en", help="channels' language")
    irc.add_argument(
        "--network", help="whose accounts these are, for player identity (default: the host)"
    )
    irc.add_argument(
        "--app",
        help="its app (dudo admin gateway add --app): with $DUDO_IRC_IDENTITY_KEY, the app's "
        "private key, a player logged in to an account is one player everywhere",
    )
    irc.add_argument(
        "--nick-lines-per-s", type=float, default=1.0, help="lines heard per nick (bursts x5)"
    )
    irc.add_argument(
        "--channel-lines-per-s", type=float, default=5.0, help="lines heard per channel"
    )
    irc.add_argument(
        "--turn-seconds", type=int, default=60, help="the turn clock of its tables (0: none)"
    )
    irc.add_argument("--lines-per-s", type=float, default=2.0, help="the pace of what it says")
    irc.add_argument("--burst", type=int, default=5, help="lines it may say at once")
    irc.add_argument("--redis", default=DEFAULT_REDIS)
    irc.add_argument("--partitions", type=int, default=16)
    irc.add_argument(
        "--director-partitions", type=int, default=4, help="the deployment's director partitions"
    )
    _process_arguments(irc, "gateway id: keep it across restarts", "irc-HOST")
    irc.set_defaults(func=_irc)

    bots = sub.add_parser("bots", help="run a bot service that fills bot seats")
    bots.add_argument("--redis", default=DEFAULT_REDIS)
    bots.add_argument("--partitions", type=int, default=16)
    bots.add_argument("--think-min", type=float, default=0.0, help="seconds before acting")
    bots.add_argument("--think-max", type=float, default=0.0)
    _process_arguments(bots, "service id, its gateway id", "bots-random")
    bots.set_defaults(func=_bots)

    worker = sub.add_parser("worker", help="run a table worker")
    _loop_arguments(worker, 16)
    worker.set_defaults(func=_worker)

    director = sub.add_parser("director", help="run a tournament director")
    _loop_arguments(director, 4)
    director.add_argument(
        "--table-partitions", type=int, default=16, help="the deployment's table partitions"
    )
    director.set_defaults(func=_director)

    chaos = sub.add_parser(
        "chaos", help="play through real gateways while everything fails, then audit"
    )
    chaos.add_argument(
        "--redis", help="use this Redis (never restarted); default: our own redis-server"
    )
    chaos.add_argument("--flush", action="store_true", help="with --redis: erase it first")
    chaos.add_argument("--seconds", type=float, default=60.0, help="how long faults strike")
    chaos.add_argument("--tables", type=int, default=40, help="tables in play at once")
    chaos.add_argument("--workers", type=int, default=2)
    chaos.add_argument("--gateways", type=int, default=2)
    chaos.add_argument("--partitions", type=int, default=16)
    chaos.add_argument("--fault-every", default="2,5", help="MIN,MAX seconds between faults")
    chaos.add_argument("--seed", type=int, help="the faults' and the players' randomness")
    chaos.add_argument("--keep", metavar="DIR", help="write process logs here")
    chaos.add_argument("--json", action="store_true", help="print one JSON object")
    chaos.set_defaults(func=_chaos)

    health = sub.add_parser(
        "healthcheck", help="exit 0 if the process on this machine says it is alive (or ready)"
    )
    health.add_argument("--port", type=int, help="its health port (default: $DUDO_HEALTH_PORT)")
    health.add_argument("--ready", action="store_true", help="ask /readyz instead of /healthz")
    health.set_defaults(func=_healthcheck)

    adm = sub.add_parser("admin", help="operate a running deployment")
    adm_sub = adm.add_subparsers(dest="what", required=True)
    gw = adm_sub.add_parser(
        "gateway", help="give a gateway its own Redis user, revoke it, or list them"
    )
    gw.add_argument("action", choices=("add", "revoke", "list"))
    gw.add_argument("name", nargs="?", help="the gateway's id (its --id)")
    gw.add_argument(
        "--password-env",
        metavar="VAR",
        help="add: the password from this environment variable (default: a new random one); "
        "adding again with the same one changes nothing for a running gateway",
    )
    gw.add_argument(
        "--derive-from-env",
        metavar="VAR",
        help="add: derive the password from the secret in this environment variable and the "
        "name (instances that set $DUDO_REDIS_USER_SECRET derive theirs the same way)",
    )
    gw.add_argument(
        "--app",
        help="add: the app it belongs to, whose users' identities it may present (default: "
        "its own name); the instances of one app share it",
    )
    gw.add_argument("--redis", default=DEFAULT_REDIS, help="an admin's Redis URL")
    gw.set_defaults(func=_admin_gateway)
    app = adm_sub.add_parser(
        "app", help="register an app's public keys (its users' identities), remove, list"
    )
    app.add_argument("action", choices=("add", "remove", "list"))
    app.add_argument("name", nargs="?", help="the app's name (the `iss` of its identities)")
    app.add_argument("--jwks", metavar="FILE", help="add: its public keys, a JWK set (JSON)")
    app.add_argument(
        "--generate",
        metavar="KEYFILE",
        help="add: make a new key pair, write the private key here (for the app's backend; "
        "the deployment keeps only the public key)",
    )
    app.add_argument("--redis", default=DEFAULT_REDIS, help="an admin's Redis URL")
    app.set_defaults(func=_admin_app)
    from .admin_cli import add_commands

    add_commands(adm_sub, DEFAULT_REDIS)

    arena = sub.add_parser("arena", help="measure one bot policy against another")
    arena.add_argument("--a", required=True, help="policy measured: random, baseline, hard")
    arena.add_argument("--b", required=True, help="the policy in every other seat")
    arena.add_argument("--seats", type=int, default=2)
    arena.add_argument("--games", type=int, default=1000)
    arena.add_argument("--preset", default="classic")
    arena.add_argument("--seed", type=int, default=1)
    arena.add_argument(
        "--rule", action="append", help="a rules override, e.g. --rule palifico=false"
    )
    arena.add_argument("--workers", type=int, help="processes (default: 2)")
    arena.add_argument("--json", action="store_true")
    arena.set_defaults(func=_arena)

    bench = sub.add_parser("bench", help="measure throughput")
    bench.add_argument(
        "target", choices=["engine", "workers", "gateway", "path", "tournament", "exploitability"]
    )
    bench.add_argument("--dice", type=int, default=1, help="exploitability: dice per player")
    bench.add_argument(
        "--iterations", type=int, default=1000, help="exploitability: CFR+ iterations"
    )
    bench.add_argument(
        "--rule", action="append", metavar="KEY=VALUE", help="exploitability: a rules override"
    )
    bench.add_argument("--seconds", type=float, default=5.0, help="length of each measured phase")
    bench.add_argument(
        "--preset", help="engine, tournament: rules preset (classic); exploitability: (liars-dice)"
    )
    bench.add_argument("--seats", type=int, default=4, help="engine, path: seats per table")
    bench.add_argument("--seed", type=int, default=1, help="engine: RNG seed")
    bench.add_argument(
        "--redis",
        help=f"workers, gateway: Redis URL (default {DEFAULT_REDIS}); path: use this empty "
        "Redis instead of starting a redis-server",
    )
    bench.add_argument(
        "--tables", type=int, help="workers: live tables (1000); path: tables in play (10)"
    )
    bench.add_argument("--workers", type=int, default=1, help="workers, path: worker processes")
    bench.add_argument("--gateways", type=int, default=1, help="path: gateway processes")
    bench.add_argument(
        "--embedded",
        nargs="?",
        const="auto",
        choices=["auto", "redis-server", "fakeredis"],
        help="path: measure one `dudo serve` (its embedded Redis) instead",
    )
    bench.add_argument(
        "--codec", choices=["json", "msgpack"], default="json", help="path: what clients speak"
    )
    bench.add_argument(
        "--load",
        choices=["node", "python"],
        default="node",
        help="path: the load generator's clients: Node (as the peers'), or Python in this "
        "process (needed for --codec msgpack)",
    )
    bench.add_argument(
        "--servers-from",
        metavar="DIR",
        help="path: run the servers from another checkout's services/ folder (a git worktree "
        "of another commit), driven by this one's load generator",
    )
    bench.add_argument(
        "--skeleton",
        action="store_true",
        help="path: measure the design's shape with no game in it (dudo.bench.skeleton): "
        "the floor of any server built this way in these libraries",
    )
    bench.add_argument("--partitions", type=int, default=16, help="workers: partitions")
    bench.add_argument(
        "--flush", action="store_true", help="workers, gateway, path: erase the Redis first"
    )
    bench.add_argument("--log-dir", help="workers, path: keep process logs here")
    bench.add_argument("--clients", type=int, default=500, help="gateway: WebSocket clients")
    bench.add_argument("--think-ms", type=float, default=300.0, help="gateway: pause per move")
    bench.add_argument("--players", type=int, default=1000, help="tournament: entrants (bots)")
    bench.add_argument(
        "--format", choices=["elimination", "heats"], default="elimination", help="tournament"
    )
    bench.add_argument(
        "--unsigned",
        action="store_true",
        help="tournament: entries unsigned (as before any gateway has a user of its own)",
    )
    bench.add_argument(
        "--admitted",
        action="store_true",
        help="path: the gateways admitted as apps (own Redis users, entries signed and "
        "checked), as deploy/ runs them; with --servers-from, that checkout admits them",
    )
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.set_defaults(func=_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
