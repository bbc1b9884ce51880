"""The deployment's signing keys as its processes read them from Redis (dudo.wire.signing
says what they sign): the internal key its own processes sign with, and the switch
that starts checking every inbox entry. Shared by the long-running processes (a bot
service, a gateway connected as an admin), the operator's tools and benchmarks.
"""

from __future__ import annotations

import time
from typing import Any

from ..wire import keys, signing

__all__ = ["SIGN_BEFORE_CHECKING_S", "internal_key", "start_signing"]

# The first admission: our processes read the new key at their heartbeats (a gateway's
# every 2 s, a bot service's every second, a worker's every half): then checking starts.
SIGN_BEFORE_CHECKING_S = 3.0


def start_signing(client: Any, wait_s: float = SIGN_BEFORE_CHECKING_S) -> None:
    """From now on workers check who signed every inbox entry (dudo.wire.signing): the first
    time, once every process of ours has had ``wait_s`` to read the key and sign with
    it (0 where none runs yet: a benchmark setting up its Redis)."""
    client.hsetnx(keys.GATEWAY_KEYS, signing.INTERNAL, signing.new_internal_key())
    if not client.hexists(keys.GATEWAY_KEYS, signing.CHECKING):
        time.sleep(wait_s)
        client.hset(keys.GATEWAY_KEYS, signing.CHECKING, "1")


def internal_key(client: Any) -> bytes | None:
    """The deployment's own signing key, if gateways have users (None: nothing is
    signed or checked). For processes that connect as an admin: workers, directors,
    bot services, tools that write inbox entries."""
    return signing.key_from_hex(client.hget(keys.GATEWAY_KEYS, signing.INTERNAL))
