"""The client protocol's reference in docs/protocol.md, generated from the AsyncAPI
document and the JSON Schemas and examples it points to.

One truth: the guide's prose explains, this section lists every message a client sends
or receives and every HTTP call, field by field, exactly as the published documents
declare them. ``dudo schemas write`` rewrites the section, ``dudo schemas check`` (and
the tests) fail when it is stale.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BEGIN = (
    "<!-- reference: generated from protocol/asyncapi.yaml by `dudo schemas write`;"
    " do not edit by hand -->"
)
END = "<!-- reference: end -->"
SKIPPED = ("v", "type")  # every message has them: said once, above the tables


class _Document:
    """The AsyncAPI document with its ``$ref`` s followed (local and to files)."""

    def __init__(self, protocol: Path) -> None:
        import yaml  # a docs tool: yaml is needed here only

        self.folder = protocol
        self.doc = yaml.safe_load((protocol / "asyncapi.yaml").read_text(encoding="utf-8"))

    def resolve(self, node: dict[str, Any]) -> Any:
        while "$ref" in node:
            ref = node["$ref"]
            if ref.startswith("#/"):
                node = self.doc
                for part in ref[2:].split("/"):
                    node = node[part]
            else:
                return self._file(ref)
        return node

    def _file(self, ref: str) -> dict[str, Any]:
        """A schema file, with each ``$ref`` to a part of another file resolved into
        ``$resolved`` beside it (the reference shows what such a part holds)."""
        schema = json.loads((self.folder / ref).read_text(encoding="utf-8"))

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                target = node.get("$ref")
                if isinstance(target, str) and "#" in target:
                    name, _, pointer = target.partition("#")
                    part: Any = (  # a part of this file (its $defs), or of another
                        json.loads((self.folder / "schemas" / name).read_text("utf-8"))
                        if name
                        else schema
                    )
                    for key in pointer.strip("/").split("/"):
                        part = part[key]
                    node["$resolved"] = part
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(schema)
        return schema

    def message(self, ref: dict[str, Any]) -> dict[str, Any]:
        return self.resolve(ref)  # type: ignore[no-any-return]


def render(protocol: Path) -> str:
    """The reference section (markers included) for the documents in ``protocol``."""
    doc = _Document(protocol)
    out = [BEGIN, ""]
    out += [
        "Every WebSocket message is a JSON object (or the same in msgpack, in a binary",
        "frame) with `v` (the protocol version, 1) and `type`; the tables list the other",
        "fields. *optional* fields may be left out.",
        "",
        "### WebSocket: what a client sends",
        "",
    ]
    for ref in doc.doc["operations"]["clientSends"]["messages"]:
        out += _message(doc, doc.message(ref))
    out += ["### WebSocket: what a client receives", ""]
    for ref in doc.doc["operations"]["clientReceives"]["messages"]:
        out += _message(doc, doc.message(ref))
    out += ["### HTTP", ""]
    for name, operation in doc.doc["operations"].items():  # every HTTP call, in its order
        if "http" in operation.get("bindings", {}):
            out += _operation(doc, name)
    out.append(END)
    return "\n".join(out) + "\n"


def _message(doc: _Document, message: dict[str, Any]) -> list[str]:
    schema = doc.resolve(message["payload"]["schema"])
    lines = [f"#### `{message['name']}`", "", schema.get("description") or message["summary"], ""]
    lines += _fields(schema)
    examples = message.get("examples") or []
    if examples:
        example = doc.resolve(examples[0]["payload"])
        lines += ["```json", json.dumps(example, ensure_ascii=False), "```", ""]
    return lines


def _operation(doc: _Document, name: str) -> list[str]:
    operation = doc.doc["operations"][name]
    channel = doc.resolve(operation["channel"])
    method = operation["bindings"]["http"]["method"]
    lines = [f"#### `{method} {channel['address']}`: {operation['title'].lower()}", ""]
    for ref in operation["messages"]:
        request = doc.resolve(doc.message(ref)["payload"]["schema"])
        lines += ["Request body:", "", *_fields(request)]
    for ref in operation["reply"]["messages"]:
        message = doc.message(ref)
        if message["name"] == "http-error":
            continue
        lines += ["Answer:", "", *_fields(doc.resolve(message["payload"]["schema"]))]
    lines += ["Refused: an `http-error` `{code, message}` with the HTTP status.", ""]
    return lines


def _fields(schema: dict[str, Any]) -> list[str]:
    properties = {k: v for k, v in schema.get("properties", {}).items() if k not in SKIPPED}
    if not properties:
        return ["No fields.", ""]
    required = set(schema.get("required", ()))
    lines = ["| field | type | | meaning |", "|---|---|---|---|"]
    for name, field in properties.items():
        need = "" if name in required else "*optional*"
        meaning = _description(field)
        if "default" in field:
            meaning += f" (default {json.dumps(field['default'])})"
        lines.append(f"| `{name}` | {_cell(_type(field))} | {need} | {_cell(meaning.strip())} |")
    return [*lines, ""]


def _description(field: dict[str, Any]) -> str:
    """A field's own description, or its non-null alternative's (nullable fields)."""
    if field.get("description"):
        return str(field["description"])
    for key in ("anyOf", "oneOf"):
        for option in field.get(key, ()):
            if option.get("description"):
                return str(option["description"])
    return ""


def _type(field: dict[str, Any]) -> str:
    if "$ref" in field:
        ref = field["$ref"]
        if "#" in ref:  # a part of another schema, e.g. the lobby's table entry
            return _type(field["$resolved"])
        return f"`{ref.rsplit('/', 1)[-1].removesuffix('.schema.json')}`"
    if "const" in field:
        return f"`{json.dumps(field['const'])}`"
    if "enum" in field:
        return " or ".join(f"`{json.dumps(value)}`" for value in field["enum"])
    for key in ("oneOf", "anyOf"):
        if key in field:
            return " or ".join(_type(option) for option in field[key])
    kind = field.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(_type({**field, "type": one}) for one in kind)
    if kind == "array" and isinstance(field.get("items"), dict):
        return f"array of {_type(field['items'])}"
    if kind == "object" and field.get("properties"):
        return "object `{" + ", ".join(field["properties"]) + "}`"
    if kind == "integer" and "minimum" in field and "maximum" in field:
        return f"integer {field['minimum']}..{field['maximum']}"
    return str(kind)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def sync(guide: Path, protocol: Path, *, write: bool) -> bool:
    """Rewrite the guide's reference section (``write``), or say whether it is stale."""
    text = guide.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{guide}: no reference markers ({BEGIN!r} ... {END!r})")
    fresh = text[:start] + render(protocol) + text[end + len(END) + 1 :]
    if write and fresh != text:
        guide.write_text(fresh, encoding="utf-8")
    return fresh != text
