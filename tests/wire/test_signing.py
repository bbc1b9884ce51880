"""Who wrote an inbox entry (dudo.wire.signing): the rules a worker applies, without Redis."""

from __future__ import annotations

import pytest

from dudo import wire
from dudo.wire import signing
from dudo.wire.signing import Verifier, key_of_password, key_of_url, sign
from dudo.worker.common import Entry
from dudo.worker.process import _judge

INTERNAL, A, B = b"i" * 32, key_of_password("pass-a"), key_of_password("pass-b")
KEYS = Verifier(INTERNAL, {"gw-a": A, "gw-b": B})


def act(gateway: str = "gw-a", **over: object) -> tuple[dict[str, object], bytes]:
    msg = wire.message("act", id="a1", table="t1", gateway=gateway, player="p", seat=0,
                       action={"type": "dudo"}, **over)  # fmt: skip
    return msg, wire.encode(msg)


def test_nothing_is_checked_before_there_is_an_internal_key_and_the_flag() -> None:
    msg, raw = act()
    assert Verifier().refusal(msg, raw, b"") is None
    assert not Verifier().active and KEYS.active
    # The key is there, checking not yet: our processes sign, nobody is refused.
    signing_only = Verifier(INTERNAL, {"gw-a": A}, checking=False)
    assert not signing_only.active and signing_only.refusal(msg, raw, b"") is None
    stored = {b"*": INTERNAL.hex().encode()}
    assert not Verifier.from_hash(stored).active
    assert Verifier.from_hash({**stored, signing.CHECKING.encode(): b"1"}).active


def test_a_gateway_signs_for_itself_only() -> None:
    msg, raw = act("gw-a")
    assert KEYS.refusal(msg, raw, sign(A, raw), writer="gw-a") is None
    # An entry signed with another key and one not signed at all are told apart (issue 52:
    # the same words for both left a gateway's author guessing which mistake it was).
    wrong = KEYS.refusal(msg, raw, sign(B, raw), writer="gw-a") or ""
    unsigned = KEYS.refusal(msg, raw, b"", writer="gw-a") or ""
    assert "the signature is not gateway gw-a's" in wrong and "HMAC-SHA256" in wrong
    assert unsigned.startswith("unsigned: gateway gw-a's entries carry a signature field")
    assert "Who wrote it" in wrong and "Who wrote it" in unsigned
    tampered = raw.replace(b"dudo", b"calz")
    assert KEYS.refusal(msg, tampered, sign(A, raw), writer="gw-a") is not None  # bytes signed
    ghost, raw = act("gw-x")
    assert "no gateway with a key" in (KEYS.refusal(ghost, raw, sign(A, raw), writer="gw-x") or "")


def test_an_entry_is_its_inboxs_writers() -> None:
    """Issue 50: each admitted gateway writes its own inbox. An entry there that names
    another gateway is refused, signed or not; the deployment's inbox takes the
    deployment's own entries only, once entries are checked (a gateway's Redis user
    cannot write it: a gateway's entry there came through someone else's hands)."""
    msg, raw = act("gw-a")
    refused = KEYS.refusal(msg, raw, sign(B, raw), writer="gw-b")
    assert "gw-b's own inbox names gateway 'gw-a'" in (refused or "")
    assert "deployment's own entries only" in (KEYS.refusal(msg, raw, sign(A, raw)) or "")
    assert KEYS.refusal(msg, raw, sign(INTERNAL, raw)) is None
    # A gateway's own inbox is judged by its writer whether or not checking is on yet.
    early = Verifier(INTERNAL, {"gw-a": A}, checking=False)
    assert early.refusal(msg, raw, b"", writer="gw-a") is not None
    assert early.refusal(msg, raw, b"") is None


def test_a_gateway_may_not_send_what_the_deployment_writes() -> None:
    for kind, fields in (
        ("timeout", {"table": "t1", "version": 3}),
        ("order", {"table": "t1", "tournament": "cup", "seq": 1, "count": 1}),
        ("report", {"tournament": "cup"}),
        ("reports", {"tournament": "cup"}),
        ("create", {"table": "t1", "tournament": "cup"}),
    ):
        msg = {"v": 1, "type": kind, "id": "x", "gateway": "gw-a", **fields}
        raw = wire.encode(msg)
        assert "may not send" in (KEYS.refusal(msg, raw, sign(A, raw), writer="gw-a") or ""), kind
        assert KEYS.refusal(msg, raw, sign(INTERNAL, raw)) is None, kind  # ours may


def test_keys_come_from_the_hash_and_from_a_gateway_url() -> None:
    stored = {b"*": INTERNAL.hex().encode(), b"gw-a": A.hex().encode()}
    loaded = Verifier.from_hash(stored)
    assert loaded.internal == INTERNAL and loaded.gateways == {"gw-a": A}
    assert key_of_url("redis://gateway-gw-a:pass-a@h:6379/0", "gateway-") == A
    assert key_of_url("redis://gateway-gw-a:pass%2Da@h:6379/0", "gateway-") == A  # quoted
    assert key_of_url("redis://admin:pass-a@h:6379/0", "gateway-") is None
    assert key_of_url("redis://h:6379/0", "gateway-") is None
    assert signing.key_from_hex(None) is None and signing.key_from_hex(A.hex()) == A


def test_the_published_test_vector() -> None:
    """docs/protocol.md, "Who wrote it": what another language's gateway must compute."""
    key = key_of_password("pass-a")
    assert key.hex() == "bd19af8e0b724ba25ae0d1d4392a23fda74a8eb7a28b2c598095ce2d6c4582ce"
    assert sign(key, bytes.fromhex("81a17601")).hex() == "1434fe8ceca0a70632bf3bccb931f897"


def test_the_guides_snippets_compute_the_test_vector_in_python_and_node() -> None:
    """Issue 33, item 4: raw bytes or hex, which HMAC argument is the key: only the
    vector told. The guide now shows both lines in two languages; run as written (Node
    where it is installed: in CI, always), they give the vector it prints."""
    import re
    import subprocess
    from pathlib import Path

    from ..servers import require_binary

    guide = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()
    block = re.search(r"In Python and in Node:\n\n```\n(.*?)```", guide, flags=re.S)
    assert block is not None, "the guide's signing snippets"
    python, node = block.group(1).strip().split("\n\n")
    vector = re.search(r"gives the key\n?\s*`([0-9a-f]{64})`.*?signature\n?\s*`([0-9a-f]{32})`",
                       guide, flags=re.S)  # fmt: skip
    assert vector is not None
    found: dict[str, object] = {"password": "pass-a", "m": bytes.fromhex("81a17601")}
    exec("import hmac\n" + python, found)
    assert (found["key"].hex(), found["s"].hex()) == vector.groups()  # type: ignore[attr-defined]
    binary = require_binary("node")
    script = ('const {createHmac} = require("node:crypto"); const password = "pass-a"; '
              'const m = Buffer.from("81a17601", "hex");\n' + node +
              '\nconsole.log(key.toString("hex"), Buffer.from(s).toString("hex"));')  # fmt: skip
    said = subprocess.run([binary, "-e", script], capture_output=True, text=True, timeout=30)
    assert said.stdout.split() == list(vector.groups()), said.stderr


def test_an_entry_we_signed_is_checked_for_its_shape_any_other_field_by_field() -> None:
    """A worker decodes an entry signed with the internal key by its shape only (our
    code wrote it, from messages already checked); an entry signed by a gateway, or by
    nobody, is checked field by field as ever, and a forged signature is no pass."""
    report = {"table": "t1", "version": 3, "round": 2, "seated": [["p1", 4]], "done": 0,
              "left": [], "joined": [], "out": []}  # fmt: skip
    msg = wire.message("reports", id="r:t1:3", tournament="cup", reports=[report])
    raw = wire.encode(msg)
    # Ours: the reports as TableReport (seated kept as the msgpack the table wrote).
    assert _decode(raw, "director", KEYS, sign(INTERNAL, raw)) == {
        **msg,
        "reports": [wire.TableReport.of(report)],
    }
    assert _decode(raw, "director", KEYS, sign(A, raw)).code == wire.UNAUTHORIZED
    assert _decode(raw, "director", KEYS, sign(A, raw), "gw-a").code == wire.UNAUTHORIZED
    # Deep inside, only the full check sees a wrong id: ours are not checked there.
    odd = wire.encode({**msg, "reports": [{**report, "table": "not an id!"}]})
    assert isinstance(_decode(odd, "director", KEYS, sign(INTERNAL, odd)), dict)
    assert _decode(odd, "director", Verifier(), b"").code == wire.BAD_MESSAGE
    # At the top, ours are checked too: a type that travels this way, the required
    # fields, the ids a worker routes by as strings (refused as the full check would).
    gone = {k: v for k, v in msg.items() if k != "reports"}
    for bad_msg in ({**msg, "tournament": 7}, {**msg, "type": "act"}, {**msg, "v": 2},
                    {**msg, "id": None}, gone):  # fmt: skip
        bad = wire.encode(bad_msg)
        refused = _decode(bad, "director", KEYS, sign(INTERNAL, bad))
        assert isinstance(refused, wire.WireError), bad_msg
        assert refused.code == _decode(bad, "director", Verifier(), b"").code
    # A gateway's entry: every field checked, then who signed it.
    register, raw = _register("gw-a", name="Ann\x00")
    assert _decode(raw, "director", KEYS, sign(A, raw), "gw-a").code == wire.BAD_MESSAGE
    register, raw = _register("gw-a", name="Ann")
    assert _decode(raw, "director", KEYS, sign(A, raw), "gw-a") == register
    assert _decode(raw, "director", KEYS, sign(B, raw), "gw-a").code == wire.UNAUTHORIZED


def _decode(
    raw: bytes, direction: str, verifier: Verifier, signature: bytes, writer: str | None = None
) -> object:
    """An entry as a worker judges it, read from ``writer``'s own inbox (None: the
    deployment's)."""
    return _judge(Entry(writer, "1-1", raw, signature, len(raw)), direction, verifier)


def _register(gateway: str, name: str) -> tuple[dict[str, object], bytes]:
    msg = wire.message("register", id="g1", tournament="cup", gateway=gateway,
                       request="req-0001", name=name, bot=None)  # fmt: skip
    return msg, wire.encode(msg)


@pytest.mark.parametrize(
    ("kind", "fields"),
    [
        ("join", {"table": "t1", "player": "u-victim", "name": "Eve"}),
        ("attach", {"table": "t1", "player": "u-victim", "seat": 0}),
        ("create", {"table": "t1", "rules": {"preset": "classic"},
                    "seats": [{"kind": "open"}] * 2, "host": "u-victim"}),
        ("register", {"tournament": "cup", "player": "u-victim", "name": "Eve", "bot": None}),
        ("unregister", {"tournament": "cup", "player": "u-victim"}),
        ("begin", {"tournament": "cup", "player": "u-victim"}),
        ("tournament_create", {"tournament": "cup", "host": "u-victim", "name": "Cup",
                               "rules": {}, "seats": 6, "format": "elimination",
                               "advance": None, "start_players": None, "start_at": None,
                               "max_players": 10, "buy_in": 0, "payouts": [100],
                               "bots": None}),
    ],
)  # fmt: skip
def test_a_gateway_never_names_a_player_id(kind: str, fields: dict[str, object]) -> None:
    """A player id is the deployment's: a gateway names its players by credential (a
    token, an identity, a request key), so an entry of a gateway that names one is
    refused, signature or not; the same entry from the deployment is taken."""
    msg = wire.message(kind, id="x1", gateway="gw-a", **fields)
    wire.validate(msg)
    raw = wire.encode(msg)
    direction = "director" if kind in wire.DIRECTOR_TYPES else "in"
    refused = _decode(raw, direction, KEYS, sign(A, raw), "gw-a")
    assert isinstance(refused, wire.WireError) and refused.code == wire.UNAUTHORIZED
    assert "player id" in refused.message
    assert isinstance(_decode(raw, direction, KEYS, sign(INTERNAL, raw)), dict)
