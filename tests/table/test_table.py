"""The table protocol around the engine, without Redis: seating, views per gateway, clocks."""

from __future__ import annotations

import json
import random
from typing import Any

import msgpack
import pytest

from dudo import wire
from dudo.entity import SEEN_IDS, RecentIds
from dudo.table import Limits, Table

NOW = 1_000_000
h = wire.public_id  # how a gateway names a player it holds a seat for: its handle


def msg(kind: str, gateway: str | None = "gw-a", **fields: Any) -> dict[str, Any]:
    body = wire.message(kind, **fields)
    if gateway is not None:
        body["gateway"] = gateway
    wire.validate(body)  # every message these tests send is a valid protocol message
    return body


class Run:
    """Feeds messages to one table and keeps what each gateway received."""

    def __init__(self, rules: dict[str, Any] | None = None, seats: int = 3, **extra: Any) -> None:
        self.rng = random.Random(7)
        self.n = 0
        plan = extra.pop("plan", [{"kind": "open"}] * seats)
        create = msg(
            "create", id="c", table="t1", rules=rules or {"preset": "classic"}, seats=plan, **extra
        )
        self.table = Table.create(create, NOW, rng=self.rng)
        self.inbox: dict[str, list[dict[str, Any]]] = {}
        self.flush()

    def send(
        self, kind: str, gateway: str | None = "gw-a", *, at: int = NOW, **fields: Any
    ) -> list[dict[str, Any]]:
        """One message to the table, handled at time ``at``; what it sent out."""
        self.n += 1
        fields.setdefault("id", f"m{self.n}")
        self.table.handle(msg(kind, gateway, table="t1", **fields), at, self.rng)
        return self.flush()

    def flush(self) -> list[dict[str, Any]]:
        self.last = self.table.flush()
        out = []
        for gateway, data in self.last.outputs:
            message = msgpack.unpackb(data, raw=False)
            wire.validate(message)
            # As a gateway does: a view becomes one snapshot per hosted seat,
            # or the spectator snapshot when it hosts none.
            if message["type"] == "view":
                expanded = wire.seat_views(message) or [wire.spectator_view(message)]
            else:
                expanded = [message]
            for item in expanded:
                item["_to"] = gateway
                self.inbox.setdefault(gateway, []).append(item)
                out.append(item)
        return out

    def seat_all(self, gateways: list[str] | None = None) -> None:
        for i in range(len(self.table.seats)):
            gateway = gateways[i] if gateways else "gw-a"
            self.send("join", gateway, player=f"p{i}", name=f"P{i}")

    def act(self, seat: int, action: dict[str, Any], gateway: str = "gw-a") -> list[dict[str, Any]]:
        return self.send("act", gateway, player=h(f"p{seat}"), seat=seat, action=action)

    def move(self, action: dict[str, Any], *, at: int = NOW) -> list[dict[str, Any]]:
        """The seat in turn acts, through the gateway it is attached to."""
        seat = self.turn()
        holder = self.table.seats[seat]
        return self.send(
            "act", holder.gateway, at=at, player=holder.handle, seat=seat, action=action
        )

    def turn(self) -> int:
        assert self.table.game is not None
        return self.table.game.turn


def person_and_bot(**limits: int) -> Run:
    """A game under way: Ana (a person, seat 0, on gw-a) against a hard bot (seat 1,
    attached to the bot service gw-bots)."""
    run = Run(seats=2, plan=[{"kind": "open"}, {"kind": "bot", "level": "hard"}])
    if limits:
        run.table.limits = Limits(**limits)
    run.send("join", player="p0", name="Ana")
    run.send("join", "gw-bots", player="bot-1", name="Rocío", bot="hard")
    return run


def errors(out: list[dict[str, Any]]) -> list[str]:
    return [m["code"] for m in out if m["type"] == "error"]


def test_create_lists_the_table_and_answers_the_creator() -> None:
    run = Run(host="p0")
    assert run.last.lobby["taken"] == 0 and run.last.lobby["seats"] == 3
    assert run.last.record is not None and run.table.status == "open"
    (view,) = run.inbox["gw-a"]
    assert view["type"] == "view" and view["seat"] is None and view["game"] is None


def test_create_rejects_rules_that_do_not_fit_the_plan() -> None:
    with pytest.raises(wire.Refusal) as info:  # the table's refusal: rules and plan differ
        Run({"preset": "cacho"}, seats=2)
    assert info.value.code == wire.BAD_RULES
    with pytest.raises(wire.WireError) as info:  # the codec's: no rules have 9 dice
        Run({"preset": "classic", "start_dice": 9})
    assert info.value.code == wire.BAD_RULES


def test_seating_then_start_when_full() -> None:
    run = Run()
    out = run.send("join", player="p0", name="Ana")
    assert [m["type"] for m in out] == ["joined", "view"]
    assert out[0]["seat"] == 0 and out[1]["players"][0]["name"] == "Ana"
    assert run.last.lobby["taken"] == 1
    run.send("join", player="p1", name="Ben")
    out = run.send("join", player="p2", name="Cid")
    assert run.table.status == "playing"
    # Still listed, as a game people may watch (and no seat to take).
    assert run.last.lobby["status"] == "playing" and run.last.lobby["wants_bots"] == []
    views = [m for m in out if m["type"] == "view"]
    assert sorted(v["seat"] for v in views) == [0, 1, 2]
    assert views[0]["events"][0]["type"] == "game_start"


def test_a_finished_game_leaves_the_lobby() -> None:
    run = Run({"preset": "classic", "start_dice": 1}, seats=2)
    run.seat_all()
    assert run.last.lobby["status"] == "playing"
    run.act(run.turn(), {"type": "bid", "quantity": 1, "face": 2})
    run.act(run.turn(), {"type": "dudo"})  # one die each: the round decides the game
    assert run.table.status == "over" and run.last.lobby is None


def test_each_gateway_gets_only_the_seats_it_hosts_and_only_their_dice() -> None:
    run = Run()
    run.seat_all(["gw-a", "gw-b", "gw-b"])
    game = run.table.game
    a = [m for m in run.inbox["gw-a"] if m["type"] == "view" and m["status"] == "playing"]
    b = [m for m in run.inbox["gw-b"] if m["type"] == "view" and m["status"] == "playing"]
    assert {v["seat"] for v in a} == {0}
    assert {v["seat"] for v in b} == {1, 2}
    from dudo.engine import seat_view

    for view in a + b:
        # exactly the engine's redacted view of that seat: its dice and nothing hidden
        assert view["game"] == seat_view(game, view["seat"])
        assert view["game"]["dice"] == list(game.hands[view["seat"]])
        assert view["game"]["last_round"] is None


def test_spectators_get_views_without_dice() -> None:
    run = Run()
    run.send("watch", "gw-s", on=True)
    run.seat_all()
    spectator = [m for m in run.inbox["gw-s"] if m["type"] == "view"][-1]
    assert spectator["seat"] is None and spectator["status"] == "playing"
    assert "dice" not in spectator["game"] and "legal" not in spectator["game"]
    run.send("watch", "gw-s", on=False)
    before = len(run.inbox["gw-s"])
    run.act(run.turn(), {"type": "bid", "quantity": 1, "face": 2})
    assert len(run.inbox["gw-s"]) == before


def test_join_errors() -> None:
    run = Run(plan=[{"kind": "open"}, {"kind": "bot", "level": "easy"}, {"kind": "open"}])
    assert errors(run.send("join", player="p0", name="A", seat=1)) == [wire.SEAT_TAKEN]
    run.send("join", player="p0", name="A", seat=2)
    assert errors(run.send("join", player="p1", name="B", seat=2)) == [wire.SEAT_TAKEN]
    assert errors(run.send("join", player="p1", name="B", seat=5)) == [wire.SEAT_TAKEN]
    run.send("join", player="p1", name="B")
    assert errors(run.send("join", player="p9", name="Z")) == [wire.TABLE_FULL]
    out = run.send("join", "gw-bots", player="bot1", name="Bot", bot="easy")
    assert out[0]["type"] == "joined" and out[0]["seat"] == 1
    assert run.table.status == "playing"
    assert errors(run.send("join", player="late", name="L")) == [wire.GAME_STARTED]


def test_bots_take_bot_seats_first() -> None:
    run = Run(plan=[{"kind": "open"}, {"kind": "open"}, {"kind": "bot", "level": "hard"}])
    out = run.send("join", "gw-bots", player="b", name="Bot", bot="hard")
    assert out[0]["seat"] == 2


def test_rejoin_gets_the_same_seat_through_the_new_gateway() -> None:
    run = Run()
    run.seat_all()
    out = run.send("join", "gw-b", player="p1", name="P1")
    # The gateway that had the seat is told to stop relaying it to that player.
    assert out[0] == {**out[0], "type": "detached", "seat": 1, "player": h("p1"), "_to": "gw-a"}
    assert out[1] == {**out[1], "type": "joined", "seat": 1}
    assert run.table.seats[1].gateway == "gw-b"
    assert any(m["type"] == "view" and m["seat"] == 1 for m in run.inbox["gw-b"])


def test_act_refusals_and_duplicates() -> None:
    run = Run()
    run.seat_all()
    seat = run.turn()
    other = (seat + 1) % 3
    version = run.table.version
    assert errors(run.act(other, {"type": "bid", "quantity": 1, "face": 2})) == ["not_your_turn"]
    elsewhere = run.send("act", player=h("p0"), seat=5 if seat else 1, action={"type": "dudo"})
    assert errors(elsewhere) == [wire.NOT_SEATED]
    assert errors(run.act(seat, {"type": "dudo"}, gateway="gw-x")) == [wire.NOT_ATTACHED]
    assert errors(run.act(seat, {"type": "bid", "quantity": 1, "face": 1})) == ["opening_on_ones"]
    assert run.table.version == version and run.last.record is None
    out = run.send(
        "act",
        player=h(f"p{seat}"),
        seat=seat,
        id="same",
        action={"type": "bid", "quantity": 2, "face": 3},
    )
    assert errors(out) == [] and run.table.version == version + 1
    out = run.send(
        "act",
        player=h(f"p{seat}"),
        seat=seat,
        id="same",
        action={"type": "bid", "quantity": 2, "face": 3},
    )
    assert errors(out) == [wire.DUPLICATE] and run.table.version == version + 1
    assert len(run.table.game.bids) == 1


def test_errors_go_only_to_the_sender() -> None:
    run = Run()
    run.seat_all(["gw-a", "gw-b", "gw-c"])
    seat = run.turn()
    wrong = (seat + 1) % 3
    out = run.act(wrong, {"type": "dudo"}, gateway=["gw-a", "gw-b", "gw-c"][wrong])
    assert [(m["type"], m["_to"]) for m in out] == [("error", ["gw-a", "gw-b", "gw-c"][wrong])]


def test_act_before_start() -> None:
    run = Run()
    run.send("join", player="p0", name="A")
    assert errors(run.act(0, {"type": "dudo"})) == [wire.GAME_NOT_STARTED]


def test_leave_before_start_frees_the_seat_and_moves_the_host() -> None:
    run = Run()
    run.send("join", player="p0", name="A")
    run.send("join", player="p1", name="B")
    assert run.table.host == "p0"
    out = run.send("leave", player=h("p0"), seat=0)
    assert out[0]["type"] == "left"
    assert not run.table.seats[0].taken and run.table.host == "p1"
    assert run.last.lobby["taken"] == 1


def test_rename_shows_a_seats_new_name_and_only_its_gateway_may() -> None:
    run = Run()
    run.send("join", player="p0", name="Ana")
    run.send("join", "gw-b", player="p1", name="Ben")
    version = run.table.version
    out = run.send("rename", player=h("p0"), seat=0, name="Ana_away")
    views = [m for m in out if m["type"] == "view"]
    assert views and views[0]["players"][0]["name"] == "Ana_away"
    assert run.table.version == version + 1 and run.last.lobby is not None  # open: listed
    assert run.send("rename", player=h("p0"), seat=0, name="Ana_away") == []  # no change
    assert run.table.version == version + 1
    # Only the gateway the seat is attached to, and only for the seat's own player.
    assert errors(run.send("rename", "gw-b", player=h("p0"), seat=0, name="Eve")) == [
        "not_attached"
    ]
    assert errors(run.send("rename", player=h("p1"), seat=0, name="Eve")) == ["not_seated"]
    assert run.table.seats[0].name == "Ana_away"
    with pytest.raises(wire.WireError):  # a name is cleaned by the gateway: this is not
        msg("rename", id="r", table="t1", player=h("p0"), seat=0, name="\u202eevil")


def test_leave_during_play_lets_the_house_bot_play_at_once() -> None:
    run = Run({"preset": "classic", "turn_seconds": 20})
    run.seat_all()
    seat = run.turn()
    run.send("leave", player=h(f"p{seat}"), seat=seat)
    assert run.table.seats[seat].away and run.table.deadline == NOW
    assert run.last.timer_add == (f"t1|{run.table.version}", NOW)
    out = run.send("timeout", gateway=None, id="t:t1:x", version=run.table.version)
    assert any(
        e["type"] == "house_bot" and e["seat"] == seat
        for m in out
        if m["type"] == "view"
        for e in m["events"]
    )
    assert run.table.game.version == 1
    assert all(m["seat"] != seat for m in out if m["type"] == "view")  # away: no views


def test_turn_clock_and_stale_timeouts() -> None:
    run = Run({"preset": "classic", "turn_seconds": 30})
    run.seat_all()
    assert run.table.deadline == NOW + 30_000
    member = f"t1|{run.table.version}"
    assert run.last.timer_add == (member, NOW + 30_000)
    stale = run.table.version - 1
    assert run.send("timeout", gateway=None, id="t:1", version=stale) == []
    assert run.table.game.version == 0
    seat = run.turn()
    run.send("timeout", gateway=None, id="t:2", version=run.table.version)
    assert run.table.game.version == 1 and run.table.game.turn != seat
    assert run.last.timer_remove == member


def test_host_start_drops_open_seats_and_renumbers() -> None:
    run = Run(seats=4, host="p1")
    run.send("join", player="p1", name="B", seat=1)
    run.send("join", "gw-b", player="p3", name="D", seat=3)
    assert errors(run.send("start", player=h("p3"))) == [wire.NOT_HOST]
    out = run.send("start", player=h("p1"))
    assert run.table.status == "playing" and len(run.table.seats) == 2
    moved = [(m["player"], m["seat"], m["_to"]) for m in out if m["type"] == "joined"]
    assert moved == [(h("p1"), 0, "gw-a"), (h("p3"), 1, "gw-b")]
    assert errors(run.send("start", player=h("p1"))) == [wire.GAME_STARTED]


def test_start_needs_enough_players() -> None:
    run = Run(seats=3, host="p0")
    run.send("join", player="p0", name="A")
    assert errors(run.send("start", player=h("p0"))) == [wire.TOO_FEW_PLAYERS]


def test_attach_and_resync() -> None:
    run = Run()
    run.seat_all()
    out = run.send("attach", "gw-new", player="p2", seat=2)
    assert [(m["type"], m["seat"], m["_to"]) for m in out] == [
        ("detached", 2, "gw-a"),
        ("view", 2, "gw-new"),
    ]
    assert errors(run.send("resync", "gw-a", seat=2, player=h("p2"))) == [wire.NOT_ATTACHED]
    assert errors(run.send("resync", "gw-new", seat=2, player=h("p9"))) == [wire.NOT_SEATED]
    out = run.send("resync", "gw-new", seat=2, player=h("p2"))
    assert out[0]["game"]["dice"] == list(run.table.game.hands[2])
    out = run.send("resync", "gw-z", seat=None)
    assert out[0]["seat"] is None and "dice" not in out[0]["game"]


def test_record_round_trip_and_game_end() -> None:
    run = Run({"preset": "classic", "start_dice": 1, "stake": 10, "turn_seconds": 5})
    run.seat_all()
    clone = Table.from_bytes(run.table.to_bytes())
    assert clone.to_bytes() == run.table.to_bytes()
    assert clone.timer_member == run.table.timer_member
    while run.table.status == "playing":
        seat = run.turn()
        game = run.table.game
        legal = game.legal(seat)
        action = {"type": "dudo"} if legal["dudo"] else {"type": "bid", "quantity": 1, "face": 2}
        run.act(seat, action)
    assert run.last.finished and run.last.timer_add is None
    final = [m for m in run.inbox["gw-a"] if m["type"] == "view"][-1]
    assert final["status"] == "over" and final["game"]["chips"] is not None


def test_one_view_per_gateway_with_private_parts_of_its_seats_only() -> None:
    run = Run()
    run.send("watch", "gw-s", on=True)
    run.seat_all(["gw-a", "gw-b", "gw-b"])
    views = {}
    for gateway, data in run.last.outputs:
        message = msgpack.unpackb(data, raw=False)
        if message["type"] == "view":
            assert gateway not in views, "one view message per gateway per batch"
            views[gateway] = message
    assert [p["seat"] for p in views["gw-a"]["seats"]] == [0]
    assert [p["seat"] for p in views["gw-b"]["seats"]] == [1, 2]
    assert views["gw-s"]["seats"] == []
    for message in views.values():
        assert "dice" not in message["game"] and "legal" not in message["game"]


def test_start_with_bots_fill_turns_open_seats_into_bot_seats() -> None:
    run = Run({"preset": "cacho"}, seats=4, host="p0")
    run.send("join", player="p0", name="Ana")
    assert run.send("start", player=h("p0"))[0]["type"] == "view"
    assert run.table.status == "open"
    assert run.last.lobby["wants_bots"] == [[1, "normal"], [2, "normal"], [3, "normal"]]
    for seat in (1, 2, 3):
        run.send("join", "gw-bots", player=f"b{seat}", name=f"Bot {seat}", bot="normal")
    assert run.table.status == "playing" and len(run.table.seats) == 4
    assert [s.bot for s in run.table.seats] == [None, "normal", "normal", "normal"]


def test_a_table_remembers_the_last_64_ids_in_order_through_its_record() -> None:
    """Duplicates are caught for the last SEEN_IDS ids, and the record keeps exactly those."""
    run = Run()
    run.send("join", id="j0", player="p0", name="A")
    for i in range(SEEN_IDS + 10):
        run.send("watch", id=f"w{i}", on=i % 2 == 0)
    clone = Table.from_bytes(run.table.to_bytes())
    expected = [f"w{i}" for i in range(10, SEEN_IDS + 10)]
    for table in (run.table, clone):
        assert list(table.seen) == expected and len(table.seen) == SEEN_IDS
        assert "w9" not in table.seen and "j0" not in table.seen and "w10" in table.seen
    # The oldest remembered id is still refused; one forgotten is applied again.
    assert run.send("watch", id="w10", on=True)[0]["code"] == wire.DUPLICATE
    run.send("watch", id="w9", on=True)
    assert "w9" in run.table.seen and "w10" not in run.table.seen


def test_recent_ids_ignore_an_id_added_twice() -> None:
    ids = RecentIds(["a", "b", "a"])
    assert list(ids) == ["a", "b"] and "a" in ids and "c" not in ids
    assert ids == RecentIds(["a", "b"]) and ids != RecentIds(["b", "a"])


def test_a_frames_gateway_gets_the_same_snapshots_as_client_json_and_no_other_seat() -> None:
    """A gateway registered for `frames` gets, in place of its `view`, the client JSON of
    exactly its own seats (and nothing else: no other seat's piece, no player id but
    its holders'); a gateway that did not register still gets `view` messages."""
    from dudo.wire.frames import SnapshotTexts

    run = Run(seats=3)
    run.seat_all(["gw-a", "gw-b", "gw-a"])
    run.send("watch", "gw-c", on=True)
    run.move({"type": "bid", "quantity": 1, "face": 2})
    assert run.table.game is not None
    run.table._dirty = True
    reference = {g: msgpack.unpackb(d) for g, d in run.table.flush().outputs}
    run.table._dirty = True
    sent = {g: msgpack.unpackb(d) for g, d in run.table.flush({"gw-a", "gw-c"}).outputs}
    assert sent["gw-b"] == reference["gw-b"] and sent["gw-b"]["type"] == "view"
    for gateway in ("gw-a", "gw-c"):
        frames, view = sent[gateway], reference[gateway]
        wire.validate(frames)
        assert frames["type"] == "frames" and view["type"] == "view"
        assert frames["holders"] == view["holders"] and frames["version"] == view["version"]
        assert frames["seats"] == [p["seat"] for p in view["seats"]]
        texts, spliced = SnapshotTexts.of_view(view), SnapshotTexts.of_frames(frames)
        for private, piece in zip(view["seats"], frames["privates"], strict=True):
            seat = private["seat"]
            assert spliced.seat_text(seat, piece.encode()) == texts.seat(private)
        assert spliced.spectator() == texts.spectator()
    assert sent["gw-a"]["seats"] == [0, 2] and sent["gw-c"]["seats"] == []
    assert sent["gw-a"]["holders"] == [h("p0"), h("p2")] and sent["gw-c"]["holders"] == []
    for seat, piece in zip([0, 2], sent["gw-a"]["privates"], strict=True):
        private = json.loads("{" + piece)
        assert private["seat"] == seat and private["dice"] == list(run.table.game.hands[seat])
    assert "p1" not in str(sent["gw-a"])  # no player id of another gateway's seat
    for piece in (sent["gw-c"]["head"], sent["gw-c"]["public"]):
        assert '"dice"' not in piece  # a spectator's pieces carry no hand


def test_a_label_says_in_the_lobby_where_the_table_is_played() -> None:
    run = Run(label="#dudo on irc.libera.chat")
    assert run.last.lobby is not None and run.last.lobby["label"] == "#dudo on irc.libera.chat"
    again = type(run.table).from_bytes(run.table.to_bytes())
    assert again.lobby_entry()["label"] == "#dudo on irc.libera.chat"  # type: ignore[index]
    assert "label" not in (Run().last.lobby or {})  # none given: none listed
    long = "#liars-dice-en-espanol on irc.libera.chat"  # longer than a name may be
    assert Run(label=long).last.lobby["label"] == long  # type: ignore[index]
    for hidden in ("#dudo\u202e", " #dudo", "#dudo  on x"):  # text people read, as is
        with pytest.raises(wire.Refusal) as refused:
            Run(label=hidden)
        assert refused.value.code == "bad_message"


def test_a_refusal_carries_its_facts_for_the_gateway_to_word() -> None:
    run = Run(seats=3)
    run.send("join", player="p0", name="Ana")
    refused = run.send("start", player=h("p0"))
    assert [m.get("facts") for m in refused if m["type"] == "error"] == [
        {"seated": 1, "needed": 2}
    ]
    run.send("join", "gw-b", player="p1", name="Ben")
    refused = run.send("start", "gw-b", player=h("p1"))
    assert [m.get("facts") for m in refused if m["type"] == "error"] == [{"host": h("p0")}]
    run.send("start", player=h("p0"))
    turn = run.turn()
    other = 1 - turn
    gateway = run.table.seats[other].gateway
    refused = run.send("act", gateway, player=h(f"p{other}"), seat=other, action={"type": "dudo"})
    assert [m.get("facts") for m in refused if m["type"] == "error"] == [{"turn": turn}]
    run.move({"type": "bid", "quantity": 2, "face": 3})
    holder = run.table.seats[run.turn()]
    refused = run.send("act", holder.gateway, player=holder.handle, seat=run.turn(),
                       action={"type": "bid", "quantity": 1, "face": 3})  # fmt: skip
    assert [m.get("facts") for m in refused if m["type"] == "error"] == [{"bid": [turn, 2, 3]}]


def test_the_host_hands_an_open_table_over_or_closes_it() -> None:
    run = Run(seats=4)
    run.send("join", player="p0", name="Ana")
    run.send("join", "gw-b", player="p1", name="Ben")
    run.send("join", "gw-bots", player="bot", name="Rocío", bot="normal")
    assert errors(run.send("handover", "gw-b", player=h("p1"), to=1)) == ["not_host"]
    assert errors(run.send("handover", player=h("p0"), to=2)) == ["not_seated"]  # a bot
    out = run.send("handover", player=h("p0"), to=1)
    assert run.table.host == "p1"
    assert next(m["host"] for m in out if m["type"] == "view") == h("p1")
    assert run.last.lobby is not None and run.last.lobby["host"] == h("p1")
    assert errors(run.send("close", player=h("p0"))) == ["not_host"]  # not any more
    out = run.send("close", "gw-b", player=h("p1"))
    assert run.table.status == "over" and run.last.lobby is None and run.last.finished
    views = [m for m in out if m["type"] == "view"]
    assert views and all({"type": "closed"} in m["events"] for m in views)


def test_handover_and_close_only_before_the_start() -> None:
    run = Run(seats=2)
    run.seat_all()
    assert run.table.status == "playing"
    assert errors(run.send("handover", player=h("p0"), to=1)) == ["game_started"]
    assert errors(run.send("close", player=h("p0"))) == ["game_started"]
    assert run.table.status == "playing"
