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

ROOT = Path(__file__).resolve().parents[2]
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
    for call in ("GET /api/tables", "POST /api/tables", "/join", "POST /api/quickplay", "/watch"):
        assert call in part, call


def test_every_redis_key_the_asyncapi_document_names_exists() -> None:
    """Issue 33: the document told gateway authors to read a lobby hash `dudo:lobby` that
    no deployment has (the lobby is per partition). Every key it names is one the
    servers use: `N` and `<N>` stand for a partition number, `<id>` for a gateway's id,
    `{partition}` and `{gateway}` are its channel parameters."""
    from dudo.wire import keys

    real = {keys.CONFIG, keys.WORKERS, keys.GATEWAYS, keys.GATEWAY_VIEWS, keys.DIRECTORS,
            keys.outbox("ID"), keys.presence("ID"), keys.gateway_memory("ID"),
            keys.refused("ID"), keys.BOT_SOLVES}  # fmt: skip
    for space in (keys.TABLES, keys.TOURNAMENTS, keys.RATINGS):
        real.update(space.partition_keys(0))
    real.update(space.inbox(0, "ID") for space in (keys.TABLES, keys.TOURNAMENTS))
    text = yaml.safe_load((ROOT / "protocol" / "asyncapi.yaml").read_text(encoding="utf-8"))
    named = set(re.findall(r"dudo:[A-Za-z0-9_{}:<>-]+", json.dumps(text)))
    placeholders = (("{pN}", "{p0}"), ("{p<N>}", "{p0}"), ("{dN}", "{d0}"), ("{d<N>}", "{d0}"),
                    ("{p{partition}}", "{p0}"), ("{d{partition}}", "{d0}"),
                    ("{g:<id>}", "{g:ID}"), ("{g:{gateway}}", "{g:ID}"),
                    (":in:<id>", ":in:ID"), (":in:{gateway}", ":in:ID"))  # fmt: skip
    for key in sorted(named):
        concrete = key
        for placeholder, value in placeholders:
            concrete = concrete.replace(placeholder, value)
        assert concrete in real, f"the AsyncAPI document names {key}, which no server uses"
    assert "dudo:{pN}:lobby" in named


def test_the_asyncapi_document_points_to_the_guides_parts_by_their_titles() -> None:
    """It sent client authors to "part 2" (tournaments); every "Part N (title)" it
    names is that part of docs/protocol.md."""
    text = (ROOT / "protocol" / "asyncapi.yaml").read_text(encoding="utf-8")
    parts = dict(re.findall(r"^## Part (\d): (.+)$", DOC, flags=re.MULTILINE))
    named = re.findall(r"[Pp]art\s+(\d)(?:\s+\(([^)]+)\))?", text)
    assert named, "the document points to no part of the guide"
    for number, title in named:
        assert number in parts and title and title == parts[number], (number, title, parts)


def test_the_javascript_librarys_types_say_what_the_schemas_say() -> None:
    """Issue 33: its View type listed a status "done" that no view has. Its types are
    now generated from the schemas (messages.d.ts, kept current by `dudo schemas check`):
    the library declares no message type of its own, and the view's statuses are the
    schema's."""
    source = (ROOT / "protocol" / "js" / "dudo-client.js").read_text(encoding="utf-8")
    typedefs = re.findall(r"@typedef \{(.*?)\} (\w+)", source)
    assert typedefs and all(t.startswith('import("./messages.js")') for t, _ in typedefs)
    generated = (ROOT / "protocol" / "js" / "messages.d.ts").read_text(encoding="utf-8")
    view = generated.split("export interface ViewMessage {", 1)[1].split("\n}", 1)[0]
    statuses = re.search(r"status: ((?:\"[a-z]+\"(?: \| )?)+);", view)
    assert statuses is not None, "the ViewMessage type names no status"
    assert re.findall(r'"([a-z]+)"', statuses.group(1)) == list(wire.TABLE_STATUSES)
    schema = json.loads((ROOT / "protocol/schemas/ws-out-view.schema.json").read_text())
    assert schema["properties"]["status"]["enum"] == list(wire.TABLE_STATUSES)
