"""``dudo conformance client -- CMD {url} {token}``: check a client's handling of the
protocol's hard cases against a real server of its own (docs/protocol.md).

The kit starts a redis-server and a ``dudo serve`` on free ports, takes the host seat
of a three-seat table with a turn clock itself, and seats the client under test at
seat 2, leaving seat 1 open; then it runs ``CMD`` with ``{url}`` and ``{token}`` filled
in. What it checks, from the table's own views (never from the client's output):

1. **welcome**: the client said hello with its token (its seat shows as present);
2. **renumbering**: the host starts early, seat 1 is dropped, the client moves to
   seat 1 (told by a new ``welcome``) and must act there;
3. **reconnect**: mid-game the kit kills the server and starts it again on the same
   port (state in Redis survives); the client must reconnect, say hello again and
   act on;
4. **refusal**: one of its moves is refused by the server (an ``error`` quoting the
   move's ``id``); the client must play a legal move instead, in time;
5. **rate limit**: one of its moves is refused with ``rate_limited``; the client must
   wait ``retry_ms``, send again, and get the move applied;
6. **own moves**: the client's seat plays every turn itself, never timed out into
   the house bot, to the end of the game.

The client talks to the server through a proxy (:mod:`dudo.conformance.proxy`) that
brings the refusals about; the server itself refuses. Exit status 0 when all hold.
The kit's own seat plays through ``dudo_client``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dudo_client import DudoApi, DudoConnection, DudoError

from ..infra import RedisServer, find_binary, free_port
from ..ops import wait_ready
from .proxy import FaultProxy

TURN_SECONDS = 12  # the client's clock: running out means the house bot played for it
# The client's moves before the kit restarts the server: the first, one after a
# refusal, one after a rate limit (conformance/proxy.py).
RESTART_AFTER_MOVES = 3
MOVES = ("bid", "dudo", "calza", "direction")
# The kit's gateway allows 4 messages a second per connection (bursts of 40): plenty to
# play, and once spent, a `retry_ms` of about 250 ms, long enough to tell a client that
# waits it out from one that sends again at once however busy the machine is.
KIT_RATE = ("--rate-per-s", "4", "--burst", "40")


@dataclass
class Report:
    checks: dict[str, bool] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(self.checks.values())

    def text(self) -> str:
        lines = [f"{'ok  ' if good else 'FAIL'} {name}" for name, good in self.checks.items()]
        return "\n".join(lines + [f"     {note}" for note in self.notes])


class _Server:
    """A redis-server and a `dudo serve` on it, the serve restartable on its port."""

    def __init__(self, folder: Path, ports: range | None = None) -> None:
        found = find_binary()
        if found is None:
            raise SystemExit("dudo conformance client needs redis-server on PATH")
        # Three ports: Redis, the server, the proxy the client connects through; from
        # ``ports`` when the developer names a range (else the kernel's choice).
        self.redis = RedisServer(found[0], folder / "redis", port=free_port(ports))
        self.port = free_port(ports, taken=(self.redis.port,))
        self.proxy_port = free_port(ports, taken=(self.redis.port, self.port))
        self.folder = folder
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        if self.redis.proc is None:
            self.redis.start()
        log = (self.folder / "serve.log").open("ab")
        env = {**os.environ, "DUDO_GATEWAY_SECRET": "conformance-secret-0123456789"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dudo", "serve", "--port", str(self.port),
             "--redis", self.redis.url, "--bot-think", "0.05,0.15", *KIT_RATE],
            stdout=log, stderr=log, env=env,
        )  # fmt: skip
        wait_ready(self.url, self.proc, timeout=30)

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.redis.stop()


async def _scenario(
    server: _Server, command: list[str], report: Report, turn_seconds: int
) -> None:
    async with DudoApi(server.url) as api:
        host = await api.create_table(
            rules={"preset": "classic", "start_dice": 4, "turn_seconds": turn_seconds},
            seats=3,
            name="Kit",
        )
        # The client under test plays this seat in its own process: it brings no seed
        # (it could not reveal one made here, and the deal would wait --seed-wait).
        guest = await api.join_table(host["table"], name="Client", seat=2, seed="")
    proxy = FaultProxy(server.url)
    await proxy.start(server.proxy_port)
    filled = [part.format(url=proxy.url, token=guest["token"]) for part in command]
    output = server.folder / "client.log"
    with output.open("wb") as log:
        client = subprocess.Popen(filled, stdout=log, stderr=subprocess.STDOUT)
        try:
            async with DudoConnection(server.url, host["token"]) as kit:
                await _play(server, kit, client, report)
        finally:
            if client.poll() is None:
                client.terminate()
            await proxy.close()
    _judge_faults(proxy, report)
    if not report.ok:  # what the client said, for its author
        tail = output.read_text(errors="replace").splitlines()[-15:]
        report.notes.extend(f"client: {line}" for line in tail)


async def _until(kit: DudoConnection, check: Any, seconds: float) -> dict[str, Any] | None:
    """The first view (the current one included) for which ``check`` holds, or None."""
    deadline = time.monotonic() + seconds
    while True:
        if kit.view is not None and check(kit.view):
            return kit.view
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        try:
            await asyncio.wait_for(kit.next("view"), left)
        except TimeoutError:
            return None


def _seated_connections(url: str) -> int:
    """How many WebSockets play a seat on this gateway now (its /metrics)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=5) as response:
        text = response.read().decode()
    for line in text.splitlines():
        if line.startswith('dudo_gateway_connections{kind="seat"}'):
            return int(float(line.split()[-1]))
    return 0


async def _play(
    server: _Server, kit: DudoConnection, client: subprocess.Popen[bytes], report: Report
) -> None:
    deadline = time.monotonic() + 30
    while _seated_connections(server.url) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.1)  # the kit's own connection, and the client's
    present = _seated_connections(server.url) >= 2
    report.checks["welcome: the client said hello and took its seat"] = present
    if not present:
        report.notes.append(f"no hello with the seat token within 30 s (exit: {client.poll()})")
        return
    try:
        await kit.start()  # seat 1 is open: dropped; the client moves from seat 2 to 1
    except DudoError as exc:
        report.notes.append(f"the kit could not start: {exc}")
        return
    client_seat, moves, restarted, house = 1, 0, False, 0
    moved_after = {"renumbering": 0, "reconnect": 0}
    deadline = time.monotonic() + 300
    seen_version = -1
    while time.monotonic() < deadline:
        view = await _until(kit, lambda v, s=seen_version: v["version"] > s, 60)
        if view is None:
            report.notes.append("the table stood still for 60 s")
            break
        seen_version = view["version"]
        by_house = False  # a move right after `house_bot` for the seat is the house's
        for event in view["events"]:
            if event["type"] == "house_bot" and event["seat"] == client_seat:
                house += 1
                by_house = True
            elif event["type"] in MOVES and event["seat"] == client_seat:
                if not by_house:
                    moves += 1
                    moved_after["reconnect" if restarted else "renumbering"] += 1
                by_house = False
        game = view["game"]
        if game is None or game["winner"] is not None:
            break
        if restarted and house and not moved_after["reconnect"]:
            break  # its clock ran out after the restart before it acted: decided
        if moves >= RESTART_AFTER_MOVES and not restarted:
            server.kill()  # every connection drops; the state stays in Redis
            server.start()
            restarted = True
            continue
        if "legal" in game and game["turn"] == view["seat"]:
            with _quiet():
                await kit.act(_lowest(game))
    report.checks["renumbering: the client acted at its new seat"] = moved_after["renumbering"] > 0
    report.checks["reconnect: the client acted after the server restarted"] = (
        moved_after["reconnect"] > 0
    )
    report.checks["own moves: never timed out into the house bot"] = house == 0
    report.notes.append(f"client moves: {moves}, timed out: {house}, exit: {client.poll()}")


def _judge_faults(proxy: FaultProxy, report: Report) -> None:
    """The proxy's two refusals: was each answered, and did the client play on?"""
    refusal, limit = proxy.refusal, proxy.rate_limit
    report.checks["refusal: the client played a legal move after a refused one"] = refusal.handled
    report.checks["rate limit: the client waited retry_ms and sent again"] = (
        limit.handled and limit.waited
    )
    for name, fault in (("refusal", refusal), ("rate limit", limit)):
        if fault.refused_at is None:
            report.notes.append(f"{name}: the client made no move the kit could have refused")
            continue
        waited = "" if fault.next_sent_at is None else (
            f", next move after {(fault.next_sent_at - fault.refused_at) * 1000:.0f} ms"
            + (", sent again before retry_ms was up" if fault.early else "")
        )  # fmt: skip
        report.notes.append(
            f"{name}: refused with {fault.code} (retry_ms {fault.retry_ms}){waited}; "
            f"applied after: {fault.applied}, clock ran out: {fault.timed_out}"
        )


class _quiet:
    """Ignore a refused move of the kit's own (the table moved on meanwhile)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, *rest: object) -> bool:
        return kind is not None and issubclass(kind, DudoError)


def _lowest(game: dict[str, Any]) -> dict[str, Any]:
    legal = game["legal"]
    if legal["direction"]:
        return {"type": "direction", "value": 1}
    if legal["dudo"] and game["bids"] and game["bids"][-1][1] > game["dice_in_play"] / 2:
        return {"type": "dudo"}
    for face, quantity in enumerate(legal["bid"], 1):
        if quantity is not None:
            return {"type": "bid", "quantity": quantity, "face": face}
    return {"type": "dudo"}


def run(
    command: str | list[str], ports: range | None = None, turn_seconds: int = TURN_SECONDS
) -> Report:
    """Run the scenario with ``command`` as the client under test (its three servers on
    ports of ``ports``, if given). ``turn_seconds``: the client's clock (the kit's own
    tests give a client that never answers less time, to fail sooner)."""
    parts = shlex.split(command) if isinstance(command, str) else list(command)
    report = Report()
    with tempfile.TemporaryDirectory(prefix="dudo-conformance-") as folder:
        server = _Server(Path(folder), ports)
        try:
            server.start()
            asyncio.run(_scenario(server, parts, report, turn_seconds))
        finally:
            server.stop()
    return report
