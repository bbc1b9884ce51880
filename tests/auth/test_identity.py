"""Who a player is (dudo.auth.authority, dudo.auth.identity): apps' identities as JWTs checked
against each app's public keys, keyed player ids, and the deployment's tokens."""

from __future__ import annotations

import base64
import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import given, settings
from hypothesis import strategies as st
from jwt.algorithms import ECAlgorithm, OKPAlgorithm

from dudo import wire
from dudo.auth.authority import Authority, make_token, read_token
from dudo.auth.identity import new_key, public_jwks, read_jwks, sign_identity
from dudo.wire import Refusal, keys

WEB, CHAT = new_key(), new_key()


def authority() -> Authority:
    found = Authority()
    found.load(
        {},
        {"web": json.dumps(public_jwks(WEB)), "chat": json.dumps(public_jwks(CHAT))},
        {"web-1": "web", "chat-1": "chat"},
        admitted={"web-1", "chat-1"},
    )
    return found


def test_an_apps_user_is_one_player_everywhere_and_another_apps_is_not() -> None:
    auth = authority()
    first = auth.user_player(*auth.identity(sign_identity("web", WEB, "42")))
    again = auth.user_player(*auth.identity(sign_identity("web", WEB, "42", ttl_s=60)))
    assert first == again
    assert auth.user_player(*auth.identity(sign_identity("chat", CHAT, "42"))) != first
    assert auth.user_player(*auth.identity(sign_identity("web", WEB, "43"))) != first
    assert keys.ID_PATTERN.fullmatch(first) and "42" not in first and "web" not in first
    # Keyed: another deployment (another key) names the same user otherwise, and so
    # nobody without the key computes it from the app and the user.
    assert Authority().user_player("web", "42") != first


def _claims(**claims: object) -> dict[str, object]:
    return {"iss": "web", "sub": "42", "exp": int(time.time()) + 86_400, **claims}


def _es256_key() -> tuple[object, dict[str, object]]:
    key = ec.generate_private_key(ec.SECP256R1())
    public = ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
    return key, {**public, "kid": "p256", "alg": "ES256"}


@pytest.mark.parametrize(
    ("assertion", "why"),
    [
        (sign_identity("web", CHAT, "42", ttl_s=86_400), "signature"),  # another app's key
        (sign_identity("shop", WEB, "42", ttl_s=86_400), "no app"),  # an app this deployment lacks
        (sign_identity("web", WEB, "42", ttl_s=-5), "expired"),
        (sign_identity("web", WEB, "42", ttl_s=86_400)[:-2] + "xx", "signature|not a JWT"),
        (jwt.encode(_claims(), "a-shared-secret-of-32-bytes-or-more", algorithm="HS256"), "signed"),
        (jwt.encode(_claims(), None, algorithm="none"), "signed"),
        (jwt.encode(_claims(sub=""), WEB, algorithm="EdDSA"), "sub"),
        (jwt.encode({"iss": "web", "sub": "42"}, WEB, algorithm="EdDSA"), "exp|signature"),
        ("no-dot", "not a JWT"),
        ("a.b.c", "not a JWT"),
        (42, "JWT"),
        ("x" * 3000, "JWT"),
        ("é.ü.ö", "not a JWT"),
        (base64.urlsafe_b64encode(b"[" * 1400).decode() + ".e30.", "not a JWT"),
    ],
    ids=["other-apps-key", "unknown-app", "expired", "damaged", "hs256", "alg-none",
         "empty-sub", "no-exp", "no-dot", "not-base64", "not-a-string", "too-long",
         "non-ascii", "deeply-nested"],
)  # fmt: skip
def test_bad_identities_are_refused_with_a_typed_reason(assertion: object, why: str) -> None:
    """Forged, foreign, expired, symmetric or unsigned, malformed however deeply: each
    is ``unauthorized`` with a reason, never another exception (it once answered 500)."""
    with pytest.raises(Refusal, match=why) as info:
        authority().identity(assertion)
    assert info.value.code == wire.UNAUTHORIZED


def test_a_gateway_presents_its_own_apps_identities_only() -> None:
    auth = authority()
    ana = sign_identity("web", WEB, "ana")
    assert auth.player_for({"gateway": "web-1", "identity": ana}, "t1")
    with pytest.raises(Refusal, match="this gateway is of app chat"):
        auth.player_for({"gateway": "chat-1", "identity": ana}, "t1")
    # The deployment's own gateways (not admitted) may present any app's.
    assert auth.player_for({"gateway": "ours", "identity": ana}, "t1") == auth.player_for(
        {"gateway": "web-1", "identity": ana}, "t9"
    )


def test_es256_keys_and_key_ids() -> None:
    key, public = _es256_key()
    auth = Authority()
    auth.load({}, {"shop": json.dumps(read_jwks(json.dumps({"keys": [public]})))})
    token = jwt.encode(_claims(iss="shop"), key, algorithm="ES256", headers={"kid": "p256"})
    assert auth.identity(token) == ("shop", "42")
    other = jwt.encode(_claims(iss="shop"), key, algorithm="ES256", headers={"kid": "gone"})
    with pytest.raises(Refusal, match="signature"):
        auth.identity(other)


def test_a_key_set_to_register_holds_public_keys_only() -> None:
    assert read_jwks(json.dumps(public_jwks(WEB)))["keys"][0]["kty"] == "OKP"
    loaded = serialization.load_pem_private_key(WEB.encode(), password=None)
    private = OKPAlgorithm.to_jwk(loaded, as_dict=True)  # with "d": the private half
    for wrong in ("not json", "{}", '{"keys": []}', json.dumps(private),
                  json.dumps({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]})):  # fmt: skip
        with pytest.raises(ValueError):
            read_jwks(wrong)


def test_request_keys_name_a_player_per_app_and_scope() -> None:
    auth = authority()
    mine = auth.player_for({"gateway": "web-1", "request": "k" * 16}, "t1")
    assert mine == auth.player_for({"gateway": "web-1", "request": "k" * 16}, "t1")
    assert mine != auth.player_for({"gateway": "chat-1", "request": "k" * 16}, "t1")
    assert mine != auth.player_for({"gateway": "web-1", "request": "k" * 16}, "t2")
    fresh = {auth.player_for({"gateway": "web-1"}, "t1") for _ in range(3)}
    assert len(fresh) == 3  # no credential: a new player each time


def test_tokens_are_the_deployments() -> None:
    auth = authority()
    token = auth.token("seat", "t1", "u-ana", "Ana")
    grant = auth.check(token, {"seat": "t1"})
    assert grant.player == wire.public_id("u-ana") and "u-ana" not in token
    assert read_token(token).player == grant.player  # readable by a gateway, not makeable
    body = {"t": "t1", "p": grant.player, "n": "Ana", "k": "seat", "e": int(time.time()) + 60}
    for bad in (
        make_token(b"k" * 32, body),  # any other key
        token[:-3] + "AAA",
        auth.token("seat", "t2", "u-ana", "Ana"),  # another table's
        auth.token("entrant", "t1", "u-ana", "Ana"),  # another kind
        make_token(auth.token_key, {**body, "e": int(time.time()) - 1}),  # expired
        make_token(auth.token_key, {**body, "t": 7}),  # malformed, signed
        "x" * 2000,
    ):
        with pytest.raises(Refusal) as info:
            auth.check(bad, {"seat": "t1"})
        assert info.value.code == wire.UNAUTHORIZED


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300) | st.binary(max_size=300).map(lambda b: b.decode("latin-1")))
def test_any_string_as_an_identity_or_token_is_a_typed_refusal(text: str) -> None:
    auth = authority()
    for check in (lambda: auth.identity(text), lambda: auth.check(text, {"seat": "t1"})):
        with pytest.raises(Refusal):
            check()
