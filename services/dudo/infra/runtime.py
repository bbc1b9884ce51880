"""Process settings shared by the long-running services (worker, gateway, bots, benches).

Garbage collection: these processes keep many long-lived objects (tables,
connections) and allocate many short-lived containers (messages, views), with
almost no cyclic garbage. CPython's defaults then cost twice: a young
collection every few hundred allocations, and full collections that scan every
long-lived object (pauses of tens of milliseconds, straight into latency;
docs/benchmarks.md, "Measurements behind the code").

So young objects are collected rarely, and every second or so the survivors
are frozen (``gc.freeze``): full collections skip them. But freezing also
hides *garbage* that lives in reference cycles (a closed WebSocket's request,
protocol and response point at each other) from the collector for good: a
gateway kept every dead connection it ever had. So
:func:`settle_heap` runs one real full collection whenever the frozen set has
grown by half since the last one (and by at least ``FULL_COLLECTION_FLOOR``
objects; a worker or director counts it every 30 s, as counting walks it all):
memory stays within about 1.5 times what is alive, and full collections stay
rare (amortised, a constant amount of scanning per object ever frozen).
"""

from __future__ import annotations

import gc
import math
import time

# A full collection runs once this many objects (or half the frozen set, if more)
# were frozen since the last one.
FULL_COLLECTION_FLOOR = 50_000
# How often a worker's or director's frozen set is counted, in the whole process
# whoever asks: counting walks all of it (gc.get_freeze_count: ~10 ms for a
# 10,000-player director's 230,000 objects, every 5 s in each of its two loops),
# while freezing is a splice, and their loops make little cyclic garbage. A gateway
# (closed connections are cycles) counts at every call.
COUNT_EVERY_S = 30.0
_state = {"after_full": 0, "counted_at": -math.inf}


def quiet_collector() -> None:
    """Collect young objects rarely (they are freed by reference counting anyway)."""
    gc.set_threshold(50_000, 20, 100)


def settle_heap(count_every: float = 0.0, now: float | None = None) -> bool:
    """Move the objects alive now out of the collector's sight (call it every second or
    so); first, if the frozen set was not counted in the last ``count_every`` seconds
    (``now``: monotonic seconds), count it and run a full collection if it grew by
    half since the last one (returns True then). Objects without reference cycles
    are freed when dropped."""
    now = time.monotonic() if now is None else now
    if count_every and now - _state["counted_at"] < count_every:
        gc.freeze()
        return False
    _state["counted_at"] = now
    last = _state["after_full"]
    full = gc.get_freeze_count() - last > max(FULL_COLLECTION_FLOOR, last // 2)
    if full:
        gc.unfreeze()
        gc.collect()
    gc.freeze()
    if full:
        _state["after_full"] = gc.get_freeze_count()
    return full
