"""Garbage collection settings of the long-running processes (dudo.infra.runtime)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from dudo.infra import runtime


class Loop:
    """Cyclic garbage: freed only by a full collection."""

    __slots__ = ("__weakref__", "me")

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def fresh() -> Iterator[None]:
    saved = dict(runtime._state)
    yield
    runtime._state.update(saved)
    gc.unfreeze()


def test_the_frozen_set_is_counted_at_most_every_interval_and_collected_when_it_grew(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = []
    real = gc.get_freeze_count
    monkeypatch.setattr(gc, "get_freeze_count", lambda: counted.append(1) or real())
    t = 1e9
    every = runtime.COUNT_EVERY_S
    runtime.settle_heap(every, t)  # counted (and maybe collected): the baseline
    baseline = runtime._state["after_full"] or real()
    runtime._state["after_full"] = baseline
    counted.clear()
    garbage = [Loop() for _ in range(max(runtime.FULL_COLLECTION_FLOOR, baseline // 2) + 1000)]
    probe = weakref.ref(garbage[0])
    del garbage  # dead, but only a full collection can free a cycle
    # Calls within the interval only freeze (a splice), whoever makes them: no count.
    assert runtime.settle_heap(every, t + 1) is False
    assert runtime.settle_heap(every, t + 2) is False
    assert counted == [] and probe() is not None  # frozen: out of every collection
    gc.collect()
    assert probe() is not None
    # Past the interval: counted; it grew by more than half, so a full collection.
    assert runtime.settle_heap(every, t + every + 1) is True
    assert counted and probe() is None


def test_a_gateway_counts_at_every_call(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Closed connections are cycles: a gateway's frozen garbage is checked for each time."""
    counted = []
    real = gc.get_freeze_count
    monkeypatch.setattr(gc, "get_freeze_count", lambda: counted.append(1) or real())
    runtime.settle_heap(now=1e9)
    runtime.settle_heap(now=1e9 + 1)
    assert len(counted) >= 2
