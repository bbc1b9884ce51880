"""Checking a decoded message against its declaration, field by field: the reference
validator, which gives every refusal its code (the fast path, :mod:`.fast`, answers the
same)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..engine import BAD_ACTION, RuleError, Rules, RulesConfigError, action_from_dict
from .errors import BAD_MESSAGE, BAD_RULES, UNSUPPORTED_VERSION, WireError
from .fields import ID_RE, MESSAGE_ID_RE, Field, Message
from .names import is_clean_name
from .spec import MESSAGES, PROTOCOL_VERSION

# -- validation -----------------------------------------------------------------

_PY_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
}


Checker = Callable[[Any], None]


def compile_checker(spec: Field, path: str) -> Checker:
    """A function that checks one value against ``spec`` (raising WireError), built once.

    Everything that does not depend on the value (messages, patterns, limits)
    is worked out here, and each field gets one closure doing all its checks,
    so checking a message costs about one call per field: every worker and
    gateway decodes each entry through this.
    """
    nullable = spec.nullable
    null_error = f"{path} may not be null"
    type_error = f"{path} must be {spec.kind}"
    kind = spec.kind
    if kind == "ref":

        def check_ref(value: Any) -> None:
            if value is None:
                if nullable:
                    return
                raise WireError(BAD_MESSAGE, null_error)
            _check_ref(value, spec, path)

        return check_ref
    if kind == "string":
        top = spec.maximum
        length_error = f"{path} must be 1..{top} characters"
        allowed = frozenset(spec.enum) if spec.enum is not None else None
        enum_error = f"{path} must be one of {', '.join(spec.enum or ())}"
        # fullmatch: `$` alone would accept a final newline ("abc\n").
        match = re.compile(spec.pattern).fullmatch if spec.pattern is not None else None
        if spec.display:
            match = is_clean_name
        pattern_error = f"{path} has characters not allowed"

        def check_string(value: Any) -> None:
            if value is None:
                if nullable:
                    return
                raise WireError(BAD_MESSAGE, null_error)
            if not isinstance(value, str):
                raise WireError(BAD_MESSAGE, type_error)
            if top is not None and not 1 <= len(value) <= top:
                raise WireError(BAD_MESSAGE, length_error)
            if allowed is not None and value not in allowed:
                raise WireError(BAD_MESSAGE, enum_error)
            if match is not None and not match(value):
                raise WireError(BAD_MESSAGE, pattern_error)

        return check_string
    if kind == "integer":
        low = spec.minimum if spec.minimum is not None else -(2**63)
        high = spec.maximum if spec.maximum is not None else 2**63
        range_error = f"{path} must be {low}..{high}"

        def check_integer(value: Any) -> None:
            if value is None:
                if nullable:
                    return
                raise WireError(BAD_MESSAGE, null_error)
            if not isinstance(value, int) or isinstance(value, bool):
                raise WireError(BAD_MESSAGE, type_error)
            if not low <= value <= high:
                raise WireError(BAD_MESSAGE, range_error)

        return check_integer
    if kind == "array":
        low = spec.minimum or 0
        high = spec.maximum if spec.maximum is not None else 1 << 30
        size_error = f"{path} must have {low}..{high} items"
        item = compile_checker(spec.items, f"{path}[]") if spec.items is not None else None
        positions = [
            compile_checker(at, f"{path}[{i}]") for i, at in enumerate(spec.prefix or ())
        ]

        def check_array(value: Any) -> None:
            if value is None:
                if nullable:
                    return
                raise WireError(BAD_MESSAGE, null_error)
            if not isinstance(value, list):
                raise WireError(BAD_MESSAGE, type_error)
            if not low <= len(value) <= high:
                raise WireError(BAD_MESSAGE, size_error)
            for check_position, element in zip(positions, value, strict=False):
                check_position(element)
            if item is not None:
                for element in value:
                    item(element)

        return check_array
    expected = _PY_TYPES[kind]
    fields = _compile_fields(spec.fields, path) if spec.fields is not None else None

    def check_other(value: Any) -> None:  # boolean, object
        if value is None:
            if nullable:
                return
            raise WireError(BAD_MESSAGE, null_error)
        if not isinstance(value, expected):
            raise WireError(BAD_MESSAGE, type_error)
        if fields is not None:
            fields(value)

    return check_other


def _compile_fields(
    specs: dict[str, Field], path: str, *, envelope: tuple[str, ...] = ()
) -> Checker:
    """Check an object's fields; ``envelope`` names keys checked elsewhere (``v``, ``type``)."""
    checkers = {key: compile_checker(spec, f"{path}.{key}") for key, spec in specs.items()}
    checkers.update(dict.fromkeys(envelope, _accept))
    required = [(key, f"{path}.{key} is missing") for key, spec in specs.items() if spec.required]

    def check(value: dict[str, Any]) -> None:
        for key, item in value.items():
            checker = checkers.get(key)
            if checker is None:
                raise WireError(BAD_MESSAGE, f"{path}.{key} is not a field of this message")
            checker(item)
        for key, error in required:
            if key not in value:
                raise WireError(BAD_MESSAGE, error)

    return check


def _accept(value: Any) -> None:
    return None


def _check_ref(value: Any, spec: Field, path: str) -> None:
    """Hand-written schemas are checked by the code that owns their meaning."""
    if spec.ref == "rules.schema.json":
        try:
            Rules.from_dict(value)
        except RulesConfigError as exc:
            raise WireError(BAD_RULES, str(exc)) from exc
    elif spec.ref == "action.schema.json":
        # A malformed action is `bad_action`, as the engine and docs/rules.md say (the
        # rest of a malformed message is `bad_message`): one code for one fault.
        try:
            action_from_dict(value)
        except RuleError as exc:
            raise WireError(exc.code, f"{path}: {exc.message}") from exc
        if any(isinstance(v, int) and not -(2**63) <= v < 2**63 for v in value.values()):
            raise WireError(BAD_ACTION, f"{path}: integers must fit in 64 bits")
    elif not isinstance(value, dict):
        raise WireError(BAD_MESSAGE, f"{path} must be object")


def validator(messages: dict[str, Message]) -> Callable[[Any], dict[str, Any]]:
    """A function that checks a decoded message against its declaration in ``messages``
    and returns it unchanged, or raises :class:`WireError` (with the routable fields)."""
    checks = {
        kind: _compile_fields(spec.fields, kind, envelope=("v", "type"))
        for kind, spec in messages.items()
    }

    def validate(message: Any) -> dict[str, Any]:
        if not isinstance(message, dict):
            raise WireError(BAD_MESSAGE, "a message must be a map")
        try:
            version = message.get("v")
            if version != PROTOCOL_VERSION or isinstance(version, bool):  # True == 1
                raise WireError(
                    UNSUPPORTED_VERSION, f"v must be {PROTOCOL_VERSION}, got {version!r}"
                )
            kind = message.get("type")
            check = checks.get(kind) if isinstance(kind, str) else None
            if check is None:
                raise WireError(BAD_MESSAGE, f"unknown message type {kind!r}")
            check(message)
        except Exception as exc:
            # Every malformed value is a typed error, whatever check it broke:
            # an entry must never take down the process that reads it.
            error = (
                exc
                if isinstance(exc, WireError)
                else WireError(BAD_MESSAGE, f"malformed message ({exc.__class__.__name__})")
            )
            error.known = {
                k: message[k]
                for k in ("id", "table", "gateway", "player", "seat")
                if k in message and plausible(k, message[k])
            }
            if error is exc:
                raise
            raise error from exc
        return message

    return validate


validate = validator(MESSAGES)



def plausible(key: str, value: Any) -> bool:
    """Is a field of a refused message safe to echo back (and to route the error by)?"""
    if key == "seat":
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 5
    pattern = MESSAGE_ID_RE if key == "id" else ID_RE
    return isinstance(value, str) and re.fullmatch(pattern, value) is not None
