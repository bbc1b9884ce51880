"""The environment a ``dudo`` process starts with, read once, here.

In a container every process of a deployment is told its Redis, its health port and its
secrets by the environment: a URL may hold a password, which ``ps`` would show in an
argument. :meth:`Environment.read` is the only place that reads ``os.environ``; the
command line takes its defaults from it, and what it builds (settings objects of the
gateway, the chat gateway, the loops) is handed the values, never the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

DEFAULT_REDIS = "redis://127.0.0.1:6379/0"
TRUE = ("1", "true", "yes")


@dataclass(frozen=True)
class Environment:
    redis_url: str = DEFAULT_REDIS  # $DUDO_REDIS_URL: every command's --redis default
    health_port: int | None = None  # $DUDO_HEALTH_PORT: /healthz and /readyz
    process_id: str | None = None  # $DUDO_ID: a long-running process's --id default
    insecure_seed: bool = False  # $DUDO_INSECURE_SEED=1: a loop may take --seed
    # $DUDO_REDIS_USER_SECRET: a gateway derives its own Redis user's password from it
    redis_user_secret: str | None = None
    gateway_secret: bytes | None = None  # $DUDO_GATEWAY_SECRET: the web gateway's tokens
    irc_password: str | None = None  # $DUDO_IRC_PASSWORD: the IRC server's password
    irc_identity_key: str | None = None  # $DUDO_IRC_IDENTITY_KEY: the chat app's key
    irc_tls: bool = False  # $DUDO_IRC_TLS: --tls by default
    matrix_token: str | None = None  # $DUDO_MATRIX_TOKEN: the Matrix bot's access token
    matrix_password: str | None = None  # $DUDO_MATRIX_PASSWORD: else, its password
    matrix_identity_key: str | None = None  # $DUDO_MATRIX_IDENTITY_KEY: its app's key
    # Every variable, for those an operator names on the command line (--password-env VAR).
    variables: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def read(cls, environ: Mapping[str, str] | None = None) -> Environment:
        """The settings in ``environ`` (the process's own by default). A malformed one is
        a ValueError that names it."""
        env = dict(os.environ if environ is None else environ)
        port = env.get("DUDO_HEALTH_PORT") or None
        if port is not None and not port.isdigit():
            raise ValueError(f"$DUDO_HEALTH_PORT must be a port number, not {port!r}")
        return cls(
            redis_url=env.get("DUDO_REDIS_URL") or DEFAULT_REDIS,
            health_port=int(port) if port else None,
            process_id=env.get("DUDO_ID") or None,
            insecure_seed=env.get("DUDO_INSECURE_SEED") == "1",
            redis_user_secret=env.get("DUDO_REDIS_USER_SECRET") or None,
            gateway_secret=env.get("DUDO_GATEWAY_SECRET", "").encode() or None,
            irc_password=env.get("DUDO_IRC_PASSWORD") or None,
            irc_identity_key=env.get("DUDO_IRC_IDENTITY_KEY") or None,
            irc_tls=env.get("DUDO_IRC_TLS", "").lower() in TRUE,
            matrix_token=env.get("DUDO_MATRIX_TOKEN") or None,
            matrix_password=env.get("DUDO_MATRIX_PASSWORD") or None,
            matrix_identity_key=env.get("DUDO_MATRIX_IDENTITY_KEY") or None,
            variables=env,
        )
