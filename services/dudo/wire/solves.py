"""How far the bot services have got with their endgame solves, as the page reads it.

A bot service solves the presets' heads-up endgames as it starts (minutes of a core;
dudo.bots.endgame), and its hard bots play their heuristic in such a round until the
solve is done. Each service writes its progress to :data:`~dudo.wire.keys.BOT_SOLVES`
(a hash: service id -> :func:`entry`), and a gateway answers ``GET /api/bots`` with
:func:`summary` of them, so a table with a hard bot can say what it is playing meanwhile
(issue 53, item 21). Plain data: JSON in, JSON out, no Redis here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

# An entry not renewed for this long is a service that has gone (killed, say): left out.
FRESH_MS = 30_000
# A service renews its entry this often while nothing changes (and at every change).
RENEW_MS = 10_000


def entry(done: int, of: int, now_ms: int) -> bytes:
    """One service's progress: ``done`` of the ``of`` solves it asked for at start."""
    return json.dumps({"done": done, "of": of, "at": now_ms}, separators=(",", ":")).encode()


def stale(values: dict[bytes, bytes], now_ms: int) -> list[bytes]:
    """The fields of services that stopped renewing theirs (or wrote nonsense)."""
    return [field for field, value in values.items() if _read(value, now_ms) is None]


def summary(values: Iterable[bytes], now_ms: int) -> dict[str, int] | None:
    """The solves still under way across the services that are alive: ``{done, of}``,
    or None when none is (all done, none asked, or no service says)."""
    done = of = 0
    for value in values:
        read = _read(value, now_ms)
        if read is not None and read[0] < read[1]:
            done, of = done + read[0], of + read[1]
    return {"done": done, "of": of} if of else None


def _read(value: bytes, now_ms: int) -> tuple[int, int] | None:
    try:
        got: Any = json.loads(value)
        done, of, at = int(got["done"]), int(got["of"]), int(got["at"])
    except (ValueError, TypeError, KeyError):
        return None
    if now_ms - at > FRESH_MS or not 0 <= done <= of:
        return None
    return done, of
