"""A worker commit's reports to directors (dudo.entity.reports): one `reports` entry per
tournament, in order, split only where an entry would be too big; and a director takes
a `reports` entry exactly as it takes its reports one by one."""

from __future__ import annotations

import random
from typing import Any

import msgspec

from dudo import wire
from dudo.auth.authority import Authority
from dudo.director.tournament import Context, Tournament
from dudo.entity.reports import report_sends
from dudo.wire import REPORTS_MAX, keys

RNG = random.Random(3)


def report(table: str, version: int, *, left: int = 0, name: str = "someone") -> dict[str, Any]:
    return {
        "table": table,
        "version": version,
        "round": version,
        "seated": [[f"{table}-p{i}", 3] for i in range(3)],
        "done": 0,
        "left": [
            {"player": f"{table}-l{i}", "name": name, "dice": 2, "gateway": None, "bot": None}
            for i in range(left)
        ],
        "joined": [],
        "out": [],
    }


def decoded(sends: list[tuple[str, bytes]]) -> list[tuple[str, dict[str, Any]]]:
    return [(stream, wire.decode(data, direction="director")) for stream, data in sends]


def test_one_entry_per_tournament_in_the_order_they_reported() -> None:
    a, b = keys.TOURNAMENTS.inbox(0), keys.TOURNAMENTS.inbox(1)
    reports = [
        (a, "cup", report("cup-1", 4)),
        (b, "open", report("open-7", 9)),
        (a, "cup", report("cup-2", 5)),
        (a, "cup", report("cup-1", 6)),  # the same table again: after its version 4
        (a, "fun", report("fun-1", 1)),  # another tournament of the same partition
    ]
    sent = decoded(report_sends(reports))
    assert [(s, m["tournament"], [(r["table"], r["version"]) for r in m["reports"]])
            for s, m in sent] == [
        (a, "cup", [("cup-1", 4), ("cup-2", 5), ("cup-1", 6)]),
        (b, "open", [("open-7", 9)]),
        (a, "fun", [("fun-1", 1)]),
    ]  # fmt: skip
    assert all(m["type"] == "reports" for _, m in sent)
    assert report_sends([]) == []


def test_entries_are_split_by_count_and_by_size_keeping_the_order() -> None:
    inbox = keys.TOURNAMENTS.inbox(0)
    many = [(inbox, "cup", report(f"cup-{i}", i)) for i in range(1, 2 * REPORTS_MAX + 6)]
    sent = decoded(report_sends(many))
    assert [len(m["reports"]) for _, m in sent] == [REPORTS_MAX, REPORTS_MAX, 5]
    assert [r["version"] for _, m in sent for r in m["reports"]] == list(range(1, len(many) + 1))
    # Reports of six players with long names leaving: too many bytes for one entry.
    big = [(inbox, "cup", report(f"cup-{i}", i, left=6, name="N" * 32)) for i in range(1, 41)]
    entries = report_sends(big)
    assert len(entries) > 1 and all(len(d) <= wire.MAX_INBOUND_BYTES for _, d in entries)
    got = [r["version"] for _, m in decoded(entries) for r in m["reports"]]
    assert got == list(range(1, 41))


def test_a_bad_report_inside_reports_is_a_typed_error() -> None:
    bad = report("cup-1", 3, left=1)
    bad["left"][0]["name"] = "a\u202eb"  # a bidi override: hidden characters refused
    body = wire.encode(wire.message("reports", id="r:1", tournament="cup", reports=[bad]))
    try:
        wire.decode(body, direction="director")
    except wire.WireError as exc:
        assert exc.code == wire.BAD_MESSAGE and "reports" in exc.message
    else:
        raise AssertionError("a hidden character in a name was taken")


AUTHORITY = Authority(b"t" * 32, b"p" * 32)


def start() -> tuple[Tournament, list[dict[str, Any]]]:
    """A 12-player tournament of bots, just begun (the same seating every time)."""
    rng = random.Random(3)
    create = wire.message(
        "tournament_create", id="c", tournament="cup", gateway="gw", host="h", name="Cup",
        rules={"preset": "classic"}, seats=4, format="elimination", advance=None,
        start_players=12, start_at=None, max_players=12, buy_in=10, payouts=[100], bots="easy",
    )  # fmt: skip
    # One deployment's keys for both: its tables' ids are keyed with them.
    t = Tournament.create(create, 0, Context(16, 4, authority=AUTHORITY))
    t.handle(wire.message("begin", id="b", tournament="cup", gateway="gw", player="h"), 0, rng)
    sent = [wire.unpack(d) for s, d in t.flush().sends if s != keys.RATINGS.inbox(0)]
    return t, [m for m in sent if m["type"] == "create"]


def test_a_director_takes_reports_together_as_it_takes_them_one_by_one() -> None:
    together, tables = start()
    alone, again = start()
    assert again == tables
    items = []
    for n, create in enumerate(tables):
        players = [p["player"] for p in create["tournament"]["players"]]
        items.append({**report(create["table"], 1), "seated": [[p, 5] for p in players],
                      "joined": players})  # fmt: skip
        items.append({**report(create["table"], 2), "seated": [[p, 4 - n] for p in players[1:]],
                      "out": players[:1]})  # fmt: skip
    together.handle(
        wire.validate(wire.message("reports", id="r:x", tournament="cup", reports=items)), 5, RNG
    )
    for item in items:
        alone.handle(
            wire.validate(wire.message("report", id="r:y", tournament="cup", **item)), 5, RNG
        )
    assert together.out == len(tables) and together.to_record() == alone.to_record()
    assert [wire.unpack(d) for _, d in together.flush().sends] == [
        wire.unpack(d) for _, d in alone.flush().sends
    ]
    # Seated players show the dice their table last reported, kept in its row: the
    # tournament read back from its record shows the same.
    shown = together.standings(tables_limit=None)
    assert [{p["dice"] for p in t["players"]} for t in shown["tables"]] == [{4}, {3}, {2}]
    stored = {**together.to_record(), b"v": b"1"}
    assert Tournament.from_hash(stored).standings(tables_limit=None) == shown  # type: ignore[union-attr]


def test_a_report_keeps_its_seated_players_as_the_msgpack_its_table_wrote() -> None:
    """The director takes a report's [player, dice] pairs as raw msgpack (it stores
    them in the table's row as they are): the count comes from the array's header."""
    fields = {"table": "t1", "version": 4, "round": 3, "done": 0, "left": [], "joined": [],
              "out": [], "seated": [["a", 3], ["b", 1]]}  # fmt: skip
    report = wire.TableReport.of(fields)
    assert bytes(report.seated) == wire.encode(fields["seated"])
    assert report.seated_count == 2
    assert wire.TableReport.of({**fields, "seated": []}).seated_count == 0
    many = [[f"p{i}", 1] for i in range(20)]  # longer than a fixarray (never a table's)
    assert wire.TableReport.of({**fields, "seated": many}).seated_count == 20
    # As an entry of ours decodes it: the same report, the pairs not decoded.
    entry = wire.encode(wire.message("reports", id="r:t1:4", tournament="cup", reports=[fields]))
    decoded = wire.decode_own(entry, direction="director")
    assert decoded["reports"] == [report] and isinstance(decoded["reports"][0].seated, msgspec.Raw)
