"""Does a JSON value fit a generated ``TypedDict`` (dudo_client.messages)? A checker of
its own for the tests: msgspec cannot check a union of several TypedDicts (the events,
the actions), and the point is to read the types exactly as a type checker would."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, NotRequired, Union, get_args, get_origin, get_type_hints


def problems(value: Any, tp: Any, where: str = "$") -> list[str]:
    """Where ``value`` does not fit ``tp`` (empty: it fits)."""
    origin = get_origin(tp)
    if tp is Any:
        return []
    if origin is NotRequired:
        return problems(value, get_args(tp)[0], where)
    if typing.is_typeddict(tp):
        return _typeddict(value, tp, where)
    if origin is Literal:
        fits = any(value == a and type(value) is type(a) for a in get_args(tp))
        return [] if fits else [f"{where}: {value!r} is none of {get_args(tp)}"]
    if origin in (Union, types.UnionType):
        found = [problems(value, member, where) for member in get_args(tp)]
        if any(not p for p in found):
            return []
        return [f"{where}: fits no member of {tp}: " + "; ".join(p[0] for p in found)]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {value!r} is not a list"]
        (item,) = get_args(tp)
        return [p for i, v in enumerate(value) for p in problems(v, item, f"{where}[{i}]")]
    if origin is dict:
        return [] if isinstance(value, dict) else [f"{where}: {value!r} is not an object"]
    if tp is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not a number"]
    if tp in (int, str, bool):
        ok = isinstance(value, tp) and (tp is bool or not isinstance(value, bool))
        return [] if ok else [f"{where}: {value!r} is not {tp.__name__}"]
    raise TypeError(f"the checker does not know {tp!r}")


def _typeddict(value: Any, tp: Any, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: {value!r} is not an object ({tp.__name__})"]
    hints = get_type_hints(tp, include_extras=True)
    found = [f"{where}: {tp.__name__} lacks {k!r}" for k in tp.__required_keys__ - set(value)]
    found += [f"{where}: {tp.__name__} has no key {k!r}" for k in set(value) - set(hints)]
    for key in set(value) & set(hints):
        found += problems(value[key], hints[key], f"{where}.{key}")
    return found
