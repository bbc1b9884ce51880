"""An app's side of identities: its key pair, and the JWTs its backend signs for its users.

An app hosted by the deployment (a web site, a mobile app's backend, a chat bot) proves
who its users are with a JWT its *backend* signs with the app's private key: ``iss`` the
app's name, ``sub`` the user's id in that app, ``exp`` soon (minutes). The operator
registers the app's public keys with the deployment (``dudo admin app add``); the
workers verify each identity against them (:meth:`dudo.auth.authority.Authority.identity`).
No gateway ever holds an app's private key, so none can speak for another app's users.

Any language's JWT library can sign (EdDSA with Ed25519, or ES256); this module is
the reference, and what ``dudo admin app add --generate`` and ``dudo identity`` use.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from jwt.algorithms import OKPAlgorithm

from .authority import ALGORITHMS, ASSERTION_MAX

__all__ = ["new_key", "public_jwks", "sign_identity"]


def new_key() -> str:
    """A new Ed25519 private key, as PEM (PKCS#8): the app's backend keeps it."""
    key = Ed25519PrivateKey.generate()
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def public_jwks(private_pem: str, kid: str = "1") -> dict[str, Any]:
    """The JSON Web Key Set of a private key's public half: what the operator registers
    (``dudo admin app add APP --jwks FILE``), and all the deployment ever holds."""
    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("an Ed25519 key is expected (see dudo.auth.identity.new_key)")
    public = OKPAlgorithm.to_jwk(key.public_key(), as_dict=True)
    return {"keys": [{**public, "kid": kid, "alg": "EdDSA", "use": "sig"}]}


def sign_identity(app: str, private_pem: str, user: str, ttl_s: int = 300, kid: str = "1") -> str:
    """An identity JWT saying ``user`` of ``app`` plays, valid ``ttl_s`` seconds: what an
    app's backend hands its client to pass as ``identity``."""
    now = int(time.time())
    token = jwt.encode(
        {"iss": app, "sub": user, "iat": now, "exp": now + ttl_s},
        private_pem,
        algorithm="EdDSA",
        headers={"kid": kid},
    )
    if len(token) > ASSERTION_MAX:
        raise ValueError(f"an identity may be at most {ASSERTION_MAX} characters")
    return token


def read_jwks(text: str) -> dict[str, Any]:
    """A JWK set to register, checked: public keys only, of the algorithms the workers
    accept (a private key never goes to the deployment). ValueError says why not."""
    try:
        found = json.loads(text)
    except ValueError as exc:
        raise ValueError("the key set must be JSON") from exc
    if isinstance(found, dict) and "keys" not in found and "kty" in found:
        found = {"keys": [found]}  # one key alone
    if not isinstance(found, dict) or not isinstance(found.get("keys"), list) or not found["keys"]:
        raise ValueError('a JWK set is {"keys": [...]} with at least one key')
    for key in found["keys"]:
        if not isinstance(key, dict):
            raise ValueError("every key of the set must be an object")
        if "d" in key:
            raise ValueError("that is a private key: register the public key only")
        if key.get("kty") not in ("OKP", "EC") or key.get("alg", _alg_of(key)) not in ALGORITHMS:
            raise ValueError(f"keys must be Ed25519 (EdDSA) or P-256 (ES256): {key.get('kty')}")
    try:
        jwt.PyJWKSet.from_dict(found)
    except Exception as exc:
        raise ValueError(f"the key set is not usable: {exc}") from exc
    return found


def _alg_of(key: dict[str, Any]) -> str:
    return "EdDSA" if key.get("kty") == "OKP" else "ES256" if key.get("crv") == "P-256" else ""


def load_private(path: str | Path) -> str:
    return Path(path).read_text()
