"""A tournament's results as CSV (GET /api/tournaments/{id}/results?format=csv): what a
spreadsheet reads back is what the standings say, and no name runs as a formula."""

from __future__ import annotations

import csv
import io

from dudo.gateway.tournaments import results_csv


def test_the_csv_reads_back_as_the_places_and_no_name_is_a_formula() -> None:
    places = [
        {"place": 1, "name": "Ana, la \"Reina\"", "handle": "h1", "chips": 14,
         "rating": 3.512, "rating_change": 3.512},
        {"place": 2, "name": "=HYPERLINK(\"http://x\",\"win\")", "handle": "h2", "chips": 6,
         "rating": -0.25, "rating_change": -1.5},
        {"place": 3, "name": "+1", "handle": "h3", "chips": 0, "kicked": True},
        {"place": 4, "name": "@cmd", "handle": "h4", "chips": 0, "bot": True},
        {"place": 5, "name": "Dora", "handle": "h5", "chips": 0, "late": True},
    ]
    text = results_csv(places)
    assert text.startswith("place,name,handle,chips,rating,rating_change,bot,late,kicked\r\n")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["name"] for r in rows] == [
        'Ana, la "Reina"', "'=HYPERLINK(\"http://x\",\"win\")", "'+1", "'@cmd", "Dora"
    ]
    assert [(int(r["place"]), r["handle"], int(r["chips"])) for r in rows] == [
        (1, "h1", 14), (2, "h2", 6), (3, "h3", 0), (4, "h4", 0), (5, "h5", 0)
    ]
    # Rated places carry their rating and change; a bot's (or one not rated yet) are empty.
    assert [(r["rating"], r["rating_change"]) for r in rows] == [
        ("3.512", "3.512"), ("-0.25", "-1.5"), ("", ""), ("", ""), ("", "")
    ]
    # Issue 53, item 3: a bot's place, and a player the host took out, say so.
    # Item 12: so does a late entrant.
    assert [(r["bot"], r["late"], r["kicked"]) for r in rows] == [
        ("", "", ""), ("", "", ""), ("", "", "yes"), ("yes", "", ""), ("", "yes", "")
    ]
