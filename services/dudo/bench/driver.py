"""Play many tables through one gateway link, every seat a bot client of that gateway.

Used by ``dudo bench workers`` and by the integration tests. It behaves like a
gateway full of bot players: it creates tables, takes every seat, and whenever
a view says it is a seat's turn, it decides with a policy and writes an ``act``
entry. It measures the time from writing an action to receiving the view that
shows it applied.

Decisions are deterministic: each table's policy RNG is seeded from (seed,
table) and consulted once per game version, and action ids are derived from
the table and version, so two runs over the same games send the same actions
with the same ids, whatever the timing.
"""

from __future__ import annotations

import random
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .. import wire
from ..bots import POLICIES, my_turn
from ..link import GatewayLink


@dataclass
class TableRun:
    """One table as the bots' gateway follows it."""

    id: str
    seats: int
    version: int = 0  # last view version applied
    last_view: dict[str, Any] | None = None  # the last view message (public + private parts)
    pending: tuple[str, float, int, dict[str, Any]] | None = None  # id, sent at, version, msg
    queued: bool = False  # decided, waiting for the rate limit
    rng: random.Random = field(default_factory=random.Random)

    @property
    def last_views(self) -> dict[int, dict[str, Any]]:
        """Each hosted seat's last snapshot (public part merged with its private part)."""
        if self.last_view is None:
            return {}
        return {view["seat"]: view for view in wire.seat_views(self.last_view)}

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
        max_rate: float | None = None,
        replace_finished: bool = False,
    ) -> None:
        self.link = link
        self.rules = rules or {"preset": "classic"}
        self.seats = seats
        self.policy = POLICIES[policy]
        self.seed = seed
        self.resend_after = resend_after
        self.max_rate = max_rate  # actions per second, None = as fast as answers come
        self.replace_finished = replace_finished  # keep the number of live tables constant
        self._tokens = 0.0
        self._last_refill = time.perf_counter()
        self._queue: deque[tuple[TableRun, dict[str, Any], int]] = deque()
        self._serial = 0
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
            # One decision per game version, in order: a per-table RNG seeded
            # once gives the same decisions in every run.
            self.tables[tid] = TableRun(tid, self.seats, rng=random.Random(f"{self.seed}:{tid}"))
            # Seats are taken as any gateway takes them: by a request key each (the
            # deployment makes the players; the first seat's is the host).
            msgs.append(
                self.link.message(
                    "create",
                    id=f"{tid}-c",
                    table=tid,
                    rules=self.rules,
                    seats=[{"kind": "open"}] * self.seats,
                    request=f"{tid}-seat-0",
                )
            )
            msgs.extend(
                self.link.message(
                    "join",
                    id=f"{tid}-j{s}",
                    table=tid,
                    request=f"{tid}-seat-{s}",
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

    @property
    def active(self) -> int:
        return sum(1 for t in self.tables.values() if not t.finished)

    def pump(self, block_ms: int | None = 50) -> int:
        """Read what arrived, answer every seat whose turn it is. Returns messages read."""
        messages = self.link.read(block_ms=block_ms, count=500)
        now = time.perf_counter()
        fresh: list[str] = []
        for msg in messages:
            if msg["type"] == "error":
                self.errors.append(msg)
                continue
            if msg["type"] != "view":
                continue
            run = self.tables.get(msg["table"])
            if run is None or msg["version"] <= run.version:
                continue  # a duplicate or an older snapshot: at-least-once delivery
            run.version = msg["version"]
            if run.pending and msg["version"] > run.pending[2]:
                self.latencies.append(now - run.pending[1])
                self.applied += 1
                run.pending = None
            run.last_view = msg
            game = msg["game"]
            if game is not None and run.pending is None and not run.queued:
                # Only the seat in turn has a decision to make: build just its view.
                turn = [i for i, p in enumerate(msg["seats"]) if p["seat"] == game["turn"]]
                if turn:
                    view = wire.seat_snapshot(msg, msg["seats"][turn[0]])
                    if my_turn(view):
                        run.queued = True
                        act = self._decide(run, view, msg["holders"][turn[0]])
                        self._queue.append((run, act, msg["version"]))
            if msg["status"] == "over" and not run.finished:
                run.finished = True
                if self.replace_finished:
                    self._serial += 1
                    fresh.append(f"{run.id.split('_')[0]}_{self._serial}")
        if fresh:
            self.create(fresh)
        released = self._release(now)
        outgoing = [msg for _, msg, _ in released]
        if self.resend_after is not None:
            outgoing.extend(self._resend(now))
        if outgoing:
            # Latency runs from the moment the action is written, not from when
            # this pump began: the views handled above took time of their own.
            sent_at = time.perf_counter()
            for run, msg, version in released:
                run.pending = (msg["id"], sent_at, version, msg)
            self.link.send(*outgoing)
            self.sent += len(outgoing)
        return len(messages)

    def _release(self, now: float) -> list[tuple[TableRun, dict[str, Any], int]]:
        """Take decided actions off the queue, within the rate limit if there is one.

        The bucket holds at most 5 ms worth of actions (and at least one: below 200
        actions a second, 5 ms hold less than one, and nothing would ever go): clients
        acting on their own arrive spread out, not in bursts. Returns (table, message,
        version) triples.
        """
        allowed = len(self._queue)
        if self.max_rate is not None:
            self._tokens = min(
                self._tokens + (now - self._last_refill) * self.max_rate,
                max(1.0, self.max_rate / 200),
            )
            self._last_refill = now
            allowed = min(allowed, int(self._tokens))
            self._tokens -= allowed
        out = []
        for _ in range(allowed):
            run, msg, version = self._queue.popleft()
            run.queued = False  # pending from the moment it is written (see pump)
            out.append((run, msg, version))
        return out

    def _decide(self, run: TableRun, view: dict[str, Any], holder: str) -> dict[str, Any]:
        game = view["game"]
        action = self.policy(view, run.rng)
        seat = view["seat"]
        run.actions += 1
        return self.link.message(
            "act",
            id=f"{run.id}-{game['version']}",
            table=run.id,
            player=holder,  # the seat's holder, as the view names it
            seat=seat,
            action=action,
        )

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
