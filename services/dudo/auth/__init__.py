"""Who a player is. The deployment's credentials (:mod:`.authority`: seat and entrant
tokens, keyed player ids, checked by workers and directors) and an app's identities
(:mod:`.identity`: the JWTs an app's backend signs for its users; docs/security.md)."""

from .authority import (
    DEPLOYMENT_KINDS,
    Authority,
    Grant,
    b64,
    is_user,
    make_token,
    new_secrets,
    read_token,
    table_order,
    unb64,
)
from .identity import load_private, new_key, public_jwks, read_jwks, sign_identity

__all__ = [
    "DEPLOYMENT_KINDS",
    "Authority",
    "Grant",
    "b64",
    "identity",
    "is_user",
    "load_private",
    "make_token",
    "new_key",
    "new_secrets",
    "public_jwks",
    "read_jwks",
    "read_token",
    "sign_identity",
    "table_order",
    "unb64",
]
