"""Which live worker should own which partition: a fair share, with little movement.

Every worker computes the same answer from the same live set, with no
coordination: each partition ranks workers by a hash of (partition, worker)
(rendezvous hashing, so a join or leave moves few partitions), and a partition
goes to its best-ranked worker that still has room. Every worker gets
floor(P / n) partitions and P mod n of them one more, so shares differ by at
most one.
"""

from __future__ import annotations

import hashlib


def _rank(partition: int, worker: str) -> bytes:
    return hashlib.blake2b(f"{partition}:{worker}".encode(), digest_size=8).digest()


def assignment(partitions: int, workers: list[str]) -> dict[int, str]:
    """Partition -> worker for every partition (empty when no worker is live)."""
    live = sorted(set(workers))
    if not live:
        return {}
    base, bonus = divmod(partitions, len(live))
    load = dict.fromkeys(live, 0)
    owner: dict[int, str] = {}
    for p in range(partitions):
        for worker in sorted(live, key=lambda w: _rank(p, w), reverse=True):
            if load[worker] < base or (load[worker] == base and bonus > 0):
                if load[worker] == base:
                    bonus -= 1
                owner[p] = worker
                load[worker] += 1
                break
    return owner


def owned_by(partitions: int, workers: list[str], me: str) -> set[int]:
    return {p for p, w in assignment(partitions, workers).items() if w == me}
