"""The AsyncAPI 3 document: valid against the official schema, and in step with the codec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft7Validator

from dudo import wire
from dudo.wire.client import CLIENT_MESSAGES
from dudo.wire.signing import GATEWAY_SENDS

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = ROOT / "protocol"
# The official AsyncAPI 3.0.0 JSON Schema, from the npm package @asyncapi/specs 6.11.1
# (Apache-2.0, see asyncapi-specs.LICENSE), vendored so the test runs offline.
OFFICIAL = Path(__file__).parents[1] / "data" / "asyncapi-3.0.0.schema.json"


def document() -> dict[str, Any]:
    return yaml.safe_load((PROTOCOL / "asyncapi.yaml").read_text(encoding="utf-8"))


def test_document_is_valid_asyncapi_3() -> None:
    schema = json.loads(OFFICIAL.read_text(encoding="utf-8"))
    errors = sorted(Draft7Validator(schema).iter_errors(document()), key=str)
    assert errors == [], [e.message for e in errors[:5]]


def test_every_message_type_is_documented_with_schema_and_examples() -> None:
    doc = document()
    components = doc["components"]["messages"]
    declared = {kind: m for kind, m in wire.MESSAGES.items()}
    declared.update({f"client-{kind}": m for kind, m in CLIENT_MESSAGES.items()})
    for name, spec in declared.items():
        message = components[name]
        kind = name.removeprefix("client-")
        ref = message["payload"]["schema"]["$ref"]
        assert ref == f"./schemas/{spec.direction}-{kind}.schema.json"
        assert (PROTOCOL / ref).is_file()
        assert message["examples"], f"{name} has no example"
        for example in message["examples"]:
            body = json.loads((PROTOCOL / example["payload"]["$ref"]).read_text(encoding="utf-8"))
            assert body["type"] == kind
    for name, message in components.items():
        assert (PROTOCOL / message["payload"]["schema"]["$ref"]).is_file(), name
        # the client protocol's HTTP calls, and the one stream of plain fields, not msgpack
        assert name in declared or name.startswith("http-") or name == "refusal", name


def test_channels_carry_the_right_messages() -> None:
    doc = document()
    inbox = doc["channels"]["inbox"]
    outbox = doc["channels"]["outbox"]
    assert inbox["address"] == "dudo:{p{partition}}:in"
    assert outbox["address"] == "dudo:{g:{gateway}}:out"
    assert set(inbox["messages"]) == wire.INBOX_TYPES
    assert set(outbox["messages"]) == wire.OUTBOX_TYPES
    director = doc["channels"]["directorInbox"]
    assert director["address"] == "dudo:{d{partition}}:in"
    assert set(director["messages"]) == wire.DIRECTOR_TYPES
    # Issue 50: each admitted gateway's own inboxes carry what a gateway may send.
    own = doc["channels"]["gatewayInbox"]
    assert own["address"] == "dudo:{p{partition}}:in:{gateway}"
    assert set(own["messages"]) == GATEWAY_SENDS & wire.INBOX_TYPES
    own_director = doc["channels"]["gatewayDirectorInbox"]
    assert own_director["address"] == "dudo:{d{partition}}:in:{gateway}"
    assert set(own_director["messages"]) == GATEWAY_SENDS & wire.DIRECTOR_TYPES
    ratings = doc["channels"]["ratingsInbox"]
    assert ratings["address"] == "dudo:{r0}:in"
    assert set(ratings["messages"]) == wire.RATINGS_TYPES
    assert set(doc["channels"]["ws"]["messages"]) == set(CLIENT_MESSAGES)
    components = doc["components"]["messages"]
    for channel in (inbox, outbox, director, ratings, own, own_director):
        for ref in channel["messages"].values():
            assert ref["$ref"].removeprefix("#/components/messages/") in components
    codes = doc["info"]["description"]
    assert all(code in codes for code in wire.PROTOCOL_ERROR_CODES)
