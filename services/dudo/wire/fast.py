"""The fast path of validation: each declaration as a msgspec Struct, decoded in C."""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

import msgspec

from ..engine import ACTION_FIELDS
from .checks import Checker, compile_checker, validate
from .fields import Field, Message
from .names import CLEAN_ASCII, NAME_MAX, is_clean_name
from .packing import DECODER
from .spec import MESSAGES, PROTOCOL_VERSION

# -- the fast path: msgspec's typed decoding, in C ------------------------------
#
# Checking a message field by field in Python costs many times what decoding it does
# (docs/benchmarks.md, "Measurements behind the code"), and every worker and
# gateway checks every message. So each declaration is also turned into a msgspec
# Struct that accepts exactly what its checker accepts; a message the Struct
# decoder accepts needs only the checks msgspec cannot express (rules, actions,
# display names: "residual", and display names, wherever they sit, by
# `_display_names`), run on the plainly decoded message. Anything the
# fast path does not accept goes through the checker above, which gives the error.
# tests/wire/test_fuzz.py holds the two to the same answers.


def _fast_type(spec: Field, name: str, clean_ascii: bool = False) -> Any:
    """The msgspec type that accepts exactly what ``spec``'s checker accepts, or None
    when some of that check is ours alone (refs, anything under them). A display name
    is typed as a string of its length here and whether it is clean asked after
    (:func:`_display_names`), so an object holding one is still decoded in C; or,
    with ``clean_ascii``, as a clean name of plain ASCII (a pattern msgspec checks),
    which is all that is left to ask (the names most messages carry)."""
    kind = spec.kind
    if kind == "ref" and spec.ref == "action.schema.json":
        return _FAST_ACTION | None if spec.nullable else _FAST_ACTION
    if kind == "ref":
        return None
    if kind == "string":
        base: Any = _fast_string(spec, clean_ascii)
    elif kind == "integer":
        low = spec.minimum if spec.minimum is not None else -(2**63)
        high = spec.maximum if spec.maximum is not None else 2**63 - 1  # msgspec: int64
        base = Annotated[int, msgspec.Meta(ge=low, le=high)]
    elif kind == "boolean":
        base = bool
    elif kind == "array":
        base = _fast_array(spec, name, clean_ascii)
        if base is None:
            return None
    elif kind == "object":
        if spec.fields is None:
            base = dict
        else:
            base = _fast_struct(spec.fields, name, tag=None, clean_ascii=clean_ascii)
            if base is None:
                return None
    else:
        return None
    return base | None if spec.nullable else base


def _fast_string(spec: Field, clean_ascii: bool) -> Any:
    """A string field's type: its choices, or its length and pattern (see
    :func:`_fast_type` for display names)."""
    if spec.enum is not None:
        return Literal[tuple(spec.enum)]  # type: ignore[valid-type]
    meta: dict[str, Any] = {}
    if spec.maximum is not None:
        meta.update(min_length=1, max_length=spec.maximum)
    if spec.display and clean_ascii:
        meta.update(min_length=1, max_length=min(spec.maximum or NAME_MAX, NAME_MAX))
        meta["pattern"] = CLEAN_ASCII
    if spec.pattern is not None:
        # msgspec searches; the checker matches the whole string (`$` alone
        # would let a final newline through).
        meta["pattern"] = rf"\A(?:{spec.pattern})\Z"
    return Annotated[str, msgspec.Meta(**meta)] if meta else str


def _fast_array(spec: Field, name: str, clean_ascii: bool) -> Any:
    """An array field's type, or None where its items are ours alone to check."""
    if spec.prefix is not None:
        # Checked only: the message is then decoded plain (a list, not this tuple).
        positions = [_fast_type(p, name, clean_ascii) for p in spec.prefix]
        if None in positions or spec.items is not None:
            return None
        return tuple[tuple(positions)]  # type: ignore[misc]
    item = _fast_type(spec.items, name, clean_ascii) if spec.items is not None else Any
    if item is None:
        return None
    meta = {"min_length": spec.minimum or 0}
    if spec.maximum is not None:
        meta["max_length"] = spec.maximum
    return Annotated[list[item], msgspec.Meta(**meta)]  # type: ignore[valid-type]


# What action_from_dict accepts (and _check_ref's 64-bit bound): one Struct per kind.
_INT64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
_FAST_ACTION = Union[  # type: ignore[valid-type]  # noqa: UP007
    tuple(
        msgspec.defstruct(
            f"FastAction_{kind}",
            [(f, _INT64) for f in sorted(fields - {"type"})],
            tag_field="type",
            tag=kind,
            forbid_unknown_fields=True,
            kw_only=True,
        )
        for kind, fields in ACTION_FIELDS.items()
    )
]


def _fast_struct(
    specs: dict[str, Field],
    name: str,
    tag: str | None,
    residual: list[str] | None = None,
    clean_ascii: bool = False,
) -> Any:
    """A Struct for an object's fields (a message's when ``tag`` is its type), or None if
    a field cannot be expressed; for a message, such fields are typed Any instead, their
    keys added to ``residual``, and checked afterwards (:class:`FastValidator`)."""
    fields: list[Any] = []
    rename: dict[str, str] = {}
    for key, spec in specs.items():
        typed = _fast_type(spec, f"{name}_{key}", clean_ascii)
        if typed is None:
            if tag is None or residual is None:
                return None
            typed = Any
            residual.append(key)
        attr = key if key.isidentifier() and not keyword.iskeyword(key) else f"{key}_"
        if attr != key:
            rename[attr] = key
        if spec.required:
            fields.append((attr, typed))
        else:
            fields.append((attr, typed, msgspec.UNSET))
    if tag is not None:
        fields.append(("v", Literal[PROTOCOL_VERSION]))
    return msgspec.defstruct(
        f"FastAscii_{name}" if clean_ascii else f"Fast_{name}",
        fields,
        tag_field="type" if tag is not None else None,
        tag=tag if tag is not None else None,
        forbid_unknown_fields=True,
        rename=rename or None,
        kw_only=True,
    )


def _display_names(spec: Field) -> Callable[[Any], list[str]] | None:
    """A function listing every display name in a value of ``spec`` (one the fast
    decoder accepted, so of the declared shape), or None if it can hold none. Plain
    loops over lists: it runs for every entry holding names (a director: each report
    of a player moved)."""
    if spec.kind == "string" and spec.display:
        return lambda value: [value] if isinstance(value, str) else []
    if spec.kind == "array" and spec.items is not None:
        inner = _display_names(spec.items)
        if inner is None:
            return None
        return lambda value: [name for item in value or () for name in inner(item)]
    if spec.kind == "object" and spec.fields is not None:
        direct = [k for k, f in spec.fields.items() if f.kind == "string" and f.display]
        nested = [
            (k, walk)
            for k, f in spec.fields.items()
            if k not in direct and (walk := _display_names(f)) is not None
        ]
        if not direct and not nested:
            return None

        def names(value: Any) -> list[str]:
            if value is None:
                return []
            found = [value[k] for k in direct if isinstance(value.get(k), str)]
            for key, walk in nested:
                if key in value:
                    found.extend(walk(value[key]))
            return found

        return names
    return None


class FastValidator:
    """Decode and check messages of a set in one step: msgspec's typed decoders first,
    the field-by-field checker for what they refuse or cannot judge (same answers)."""

    def __init__(self, messages: dict[str, Message], check: Callable[[Any], dict[str, Any]]):
        self.check = check
        structs, ascii_structs = [], []
        self.residual: dict[str, list[tuple[str, Checker]]] = {}
        self.displays: dict[str, list[tuple[str, Callable[[Any], list[str]]]]] = {}
        for kind, spec in messages.items():
            residual: list[str] = []
            structs.append(_fast_struct(spec.fields, kind, tag=kind, residual=residual))
            ascii_structs.append(
                _fast_struct(spec.fields, kind, tag=kind, residual=[], clean_ascii=True)
            )
            self.residual[kind] = [
                (key, compile_checker(spec.fields[key], f"{kind}.{key}")) for key in residual
            ]
            self.displays[kind] = [
                (key, walk)
                for key, f in spec.fields.items()
                if key not in residual and (walk := _display_names(f)) is not None
            ]
        union = Union[tuple(structs)]  # type: ignore[valid-type]  # noqa: UP007
        clean = Union[tuple(ascii_structs)]  # type: ignore[valid-type]  # noqa: UP007
        self._msgpack = msgspec.msgpack.Decoder(union).decode
        self._msgpack_ascii = msgspec.msgpack.Decoder(clean).decode
        self._json = msgspec.json.Decoder(union).decode
        self._json_ascii = msgspec.json.Decoder(clean).decode
        self._plain_json = msgspec.json.Decoder().decode

    def msgpack(self, data: bytes) -> dict[str, Any]:
        """A msgpack message, checked (:class:`WireError` if it is not one of the set's)."""
        return self._decode(data, self._msgpack_ascii, self._msgpack, DECODER.decode)

    def json(self, data: bytes) -> dict[str, Any]:
        """A JSON message, checked; :class:`msgspec.DecodeError` if it is not JSON."""
        return self._decode(data, self._json_ascii, self._json, self._plain_json)

    def _decode(
        self,
        data: bytes,
        typed_ascii: Callable[[bytes], Any],
        typed: Callable[[bytes], Any],
        plain: Callable[[bytes], Any],
    ) -> dict[str, Any]:
        # Names in clean plain ASCII (nearly always): msgspec has checked everything but
        # the residual fields. Otherwise the names are asked about one by one.
        names_checked = True
        try:
            typed_ascii(data)
        except (msgspec.ValidationError, msgspec.DecodeError):
            names_checked = False
            try:
                typed(data)
            except (msgspec.ValidationError, msgspec.DecodeError):
                return self.check(plain(data))  # the checker says what is wrong (or raises)
        message = plain(data)
        for key, residual in self.residual[message["type"]]:
            if key in message:
                try:
                    residual(message[key])
                except Exception:
                    return self.check(message)  # the same error, with what could be read
        if names_checked:
            return message
        for key, names in self.displays[message["type"]]:
            if key in message and not all(is_clean_name(name) for name in names(message[key])):
                return self.check(message)
        return message


fast_check = FastValidator(MESSAGES, validate)
