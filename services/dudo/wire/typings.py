"""The client protocol as types, for the client packages: Python ``TypedDict`` classes
(``protocol/python/dudo_client/messages.py``) and TypeScript declarations
(``protocol/js/messages.d.ts``), both written from the JSON Schemas in
``protocol/schemas`` by ``dudo schemas write`` (and checked by ``dudo schemas check``).

Why generated, and from the schema files rather than the declarations: the schemas are
the published contract (some, like the game view and the events, are written by hand),
so types made from them can only say what a client developer could read there. Why
plain dicts typed after the fact (``TypedDict``, TypeScript interfaces) rather than
classes: a message stays the JSON the gateway sent, as in every example of the guide.

The converter knows the JSON Schema a protocol author uses here: objects with
``properties``/``required``, ``allOf`` merges, ``anyOf``/``oneOf`` unions, ``const`` and
``enum``, type lists with ``null``, arrays with ``items`` or ``prefixItems``, and
``$ref`` to another file, a ``$defs`` entry or any JSON pointer. Anything else raises,
so a schema that starts using more is noticed here, not shipped wrongly typed.
"""

from __future__ import annotations

import json
import keyword
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .type_names import NAMES

# -- the type model both renderers print -------------------------------------------------


@dataclass(frozen=True)
class Prim:
    name: str  # int, float, str, bool, null, any


@dataclass(frozen=True)
class Lit:
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Seq:
    item: Type
    tuple_items: tuple[Type, ...] | None = None  # prefixItems: a fixed-length tuple


@dataclass(frozen=True)
class Union:
    members: tuple[Type, ...]


@dataclass(frozen=True)
class Ref:
    name: str


Type = Prim | Lit | Seq | Union | Ref


@dataclass
class Prop:
    key: str
    type: Type
    required: bool
    doc: str = ""


@dataclass
class Named:
    """A type with a name: an object (``props``) or an alias (``alias``)."""

    name: str
    doc: str = ""
    props: list[Prop] | None = None
    alias: Type | None = None
    deps: set[str] = field(default_factory=set)


def pascal(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", text))


def root_name(file: str) -> str:
    """``ws-out-view.schema.json`` -> ``ViewMessage``; ``ws-in-act`` -> ``ActRequest``;
    ``http-join-request`` -> ``JoinRequest``; ``http-error`` -> ``HttpError``."""
    stem = file.removesuffix(".schema.json")
    if stem.startswith("ws-out-"):
        return pascal(stem.removeprefix("ws-out-")) + "Message"
    if stem.startswith("ws-in-"):
        return pascal(stem.removeprefix("ws-in-")) + "Request"
    if stem == "http-error":
        return "HttpError"
    return pascal(stem.removeprefix("http-"))


def _defs_name(file: str, key: str) -> str:
    """A ``$defs`` entry: the event kinds get ``Event`` after their names (``BidEvent``
    is not the game view's ``Bid``)."""
    return pascal(key) + ("Event" if file == "event.schema.json" else "")


class Converter:
    """Reads the schema files; :attr:`named` fills with every type they need."""

    def __init__(self, schemas: dict[str, dict[str, Any]]) -> None:
        self.schemas = schemas
        self.named: dict[str, Named] = {}
        self._at: dict[str, str] = {}  # "file#pointer" -> the name given there
        self._nodes: dict[str, dict[str, Any]] = {}  # name -> the schema it was made from
        self._naming: set[str] = set()  # named value types being made

    # -- entry points -------------------------------------------------------------------

    def root(self, file: str) -> str:
        """The named type of a whole file."""
        return self._named_at(file, "", root_name(file))

    def union(self, name: str, doc: str, files: list[str]) -> None:
        members = tuple(Ref(self.root(f)) for f in files)
        self.named[name] = Named(name, doc, alias=Union(members), deps={m.name for m in members})

    # -- inside -------------------------------------------------------------------------

    def _node(self, file: str, pointer: str) -> dict[str, Any]:
        node: Any = self.schemas[file]
        for part in filter(None, pointer.split("/")):
            node = node[int(part)] if isinstance(node, list) else node[part]
        return node

    def _named_at(
        self, file: str, pointer: str, name: str, node: dict[str, Any] | None = None
    ) -> str:
        """The type at ``file#pointer`` (or ``node``, a variant of it), under ``name``
        (made once, then reused)."""
        where = f"{file}#{pointer}"
        if where in self._at:
            return self._at[where]
        name = NAMES.get(where, name)
        node = self._node(file, pointer) if node is None else node
        if name in self.named:
            if self._nodes.get(name) != node:
                raise ValueError(f"two types named {name}: {where} and another")
            self._at[where] = name  # the same schema in two places: one type
            return name
        self._at[where] = name
        self._nodes[name] = node
        named = Named(name)
        self.named[name] = named  # reserved before the body: a second use reuses it
        named.doc = node.get("description") or node.get("title", "")
        deps: set[str] = set()
        if _is_object(node):
            named.props = self._props(file, pointer, node, name, deps)
        else:
            named.alias = self._type(file, pointer, node, name, deps)
        named.deps = deps - {name}
        return name

    def _ref(self, file: str, ref: str, deps: set[str]) -> Type:
        target, _, pointer = ref.partition("#")
        target = target or file
        if not pointer:
            name = self.root(target)
        elif pointer.startswith("/$defs/") and pointer.count("/") == 2:
            name = self._named_at(target, pointer, _defs_name(target, pointer.split("/")[2]))
        else:
            name = self._named_at(target, pointer, pascal(pointer.rsplit("/", 1)[-1]))
        deps.add(name)
        return Ref(name)

    def _type(self, file: str, at: str, node: dict[str, Any], hint: str, deps: set[str]) -> Type:
        """The type of a schema node; an inline object becomes a named type ``hint``."""
        if "$ref" in node:
            return self._ref(file, node["$ref"], deps)
        where = f"{file}#{at}"
        if where in NAMES and where not in self._naming and "enum" in node:
            # A value type with a name of its own (an enum: `Emote`), made once
            self._naming.add(where)
            try:
                deps.add(name := self._named_at(file, at, NAMES[where], node))
            finally:
                self._naming.discard(where)
            return Ref(name)
        if "const" in node:
            return Lit((node["const"],))
        if "enum" in node:
            return Lit(tuple(node["enum"]))
        for key in ("anyOf", "oneOf"):
            if key in node:
                members = []
                for i, member in enumerate(node[key]):
                    tag = member.get("properties", {}).get("type", {}).get("const")
                    sub = hint if tag is None else pascal(tag) + hint
                    if len(node[key]) > 1 and tag is None and _is_object(member):
                        sub = f"{hint}{i}"
                    members.append(self._type(file, f"{at}/{key}/{i}", member, sub, deps))
                return _union(members)
        if _is_object(node):
            deps.add(name := self._named_at(file, at, hint, node))
            return Ref(name)
        kind = node.get("type")
        if isinstance(kind, list):  # ["object", "null"]: the object is named as one
            variants = [{**node, "type": k} for k in kind]
            return _union([self._type(file, at, v, hint, deps) for v in variants])
        if kind == "array":
            if "prefixItems" in node:
                items = tuple(
                    self._type(file, f"{at}/prefixItems/{i}", item, f"{hint}{i}", deps)
                    for i, item in enumerate(node["prefixItems"])
                )
                return Seq(_union(list(items)), items)
            if "items" not in node:
                return Seq(Prim("any"))
            return Seq(self._type(file, f"{at}/items", node["items"], hint, deps))
        if kind == "object":
            return Prim("map")
        simple = {"integer": "int", "number": "float", "string": "str", "boolean": "bool"}
        if kind in simple:
            return Prim(simple[kind])
        if kind == "null":
            return Prim("null")
        if kind is None and not set(node) - {"description", "default", "examples"}:
            return Prim("any")
        raise ValueError(f"{file}#{at}: a schema the type converter does not know: {node}")

    def _props(
        self, file: str, at: str, node: dict[str, Any], name: str, deps: set[str]
    ) -> list[Prop]:
        """An object's properties, ``allOf`` parts merged in (later ones win)."""
        props: dict[str, Prop] = {}
        required = set(node.get("required", ()))
        for part in node.get("allOf", ()):
            ref = part["$ref"]
            target, _, pointer = ref.partition("#")
            target = target or file
            part_node = self._node(target, pointer)
            for prop in self._props(target, pointer, part_node, name, deps):
                props[prop.key] = prop
        for key, spec in node.get("properties", {}).items():
            if not key.isidentifier():
                raise ValueError(f"{file}#{at}: property {key!r} cannot be a field name")
            sub = f"{at}/properties/{key}"
            typ = self._type(file, sub, spec, name + pascal(key), deps)
            if key in props:  # narrowed by the outer object (game-view's `seat`)
                props[key] = Prop(key, typ, props[key].required, props[key].doc)
            else:
                props[key] = Prop(key, typ, False, spec.get("description", ""))
        for key in required:
            props[key].required = True
        return list(props.values())


def _is_object(node: dict[str, Any]) -> bool:
    return node.get("type") == "object" and ("properties" in node or "allOf" in node)


def _union(members: list[Type]) -> Type:
    flat: list[Type] = []
    for member in members:
        for m in member.members if isinstance(member, Union) else (member,):
            if m not in flat:
                flat.append(m)
    literals = [m for m in flat if isinstance(m, Lit)]
    if len(literals) > 1:  # "a" | "b" as one Literal
        merged = Lit(tuple(v for lit in literals for v in lit.values))
        flat = [merged if m is literals[0] else m for m in flat if m not in literals[1:]]
    return flat[0] if len(flat) == 1 else Union(tuple(flat))


# -- what the client packages get ---------------------------------------------------------


def client_types(schemas: dict[str, dict[str, Any]]) -> list[Named]:
    """Every type of the client protocol (WebSocket and HTTP), dependencies first."""
    conv = Converter(schemas)
    out_files = sorted(f for f in schemas if f.startswith("ws-out-"))
    in_files = sorted(f for f in schemas if f.startswith("ws-in-"))
    for file in sorted(f for f in schemas if f.startswith("http-")):
        conv.root(file)
    conv.union("ServerMessage", "Any message a gateway sends over the WebSocket.", out_files)
    conv.union("ClientMessage", "Any message a client sends over the WebSocket.", in_files)
    return _ordered(conv.named)


def _ordered(named: dict[str, Named]) -> list[Named]:
    done: list[Named] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for dep in sorted(named[name].deps):
            visit(dep)
        done.append(named[name])

    for name in sorted(named):
        visit(name)
    return done


HEADER = "generated by `dudo schemas write` from protocol/schemas: do not edit"


def _py_type(t: Type) -> str:
    if isinstance(t, Prim):
        return {"null": "None", "any": "Any", "map": "dict[str, Any]"}.get(t.name, t.name)
    if isinstance(t, Lit):
        return f"Literal[{', '.join(_py_literal(v) for v in t.values)}]"
    if isinstance(t, Seq):  # a tuple on the wire is a JSON array: a list once decoded
        return f"list[{_py_type(t.item)}]"
    if isinstance(t, Union):
        return " | ".join(_py_type(m) for m in t.members)
    return t.name


def _py_literal(value: Any) -> str:
    return '"' + value + '"' if isinstance(value, str) else repr(value)


def _py_doc(doc: str, indent: str) -> list[str]:
    doc = doc.replace("\\", "\\\\").replace('"""', "'''")
    if not doc:
        return []
    if len(indent) + len(doc) + 6 <= 96:
        return [f'{indent}"""{doc}"""']
    wrapped = textwrap.wrap(doc, 92 - len(indent))
    return [f'{indent}"""{wrapped[0]}', *(indent + line for line in wrapped[1:]), f'{indent}"""']


def _wrap(doc: str) -> list[str]:
    return textwrap.wrap(doc, 90) if doc else []


# Codes only a client library raises: the caller closed the connection itself.
LIBRARY_CODES = ("closed",)


def error_codes() -> list[str]:
    """Every code an ``error`` may carry (docs/protocol.md, "Errors"), then the libraries'."""
    from ..engine import RULE_ERROR_CODES
    from .errors import PROTOCOL_ERROR_CODES

    return sorted(RULE_ERROR_CODES) + sorted(PROTOCOL_ERROR_CODES) + list(LIBRARY_CODES)


def python_module(types: list[Named], codes: list[str]) -> str:
    """``messages.py`` for the Python package."""
    lines = [
        "\"\"\"The client protocol's messages as types.",
        "",
        f"{HEADER[0].upper()}{HEADER[1:]}.",
        "Each is a ``TypedDict``: a message is the dict decoded from the gateway's JSON, and a",
        "type checker (mypy, pyright) knows its keys. ``NotRequired`` keys may be absent.",
        '"""',
        "",
        "from enum import StrEnum",
        "from typing import Any, Literal, NotRequired, TypedDict",
        "",
        "",
        "class ErrorCode(StrEnum):",
        '    """Every ``code`` a refusal may carry (docs/protocol.md, "Errors"); ``closed`` is',
        "    the library's own (you closed the connection). A newer server may send a code not",
        '    listed here: compare ``DudoError.code`` (a str) with these, never convert it."""',
        "",
        *(f'    {code.upper()} = "{code}"' for code in codes),
    ]
    for named in types:
        lines.append("")
        if named.props is None:
            assert named.alias is not None
            text = f"{named.name} = {_py_type(named.alias)}"
            if len(text) > 96 and isinstance(named.alias, Union):  # one member a line
                members = [f"    | {_py_type(m)}" for m in named.alias.members]
                text = "\n".join([f"{named.name} = (", "    " + members[0][6:], *members[1:], ")"])
            lines.append(text)
            lines.extend(_py_doc(named.doc, ""))
            continue
        lines.append("")
        fields = [
            (p.key, _py_type(p.type) if p.required else f"NotRequired[{_py_type(p.type)}]", p.doc)
            for p in named.props
        ]
        if any(keyword.iskeyword(key) for key, _, _ in fields):  # `from`: the call form
            lines.append(f'{named.name} = TypedDict("{named.name}", {{')
            for key, text, doc in fields:
                lines.extend(f"    # {line}" for line in _wrap(doc))
                lines.append(f'    "{key}": {text},')
            lines.append("})")
            lines.extend(_py_doc(named.doc, ""))
            continue
        lines.append(f"class {named.name}(TypedDict):")
        lines.extend(_py_doc(named.doc, "    ") or ['    """(no description)"""'])
        for key, text, doc in fields:
            lines.append(f"    {key}: {text}")
            lines.extend(_py_doc(doc, "    "))
    lines.append("")
    text = "\n".join(lines)
    typed = [named.alias for named in types if named.alias is not None]
    typed += [prop.type for named in types for prop in named.props or ()]
    if not any(re.search(r"\bAny\b", _py_type(t)) for t in typed):  # nothing typed Any
        text = text.replace("import Any, Literal", "import Literal", 1)
    return text


def _ts_type(t: Type) -> str:
    if isinstance(t, Prim):
        return {
            "int": "number",
            "float": "number",
            "str": "string",
            "bool": "boolean",
            "null": "null",
            "any": "unknown",
            "map": "Record<string, unknown>",
        }[t.name]
    if isinstance(t, Lit):
        return " | ".join(_ts_literal(v) for v in t.values)
    if isinstance(t, Seq):
        if t.tuple_items is not None:
            return "[" + ", ".join(_ts_type(i) for i in t.tuple_items) + "]"
        inner = _ts_type(t.item)
        return f"Array<{inner}>" if " " in inner else f"{inner}[]"
    if isinstance(t, Union):
        return " | ".join(_ts_type(m) for m in t.members)
    return t.name


def _ts_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return '"' + value + '"' if isinstance(value, str) else str(value)


def _ts_doc(doc: str, indent: str) -> list[str]:
    doc = doc.replace("*/", "* /")
    if not doc:
        return []
    if len(indent) + len(doc) + 7 <= 96:
        return [f"{indent}/** {doc} */"]
    wrapped = textwrap.wrap(doc, 92 - len(indent))
    return [f"{indent}/**", *(f"{indent} * {line}" for line in wrapped), f"{indent} */"]


def typescript_module(types: list[Named], codes: list[str]) -> str:
    """``messages.d.ts`` for the npm package."""
    lines = [
        f"// The client protocol's messages as types ({HEADER}).",
        "",
        "/**",
        ' * Every `code` a refusal may carry (docs/protocol.md, "Errors"); `closed` is the',
        " * library's own (you closed the connection). A newer server may send one not listed.",
        " */",
        "export type ErrorCode =",
        *(f'  | "{code}"' + (";" if i == len(codes) - 1 else "") for i, code in enumerate(codes)),
        "",
    ]
    for named in types:
        lines.extend(_ts_doc(named.doc, ""))
        if named.props is None:
            assert named.alias is not None
            lines.append(f"export type {named.name} = {_ts_type(named.alias)};")
        else:
            lines.append(f"export interface {named.name} {{")
            for prop in named.props:
                lines.extend(_ts_doc(prop.doc, "  "))
                optional = "" if prop.required else "?"
                lines.append(f"  {prop.key}{optional}: {_ts_type(prop.type)};")
            lines.append("}")
        lines.append("")
    return "\n".join(lines)


def sync_typings(schemas_folder: Path, *, write: bool) -> list[str]:
    """Write the client packages' type files from the schema files in ``schemas_folder``
    (``protocol/schemas``: the packages sit beside it), or (``write`` False) list those
    that are missing or stale."""
    schemas = {
        path.name: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(schemas_folder.glob("*.schema.json"))
    }
    types, codes = client_types(schemas), error_codes()
    protocol = schemas_folder.parent
    stale = []
    for path, text in (
        (protocol / "python" / "dudo_client" / "messages.py", python_module(types, codes)),
        (protocol / "js" / "messages.d.ts", typescript_module(types, codes)),
    ):
        if write:
            path.write_text(text, encoding="utf-8")
        elif not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(str(path))
    return stale
