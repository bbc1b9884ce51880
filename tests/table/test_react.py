"""Quick reactions (issue 34): a seated player's reaction reaches everyone at the table,
spectators too, once, as a `reaction` event; one a seat every 1.5 s, whatever a client
sends; a spectator or a player of another seat cannot react for a seat."""

from __future__ import annotations

from dudo.table.table import REACT_GAP_MS, Table

from .test_table import NOW, Run, errors, h


def _reactions(out: list[dict]) -> dict[str, list[dict]]:
    """The reaction events each gateway got in these messages."""
    got: dict[str, list[dict]] = {}
    for m in out:
        if m["type"] == "view":
            got.setdefault(m["_to"], []).extend(e for e in m["events"] if e["type"] == "reaction")
    return got


def test_a_reaction_reaches_every_gateway_at_the_table_once() -> None:
    run = Run({"preset": "classic"}, seats=3)
    run.seat_all(["gw-a", "gw-b", "gw-a"])
    run.send("watch", "gw-watch", on=True)
    out = run.send("react", "gw-b", player=h("p1"), seat=1, emote="haha")
    assert errors(out) == []
    got = _reactions(out)
    event = {"type": "reaction", "seat": 1, "emote": "haha"}
    # gw-a hosts two seats (a view for each), gw-b one, the spectator's gateway one.
    assert got == {"gw-a": [event, event], "gw-b": [event], "gw-watch": [event]}
    # The game itself did not change: the same turn, the same bids.
    assert run.table.game is not None and run.table.game.bids == []


def test_one_reaction_a_seat_every_gap_and_the_gap_survives_the_record() -> None:
    run = Run({"preset": "classic"}, seats=2)
    run.seat_all()
    assert errors(run.send("react", player=h("p0"), seat=0, emote="wow")) == []
    run.table = Table.from_bytes(run.table.to_bytes())  # (another batch, another worker)
    too_soon = run.send("react", player=h("p0"), seat=0, emote="wow", at=NOW + REACT_GAP_MS - 1)
    assert errors(too_soon) == ["rate_limited"] and _reactions(too_soon) == {}
    # Another seat is not held back by it; the same seat is, after the gap, free again.
    assert errors(run.send("react", player=h("p1"), seat=1, emote="clap", at=NOW + 10)) == []
    later = run.send("react", player=h("p0"), seat=0, emote="grr", at=NOW + REACT_GAP_MS)
    assert errors(later) == [] and _reactions(later)


def test_only_the_seats_holder_reacts_for_it() -> None:
    run = Run({"preset": "classic"}, seats=2)
    run.seat_all()
    assert errors(run.send("react", player=h("p1"), seat=0, emote="hmm")) == ["not_seated"]
    assert errors(run.send("react", "gw-b", player=h("p0"), seat=0, emote="hmm")) == [
        "not_attached"
    ]
