"""The long-running processes of a deployment: ``dudo worker``, ``director``, ``gateway``,
``irc``, ``matrix``, ``bots``; and ``dudo healthcheck``, which asks one of them whether it is alive.

Each command imports what it needs when it runs, so the others start without loading
Redis clients or web servers."""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING, Any

from .common import (
    add_limits,
    add_ws_layer,
    endgame_argument,
    limits_of,
    loop_arguments,
    process_arguments,
)
from .environment import Environment

if TYPE_CHECKING:
    from ..worker import WorkerSettings


def add(sub: Any, env: Environment) -> None:
    """These commands' parsers, under ``dudo``'s subcommands ``sub``."""
    gateway = sub.add_parser("gateway", help="run a web gateway (HTTP + WebSocket)")
    gateway.add_argument("--redis", default=env.redis_url)
    gateway.add_argument("--host", default="127.0.0.1")
    gateway.add_argument("--port", type=int, default=8000)
    gateway.add_argument("--partitions", type=int, default=16)
    gateway.add_argument(
        "--director-partitions", type=int, default=4, help="the deployment's director partitions"
    )
    add_limits(gateway)
    add_ws_layer(gateway)
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
    process_arguments(gateway, env, "gateway instance id", "host-pid-random", health=False)
    gateway.set_defaults(func=_gateway)

    irc = sub.add_parser("irc", help="run a chat gateway: Dudo in IRC channels")
    irc.add_argument("--server", default="127.0.0.1:6667", help="the IRC server, HOST:PORT")
    irc.add_argument(
        "--tls",
        action="store_true",
        default=env.irc_tls,
        help="connect with TLS (default: $DUDO_IRC_TLS)",
    )
    irc.add_argument("--nick", default="dudo")
    irc.add_argument(
        "--channel", action="append", help="a channel to play in (repeat for more; '#dudo')"
    )
    irc.add_argument(
        "--network",
        help="the network's name, in the ids of logged-in players (<network>:<account>); "
        "required with --app: it must not change when the server's address does",
    )
    irc.add_argument(
        "--app",
        help="its app (dudo admin gateway add --app): with $DUDO_IRC_IDENTITY_KEY, the app's "
        "private key, a player logged in to an account is one player everywhere",
    )
    irc.add_argument(
        "--nick-lines-per-s", type=float, default=1.0, help="lines heard per nick (bursts x5)"
    )
    _chat_arguments(irc, env, lines_per_s=2.0, burst=5)
    process_arguments(irc, env, "gateway id: keep it across restarts", "irc-HOST")
    irc.set_defaults(func=_irc)

    matrix = sub.add_parser("matrix", help="run a chat gateway: Dudo in Matrix rooms")
    matrix.add_argument(
        "--homeserver", required=True, help="the bot's homeserver, https://matrix.example.org"
    )
    matrix.add_argument(
        "--user",
        required=True,
        help="the bot's user id, @dudo:example.org ($DUDO_MATRIX_TOKEN: its access token; "
        "else $DUDO_MATRIX_PASSWORD to log in)",
    )
    matrix.add_argument(
        "--room", action="append", required=True,
        help="a room to play in: an alias (#dudo:example.org) or an id (repeat for more)",
    )  # fmt: skip
    matrix.add_argument(
        "--app",
        help="its app (dudo admin gateway add --app): with $DUDO_MATRIX_IDENTITY_KEY, the "
        "app's private key, a Matrix user is one player everywhere (matrix:@user:server)",
    )
    matrix.add_argument(
        "--user-lines-per-s", type=float, default=1.0, help="lines heard per user (bursts x5)"
    )
    _chat_arguments(matrix, env, lines_per_s=2.0, burst=10)
    process_arguments(matrix, env, "gateway id: keep it across restarts", "matrix-HOST")
    matrix.set_defaults(func=_matrix)

    bots = sub.add_parser("bots", help="run a bot service that fills bot seats")
    bots.add_argument("--redis", default=env.redis_url)
    bots.add_argument("--partitions", type=int, default=16)
    # A short pause before a bot acts where people play (a bot bidding in the same
    # millisecond as the bid before it looked like no player at all; issue 54, item 9);
    # a table of bots alone plays at full speed. `dudo serve` waits the same.
    bots.add_argument("--think-min", type=float, default=0.6,
                      help="seconds a bot waits at least before acting where people play")
    bots.add_argument("--think-max", type=float, default=1.4, help="... and at most")  # fmt: skip
    endgame_argument(bots)
    process_arguments(bots, env, "service id, its gateway id", "bots-random")
    bots.set_defaults(func=_bots)

    worker = sub.add_parser("worker", help="run a table worker")
    loop_arguments(worker, 16, env)
    worker.add_argument(
        "--keep-finished-hours",
        type=float,
        default=24.0,
        help="how long a finished table's record is kept: its replay link works that long "
        "(0: until an operator deletes it)",
    )
    worker.set_defaults(func=_worker)

    director = sub.add_parser("director", help="run a tournament director")
    loop_arguments(director, 4, env)
    director.add_argument(
        "--table-partitions", type=int, default=16, help="the deployment's table partitions"
    )
    director.add_argument(
        "--keep-finished-days",
        type=float,
        default=30.0,
        help="how long a finished tournament's record (its results) is kept (0: until an "
        "operator deletes it); it is listed as over for a day",
    )
    director.add_argument(
        "--app-creates-per-min",
        type=float,
        default=60.0,
        help="tournaments the gateways of one admitted app may create a minute on this "
        "director (a minute's worth at once; 0: no quota)",
    )
    director.add_argument(
        "--app-registers-per-min",
        type=float,
        default=6000.0,
        help="new registrations the gateways of one admitted app may make a minute on "
        "this director (0: no quota)",
    )
    director.set_defaults(func=_director)

    health = sub.add_parser(
        "healthcheck", help="exit 0 if the process on this machine says it is alive (or ready)"
    )
    health.add_argument("--port", type=int, help="its health port (default: $DUDO_HEALTH_PORT)")
    health.add_argument("--ready", action="store_true", help="ask /readyz instead of /healthz")
    health.set_defaults(func=_healthcheck)



def _worker(args: argparse.Namespace) -> int:
    """``dudo worker`` and ``dudo director``: one partition loop (tables or tournaments)."""
    from ..infra import ConfigMismatch, configure, retry_until_ready
    from ..worker import Worker

    configure(args.log_level)
    role = "director" if args.func is _director else "worker"
    if args.seed is not None and not args.env.insecure_seed:
        print(
            f"dudo {role}: --seed makes every die of every table computable by anyone who "
            "knows the seed and the table id (a spectator does): it is for tests and "
            "benchmarks only. Set DUDO_INSECURE_SEED=1 to use it anyway.",
            file=sys.stderr,
        )
        return 2
    settings = loop_settings(args)
    if args.id:
        settings.worker_id = args.id

    loops: list[Worker] = []
    try:  # connecting needs Redis (to tell a Cluster node): wait for it
        if role == "director":
            from ..run import director
            from ..worker import AppQuotas

            quotas = AppQuotas(args.app_creates_per_min, args.app_registers_per_min)
            director.run(settings, args.table_partitions, args.health_port, quotas)
            return 0
        from ..run import table_worker
        from ..table import Limits

        limits = Limits(
            open_ttl_ms=int(args.open_ttl * 1000),
            idle_ttl_ms=int(args.idle_ttl * 1000),
            bot_grace_ms=int(args.bot_grace * 1000),
            reveal_hold_ms=int(args.reveal_hold * 1000),
            seed_reveal_ms=int(args.seed_wait * 1000),
            vacate_after=args.vacate_after,
            partitions=settings.partitions,
        )
        retry_until_ready(lambda: loops.append(table_worker(settings, limits=limits)))
        loops[0].run(health_port=args.health_port)
    except ConfigMismatch as exc:
        print(f"dudo {role}: {exc}", file=sys.stderr)
        return 2
    return 0


def loop_settings(args: argparse.Namespace) -> WorkerSettings:
    """A partition loop's settings from ``dudo worker`` or ``dudo director``'s options."""
    from ..worker import WorkerSettings

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
        gateway_backlog=args.gateway_backlog,
        gateway_memory_soft=round(args.gateway_memory_alert_mb * 1024 * 1024),
        gateway_memory_hard=round(args.gateway_memory_mb * 1024 * 1024),
    )
    days = getattr(args, "keep_finished_days", None)  # a director's finished tournaments
    if days is not None:
        settings.finished_ttl_ms = round(days * 24 * 3600 * 1000)  # 0: kept
    hours = getattr(args, "keep_finished_hours", None)  # a worker's finished tables
    if hours is not None:
        settings.finished_ttl_ms = round(hours * 3600 * 1000)  # 0: kept
    return settings


def _director(args: argparse.Namespace) -> int:
    return _worker(args)


def _gateway(args: argparse.Namespace) -> int:
    from ..gateway import GatewaySettings, run
    from ..infra import configure

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
        ws_layer=args.ws_layer,
        event_loop=args.event_loop,
        frames=not args.no_frames,
        secret=args.env.gateway_secret,
        **limits_of(args),
    )
    if args.id:
        settings.gateway_id = args.id
    return _run_gateway("gateway", run, settings, args.env)


def _run_gateway(command: str, run: Any, settings: Any, env: Environment) -> int:
    """Run a gateway until it stops; exit status 2 with the reason if it was started with
    another partition count than the deployment's.

    With ``$DUDO_REDIS_USER_SECRET`` it connects as its own Redis user, ``gateway-<id>``,
    with the password derived from that secret and its id (instances named when they
    start: ``dudo admin gateway add --derive-from-env``)."""
    from ..infra import ConfigMismatch
    from ..ops import admin

    secret = env.redis_user_secret
    if secret:
        password = admin.derived_password(secret, settings.gateway_id)
        settings.redis_url = admin.url_for(settings.redis_url, settings.gateway_id, password)

    try:
        run(settings)
    except ConfigMismatch as exc:
        print(f"dudo {command}: {exc}", file=sys.stderr)
        return 2
    return 0


def _chat_arguments(
    parser: argparse.ArgumentParser, env: Environment, lines_per_s: float, burst: int
) -> None:
    """What both chat gateways take: language, rates, clock, Redis."""
    parser.add_argument(
        "--lang", choices=("en", "es", "de"), default="en", help="the rooms' language"
    )
    parser.add_argument(
        "--channel-lines-per-s", type=float, default=5.0, help="lines heard per room"
    )
    parser.add_argument(
        "--turn-seconds", type=int, default=60, help="the turn clock of its tables (0: none)"
    )
    parser.add_argument(
        "--lines-per-s", type=float, default=lines_per_s, help="the pace of what it says"
    )
    parser.add_argument("--burst", type=int, default=burst, help="lines it may say at once")
    parser.add_argument("--redis", default=env.redis_url)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument(
        "--director-partitions", type=int, default=4, help="the deployment's director partitions"
    )


def _gateway_id(where: str) -> str:
    """A chat gateway's default id, from where it plays (an id's characters only)."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", where)[:64]


def _chat_settings(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """The chat gateways' common settings, from ``_chat_arguments``."""
    if args.redis != args.env.redis_url and "@" in args.redis:
        print(f"dudo {command}: a password in --redis shows in `ps`: prefer DUDO_REDIS_URL",
              file=sys.stderr)  # fmt: skip
    return {
        "redis_url": args.redis,
        "lang": args.lang,
        "app": args.app,
        "channel_lines_per_s": args.channel_lines_per_s,
        "turn_seconds": args.turn_seconds,
        "lines_per_s": args.lines_per_s,
        "burst": args.burst,
        "health_port": args.health_port,
        "partitions": args.partitions,
        "director_partitions": args.director_partitions,
    }


def _matrix(args: argparse.Namespace) -> int:
    """``dudo matrix``: the chat gateway in Matrix rooms."""
    from ..chat import ChatSettings, run
    from ..infra import configure

    configure(args.log_level)
    if not re.fullmatch(r"@[^:\s]+:\S+", args.user):
        print(f"dudo matrix: --user is a Matrix user id, @name:server, not {args.user!r}",
              file=sys.stderr)  # fmt: skip
        return 2
    if not (args.env.matrix_token or args.env.matrix_password):
        print("dudo matrix: set DUDO_MATRIX_TOKEN (an access token) or DUDO_MATRIX_PASSWORD",
              file=sys.stderr)  # fmt: skip
        return 2
    server = args.user.split(":", 1)[1]
    settings = ChatSettings(
        **_chat_settings(args, "matrix"),
        transport="matrix",
        homeserver=args.homeserver,
        user_id=args.user,
        token=args.env.matrix_token,
        password=args.env.matrix_password,
        channels=args.room,
        identity_key=args.env.matrix_identity_key,
        nick_lines_per_s=args.user_lines_per_s,
        gateway_id=args.id or _gateway_id(f"matrix-{server}"),
    )
    return _run_gateway("matrix", run, settings, args.env)


def _irc(args: argparse.Namespace) -> int:
    """``dudo irc``: the chat gateway (the IRC server password, if any: DUDO_IRC_PASSWORD)."""
    from ..chat import ChatSettings, run
    from ..infra import configure

    configure(args.log_level)
    host, _, port = args.server.rpartition(":")
    if not host or not port.isdigit():
        print(f"dudo irc: --server HOST:PORT, not {args.server!r}", file=sys.stderr)
        return 2
    if args.app and not args.network:
        print(
            "dudo irc: --app needs --network NAME: a logged-in player is <network>:<account>, "
            "and a name taken from the server's address would make new players of everyone "
            "when it changes",
            file=sys.stderr,
        )
        return 2
    settings = ChatSettings(
        **_chat_settings(args, "irc"),
        server=host,
        port=int(port),
        tls=args.tls,
        server_password=args.env.irc_password,
        nick=args.nick,
        channels=args.channel or ["#dudo"],
        network=args.network,
        identity_key=args.env.irc_identity_key,
        nick_lines_per_s=args.nick_lines_per_s,
        gateway_id=args.id or _gateway_id(f"irc-{host}"),
    )
    return _run_gateway("irc", run, settings, args.env)


def _bots(args: argparse.Namespace) -> int:
    import signal

    from ..infra import ConfigMismatch, configure, connect, ensure_partitions, retry_until_ready
    from ..run import BotService

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
    from ..bots import ENDGAMES

    if not args.no_endgame_solves:
        ENDGAMES.warm()  # the presets' heads-up endgames, solved in the background meanwhile
    service = BotService(clients[0], args.partitions, think=(args.think_min, args.think_max))
    if args.id:
        service.rename(args.id)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: service.stop())
    if args.health_port is not None:
        service.health.serve(args.health_port)
    service.run()
    return 0


def _healthcheck(args: argparse.Namespace) -> int:
    """``dudo healthcheck``: exit 0 if this machine's process answers /healthz (or, with
    ``--ready``, /readyz) with 200 (a container's HEALTHCHECK; no curl in the image)."""
    import urllib.request

    port = args.port or args.env.health_port or 8081
    path = "/readyz" if args.ready else "/healthz"
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=3) as answer:
            return 0 if answer.status == 200 else 1
    except OSError as exc:
        print(f"dudo healthcheck: {path} on port {port}: {exc}", file=sys.stderr)
        return 1

