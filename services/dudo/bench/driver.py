"""Play many tables through one gateway link, every seat a bot client of that gateway.

Used by ``dudo bench workers`` and by the integration tests. It behaves like a
gateway full of bot players: it creates tables, takes every seat, and whenever
a view says it is a seat's turn, it decides with a policy and writes an ``act``
entry. It measures the time from writing an action to receiving the view that
shows it applied.

Decisions are deterministic: the policy's RNG is seeded from (seed, table,
game version), and action ids are derived from the same, so two runs over the
same games send the same actions with the same ids, whatever the timing.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from ..bots.policies import POLICIES, my_turn
from ..link import GatewayLink


@dataclass
class TableRun:
    id: str
    seats: int
    versions: dict[int, int] = field(default_factory=dict)  # seat -> last view version
    last_views: dict[int, dict[str, Any]] = field(default_factory=dict)
    pending: tuple[str, float, int, dict[str, Any]] | None = None  # id, sent at, version, msg
    finished: bool = False
    actions: int = 0


class TableDriver:
    def __init__(
        self,
        link: GatewayLink,
        *,
        rules: dict[str, Any] | None = None,
        seats: int = 4,
        policy: str = "baseline",
        seed: int = 0,
        resend_after: float | None = None,
    ) -> None:
        self.link = link
        self.rules = rules or {"preset": "classic"}
        self.seats = seats
        self.policy = POLICIES[policy]
        self.seed = seed
        self.resend_after = resend_after
        self.tables: dict[str, TableRun] = {}
        self.latencies: list[float] = []  # seconds, action written -> view received
        self.errors: list[dict[str, Any]] = []
        self.applied = 0  # actions seen applied (through views)
        self.sent = 0
        self.resent = 0

    # -- setup ----------------------------------------------------------------------

    def create(self, table_ids: list[str]) -> None:
        """Create the tables and take every seat (pipelined)."""
        msgs = []
        for tid in table_ids:
            self.tables[tid] = TableRun(tid, self.seats)
            msgs.append(
                self.link.message(
                    "create",
                    id=f"{tid}-c",
                    table=tid,
                    rules=self.rules,
                    seats=[{"kind": "open"}] * self.seats,
                    host=f"{tid}-p0",
                )
            )
            msgs.extend(
                self.link.message(
                    "join",
                    id=f"{tid}-j{s}",
                    table=tid,
                    player=f"{tid}-p{s}",
                    name=f"Bot {s}",
                    seat=s,
                )
                for s in range(self.seats)
            )
        for start in range(0, len(msgs), 2000):
            self.link.send(*msgs[start : start + 2000])

    # -- the loop ---------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return all(t.finished for t in self.tables.values())

    def pump(self, block_ms: int | None = 50) -> int:
        """Read what arrived, answer every seat whose turn it is. Returns messages read."""
        messages = self.link.read(block_ms=block_ms, count=500)
        now = time.perf_counter()
        outgoing: list[dict[str, Any]] = []
        for msg in messages:
            if msg["type"] == "error":
                self.errors.append(msg)
                continue
            if msg["type"] != "view" or msg["seat"] is None:
                continue
            run = self.tables.get(msg["table"])
            if run is None or msg["version"] <= run.versions.get(msg["seat"], 0):
                continue  # a duplicate or an older snapshot: at-least-once delivery
            run.versions[msg["seat"]] = msg["version"]
            run.last_views[msg["seat"]] = msg
            if run.pending and msg["version"] > run.pending[2]:
                self.latencies.append(now - run.pending[1])
                self.applied += 1
                run.pending = None
            if msg["status"] == "over":
                run.finished = True
                continue
            if my_turn(msg) and run.pending is None:
                outgoing.append(self._decide(run, msg, now))
        if self.resend_after is not None:
            outgoing.extend(self._resend(now))
        if outgoing:
            self.link.send(*outgoing)
            self.sent += len(outgoing)
        return len(messages)

    def _decide(self, run: TableRun, view: dict[str, Any], now: float) -> dict[str, Any]:
        game = view["game"]
        rng = random.Random(f"{self.seed}:{run.id}:{game['version']}")
        action = self.policy(view, rng)
        seat = view["seat"]
        msg = self.link.message(
            "act",
            id=f"{run.id}-{game['version']}",
            table=run.id,
            player=f"{run.id}-p{seat}",
            seat=seat,
            action=action,
        )
        run.pending = (msg["id"], now, view["version"], msg)
        run.actions += 1
        return msg

    def _resend(self, now: float) -> list[dict[str, Any]]:
        """Write again, with the same id, any action that has shown no effect for a while."""
        out = []
        for run in self.tables.values():
            if run.pending and now - run.pending[1] > self.resend_after:
                msg_id, _, version, msg = run.pending
                run.pending = (msg_id, now, version, msg)
                out.append(msg)
                self.resent += 1
        return out

    def run_until_done(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.done:
            if time.monotonic() > deadline:
                left = sum(1 for t in self.tables.values() if not t.finished)
                raise TimeoutError(f"{left} of {len(self.tables)} tables unfinished")
            self.pump()
