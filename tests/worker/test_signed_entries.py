"""Once an app has been admitted (dudo.wire.signing): the worker applies an inbox entry only
if its signature says who wrote it — the gateway it names, or the deployment itself.
Games signed by their gateway play to the end; an entry that names another gateway,
is unsigned, or is of a kind only the deployment writes, is dead-lettered and
changes nothing, while the same message signed by its own gateway is applied."""

from __future__ import annotations

from typing import Any

from dudo import wire
from dudo.link import GatewayLink
from dudo.wire import keys, signing
from dudo.wire.signing import key_of_password

from .test_worker import P, make_worker, play_to_the_end, pump, stored

A, B = key_of_password("pass-a"), key_of_password("pass-b")


def admit(client: Any) -> None:
    client.hset(
        keys.GATEWAY_KEYS,
        mapping={signing.INTERNAL: "cd" * 32, signing.CHECKING: 1, "gw-a": A.hex(),
                 "gw-b": B.hex()},
    )


def write(client: Any, link: GatewayLink, msg: dict[str, Any]) -> None:
    """``msg`` appended to its inbox as ``link`` writes (signed with its key, if any)."""
    client.execute_command("XADD", link.inbox_for(msg), "*", *link.entry(wire.encode(msg)))


def dead_reasons(client: Any, table: str) -> list[bytes]:
    dead = client.xrange(keys.dead_letters(keys.partition_of(table, P)))
    return [fields[b"reason"] for _, fields in dead]


def test_games_signed_by_their_gateway_play_to_the_end(client: Any) -> None:
    admit(client)
    worker = make_worker(client)
    assert worker.verifier.active and worker.signer is not None
    link = GatewayLink(client, "gw-a", P, signer=A)
    play_to_the_end(worker, link, ["t1", "t2", "t3"], seed=5)  # no error on the way
    assert all(dead_reasons(client, t) == [] for t in ("t1", "t2", "t3"))


def test_forged_unsigned_and_internal_entries_change_nothing(client: Any) -> None:
    admit(client)
    worker = make_worker(client)
    a = GatewayLink(client, "gw-a", P, signer=A)
    b = GatewayLink(client, "gw-b", P, signer=B)
    unsigned = GatewayLink(client, "gw-a", P)
    a.register()
    a.send(
        a.message("create", id="c1", table="t9", rules={}, seats=[{"kind": "open"}] * 3),
        a.message("join", id="j1", table="t9", request="ana-request", name="Ana"),
    )
    [joined] = [m for m in pump(worker, a) if m["type"] == "joined"]
    ana = stored(client, "t9").seats[0].player
    assert ana is not None and joined["player"] == wire.public_id(ana) != ana
    version = stored(client, "t9").version
    leave = a.message("leave", id="l1", table="t9", player=joined["player"], seat=0)
    write(client, b, leave)  # ... but gw-b wrote it
    write(client, unsigned, {**leave, "id": "l2"})  # ... or someone without a key
    timeout = wire.message("timeout", id="t:9", table="t9", version=version)
    write(client, b, timeout)  # a clock's timeout: only the deployment writes these
    pump(worker, a)
    assert stored(client, "t9").version == version  # nothing changed
    assert stored(client, "t9").seats[0].player == ana
    reasons = dead_reasons(client, "t9")
    assert len(reasons) == 3 and all(r.startswith(b"unauthorized: ") for r in reasons)
    assert b"not signed by gateway gw-a" in reasons[0] and b"not signed by gateway" in reasons[1]
    assert b"not signed by the deployment" in reasons[2]
    write(client, a, leave)  # the same leave, signed by gw-a itself: applied
    out = pump(worker, a)
    assert stored(client, "t9").version > version
    assert stored(client, "t9").seats[0].player is None
    assert not any(m["type"] == "error" for m in out)


def test_nothing_is_checked_until_an_app_is_admitted(client: Any) -> None:
    worker = make_worker(client)
    assert not worker.verifier.active and worker.signer is None
    link = GatewayLink(client, "gw-a", P)  # signs nothing
    play_to_the_end(worker, link, ["t1"], seed=2)
    admit(client)
    worker.heartbeat()  # from its next heartbeat on, a worker checks
    assert worker.verifier.active


def test_a_revoked_gateway_is_refused_from_the_next_heartbeat(client: Any) -> None:
    """`dudo admin gateway revoke` deletes its key: the workers refuse its entries as soon
    as they have read the keys again (every heartbeat)."""
    admit(client)
    worker = make_worker(client)
    a = GatewayLink(client, "gw-a", P, signer=A)
    a.register()
    a.send(a.message("create", id="c1", table="t8", rules={}, seats=[{"kind": "open"}] * 2))
    pump(worker, a)
    assert stored(client, "t8").version >= 1
    client.hdel(keys.GATEWAY_KEYS, "gw-a")
    worker.heartbeat()
    version = stored(client, "t8").version
    a.send(a.message("join", id="j1", table="t8", player="pa", name="Ana"))
    pump(worker, a)
    assert stored(client, "t8").version == version  # not seated
    assert any(b"no gateway with a key" in r for r in dead_reasons(client, "t8"))


def test_a_gateway_admitted_since_the_last_heartbeat_is_known_at_once(client: Any) -> None:
    """Its first entries come right after the worker read the keys, before its next
    heartbeat: naming a gateway whose key it has not loaded, they make it read the keys
    again, and they are applied."""
    client.hset(keys.GATEWAY_KEYS, mapping={signing.INTERNAL: "cd" * 32, signing.CHECKING: 1})
    worker = make_worker(client, heartbeat=60.0)  # no heartbeat during the test
    worker.run_once()
    client.hset(keys.GATEWAY_KEYS, "gw-a", A.hex())  # `dudo admin gateway add gw-a`
    a = GatewayLink(client, "gw-a", P, signer=A)
    a.register()
    a.send(a.message("create", id="c1", table="t7", rules={}, seats=[{"kind": "open"}] * 2))
    worker.run_once()
    assert "gw-a" in worker.verifier.gateways
    assert stored(client, "t7").version >= 1 and dead_reasons(client, "t7") == []


def test_a_gateway_reads_why_its_entries_were_refused_and_nobody_else_s(client: Any) -> None:
    """Issue 33: an entry refused without an answer (not signed by the gateway it names,
    for the wrong partition) was told to nobody; the dead letters are the admin's. Now
    each such entry that names a running gateway leaves a note on that gateway's own
    refused stream: the entry, the message's id and type, the code and the reason."""
    admit(client)
    worker = make_worker(client)
    a = GatewayLink(client, "gw-a", P, signer=A)
    b = GatewayLink(client, "gw-b", P, signer=B)
    a.register()
    b.register()
    worker.heartbeat()  # both present
    a.send(a.message("create", id="c1", table="t9", rules={}, seats=[{"kind": "open"}] * 2))
    pump(worker, a)
    leave = a.message("leave", id="l1", table="t9", player="p-x", seat=0)
    write(client, b, leave)  # in gw-a's name, signed by gw-b
    write(client, GatewayLink(client, "gw-a", P), {**leave, "id": "l2"})  # unsigned
    elsewhere = keys.inbox((keys.partition_of("t9", P) + 1) % P)  # the wrong partition
    client.execute_command(
        "XADD", elsewhere, "*", *a.entry(wire.encode({**leave, "id": "l3"}))
    )
    pump(worker, a)
    notes = [f for _, f in client.xrange(keys.refused("gw-a"))]
    assert [(n[b"id"], n[b"type"], n[b"code"]) for n in notes] == [
        (b"l1", b"leave", b"unauthorized"), (b"l2", b"leave", b"unauthorized"),
        (b"l3", b"leave", b"bad_message"),
    ]  # fmt: skip
    assert b"not signed by gateway gw-a" in notes[0][b"reason"]
    assert b"belongs to another partition" in notes[2][b"reason"]
    assert all(n[b"entry"] and int(n[b"at"]) > 0 for n in notes)
    assert client.xlen(keys.refused("gw-b")) == 0  # it wrote l1, but l1 names gw-a
    assert 0 < client.pttl(keys.refused("gw-a")) <= 24 * 3600 * 1000
    # An entry naming a gateway that is not running tells nobody: no stray keys.
    write(client, b, {**leave, "id": "l4", "gateway": "gw-ghost"})
    pump(worker, a)
    assert not client.exists(keys.refused("gw-ghost"))
