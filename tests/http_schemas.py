"""The HTTP API's published schemas (protocol/schemas/http-*), held to what a real
gateway sends and accepts: tests call :func:`check_call` on every request and answer."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMAS = Path(__file__).resolve().parents[1] / "protocol" / "schemas"
# Crawled once: an uncrawled registry finds each `$ref`'s anchors again at every lookup,
# which was nine tenths of the schema checks' time (80 s of tests/wire/test_events.py).
REGISTRY = (
    Registry()
    .with_resources(
        (p.name, Resource.from_contents(json.loads(p.read_text(encoding="utf-8"))))
        for p in SCHEMAS.glob("*.json")
    )
    .crawl()
)

# (method, path, the request body's schema, the answer's): the first that matches.
CALLS = [
    ("GET", r"/api/tournaments", None, "http-tournaments-response"),
    ("POST", r"/api/tournaments", "http-tournament-create-request",
     "http-tournament-create-response"),
    ("POST", r"/api/tournaments/[^/]+/register", "http-register-request",
     "http-register-response"),
    ("POST", r"/api/tournaments/[^/]+/unregister", "http-entrant-request",
     "http-unregister-response"),
    ("POST", r"/api/tournaments/[^/]+/(begin|pause|resume|cancel|kick|announce)",
     "http-entrant-request", "http-organize-response"),
    ("GET", r"/api/tournaments/[^/]+/results", None, "http-results-response"),
    ("GET", r"/api/tournaments/[^/]+", None, "http-standings-response"),
    ("GET", r"/api/leaderboard", None, "http-leaderboard-response"),
    ("GET", r"/api/bots", None, "http-bots-response"),
    ("GET", r"/api/players/[^/]+", None, "http-player-response"),
    ("GET", r"/api/tables", None, "http-tables-response"),
    ("POST", r"/api/tables", "http-create-request", "http-create-response"),
    ("POST", r"/api/tables/[^/]+/join", "http-join-request", "http-join-response"),
    ("POST", r"/api/tables/[^/]+/watch", None, "http-watch-response"),
    ("POST", r"/api/quickplay", "http-quickplay-request", "http-quickplay-response"),
]  # fmt: skip


def check(schema: str, body: Any) -> None:
    """Validate a body against its published schema (``schema``: a file name)."""
    Draft202012Validator({"$ref": schema}, registry=REGISTRY).validate(body)


def check_call(method: str, path: str, body: Any, status: int, answer: Any) -> None:
    """An HTTP call as a gateway answered it: a refusal is an ``http-error``; an answered
    call's request and answer are their schemas' (a refused request may be anything)."""
    if status >= 400:
        check("http-error.schema.json", answer)
        return
    bare = path.split("?", 1)[0]
    for verb, pattern, request, answered in CALLS:
        if verb == method and re.fullmatch(pattern, bare):
            if request is not None and body is not None:
                check(f"{request}.schema.json", body)
            check(f"{answered}.schema.json", answer)
            return
    raise AssertionError(f"no published schema for {method} {bare}")
