"""The bot service: fills the seats tables set aside for bots, and plays them.

It is an ordinary gateway: it registers, reads the lobby, takes bot seats
with ``join`` (``bot`` set to the level), and acts through ``act`` entries
when its seats' views say it is their turn. Workers never special-case it.
One service plays any number of seats, across any number of tables.

``dudo bots --redis URL`` runs it on its own; ``dudo serve`` runs one in process.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import random
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import structlog
from prometheus_client import Counter, Gauge

from .. import wire
from ..bots import ENDGAMES, LEVELS, NAMES, Endgames, bot_name, my_turn
from ..infra import Client, Health, internal_key, metrics_registry, run_until_stopped
from ..link import GatewayLink
from ..wire import keys, solves

log = structlog.get_logger("dudo.bots")

@dataclass
class BotSeat:
    table: str
    seat: int
    player: str
    level: str
    version: int = 0  # last view version acted upon


@dataclass
class BotService:
    client: Client
    partitions: int
    service_id: str = field(default_factory=lambda: f"bots-{secrets.token_hex(3)}")
    think: tuple[float, float] = (0.0, 0.0)  # seconds a bot waits before acting (min, max)
    rng: random.Random = field(default_factory=random.SystemRandom)
    scan_every: float = 1.0
    endgames: Endgames = field(default_factory=lambda: ENDGAMES)  # whose solves it reports

    def __post_init__(self) -> None:
        self.link = GatewayLink(self.client, self.service_id, self.partitions)
        self.bots: dict[str, BotSeat] = {}  # player id -> the seat it plays
        self.asked: dict[tuple[str, int], tuple[float, str]] = {}  # join sent: when, level
        self.due: list[tuple[float, int, dict[str, Any]]] = []  # (time, n, act message)
        self.counter = itertools.count()
        self.stopping = False
        self._next_scan = 0.0
        self._solves_said: tuple[tuple[int, int], float] | None = None  # (done, of), when
        self.log = log.bind(service=self.service_id)
        # Its own page of metrics, served with its health (/metrics on --health-port).
        self.registry = metrics_registry()
        Gauge("dudo_bots_seats", "bot seats played", registry=self.registry).set_function(
            lambda: len(self.bots)
        )
        self.moves = Counter("dudo_bots_moves_total", "moves sent", registry=self.registry)
        self.health = Health("bots", registry=self.registry)

    # -- filling seats -----------------------------------------------------------------

    def scan_lobby(self) -> None:
        """Ask for every free bot seat of every open table."""
        for table, entry in self.link.open_tables().items():
            self.want(table, entry)

    def want(self, table: str, entry: dict[str, Any] | None) -> None:
        if not entry:
            return
        now = time.monotonic()
        joins = []
        for seat, level in entry.get("wants_bots", []):
            asked = self.asked.get((table, seat))
            if asked is not None and now - asked[0] < 5.0:
                continue  # taken by us, or asked recently (a lost answer is asked again)
            self.asked[(table, seat)] = (now, level if level in LEVELS else wire.DEFAULT_BOT_LEVEL)
            player = f"bot-{secrets.token_hex(9)}"
            name = bot_name((sum(map(ord, table)) + seat) % len(NAMES))
            joins.append(
                self.link.message(
                    "join",
                    id=f"bj-{player}",
                    table=table,
                    player=player,
                    name=name,
                    seat=seat,
                    bot=level,
                )
            )
        if joins:
            self.link.send(*joins)

    # -- playing ---------------------------------------------------------------------------

    def step(self, block_ms: int | None = 50) -> int:
        """Read what arrived, schedule decisions, send those that are due."""
        now = time.monotonic()
        if now >= self._next_scan:
            self._next_scan = now + self.scan_every
            self.link.register()
            # A deployment's own process: it signs with the internal key, if there
            # is one (gateways with users of their own: dudo.wire.signing).
            self.link.signer = internal_key(self.client)
            self.scan_lobby()
            self._report_solves()
        wait = block_ms
        if self.due:
            until_due = max(0.0, self.due[0][0] - now)
            wait = None if until_due < 0.001 else min(block_ms or 50, int(until_due * 1000) + 1)
        messages = self.link.read(block_ms=wait, count=200)
        for msg in messages:
            kind = msg["type"]
            if kind == "joined":
                self._joined(msg)
            elif kind == "lobby":
                self.want(msg["table"], msg["entry"])
            elif kind == "view":
                self._on_view(msg)
            elif kind == "error" and msg.get("code") not in (wire.DUPLICATE,):
                self.log.info("bot_refused", table=msg.get("table"), code=msg.get("code"))
        return self._send_due()

    def _report_solves(self) -> None:
        """Its endgame solves' progress where the page can read it (dudo.wire.solves): at
        each change and every RENEW_MS while they run; gone once all are done. Entries
        of services that stopped renewing theirs (killed) go with each change."""
        progress = (self.endgames.warm_done, self.endgames.warm_asked)
        now = time.time()
        said = self._solves_said
        if said is not None and said[0] == progress and now - said[1] < solves.RENEW_MS / 1000:
            return
        if said is None and progress[1] == 0:
            return  # none asked (--no-endgame-solves): nothing to say
        self._solves_said = (progress, now)
        if said is not None and said[0] == progress and progress[0] == progress[1]:
            return  # all done, and said so
        if progress[0] == progress[1]:
            self.client.hdel(keys.BOT_SOLVES, self.service_id)
        else:
            self.client.hset(keys.BOT_SOLVES, self.service_id,
                             solves.entry(*progress, int(now * 1000)))  # fmt: skip
        if said is None or said[0] != progress:
            gone = solves.stale(self.client.hgetall(keys.BOT_SOLVES), int(now * 1000))
            if gone:
                self.client.hdel(keys.BOT_SOLVES, *gone)

    def _joined(self, msg: dict[str, Any]) -> None:
        bot = self.bots.get(msg["player"])
        if bot is not None:  # the host started early: same bot, new seat number
            bot.seat = msg["seat"]
            return
        _, level = self.asked.pop((msg["table"], msg["seat"]), (0.0, wire.DEFAULT_BOT_LEVEL))
        self.bots[msg["player"]] = BotSeat(msg["table"], msg["seat"], msg["player"], level)

    def _on_view(self, msg: dict[str, Any]) -> None:
        # Private parts are matched to bots by the player holding them, never by seat
        # number (seats change hands; see dudo.gateway.audience).
        for private, holder in zip(msg["seats"], msg.get("holders") or (), strict=False):
            bot = self.bots.get(holder) or self._adopt(msg, private["seat"], holder)
            if bot is None or bot.table != msg["table"] or msg["version"] <= bot.version:
                continue
            bot.version = msg["version"]
            bot.seat = private["seat"]
            if msg["status"] == "over":
                del self.bots[holder]
                continue
            view = wire.seat_snapshot(msg, private)
            if not my_turn(view):
                continue
            action = LEVELS[bot.level](view, self.rng)
            act = self.link.message(
                "act",
                id=f"{bot.player}.{view['game']['version']}",
                table=bot.table,
                player=bot.player,
                seat=bot.seat,
                action=action,
            )
            delay = self.rng.uniform(*self.think) if self.think[1] > 0 and _watched(msg) else 0.0
            if msg.get("reveal_until"):  # a reveal holds the table: people read it first
                delay = max(delay, msg["reveal_until"] / 1000 - time.time())
            heapq.heappush(self.due, (time.monotonic() + delay, next(self.counter), act))

    def _adopt(self, msg: dict[str, Any], seat: int, holder: str) -> BotSeat | None:
        """A view for a bot seat attached to this service that it does not know: it is
        ours from before a restart (same ``--id``). Take it up again at its level."""
        info = msg["players"][seat] if seat < len(msg["players"]) else None
        if not info or info.get("bot") not in LEVELS:
            return None
        bot = self.bots[holder] = BotSeat(msg["table"], seat, holder, info["bot"])
        self.log.info("bot_adopted", table=msg["table"], seat=seat)
        return bot

    def _send_due(self) -> int:
        now = time.monotonic()
        ready = []
        while self.due and self.due[0][0] <= now:
            ready.append(heapq.heappop(self.due)[2])
        if ready:
            try:
                self.link.send(*ready)
                self.moves.inc(len(ready))
            except Exception:  # not sent (or not known to be): send again after recovery
                for act in ready:  # (an act that did arrive is refused as a duplicate)
                    heapq.heappush(self.due, (now, next(self.counter), act))
                raise
        return len(ready)

    def run(self) -> None:
        """Play until :meth:`stop`; a Redis outage pauses the service, never ends it."""
        self.log.info("bots_started")
        try:
            run_until_stopped(
                self.step,
                stopping=lambda: self.stopping,
                health=self.health,
                recover=self.recover,
                log=self.log,
            )
        finally:
            with contextlib.suppress(Exception):
                self.link.deregister()
            with contextlib.suppress(Exception):
                self.client.hdel(keys.BOT_SOLVES, self.service_id)
            self.log.info("bots_stopped")

    def rename(self, service_id: str) -> None:
        """Use a fixed id (the gateway id seats are attached to)."""
        self.service_id = service_id
        self.link = GatewayLink(self.client, service_id, self.partitions)
        self.log = log.bind(service=service_id)

    def recover(self) -> None:
        """After a failure: look at the lobby again soon; decisions already made wait
        in ``due`` and go out when Redis is back (a duplicate is refused by id)."""
        self._next_scan = 0.0

    def stop(self) -> None:
        self.stopping = True


def _watched(view: dict[str, Any]) -> bool:
    """Should bots take their think time here? Yes where a person still plays or, out,
    still holds the seat (watching the rest: issue 34, item 2), and at a table of bots
    only (the operator paces those); not where every person has left (``away``)."""
    game = view.get("game") or {}
    counts = game.get("dice_counts") or []
    people = [
        (counts[seat] if seat < len(counts) else 0, bool(player.get("away")))
        for seat, player in enumerate(view["players"])
        if player is not None and player["bot"] is None
    ]
    return not people or any(dice > 0 or not away for dice, away in people)
