"""``dudo sandbox``: a whole deployment on one machine for a gateway author.

A gateway written from docs/protocol.md Part 4 needs more than ``dudo serve``: a Redis
that checks users (its own ``redis-server`` with an ACL file), a table worker, a
tournament director, the bot service to play against, a web gateway to watch or join its
tables from a browser, and a Redis user of its own, admitted as an app's gateway would
be, whose entries the workers check. This starts all of that on free ports (or ports of
a range the developer names), admits the gateway, prints the URL and environment it
runs with, and keeps every process running until stopped: one that dies is started
again, as an orchestrator would.
"""

from __future__ import annotations

import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..infra import connect
from . import admin
from .fleet import Fleet

PARTITIONS = 8  # few: a developer reads the streams by hand


@dataclass
class Sandbox:
    """The running sandbox: what :meth:`text` prints, and the processes behind it."""

    fleet: Fleet
    gateway: str
    app: str
    gateway_url: str  # the admitted gateway's Redis URL (its own user)
    web: str  # the web gateway's base URL

    @property
    def admin_url(self) -> str:
        return str(self.fleet.redis_url)

    def text(self) -> str:
        """What to paste: the environment the developer's gateway runs with."""
        return "\n".join([
            "Dudo sandbox: Redis, a table worker, a tournament director, the bot service",
            f"and a web gateway, in {self.fleet.folder} (logs: *.log).",
            "",
            f"  web gateway       {self.web}/  (a browser joins your tables there)",
            f"  your gateway      id {self.gateway}, app {self.app}, its own Redis user:",
            "",
            f"export DUDO_REDIS_URL='{self.gateway_url}'",
            f"export DUDO_GATEWAY_ID={self.gateway}",
            "",
            "  Entries you append are checked: sign them (docs/protocol.md, \"Who wrote it\")",
            "  with the password in that URL. Check your gateway while it plays:",
            f"  dudo conformance gateway --redis '{self.admin_url}' --gateway {self.gateway}",
            f"  Entries refused (and why): dudo admin dead list --redis '{self.admin_url}'",
            "Ctrl-C stops everything.",
        ])  # fmt: skip


def start(folder: Path, gateway: str, app: str, ports: range | None) -> Sandbox:
    """Everything up and the gateway admitted (SystemExit with one line if Redis is too
    old for gateway users)."""
    fleet = Fleet(folder, partitions=PARTITIONS, port_range=ports)
    fleet.gateway_flags = ["--creates-per-min", "600", "--joins-per-min", "600"]
    fleet.start_redis()
    client = connect(str(fleet.redis_url))
    try:
        admin.require_acl_selectors(client)
        fleet.start_worker()
        fleet.start_director()
        _start_bots(fleet)
        web = fleet.start_gateway("web")
        fleet.admit([gateway], app)  # waits for the worker's partition count
        fleet.wait_gateway("web")
    except BaseException:
        fleet.stop()
        raise
    finally:
        client.close()
    return Sandbox(fleet, gateway, app, fleet.users[gateway], web)


def supervise(sandbox: Sandbox, out: TextIO, stop: threading.Event) -> None:
    """Until ``stop`` (or SIGINT/SIGTERM): every process that died is started again."""
    fleet = sandbox.fleet
    while not stop.wait(1.0):
        for name, alive in list(fleet.alive().items()):
            if alive:
                continue
            print(f"{name} stopped (see {fleet.folder / (name + '.log')}): starting it again",
                  file=out, flush=True)  # fmt: skip
            _restart(fleet, name)


def _start_bots(fleet: Fleet) -> None:
    """The bot service, thinking as people do (not the benchmarks' zero)."""
    fleet.spawn("bots", "bots", "--redis", str(fleet.redis_url), "--partitions",
                str(PARTITIONS), "--think-min", "0.4", "--think-max", "1.2")  # fmt: skip


def _restart(fleet: Fleet, name: str) -> None:
    if name == "bots":
        _start_bots(fleet)
    elif name.startswith("worker-"):
        del fleet.procs[name]
        fleet.start_worker()
    elif name.startswith("director-"):
        del fleet.procs[name]
        fleet.start_director()
    else:
        fleet.start_gateway(name)


def run(folder: Path, gateway: str, app: str, ports: range | None, out: TextIO) -> int:
    """``dudo sandbox``: start, print, supervise until a signal, stop everything."""
    sandbox = start(folder, gateway, app, ports)
    stop = threading.Event()
    previous = {
        sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        print(sandbox.text(), file=out, flush=True)
        supervise(sandbox, out, stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sandbox.fleet.stop()
    return 0
