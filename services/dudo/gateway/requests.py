"""Reading an HTTP request and answering its errors, for every route of the gateway
(the lobby API, http.py, and the tournaments', tournaments.py): the JSON body, a
name, the client's request key, the credential that names its player, and errors as
``{"code", "message"}`` with the status each code means.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

import structlog
from aiohttp import web

from .. import wire
from ..infra import REDIS_DOWN
from ..wire import HEX_DIGEST

__all__ = [
    "REQUEST_KEY", "credential_of", "error_response", "json_body", "json_errors", "name_of",
    "read_credentials", "refusal_response",
]  # fmt: skip

log = structlog.get_logger("dudo.gateway")
REQUEST_KEY = re.compile(r"[A-Za-z0-9_-]{8,64}")  # a client's idempotency key
SEED_COMMITMENT = re.compile(HEX_DIGEST)  # the stream's `join.seed_commitment`, checked early


@web.middleware
async def json_errors(request: web.Request, handler: Any) -> web.StreamResponse:
    """Unexpected failures answer JSON like every other error (code ``internal``)."""
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except REDIS_DOWN:
        response = error_response(503, wire.UNAVAILABLE, "the game service is unreachable; retry")
        response.headers["Retry-After"] = "1"
        return response
    except Exception:
        log.exception("request_failed", path=request.path)
        return error_response(500, wire.INTERNAL, "the gateway failed; try again")


def _identity_refusal(body: dict[str, Any]) -> web.Response | None:
    """A 401 for an ``identity`` that cannot be one (a worker checks the rest)."""
    identity = body.get("identity")
    if identity is None or (isinstance(identity, str) and 0 < len(identity) <= 2048):
        return None
    return error_response(
        401, wire.UNAUTHORIZED, "identity must be a JWT of at most 2048 characters"
    )


def credential_of(body: dict[str, Any], key: str | None) -> dict[str, str]:
    """What names the player of a create, join or registration to the deployment: the
    app's ``identity`` assertion if the client gave one (a worker checks it), and the
    request key (the same key is the same request; without the client's, one of our
    own, so an answer that comes late can still be claimed)."""
    key = key or secrets.token_urlsafe(16)
    identity = body.get("identity")
    if identity is not None:
        return {"identity": identity, "request": key}
    return {"request": key}


def refusal_response(answer: dict[str, Any], status: int) -> web.Response:
    """A worker's or director's ``error`` answer as an HTTP answer: ``status``, or 401
    for an identity or token that does not hold."""
    code = answer["code"]
    return error_response(401 if code == wire.UNAUTHORIZED else status, code, answer["message"])


def read_credentials(
    request: web.Request, body: dict[str, Any]
) -> tuple[str | None, web.Response | None]:
    """The client's idempotency key (body ``request`` or header ``Idempotency-Key``;
    None if it gave none): the same key makes a retried create, join or registration
    the same request. Or why the request is refused: a malformed key (400), or an
    ``identity`` that cannot be one (401)."""
    key = body.get("request", request.headers.get("Idempotency-Key"))
    if key is not None and (not isinstance(key, str) or not REQUEST_KEY.fullmatch(key)):
        return None, error_response(400, wire.BAD_MESSAGE, "request must be 8..64 of [A-Za-z0-9_-]")
    commitment = body.get("seed_commitment")
    if commitment is not None and (
        not isinstance(commitment, str) or not SEED_COMMITMENT.fullmatch(commitment)
    ):
        return None, error_response(
            400, wire.BAD_SEED, "seed_commitment must be 64 lowercase hex digits (a SHA-256)"
        )
    return key, _identity_refusal(body)


def seed_of(body: dict[str, Any]) -> dict[str, str]:
    """The seat's commitment to a seed of its own, for its join (checked by
    read_credentials): docs/rules.md, "Seeds from everyone"."""
    commitment = body.get("seed_commitment")
    return {"seed_commitment": commitment} if commitment is not None else {}


def name_of(name: Any) -> tuple[str | None, web.Response | None]:
    """The name cleaned as every worker wants it, or a 400 saying why not."""
    try:
        return wire.clean_name(name), None
    except wire.WireError as exc:
        return None, error_response(400, exc.code, exc.message)


def brings_seeds(body: dict[str, Any]) -> tuple[bool, web.Response | None]:
    """A registration's ``seeds`` (the entrant's client brings seeds to its tables), or a
    400 when it is not a boolean."""
    seeds = body.get("seeds", False)
    if not isinstance(seeds, bool):
        return False, error_response(400, wire.BAD_MESSAGE, "seeds: true or false")
    return seeds, None


async def json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except web.HTTPRequestEntityTooLarge:  # over the app's client_max_size
        raise web.HTTPRequestEntityTooLarge(
            max_size=request.client_max_size,
            actual_size=request.content_length or 0,
            text=json.dumps(
                {"code": wire.TOO_LARGE,
                 "message": f"a request body may be at most {request.client_max_size} bytes"}
            ),
            content_type="application/json",
        ) from None  # fmt: skip
    except Exception:
        raise web.HTTPBadRequest(
            text=json.dumps({"code": wire.BAD_MESSAGE, "message": "the body must be JSON"}),
            content_type="application/json",
        ) from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(
            text=json.dumps({"code": wire.BAD_MESSAGE, "message": "the body must be an object"}),
            content_type="application/json",
        )
    return body


def error_response(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"code": code, "message": message}, status=status)
