"""The JSON Schemas of the protocol (``protocol/schemas/``), written from the declarations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..engine import options
from .fields import NO_DEFAULT, Field, Message
from .spec import MESSAGES, PROTOCOL_VERSION

# -- JSON Schemas ------------------------------------------------------------------

SCHEMA_BASE = "https://dudo.example/protocol/schemas/"
_ARROWS = {
    "in": "gateway → worker",
    "out": "worker → gateway",
    "director": "gateway or table → director",
    "ratings": "table or director → ratings",
    "ws-in": "client → gateway",
    "ws-out": "gateway → client",
}


def _schema(spec: Field) -> dict[str, Any]:
    if spec.kind == "ref":
        out: dict[str, Any] = {"$ref": spec.ref}
    else:
        out = {"type": spec.kind}
        if spec.kind == "string":
            if spec.maximum is not None:
                out.update(minLength=1, maxLength=spec.maximum)
            if spec.pattern is not None:
                out["pattern"] = spec.pattern
            if spec.enum is not None:
                out = {"enum": list(spec.enum)}
        elif spec.kind == "integer":
            if spec.minimum is not None:
                out["minimum"] = spec.minimum
            if spec.maximum is not None:
                out["maximum"] = spec.maximum
        elif spec.kind == "array":
            if spec.minimum is not None:
                out["minItems"] = spec.minimum
            if spec.maximum is not None:
                out["maxItems"] = spec.maximum
            if spec.items is not None:
                out["items"] = _schema(spec.items)
            if spec.prefix is not None:
                out["prefixItems"] = [_schema(position) for position in spec.prefix]
        elif spec.kind == "object" and spec.fields is not None:
            out.update(object_schema(spec.fields))
    if spec.doc:
        out["description"] = spec.doc
    if spec.default is not NO_DEFAULT:
        out["default"] = spec.default
    if spec.nullable:
        out = {"anyOf": [out, {"type": "null"}]}
    return out


def object_schema(specs: dict[str, Field]) -> dict[str, Any]:
    """The JSON Schema of an object with these fields (none other allowed)."""
    return {
        "type": "object",
        "required": [k for k, s in specs.items() if s.required],
        "properties": {k: _schema(s) for k, s in specs.items()},
        "additionalProperties": False,
    }


def json_schemas(messages: dict[str, Message] | None = None) -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema for every message of a set (default: the stream protocol)."""
    out: dict[str, dict[str, Any]] = {}
    for kind, msg in (MESSAGES if messages is None else messages).items():
        name = f"{msg.direction}-{kind}.schema.json"
        body = object_schema(msg.fields)
        body["properties"] = {
            "v": {"const": PROTOCOL_VERSION, "description": "protocol version"},
            "type": {"const": kind},
            **body["properties"],
        }
        body["required"] = ["v", "type", *body["required"]]
        out[name] = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": SCHEMA_BASE + name,
            "title": f"{kind} ({_ARROWS[msg.direction]})",
            "description": msg.doc,
            **body,
        }
    return out


_OPTION_TYPES = {"bool": "boolean", "int": "integer", "str": "string"}


def rules_schemas() -> dict[str, dict[str, Any]]:
    """``rules.schema.json``: a table's rules object (a preset plus overrides), written
    from the engine's declaration of each option (:func:`dudo.engine.rules.options`)."""
    properties: dict[str, Any] = {}
    for option in options():
        meta = option.metadata
        prop: dict[str, Any] = (
            {"enum": list(meta["choices"])} if meta["choices"]
            else {"type": _OPTION_TYPES[str(option.type)]}
        )
        if meta["minimum"] is not None:
            prop["minimum"], prop["maximum"] = meta["minimum"], meta["maximum"]
        if option.name == "preset":  # the others' defaults are the preset's
            prop["default"] = option.default
        if meta["doc"]:
            prop["description"] = meta["doc"]
        properties[option.name] = prop
    name = "rules.schema.json"
    return {
        name: {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": SCHEMA_BASE + name,
            "title": 'Dudo table rules: a preset plus overrides (docs/rules.md, "Options")',
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
        }
    }


def sync_schema_files(
    schemas: dict[str, dict[str, Any]], folder: Path, *, write: bool
) -> list[str]:
    """Write the schema files, or (``write`` False) list those that are missing or stale."""
    stale = []
    for name, schema in schemas.items():
        text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
        path = folder / name
        if write:
            path.write_text(text, encoding="utf-8")
        elif not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    return stale
