"""Process settings shared by the long-running services (worker, gateway, bots, benches).

Garbage collection: these processes keep many long-lived objects (tables,
connections) and allocate many short-lived containers (messages, views), with
almost no cyclic garbage. CPython's defaults then cost twice: a young
collection every few hundred allocations, and full collections that scan every
long-lived object (40–60 ms pauses, measured, straight into latency).
"""

from __future__ import annotations

import gc


def quiet_collector() -> None:
    """Collect young objects rarely (they are freed by reference counting anyway)."""
    gc.set_threshold(50_000, 20, 100)


def settle_heap() -> None:
    """Move the objects alive now out of the collector's sight (call it every second or
    so): full collections then only scan what is new. Objects without reference
    cycles are still freed when dropped."""
    gc.freeze()
