"""``dudo serve``: the whole system in one process, for trying it out.

An embedded Redis (fakeredis's TCP server) unless ``--redis`` is given, one
table worker and one bot service in threads, and the web gateway in the main
thread. It prints the address to open. Stop it with Ctrl-C.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import structlog

from .bots.service import BotService
from .connection import connect
from .gateway.app import Gateway, GatewaySettings
from .keys import DEFAULT_PARTITIONS
from .worker import Worker, WorkerSettings

log = structlog.get_logger("dudo.serve")
EMBEDDED_PARTITIONS = 2


@dataclass
class Embedded:
    """A fakeredis TCP server in a background thread."""

    url: str
    server: object

    @classmethod
    def start(cls) -> Embedded:
        """On loopback only: it has no password."""
        host = "127.0.0.1"
        from fakeredis import TcpFakeServer

        server = TcpFakeServer((host, 0), server_type="redis")
        # One thread per client connection: daemons, so they never hold the exit.
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, name="redis", daemon=True).start()
        port = server.server_address[1]
        return cls(f"redis://{host}:{port}/0", server)

    def stop(self) -> None:
        self.server.shutdown()  # type: ignore[attr-defined]
        self.server.server_close()  # type: ignore[attr-defined]


def serve(
    port: int = 8000,
    redis_url: str | None = None,
    host: str = "127.0.0.1",
    bot_think: tuple[float, float] = (0.6, 1.4),
) -> None:
    from aiohttp import web

    # The embedded Redis has no password: it listens on loopback whatever --host says
    # (`--host 0.0.0.0` once exposed it to the network).
    embedded = Embedded.start() if redis_url is None else None
    url = redis_url or embedded.url  # type: ignore[union-attr]
    # fakeredis runs Lua slowly: with it, few partitions keep a cycle short.
    partitions = EMBEDDED_PARTITIONS if embedded else DEFAULT_PARTITIONS
    worker = Worker(
        WorkerSettings(
            redis_url=url, partitions=partitions, slow_cycle_ms=1000 if embedded else 100
        )
    )
    worker.setup()
    bots = BotService(connect(url), partitions, think=bot_think)
    threads = [
        threading.Thread(target=worker.run_forever, name="worker", daemon=True),
        threading.Thread(target=bots.run, name="bots", daemon=True),
    ]
    for thread in threads:
        thread.start()
    gateway = Gateway(GatewaySettings(redis_url=url, host=host, port=port, partitions=partitions))
    app = gateway.app()

    async def stop_others(_app: web.Application) -> None:
        worker.stop()
        bots.stop()

    app.on_shutdown.append(stop_others)
    where = f"http://{host}:{port}/"
    print(
        f"Dudo is running: open {where}  (Redis: {url}{' embedded' if embedded else ''})",
        flush=True,
    )
    try:
        web.run_app(app, host=host, port=port, print=None, shutdown_timeout=3)
    finally:
        worker.stop()
        bots.stop()
        for thread in threads:
            thread.join(timeout=5)
        for client in (worker.redis, bots.client):
            client.close()
        if embedded is not None:
            embedded.stop()
