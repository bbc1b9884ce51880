"""An attacker holding the ``club`` app (its gateway's Redis password, its app's key)
against the players of ``web`` (issue 29's audit, one test per attack). Each failed on
the code before docs/security.md's model: then any gateway could read player ids from
tournament records and the ratings, compute an app user's id, mint seat tokens with
the shared secret, and join as anyone whose id it knew."""

from __future__ import annotations

import time
from typing import Any

import pytest
import redis
from redis.exceptions import NoPermissionError

from dudo import wire
from dudo.auth.authority import make_token
from dudo.auth.identity import sign_identity
from dudo.ops import admin
from dudo.ops import inspect as ops
from dudo.wire import keys

from .conftest import Deployment, P, handle, play_out


def _seat_ana_and_ben(d: Deployment, table: str = "t1") -> dict[str, Any]:
    """web's Ana (an identity of web's) opens a table; Ben (a request key) joins."""
    web = d.web
    ana_id = sign_identity("web", web.key, "ana-42")
    web.send("create", id="c1", table=table, rules={"preset": "classic", "start_dice": 2},
             seats=[{"kind": "open"}] * 3, identity=ana_id)  # fmt: skip
    web.send("join", id="j1", table=table, name="Ana", identity=ana_id)
    web.send("join", id="j2", table=table, name="Ben", request="ben-secret-key-1")
    d.pump()
    joined = {m["id"]: m for m in web.seen if m["type"] == "joined"}
    assert set(joined) >= {"j1", "j2"}, web.seen
    return {"ana_id": ana_id, "ana": joined["j1"], "ben": joined["j2"]}


def test_no_player_id_reaches_a_gateway_and_none_is_accepted_from_one(d: Deployment) -> None:
    """Items 1-3: the worker names players by handle only; a gateway naming a player id
    (read anywhere, guessed, computed) gets nothing, signature or not."""
    seated = _seat_ana_and_ben(d)
    table = d.table("t1")
    ana, ben = (s.player for s in table.seats[:2])
    assert ana and ben and ana.startswith("u-") and ben.startswith("r-")
    for message in d.web.seen:  # what the honest gateway itself was told
        packed = repr(message)
        assert ana not in packed and ben not in packed, message
    assert seated["ana"]["player"] == handle(ana) and table.host == ana
    # The club's gateway names Ana's id (as if it had read it) to take her seat: refused.
    d.club.send("join", id="x1", table="t1", player=ana, name="Eve")
    d.club.send("attach", id="x2", table="t1", player=ana, seat=0)
    d.club.send("register", id="x3", tournament="cup", player=ana, name="Eve", bot=None)
    d.pump()
    assert d.table("t1").seats[0].gateway == d.web.gateway
    reasons = d.dead("t1")
    assert len(reasons) == 2 and all("may not name a player id" in r for r in reasons), reasons


def test_an_identity_is_its_own_apps_and_a_player_id_cannot_be_computed(d: Deployment) -> None:
    """Item 3: the club signs an identity for web's user 'ana-42' (with its own key, or
    naming web as issuer): refused. Its own user 'ana-42' is another player. And the
    id is keyed: not the hash of (app, user) anyone could compute."""
    _seat_ana_and_ben(d)
    ana = d.table("t1").seats[0].player
    as_web = sign_identity("web", d.club.key, "ana-42")  # web's name, the club's key
    as_club = sign_identity("club", d.club.key, "ana-42")
    d.club.send("create", id="c9", table="t9", rules={}, seats=[{"kind": "open"}] * 2)
    d.club.send("join", id="x1", table="t9", name="Eve", identity=as_web)
    d.club.send("join", id="x2", table="t1", name="Eve", identity=as_club)
    handed = sign_identity("web", d.web.key, "ana-42")  # web's real one, carried over
    d.club.send("join", id="x3", table="t9", name="Eve", identity=handed)
    d.pump()
    errors = {m["id"]: m for m in d.club.seen if m["type"] == "error"}
    assert errors["x1"]["code"] == wire.UNAUTHORIZED  # web's name, not web's signature
    assert errors["x3"]["code"] == wire.UNAUTHORIZED  # a real web identity, via the club
    assert "this gateway is of app club" in errors["x3"]["message"]
    [mine] = [m for m in d.club.seen if m["type"] == "joined" and m["id"] == "x2"]
    assert mine["seat"] == 2 and mine["player"] != handle(ana)  # the club's own ana-42
    assert d.table("t1").seats[0].player == ana  # Ana's seat untouched
    import hashlib

    from dudo.auth.authority import b64

    unkeyed = "u-" + b64(hashlib.sha256(b"dudo-user/1\0web\0ana-42").digest())[:22]
    assert ana != unkeyed


def test_tokens_cannot_be_forged_or_carried_to_another_table(d: Deployment) -> None:
    """Item 3: seat tokens are the deployment's (no gateway holds the key): one made
    with any other key, or one of another table, takes no seat; the real one, handed to
    the club by Ana's own client, does (a gateway acts for whom it was handed)."""
    seated = _seat_ana_and_ben(d)
    d.club.send("create", id="c9", table="t9", rules={}, seats=[{"kind": "open"}] * 3)
    d.pump()
    body = {"t": "t1", "p": seated["ana"]["player"], "n": "Ana", "k": "seat",
            "e": int(time.time()) + 3600}  # fmt: skip
    forged = make_token(b"the club's best guess at a key!!", body)
    real = seated["ana"]["token"]
    d.club.send("join", id="x1", table="t1", token=forged)
    d.club.send("join", id="x2", table="t9", token=real)  # Ana's token at another table
    d.pump()
    errors = {m["id"]: m["code"] for m in d.club.seen if m["type"] == "error"}
    assert errors == {"x1": wire.UNAUTHORIZED, "x2": wire.UNAUTHORIZED}
    assert d.table("t1").seats[0].gateway == d.web.gateway
    d.club.send("join", id="x3", table="t1", token=real)  # handed over by Ana's client
    d.pump()
    assert d.table("t1").seats[0].gateway == d.club.gateway


def test_a_request_key_is_the_same_request_within_its_app_only(d: Deployment) -> None:
    """Item 7: Ben's request key, sent by the club (or by another user of web under
    another name), takes no seat of his."""
    _seat_ana_and_ben(d)
    ben = d.table("t1").seats[1].player
    d.club.send("join", id="x1", table="t1", name="Ben", request="ben-secret-key-1")
    d.web.send("join", id="x2", table="t1", name="Eve", request="ben-secret-key-1")
    d.pump()
    table = d.table("t1")
    assert table.seats[1].player == ben and table.seats[1].gateway == d.web.gateway
    club_seat = next(m for m in d.club.seen if m.get("id") == "x1")
    assert club_seat["type"] == "joined" and club_seat["seat"] == 2  # someone new
    refused = next(m for m in d.web.seen if m.get("id") == "x2")
    assert refused["type"] == "error" and refused["code"] == wire.UNAUTHORIZED


def _readable(client: redis.Redis, key: bytes, kind: bytes) -> bytes | None:
    """The key's content as ``client`` may read it, or None if Redis refuses."""
    reads = {
        b"string": lambda: client.get(key),
        b"hash": lambda: client.hgetall(key),
        b"zset": lambda: client.zrange(key, 0, -1, withscores=True),
        b"set": lambda: client.smembers(key),
        b"list": lambda: client.lrange(key, 0, -1),
        b"stream": lambda: client.xrange(key),
    }
    try:
        return repr(reads[kind]()).encode()
    except NoPermissionError:
        return None


def test_nothing_the_club_can_read_holds_a_player_id_or_someone_elses_dice(
    d: Deployment,
) -> None:
    """Items 1, 2: after a game to the end (rated), a tournament with web's players
    registered, every key in Redis tried with the club's Redis user: what it may read
    is the public listings, its own keys and nothing holding a player id or a hand."""
    _seat_ana_and_ben(d)
    d.web.send("join", id="j3", table="t1", name="Cid", request="cid-secret-key-1")
    play_out(d, d.web, "t1")
    d.web.send("tournament_create", id="tc", tournament="cup", name="Cup", rules={},
               seats=6, format="elimination", advance=None, start_players=None,
               start_at=None, max_players=10, buy_in=0, payouts=[100], bots=None,
               identity=sign_identity("web", d.web.key, "ana-42"))  # fmt: skip
    d.web.send("register", id="r1", tournament="cup", name="Ana", bot=None,
               identity=sign_identity("web", d.web.key, "ana-42"))  # fmt: skip
    d.web.send("register", id="r2", tournament="cup", name="Dan", bot=None, request="dan-key-0001")
    d.pump(8)
    registered = [m for m in d.web.seen if m["type"] == "registered"]
    assert len(registered) == 2 and all(m["token"] for m in registered)
    board = wire.unpack(d.admin.hget(keys.RATINGS.lobby(0), keys.RATINGS_ID))["leaderboard"]
    assert len(board) == 3  # the game was rated: a public board, by handle
    players = [s.player for s in d.table("t1").seats]
    players += [p.decode()[2:] for p in d.admin.hkeys(keys.tournament_of("cup", 2))
                if p.startswith(b"e:")]  # fmt: skip
    assert all(players) and len(set(players)) == 4  # Ana twice: one player
    allowed = {
        keys.presence(d.club.gateway), keys.outbox(d.club.gateway), keys.CONFIG,
        keys.RATINGS.lobby(0), *keys.lobbies(P), *keys.TOURNAMENTS.lobbies(2),
    }  # fmt: skip
    readable = []
    for key in d.admin.scan_iter(count=1000):
        content = _readable(d.club.client, key, d.admin.type(key))
        if content is None:
            continue
        readable.append(key.decode())
        assert key.decode() in allowed, key
        for player in players:
            assert player.encode() not in content, (key, player)
    assert keys.RATINGS.lobby(0) in readable


def test_a_gateway_registers_itself_and_nobody_else(d: Deployment) -> None:
    """Item 4: a gateway may not write the registries (20,000 ghost gateways made every
    commit fan lobby news out to them); its own presence is all it may keep, and
    workers count admitted gateways by it."""
    with pytest.raises(NoPermissionError):
        d.club.client.zadd(keys.GATEWAYS, {f"ghost-{i}": time.time() * 1000 for i in range(100)})
    with pytest.raises(NoPermissionError):
        d.club.client.hset(keys.GATEWAY_VIEWS, "web-1", "frames")
    with pytest.raises(NoPermissionError):
        d.club.client.set(keys.presence(d.web.gateway), "frames")
    d.worker.heartbeat()
    assert {d.web.gateway, d.club.gateway} <= set(d.worker.live_gateways)
    d.club.client.delete(keys.presence(d.club.gateway))
    d.worker.heartbeat()
    assert d.club.gateway not in d.worker.live_gateways
    assert d.admin.zcard(keys.GATEWAYS) == 0


def test_a_replayed_dead_letter_keeps_its_writers_authority(d: Deployment) -> None:
    """Item 5: a forged entry (the club's, naming web's gateway) is dead-lettered as
    unauthorized; the runbook's replay puts it back as the club wrote it, and it is
    refused again: never applied as the deployment's."""
    seated = _seat_ana_and_ben(d)
    forged = d.club.link.message("leave", id="x1", table="t1", player=seated["ana"]["player"],
                                 seat=0)  # fmt: skip
    forged["gateway"] = d.web.gateway
    d.club.link.send(forged)
    d.pump()
    version = d.table("t1").version
    partition = keys.partition_of("t1", P)
    [letter] = ops.dead_letters(d.admin, keys.TABLES, partition)
    assert letter["reason"].startswith("unauthorized") and letter["from"] == d.club.gateway
    ops.replay(d.admin, partition, letter["id"])  # into the club's own inbox, as it wrote it
    d.pump()
    assert d.table("t1").version == version and d.table("t1").seats[0].player is not None
    [again] = ops.dead_letters(d.admin, keys.TABLES, partition)
    assert again["reason"].startswith("unauthorized") and again["id"] != letter["id"]
    assert again["from"] == d.club.gateway


def test_a_new_password_closes_the_old_ones_connections(d: Deployment) -> None:
    """Item 7: rotating a gateway's password (``gateway add`` again) leaves no old
    connection working."""
    assert d.club.client.ping()
    admin.add_gateway(d.admin, d.club.gateway, app="club")
    with pytest.raises(redis.exceptions.ConnectionError):
        d.club.client.ping()  # its connection closed; the old password opens no other


def test_a_gateway_writes_only_its_own_inboxes_that_exist(d: Deployment) -> None:
    """Item 6 (issue 29) and issue 50: the club's user may append to its own inbox on
    each partition that exists, and to no other key of their shape: not the
    deployment's inboxes, not web's, none that a worker never reads (where a flood
    would only grow Redis)."""
    club = d.club.gateway
    d.club.client.xadd(keys.inbox(P - 1, club), {"m": b"x"})
    d.club.client.xadd(keys.TOURNAMENTS.inbox(1, club), {"m": b"x"})
    for key in (
        keys.inbox(P - 1), keys.TOURNAMENTS.inbox(1), keys.inbox(0, d.web.gateway),
        keys.inbox(P, club), keys.inbox(99, club), f"dudo:{{p01}}:in:{club}",
        keys.TOURNAMENTS.inbox(2, club), keys.RATINGS.inbox(0), keys.RATINGS.inbox(0, club),
    ):  # fmt: skip
        with pytest.raises(NoPermissionError):
            d.club.client.xadd(key, {"m": b"x"})


def test_a_flooding_gateway_waits_within_its_quota_and_others_play_on(
    d: Deployment,
) -> None:
    """Item 6 (issue 29): the club writes 400 entries at once (its quota here: 50 a
    second, bursts of 100). The worker reads no more of its inbox than its quota allows
    (the rest waits there, its own), nothing is dead-lettered, and web's game goes on
    and ends meanwhile."""
    _seat_ana_and_ben(d)
    d.web.send("join", id="j3", table="t1", name="Cid", request="cid-secret-key-1")
    d.pump()
    flood = [d.club.link.message("resync", id=f"f{i}", table="t1", seat=None)
             for i in range(400)]  # fmt: skip
    started = time.monotonic()
    d.club.link.send(*flood)
    play_out(d, d.web, "t1", moves=8)  # web plays on, through the flood
    elapsed = time.monotonic() - started
    waiting = sum(d.admin.xlen(keys.inbox(p, d.club.gateway)) for p in range(P))
    read = 400 - waiting
    assert 0 < read <= 100 + 50 * elapsed + 5, (read, elapsed)
    assert d.dead("t1") == []  # nothing of it dead-lettered
