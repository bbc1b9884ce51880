"""Tables filed by their size on paper, so balancing looks only at the ends (plain data).

Every balancing decision is about the shortest and the fullest tables: the smallest
breaks, the shortest takes a player who left, the fullest sends one. Looking at
all of them for every decision was a large share of a big director's CPU
(docs/benchmarks.md, "Measurements behind the code"); filed by size, a
decision reads a few tables at each end, and keeping the files costs a binary
search per table that changed.

A table is named here by its *rank*, its place in the order tables were opened:
the order every tie is broken in (:mod:`dudo.director.balance`).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Container, Iterator


class SizeIndex:
    """Ranks filed under a size; under each size in rank order."""

    def __init__(self) -> None:
        self._at: list[list[int]] = []  # size -> the ranks of the tables that size, sorted
        self._size: dict[int, int] = {}  # rank -> the size it is filed under
        self.total = 0  # the sizes added up

    def __len__(self) -> int:
        return len(self._size)

    def file(self, rank: int, size: int) -> None:
        """File ``rank`` under ``size`` (moving it if it was filed under another)."""
        old = self._size.get(rank)
        if old == size:
            return
        if old is not None:
            self.drop(rank)
        while len(self._at) <= size:
            self._at.append([])
        insort(self._at[size], rank)
        self._size[rank] = size
        self.total += size

    def drop(self, rank: int) -> None:
        """Take ``rank`` out (a table breaking up, or closed); nothing if it is not filed."""
        size = self._size.pop(rank, None)
        if size is None:
            return
        ranks = self._at[size]
        del ranks[bisect_left(ranks, rank)]
        self.total -= size

    def at(self, size: int) -> list[int]:
        """The ranks filed under ``size``, in rank order (do not change the list)."""
        return self._at[size] if 0 <= size < len(self._at) else []

    def by_size(self) -> Iterator[tuple[int, list[int]]]:
        """``(size, ranks)`` for every size from 0 up (lists not to be changed)."""
        return enumerate(self._at)

    def ascending(self) -> Iterator[tuple[int, int]]:
        """``(size, rank)``, the shortest first, ties by rank. Lazy: stop when you like
        (and do not file or drop while iterating)."""
        for size, ranks in enumerate(self._at):
            for rank in ranks:
                yield size, rank

    def descending(self) -> Iterator[tuple[int, int]]:
        """``(size, rank)``, the fullest first, ties by rank (lazy, as :meth:`ascending`)."""
        for size in range(len(self._at) - 1, -1, -1):
            for rank in self._at[size]:
                yield size, rank

    def first_below(self, limit: int, avoid: int | None = None) -> int | None:
        """The rank of the shortest table smaller than ``limit`` (ties: the first), or None;
        ``avoid`` only if no other table is that small."""
        for size in range(min(limit, len(self._at))):
            ranks = self._at[size]  # ``avoid`` is at most one of them: then the next
            if ranks and ranks[0] != avoid:
                return ranks[0]
            if len(ranks) > 1:
                return ranks[1]
        if avoid is not None and self._size.get(avoid, limit) < limit:
            return avoid
        return None

    def spread(self, smallest: int = 0) -> int:
        """The largest difference in size between two tables of at least ``smallest``
        (0 with fewer than two of them)."""
        sizes = [s for s in range(max(0, smallest), len(self._at)) if self._at[s]]
        return sizes[-1] - sizes[0] if sizes else 0

    def filed(self) -> dict[int, int]:
        """Rank -> size, for checks (a copy)."""
        return dict(self._size)


class Lookahead:
    """An iterator of ``(size, rank)`` that can be looked at before it is taken, and
    passes over ranks the plan broke or changed on paper (asked again at every look:
    both grow while the plan runs)."""

    def __init__(
        self, items: Iterator[tuple[int, int]], broken: Container[int], changed: Container[int]
    ) -> None:
        self._items = items
        self._broken, self._changed = broken, changed
        self._next: tuple[int, int] | None = next(items, None)

    def peek(self) -> tuple[int, int] | None:
        while self._next is not None and (
            self._next[1] in self._broken or self._next[1] in self._changed
        ):
            self._next = next(self._items, None)
        return self._next

    def take(self) -> None:
        self._next = next(self._items, None)
