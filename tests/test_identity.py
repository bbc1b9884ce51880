"""Identity assertions signed by an app: who a player is across tables and tournaments."""

from __future__ import annotations

import time

import pytest

from dudo import keys
from dudo.gateway.identity import (
    Identities,
    IdentityError,
    parse_apps,
    player_of,
    sign_identity,
)
from dudo.gateway.tokens import b64, signature

WEB, CHAT = b"web-secret-0123456789", b"chat-secret-0123456789"


def test_an_apps_user_is_one_player_everywhere_and_another_apps_is_not() -> None:
    ids = Identities({"web": WEB, "chat": CHAT})
    first = ids.player_for(sign_identity("web", WEB, "42"))
    again = ids.player_for(sign_identity("web", WEB, "42", ttl_s=60))
    assert first == again == player_of("web", "42")
    assert ids.player_for(sign_identity("chat", CHAT, "42")) != first  # namespaced by app
    assert ids.player_for(sign_identity("web", WEB, "43")) != first
    assert keys.ID_PATTERN.fullmatch(first) and "42" not in first and "web" not in first


@pytest.mark.parametrize(
    ("assertion", "why"),
    [
        (sign_identity("web", CHAT, "42"), "signature"),  # signed with another app's secret
        (sign_identity("shop", WEB, "42"), "no app"),  # an app this deployment does not know
        (sign_identity("web", WEB, "42", ttl_s=-5), "expired"),
        (sign_identity("web", WEB, "")[:-2] + "xx", "signature"),
        ("no-dot", "payload"),
        ("a.b.c", "payload"),
        (42, "string"),
        ("x" * 3000, "string"),
        ("!!!." + signature(WEB, "!!!"), "base64url"),
    ],
    # Named, not shown: assertions carry a timestamp, and the xdist workers must
    # collect the same test ids.
    ids=[
        "other-apps-secret",
        "unknown-app",
        "expired",
        "damaged-signature",
        "no-dot",
        "two-dots",
        "not-a-string",
        "too-long",
        "not-base64",
    ],
)
def test_bad_assertions_are_refused_with_a_reason(assertion: object, why: str) -> None:
    with pytest.raises(IdentityError, match=why):
        Identities({"web": WEB, "chat": CHAT}).player_for(assertion)


def test_claims_are_checked_after_the_signature() -> None:
    """A correctly signed assertion with claims of the wrong shape is refused too."""
    ids = Identities({"web": WEB})
    payload = b64(b'{"a":"web","u":"","e":99999999999}')
    with pytest.raises(IdentityError, match="user"):
        ids.player_for(f"{payload}.{signature(WEB, payload)}")
    payload = b64(b'{"a":"web","u":"7","e":"later"}')
    with pytest.raises(IdentityError, match="expiry"):
        ids.player_for(f"{payload}.{signature(WEB, payload)}")
    payload = b64(b'{"a":"web","u":"7","e":%d}' % (int(time.time()) + 60))
    assert ids.player_for(f"{payload}.{signature(WEB, payload)}") == player_of("web", "7")


def test_apps_are_configured_as_name_equals_secret() -> None:
    assert parse_apps(" web=0123456789abcdef , chat=fedcba9876543210 ") == {
        "web": b"0123456789abcdef",
        "chat": b"fedcba9876543210",
    }
    assert parse_apps("") == {}
    for wrong in ("web", "Web=0123456789abcdef", "web=short"):
        with pytest.raises(ValueError):
            parse_apps(wrong)
