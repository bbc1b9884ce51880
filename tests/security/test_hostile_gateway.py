"""A property, over random games and random hostile entries: nothing the club's gateway
writes changes a seat it does not hold, and nothing it is sent holds another
gateway's players' dice or player ids.

The table and the worker's entry checks run as a worker runs them (wire decoding,
dudo.wire.signing's verdict, dudo.auth.authority's credentials, Table.handle and flush), without
Redis: what Redis itself refuses the club's user is tests/security/test_two_apps.py's.
The attacker knows everything public (the table, its players' handles), holds its own
Redis password (it signs as club-1) and its app's key, may pretend to be web-1 in the
`gateway` field, and may have read a victim's player id somewhere."""

from __future__ import annotations

import json
import random
import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dudo import wire
from dudo.auth.authority import Authority, make_token
from dudo.auth.identity import new_key, public_jwks, sign_identity
from dudo.bots.policies import baseline, my_turn
from dudo.engine import private_view, public_view
from dudo.table import Limits, Table
from dudo.wire.signing import Verifier, key_of_password, sign
from dudo.worker.common import Entry
from dudo.worker.process import _judge

WEB_KEY, CLUB_KEY = new_key(), new_key()
WEB_GW, CLUB_GW = key_of_password("web-password"), key_of_password("club-password")
NOW = 1_000_000


def _world() -> tuple[Verifier, Authority]:
    verifier = Verifier(b"i" * 32, {"web-1": WEB_GW, "club-1": CLUB_GW}, checking=True)
    authority = Authority()
    apps = {"web": json.dumps(public_jwks(WEB_KEY)), "club": json.dumps(public_jwks(CLUB_KEY))}
    authority.load({}, apps, {"web-1": "web", "club-1": "club"}, admitted={"web-1", "club-1"})
    return verifier, authority


def _decode(raw: bytes, verifier: Verifier, signature: bytes, writer: str) -> Any:
    """An entry of ``writer``'s own inbox as a worker judges it."""
    return _judge(Entry(writer, "1-1", raw, signature, len(raw)), "in", verifier)


def _deliver(table: Table, verifier: Verifier, msg: dict[str, Any], key: bytes | None,
             rng: random.Random, writer: str = "web-1") -> list[tuple[str, bytes]]:  # fmt: skip
    """``msg`` as an entry of ``writer``'s own inbox signed with ``key``, taken as a
    worker takes it (the club's Redis user may write its own inbox only)."""
    raw = wire.encode(msg)
    decoded = _decode(raw, verifier, sign(key, raw) if key else b"", writer)
    if isinstance(decoded, dict) and decoded.get("table") == table.id:
        table.handle(decoded, NOW, rng)  # a refusal becomes an error message
    return table.flush().outputs


def _hostile(draw: Any, table: Table, leaked: list[str], own_token: str) -> tuple[dict, Any]:
    """(At an open table the club could take a free seat for a player of its own, as any
    gateway may: its identities and request keys are then left out.)"""
    """One entry the attacker writes: any kind a gateway may send, with fields from
    what it knows, signed as itself, as nobody, or claiming to be web-1."""
    handles = [s.handle for s in table.seats if s.handle] + ["nobody-handle-01"]
    player = draw(st.sampled_from([*leaked, *handles]))
    forged = make_token(b"guessed-key-guessed-key-guessed!",
                        {"t": table.id, "p": draw(st.sampled_from(handles)), "n": "X",
                         "k": "seat", "e": int(time.time()) + 60})  # fmt: skip
    fields: dict[str, Any] = {
        "id": f"h{draw(st.integers(0, 10**6))}",
        "table": table.id,
        "gateway": draw(st.sampled_from(["club-1", "club-1", "web-1"])),
    }
    kind = draw(st.sampled_from(["join", "leave", "act", "resync", "start", "watch", "attach"]))
    seat = draw(st.integers(0, 2))
    if kind == "join":
        kinds = ["player", "token", "forged", "web-identity"]
        if table.status != "open":
            kinds += ["identity", "request"]
        credential = draw(st.sampled_from(kinds))
        fields["name"] = "Eve"
        if credential == "token":
            fields["token"] = own_token  # its own player's: a seat at another table
        elif credential == "forged":
            fields["token"] = forged
        elif credential == "identity":
            fields["identity"] = sign_identity("club", CLUB_KEY, "ana")
        elif credential == "web-identity":
            fields["identity"] = sign_identity("web", CLUB_KEY, "ana")  # web's name, its key
        elif credential == "request":
            fields["request"] = draw(st.sampled_from(["ana-request-1", "bens-request1"]))
        else:
            fields["player"] = player
    elif kind in ("leave", "resync", "attach"):
        fields.update(player=player, seat=seat)
    elif kind == "act":
        fields.update(player=player, seat=seat, action=draw(st.sampled_from(
            [{"type": "dudo"}, {"type": "calza"}, {"type": "bid", "quantity": 9, "face": 6},
             {"type": "direction", "value": 1}])))  # fmt: skip
    elif kind == "start":
        fields["player"] = player
    else:
        fields["on"] = draw(st.booleans())
    signer = draw(st.sampled_from([CLUB_GW, CLUB_GW, None]))
    return wire.message(kind, **fields), signer


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_hostile_gateway_changes_no_seat_it_does_not_hold_and_sees_no_dice(data: Any) -> None:
    verifier, authority = _world()
    rng = random.Random(data.draw(st.integers(0, 1000)))
    limits = Limits(authority=authority)
    create = wire.message("create", id="c", table="t1", gateway="web-1", rules={
        "preset": "classic", "start_dice": 2}, seats=[{"kind": "open"}] * 3,
        identity=sign_identity("web", WEB_KEY, "ana"))  # fmt: skip
    table = Table.create(_decode(wire.encode(create), verifier, sign(
        WEB_GW, wire.encode(create)), "web-1"), NOW, limits, rng)  # type: ignore[arg-type]  # fmt: skip
    table.flush()
    seated = data.draw(st.sampled_from([3, 2]))  # a game on, or a table still open
    for i, credential in enumerate([{"identity": sign_identity("web", WEB_KEY, "ana")},
                                    {"request": "bens-request1"},
                                    {"request": "cids-request1"}][:seated]):  # fmt: skip
        msg = wire.message("join", id=f"j{i}", table="t1", gateway="web-1", name=f"P{i}",
                           **credential)  # fmt: skip
        _deliver(table, verifier, msg, WEB_GW, rng)
    assert table.status == ("playing" if seated == 3 else "open")
    victims = [s.player for s in table.seats]
    leaked = [p for p in victims if p is not None]  # as if read somewhere
    other = Table.create(wire.message("create", id="c2", table="t2", gateway="club-1",
                         rules={}, seats=[{"kind": "open"}] * 2), NOW, limits, rng)  # fmt: skip
    other.handle(wire.message("join", id="j", table="t2", gateway="club-1", name="Eve",
                              request="eves-request1"), NOW, rng)  # fmt: skip
    [own] = [m["token"] for m in (wire.unpack(b) for _, b in other.flush().outputs)
             if m["type"] == "joined"]  # fmt: skip
    for _ in range(data.draw(st.integers(1, 25))):
        if data.draw(st.booleans()):  # the honest gateway plays a move
            _honest_move(table, verifier, rng)
            continue
        before = (table.version, [(s.player, s.gateway, s.away) for s in table.seats])
        msg, signer = _hostile(data.draw, table, leaked, own)
        outputs = _deliver(table, verifier, msg, signer, rng, writer="club-1")
        after = (table.version, [(s.player, s.gateway, s.away) for s in table.seats])
        assert after == before, msg
        for gateway, body in outputs:
            if gateway != "club-1":
                continue
            for player in leaked:  # (an error may quote what the attacker itself sent)
                assert player.encode() not in body or player in repr(msg), msg
            out = wire.unpack(body)
            if out["type"] in ("view", "frames"):
                assert out["holders"] == [], msg  # no seat's private part


def _honest_move(table: Table, verifier: Verifier, rng: random.Random) -> None:
    """web-1 plays the seat in turn (its players hold every seat)."""
    game = table.game
    if game is None or table.status != "playing" or game.turn is None:
        return
    seat = game.turn
    snapshot = {"seat": seat, "game": {**public_view(game), **private_view(game, seat)}}
    if my_turn(snapshot):
        act = wire.message("act", id=f"w{rng.random()}", table=table.id, gateway="web-1",
                           player=table.seats[seat].handle, seat=seat,
                           action=baseline(snapshot, rng))  # fmt: skip
        _deliver(table, verifier, act, WEB_GW, rng)
