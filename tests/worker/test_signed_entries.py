"""Once an app has been admitted (dudo.wire.signing): each admitted gateway writes its own
inbox on each partition, and the worker applies an entry there only if that gateway
signed it and it names that gateway; the deployment's inbox takes the deployment's
own entries only. Games signed by their gateway play to the end; an entry that names
another gateway, is unsigned, or is of a kind only the deployment writes, is
dead-lettered and changes nothing, while the same message signed by its own gateway
is applied."""

from __future__ import annotations

import time
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


def gateway(client: Any, name: str, key: bytes | None) -> GatewayLink:
    """An admitted gateway's link: it writes its own inbox, signed with ``key``."""
    return GatewayLink(client, name, P, signer=key, confined=True)


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
    link = gateway(client, "gw-a", A)
    play_to_the_end(worker, link, ["t1", "t2", "t3"], seed=5)  # no error on the way
    assert all(dead_reasons(client, t) == [] for t in ("t1", "t2", "t3"))


def test_forged_unsigned_and_internal_entries_change_nothing(client: Any) -> None:
    admit(client)
    worker = make_worker(client)
    a, b = gateway(client, "gw-a", A), gateway(client, "gw-b", B)
    unsigned = gateway(client, "gw-a", None)
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
    write(client, b, leave)  # ... but gw-b wrote it (in its own inbox)
    write(client, unsigned, {**leave, "id": "l2"})  # ... or someone without gw-a's key
    timeout = wire.message("timeout", id="t:9", table="t9", version=version)
    write(client, a, timeout)  # a clock's: the deployment's alone
    # Someone with the deployment's rights put gw-a's own entry in the deployment's inbox.
    deployment = GatewayLink(client, "gw-a", P, signer=A)
    write(client, deployment, {**leave, "id": "l3"})
    pump(worker, a)
    assert stored(client, "t9").version == version  # nothing changed
    assert stored(client, "t9").seats[0].player == ana
    reasons = sorted(dead_reasons(client, "t9"))
    assert len(reasons) == 4 and all(r.startswith(b"unauthorized: ") for r in reasons)
    assert [r for r in reasons if b"gw-b's own inbox names gateway 'gw-a'" in r]
    assert [r for r in reasons if b"unsigned: gateway gw-a's entries" in r]
    assert [r for r in reasons if b"gw-a's own inbox names gateway None" in r]
    assert [r for r in reasons if b"deployment's own entries only" in r]
    write(client, a, leave)  # the same leave, signed by gw-a in its own inbox: applied
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
    a = gateway(client, "gw-a", A)
    a.register()
    a.send(a.message("create", id="c1", table="t8", rules={}, seats=[{"kind": "open"}] * 2))
    pump(worker, a)
    assert stored(client, "t8").version >= 1
    client.hdel(keys.GATEWAY_KEYS, "gw-a")
    worker.heartbeat()
    version = stored(client, "t8").version
    a.send(a.message("join", id="j1", table="t8", request="ana-request", name="Ana"))
    pump(worker, a)
    assert stored(client, "t8").version == version  # not seated: its inbox is not read
    client.hset(keys.GATEWAY_KEYS, "gw-a", A.hex())  # admitted again
    worker.heartbeat()
    pump(worker, a)
    assert stored(client, "t8").version > version  # what waited in its inbox is applied


def test_a_gateway_admitted_since_the_last_heartbeat_is_read_from_the_next(
    client: Any,
) -> None:
    """Its own inbox is read from the worker's next heartbeat (half a second); what it
    wrote before that, even before its inbox had a consumer group, waits there and is
    applied then."""
    client.hset(keys.GATEWAY_KEYS, mapping={signing.INTERNAL: "cd" * 32, signing.CHECKING: 1})
    worker = make_worker(client, heartbeat=60.0)  # no heartbeat until the test says
    worker.run_once()
    client.hset(keys.GATEWAY_KEYS, "gw-a", A.hex())  # `dudo admin gateway add gw-a`
    a = gateway(client, "gw-a", A)
    a.register()
    a.send(a.message("create", id="c1", table="t7", rules={}, seats=[{"kind": "open"}] * 2))
    worker.run_once()
    assert client.hget(keys.table_of("t7", P), "s") is None  # not read yet
    worker.heartbeat()
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
    a, b = gateway(client, "gw-a", A), gateway(client, "gw-b", B)
    a.register()
    b.register()
    worker.heartbeat()  # both present
    a.send(a.message("create", id="c1", table="t9", rules={}, seats=[{"kind": "open"}] * 2))
    pump(worker, a)
    leave = a.message("leave", id="l1", table="t9", player="p-x", seat=0)
    write(client, a, {**leave, "id": "l0", "gateway": "gw-b"})  # in gw-b's name
    write(client, gateway(client, "gw-a", B), {**leave, "id": "l2"})  # signed otherwise
    elsewhere = keys.inbox((keys.partition_of("t9", P) + 1) % P, "gw-a")  # wrong partition
    client.execute_command(
        "XADD", elsewhere, "*", *a.entry(wire.encode({**leave, "id": "l3"}))
    )
    pump(worker, a)
    notes = [f for _, f in client.xrange(keys.refused("gw-a"))]
    assert sorted((n[b"id"], n[b"type"], n[b"code"]) for n in notes) == [
        (b"l0", b"leave", b"unauthorized"), (b"l2", b"leave", b"unauthorized"),
        (b"l3", b"leave", b"bad_message"),
    ]  # fmt: skip
    by_id = {n[b"id"]: n for n in notes}
    assert b"names gateway 'gw-b'" in by_id[b"l0"][b"reason"]
    assert b"the signature is not gateway gw-a's" in by_id[b"l2"][b"reason"]
    assert b"belongs to another partition" in by_id[b"l3"][b"reason"]
    assert all(n[b"entry"] and int(n[b"at"]) > 0 for n in notes)
    assert client.xlen(keys.refused("gw-b")) == 0  # l0 names gw-b, but gw-a wrote it
    assert 0 < client.pttl(keys.refused("gw-a")) <= 24 * 3600 * 1000
    # A gateway that is not running is told nothing: no stray keys.
    client.hset(keys.GATEWAY_KEYS, "gw-ghost", B.hex())
    worker.heartbeat()
    ghost = gateway(client, "gw-ghost", A)  # never registered, and signs wrong
    write(client, ghost, {**leave, "id": "l4", "gateway": "gw-ghost"})
    pump(worker, a)
    assert not client.exists(keys.refused("gw-ghost"))


def test_a_gateway_registered_since_the_last_heartbeat_is_told_at_once(client: Any) -> None:
    """Issue 52, item 3: the workers told only the gateways present at their last
    heartbeat, so the entries a gateway wrote in its first seconds (the likeliest to be
    signed wrong) never reached its refused stream. A gateway that registers and at once
    writes an entry signed wrong, and one unsigned, finds both there, told apart."""
    admit(client)
    worker = make_worker(client)
    worker.run_once()  # its heartbeat: gw-a is not running yet
    assert "gw-a" not in worker.live_gateways
    worker._next_heartbeat = time.monotonic() + 3600  # and no heartbeat comes until the end
    a = gateway(client, "gw-a", A)
    a.register()  # now it is, and it writes before the worker's next heartbeat
    create = a.message("create", id="c1", table="t5", rules={}, seats=[{"kind": "open"}] * 2)
    write(client, gateway(client, "gw-a", B), create)  # signed with another key
    write(client, gateway(client, "gw-a", None), {**create, "id": "c2"})  # not signed
    pump(worker, a)
    assert "gw-a" not in worker.live_gateways  # (no heartbeat came in between)
    notes = {f[b"id"]: f for _, f in client.xrange(keys.refused("gw-a"))}
    assert set(notes) == {b"c1", b"c2"}
    assert b"the signature is not gateway gw-a's" in notes[b"c1"][b"reason"]
    assert notes[b"c2"][b"reason"].startswith(b"unsigned: ")
