"""The lobby as clients get it (``GET /api/tables``, ``watch_lobby``): which tables, in
which order, at most how many. Pure: the listing in, the list out."""

from __future__ import annotations

from typing import Any


def listing(open_tables: dict[str, dict[str, Any]], most: int) -> list[dict[str, Any]]:
    """Open tables with free seats first, then full ones, then games being played, at
    most ``most`` of them, the places shared out fairly between the apps whose gateways
    opened them (each app's best first, in turns): one app's 510 tables whose ids sorted
    first once took every place, and another app's open table was never listed."""

    def order(t: dict[str, Any]) -> tuple[bool, bool, str]:
        return (t.get("status") == "playing", t["taken"] == t["seats"], t["table"])

    by_app: dict[str | None, list[dict[str, Any]]] = {}
    for table, entry in open_tables.items():
        by_app.setdefault(entry.get("app"), []).append({"table": table, **entry})
    queues = sorted((sorted(tables, key=order) for tables in by_app.values()),
                    key=lambda tables: order(tables[0]))  # fmt: skip
    chosen: list[dict[str, Any]] = []
    for turn in range(max((len(q) for q in queues), default=0)):
        for queue in queues:
            if turn < len(queue) and len(chosen) < most:
                chosen.append(queue[turn])
    chosen.sort(key=order)
    return chosen
