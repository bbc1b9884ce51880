"""Issue 50, item 7: a tournament's table ids were predictable (``<tournament>-1..3``,
the tournament's id being public in the lobby). The club created those tables before the
begin; the director's creates met ``table_exists``, no entrant was seated, and the
tournament was stuck. Its tables' ids now carry a tag keyed with the deployment's
secret. On a real redis-server, through both apps' own Redis users."""

from __future__ import annotations

from dudo.auth.identity import sign_identity
from dudo.director.tournament import Tournament
from dudo.wire import keys

from .conftest import Deployment

D = 2


def test_tables_made_for_a_tournament_cannot_be_taken_first(d: Deployment) -> None:
    ana = sign_identity("web", d.web.key, "ana-42")
    d.web.send("tournament_create", id="tc", tournament="cup", name="Cup", rules={},
               seats=6, format="elimination", advance=None, start_players=None,
               start_at=None, max_players=10, buy_in=0, payouts=[100], bots=None,
               identity=ana)  # fmt: skip
    d.web.send("register", id="r1", tournament="cup", name="Ana", bot=None, identity=ana)
    d.web.send("register", id="r2", tournament="cup", name="Dan", bot=None, request="dan-key-0001")
    d.pump(8)
    token = next(m["token"] for m in d.web.seen if m["type"] == "registered" and m["id"] == "r1")
    # The club squats every id it can guess, from the tournament's id in the lobby.
    guesses = [f"cup-{n}" for n in range(1, 6)] + ["cup-1-1", "cup1", "cup-t1"]
    for i, table in enumerate(guesses):
        d.club.send("create", id=f"sq{i}", table=table, rules={}, seats=[{"kind": "open"}] * 2)
    d.pump(4)
    assert all(d.admin.exists(keys.table_of(t, 4)) for t in guesses[:5])  # they are taken
    d.web.send("begin", id="b1", tournament="cup", token=token)
    d.pump(12)
    state = Tournament.from_hash(d.admin.hgetall(keys.tournament_of("cup", D)))
    assert state is not None and state.status == "running"
    seated_at = {e.table for e in state.entrants.values()}
    assert len(seated_at) == 1 and None not in seated_at
    [table] = seated_at
    assert table not in guesses and table.startswith("cup-") and table.endswith("-1")
    held = d.table(table)
    assert held.tournament == "cup" and sum(1 for s in held.seats if s.player) == 2


def test_one_apps_tables_do_not_take_every_place_in_the_lobby(d: Deployment) -> None:
    """Item 12: 510 open tables whose ids sorted first filled the lobby's 500 places, and
    the other app's open table was not listed. The places are shared out between the apps
    whose gateways opened the tables (here 20 places, the club's 25 tables)."""
    from dudo.gateway.lobby import listing

    for i in range(25):
        d.club.send("create", id=f"c{i}", table=f"000-{i:03}", rules={},
                    seats=[{"kind": "open"}] * 2)  # fmt: skip
    d.web.send("create", id="w1", table="zzz-web", rules={}, seats=[{"kind": "open"}] * 2)
    d.pump(4)
    entries = d.web.link.open_tables()
    assert entries["zzz-web"]["app"] == "web" and entries["000-000"]["app"] == "club"
    listed = [t["table"] for t in listing(entries, 20)]
    assert len(listed) == 20 and "zzz-web" in listed


def test_names_that_differ_only_by_what_shows_nothing_are_taken(d: Deployment) -> None:
    """Item 15: names that differed only by invisible code points passed the look-alike
    check: seven "Ana" in one standings. They are the same name now; a name of nothing
    but such characters is refused."""
    d.web.send("tournament_create", id="tc", tournament="cup", name="Cup", rules={},
               seats=6, format="elimination", advance=None, start_players=None,
               start_at=None, max_players=10, buy_in=0, payouts=[100], bots=None,
               request="host-key-0001")  # fmt: skip
    d.web.send("register", id="r0", tournament="cup", name="Ana", bot=None, request="ana-key-0001")
    marks = ["\u034f", "\ufe0f", "\ufe00", "\u3164", "\u2800", "\u17b4"]
    for i, mark in enumerate(marks, 1):
        d.web.send("register", id=f"r{i}", tournament="cup", name=f"Ana{mark}", bot=None,
                   request=f"eve-key-000{i}")  # fmt: skip
    d.web.send("register", id="r9", tournament="cup", name="\u3164\u3164", bot=None,
               request="eve-key-0009")  # fmt: skip
    d.pump(8)
    answers = {m["id"]: m for m in d.web.seen if m.get("id", "").startswith("r")}
    assert answers["r0"]["type"] == "registered"
    for i in range(1, len(marks) + 1):
        assert answers[f"r{i}"]["type"] == "error", answers[f"r{i}"]
        assert answers[f"r{i}"]["code"] == "name_taken", answers[f"r{i}"]
    assert answers["r9"]["code"] == "bad_message"
