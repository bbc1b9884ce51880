"""docs/protocol.md, the client author's reference, agrees with the AsyncAPI document and
the declarations the servers validate with: every message a client sends or receives,
every error code and every event type is documented there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from dudo import wire
from dudo.engine import RULE_ERROR_CODES
from dudo.wire.client import CLIENT_MESSAGES
from dudo.wire.reference import BEGIN, END, sync

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
MENTIONED = set(re.findall(r"`([a-z_]+)`", DOC))


def test_every_client_message_of_the_asyncapi_document_is_in_the_guide() -> None:
    doc = yaml.safe_load((ROOT / "protocol" / "asyncapi.yaml").read_text(encoding="utf-8"))
    in_spec = set(doc["channels"]["ws"]["messages"])
    assert in_spec == set(CLIENT_MESSAGES)  # the document and the validating code agree
    assert in_spec <= MENTIONED, in_spec - MENTIONED


def test_every_error_code_is_in_the_guide() -> None:
    codes = set(wire.DECODE_ERROR_CODES) | set(RULE_ERROR_CODES)
    assert codes <= MENTIONED, codes - MENTIONED


def test_every_event_type_is_in_the_guide() -> None:
    schema = json.loads((ROOT / "protocol" / "schemas" / "event.schema.json").read_text())
    events = set(schema["$defs"])
    assert events <= MENTIONED, events - MENTIONED


def test_the_reference_part_is_generated_from_the_asyncapi_document(tmp_path: Path) -> None:
    guide = ROOT / "docs" / "protocol.md"
    assert not sync(guide, ROOT / "protocol", write=False), "run: dudo schemas write"
    # The check can fail: a hand edit inside the part is found, and write undoes it.
    copy = tmp_path / "protocol.md"
    copy.write_text(DOC.replace("| `retry_ms` | integer |", "| `retry_ms` | string |"))
    assert sync(copy, ROOT / "protocol", write=False)
    sync(copy, ROOT / "protocol", write=True)
    assert copy.read_text(encoding="utf-8") == DOC


def test_the_reference_lists_every_client_message_and_http_call() -> None:
    part = DOC[DOC.index(BEGIN) : DOC.index(END)]
    for name in CLIENT_MESSAGES:
        assert f"#### `{name}`" in part, name
    for call in ("GET /api/tables", "POST /api/tables", "/join", "/watch"):
        assert call in part, call
