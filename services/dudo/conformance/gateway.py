"""``dudo conformance gateway --redis URL --gateway NAME``: does a gateway handle the
stream protocol as docs/protocol.md Part 4 says? Run it beside the gateway under
test while that gateway plays (its users, or its own bot, take seats and act).

The kit connects as an admin and watches the gateway's side of the streams:

1. **registers**: the gateway's presence (``dudo:{g:ID}:alive``, renewed with a time to
   live), or a heartbeat in ``dudo:gateways`` for the deployment's own, refreshed;
2. **plays**: views reach its outbox (without traffic nothing else can be judged);
3. **drops duplicates**: delivery is at least once, so the kit delivers again, into
   the gateway's outbox, each view in which it is one of the gateway's seats' turn,
   a moment after the original. A gateway that keeps the last version per table
   ignores the copy; one that acts on it again is refused by the worker, and the
   refusal comes back to it, where the kit sees it;
4. **is never refused**: no ``error`` comes back to it (a refused message names its
   fault: ``bad_message``, ``not_attached``, a rule it broke...);
5. **writes only good entries**: nothing it wrote, or naming it, lies in the dead
   letters (unreadable, unsigned, forged), and Redis refused it nothing (``ACL LOG``:
   a gateway that writes the deployment's inbox, ``dudo:{pN}:in``, rather than its own,
   ``dudo:{pN}:in:NAME``, is refused there);
6. **trims its outbox**: what it has read is gone from the stream.

It changes nothing but the copies it appends to that one outbox.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .. import wire
from ..infra import xread
from ..wire import keys

TRIM_BOUND = 200  # entries an outbox may keep while its gateway reads it
DUPLICATE_AFTER_S = 0.3  # the copy of a view follows the original this much later


@dataclass
class Verdict:
    checks: dict[str, tuple[bool, str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(passed for passed, _ in self.checks.values())

    def text(self) -> str:
        lines = [f"{'ok  ' if passed else 'FAIL'} {name}: {detail}"
                 for name, (passed, detail) in self.checks.items()]  # fmt: skip
        passed = sum(1 for p, _ in self.checks.values() if p)
        lines.append(f"{passed} of {len(self.checks)} checks passed")
        return "\n".join(lines)


def check(
    client: Any, gateway: str, seconds: float = 20.0, partitions: int | None = None
) -> Verdict:
    """Watch ``gateway`` for ``seconds`` (see the module's list)."""
    outbox = keys.outbox(gateway)
    stored = client.hget(keys.CONFIG, keys.TABLES.config_field)
    parts = partitions or int(stored or keys.DEFAULT_PARTITIONS)
    dead_before = {p: _last_id(client, keys.dead_letters(p)) for p in range(parts)}
    last = _last_id(client, outbox) or "0-0"
    watch = _Watch()
    deadline = time.monotonic() + seconds
    next_beat_check = 0.0
    while time.monotonic() < deadline:
        now = time.monotonic()
        if now >= next_beat_check:
            score = client.zscore(keys.GATEWAYS, gateway)
            present = client.pttl(keys.presence(gateway))
            watch.beats += (score is not None and time.time() * 1000 - score < 10_000) or (
                keys.PRESENCE_TTL_MS - 10_000 < present <= keys.PRESENCE_TTL_MS
            )
            next_beat_check = now + 1.0
        watch.deliver_copies(client, outbox, now)
        last = watch.read(client, outbox, last, block=100)
    watch.deliver_copies(client, outbox, float("inf"))  # the last ones too, now
    time.sleep(DUPLICATE_AFTER_S + 1.0)  # what the last copies caused comes back; a trim
    last = watch.read(client, outbox, last, block=None)
    return watch.verdict(client, gateway, outbox, dead_before)


@dataclass
class _Watch:
    """What the kit saw of one gateway's outbox."""

    beats: int = 0
    views: int = 0
    entries: int = 0  # appended to the outbox while watched (the kit's copies too)
    errors: Counter[str] = field(default_factory=Counter)
    due: list[tuple[float, bytes]] = field(default_factory=list)  # (when, entry) to copy
    copies: set[str] = field(default_factory=set)  # ids of the copies appended
    copied: set[tuple[str, int]] = field(default_factory=set)  # (table, version)

    def deliver_copies(self, client: Any, outbox: str, until: float) -> None:
        """Append the copies due by ``until``, noting their ids (never judged again)."""
        while self.due and self.due[0][0] <= until:
            _, packed = self.due.pop(0)
            self.copies.add(keys.as_text(client.xadd(outbox, {wire.ENTRY_FIELD: packed})))

    def read(self, client: Any, outbox: str, last: str, block: int | None) -> str:
        for _stream, entries in xread(client, {outbox: last}, count=100, block=block) or []:
            for entry_id, fields in entries:
                last = keys.as_text(entry_id)
                self.entries += 1
                if last in self.copies:
                    continue  # our own copy of a delivery
                packed = fields.get(wire.ENTRY_FIELD) or fields.get(wire.ENTRY_FIELD.decode())
                self._delivered(packed)
        return last

    def _delivered(self, packed: bytes) -> None:
        again = False
        for msg in wire.unpack_batch(packed):
            if msg["type"] == "error":
                self.errors[msg["code"]] += 1
            elif msg["type"] == "view":
                self.views += 1
                turn = (msg["table"], msg["version"])
                if _its_turn(msg) and turn not in self.copied:
                    self.copied.add(turn)
                    again = True
        if again:  # the whole entry again, as a second delivery would bring it
            self.due.append((time.monotonic() + DUPLICATE_AFTER_S, packed))

    def verdict(
        self, client: Any, gateway: str, outbox: str, dead_before: dict[int, str | None]
    ) -> Verdict:
        verdict = Verdict()
        copies, errors = len(self.copies), self.errors
        verdict.checks["registers"] = (self.beats > 0, f"heartbeat seen {self.beats} times")
        verdict.checks["plays"] = (self.views > 0, f"{self.views} views delivered to it")
        verdict.checks["drops duplicates"] = (
            copies > 0 and not errors,
            f"{copies} views of its turn delivered twice"
            + ("" if copies else " (none of its turns seen: let it play longer)"),
        )
        verdict.checks["is never refused"] = (
            not errors,
            "no error came back"
            if not errors
            else ", ".join(f"{code} ×{n}" for code, n in errors.items()),
        )
        dead = _dead_of(client, gateway, dead_before) + _denied(client, gateway)
        verdict.checks["writes only good entries"] = (
            not dead,
            "none of its entries dead-lettered" if not dead else "; ".join(dead[:5]),
        )
        left = client.xlen(outbox)
        verdict.checks["trims its outbox"] = (
            self.entries >= 6 and left <= min(TRIM_BOUND, self.entries // 2),
            f"{left} of the {self.entries} entries delivered while watched are still there",
        )
        return verdict


def _its_turn(view: dict[str, Any]) -> bool:
    """Is it, in this view, the turn of a seat the gateway hosts?"""
    game = view.get("game")
    if not game or game.get("winner") is not None:
        return False
    return any(part.get("seat") == game.get("turn") and part.get("legal") for part in view["seats"])


def _dead_of(client: Any, gateway: str, since: dict[int, str | None]) -> list[str]:
    found = []
    for partition, after in since.items():
        start = f"({after}" if after else "-"
        for _, fields in client.xrange(keys.dead_letters(partition), min=start, max="+"):
            try:
                msg = wire.unpack(fields.get(b"m", b""))
            except Exception:
                msg = None
            written = keys.as_text(fields.get(b"from", b"")) == gateway
            if written or (isinstance(msg, dict) and msg.get("gateway") == gateway):
                found.append(fields.get(b"reason", b"").decode(errors="replace"))
    return found


def _denied(client: Any, gateway: str) -> list[str]:
    """What Redis refused the gateway's user (its ACL log), as lines; none where the
    gateway runs under the deployment's user or the log cannot be read."""
    user = keys.USER_PREFIX + gateway
    try:
        log = client.acl_log(count=100)
    except Exception:
        return []
    found = []
    for entry in log:
        fields = {keys.as_text(k): keys.as_text(v) for k, v in entry.items()
                  if isinstance(v, (str, bytes))}  # fmt: skip
        if fields.get("username") == user and fields.get("reason") in ("command", "key"):
            what, why = fields.get("object", "?"), fields.get("reason", "?")
            found.append(f"Redis refused it {what} ({why}): it may write its own inbox only")
    return found


def _last_id(client: Any, stream: str) -> str | None:
    got = client.xrevrange(stream, count=1)
    return keys.as_text(got[0][0]) if got else None
