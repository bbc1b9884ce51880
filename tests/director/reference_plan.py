"""The first, plain version of ``balance.plan`` (one min() per decision), kept as the
reference the fast one must agree with."""

from __future__ import annotations

from collections.abc import Iterable

from dudo.director.balance import Plan, TableCount, tables_needed


def _order(table: TableCount) -> tuple[int, str]:
    return len(table.table), table.table


def _desc(name: str) -> tuple[int, str]:
    return -len(name), "".join(chr(0x10FFFF - ord(c)) for c in name)


def reference_plan(tables: Iterable[TableCount], seats: int, waiting: int = 0) -> Plan:
    """Decide, from scratch, which tables break now and how many players each sends.

    ``waiting`` players have left their table and found no seat yet. Idempotent:
    the same counts give the same plan, so it is simply computed again after
    every report, and orders change only where the answer changed.
    """
    result = Plan()
    live = sorted((t for t in tables if not t.breaking), key=_order)
    breaking = [t for t in tables if t.breaking]
    paper = {t.table: t.seated + t.arriving for t in live}
    pending = waiting + sum(t.seated for t in breaking)
    total = sum(paper.values()) + pending

    def break_table(victim: TableCount) -> None:
        nonlocal pending
        result.breaks.append(victim.table)
        live.remove(victim)
        pending += paper.pop(victim.table)

    for table in list(live):
        if len(live) > 1 and table.seated < 2 and table.arriving == 0:
            break_table(table)
    while len(live) > tables_needed(total, seats):
        candidates = [t for t in live if t.arriving == 0]
        if not candidates:
            break
        break_table(min(candidates, key=lambda t: (paper[t.table], _desc(t.table))))

    # Everyone who is leaving takes the shortest table, on paper.
    for _ in range(pending):
        room = [t for t in live if paper[t.table] < seats]
        if not room:
            break
        shortest = min(room, key=lambda t: (paper[t.table], _order(t)))
        paper[shortest.table] += 1

    # Then the fullest tables send one player at a time to the shortest, never
    # leaving fewer than two of their own.
    while len(live) > 1:
        shortest = min(live, key=lambda t: (paper[t.table], _order(t)))
        senders = [
            t
            for t in live
            if paper[t.table] - paper[shortest.table] > 1
            and t.seated - result.sends.get(t.table, 0) > 2
        ]
        if not senders:
            break
        fullest = max(senders, key=lambda t: (paper[t.table], _desc(t.table)))
        result.sends[fullest.table] = result.sends.get(fullest.table, 0) + 1
        paper[fullest.table] -= 1
        paper[shortest.table] += 1
    return result
