"""A tournament table's reports to its director, gathered per worker commit.

Tables report every round's end and every seat change (:mod:`dudo.table.tournament`).
A worker's commit of one partition holds the steps of many tables, and so several
reports in a large tournament: written one stream entry each, the director read,
decoded, verified and acknowledged each on its own, and that per-entry work was most
of its CPU (docs/benchmarks.md, "Measurements behind the code"). So the commit
writes one ``reports`` entry per tournament instead, holding them in the order
they were made; the director takes each as it took a ``report``.
"""

from __future__ import annotations

from typing import Any

from .. import wire
from ..wire import REPORTS_MAX
from .results import message_id

# (the director's inbox, the tournament, the report: `table`, `version`, ... as
# wire.fields.REPORT_FIELDS declares them)
Report = tuple[str, str, dict[str, Any]]


def report_sends(reports: list[Report]) -> list[tuple[str, bytes]]:
    """The entries that carry ``reports``: one ``reports`` message per tournament (in
    the order each tournament first reported), split where one would hold more than
    :data:`REPORTS_MAX` reports or more bytes than an inbox entry may."""
    if not reports:
        return []
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for inbox, tournament, report in reports:
        grouped.setdefault((inbox, tournament), []).append(report)
    sends: list[tuple[str, bytes]] = []
    for (inbox, tournament), items in grouped.items():
        for start in range(0, len(items), REPORTS_MAX):
            sends.extend(_entries(inbox, tournament, items[start : start + REPORTS_MAX]))
    return sends


def _entries(inbox: str, tournament: str, items: list[dict[str, Any]]) -> list[tuple[str, bytes]]:
    body = wire.encode(
        wire.message(
            "reports",
            id=message_id("r", items[0]["table"], items[0]["version"]),
            tournament=tournament,
            reports=items,
        )
    )
    if len(body) <= wire.MAX_INBOUND_BYTES or len(items) == 1:
        return [(inbox, body)]
    half = len(items) // 2  # seldom: many reports of players with long names leaving
    return _entries(inbox, tournament, items[:half]) + _entries(inbox, tournament, items[half:])
