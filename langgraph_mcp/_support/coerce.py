"""Edited values typed as text, turned into the types their schema asks for.

A review form (Agent Chat UI's among them) sends every value a person edited as a string:
``{"a": "5"}`` for a number field. Before edited arguments (an approval's ``edit``) or edited
form content (an elicitation answered through a HITL decision) are checked against their
schema, each top-level string value whose property the schema types as something else is
converted: ``number``, ``integer``, ``boolean`` (``"true"``/``"false"``), ``null`` (``"null"``),
and ``object``/``array`` (JSON text). A value is converted only when the property allows no
string at all, so a valid string is never changed; anything else is left to the schema check
that follows. Text that does not read as the type is a :class:`ValueError` naming the field.

Every conversion is bounded: numbers at :data:`MAX_NUMBER_TEXT` characters, JSON text at
:data:`MAX_JSON_TEXT` characters and :data:`MAX_JSON_DEPTH` levels of nesting.

A number that is not finite (``NaN``, ``Infinity``, ``1e999``) is refused at any depth, in
JSON text and in values given already typed alike: JSON has no such number, so the server would
get ``null`` while the model was told the call ran with it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "MAX_JSON_TEXT", "MAX_NUMBER_TEXT", "coerce_edited", "json_depth"]

MAX_NUMBER_TEXT = 100
"""The most characters an edited number may have."""
MAX_JSON_TEXT = 65_536
"""The most characters of JSON text an edited object or array may have."""
MAX_JSON_DEPTH = 64
"""The deepest nesting of objects and arrays an edited JSON value may have."""

_TYPES = ("null", "boolean", "integer", "number", "object", "array")


def _types_of(schema: Any, depth: int = 0) -> set[str] | None:
    """The JSON types ``schema`` allows, or ``None`` when that cannot be told (no ``type``, a
    ``$ref``): then nothing is converted."""
    if not isinstance(schema, Mapping) or depth > 8:
        return None
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        return set(kind)
    for combinator in ("anyOf", "oneOf"):
        options = schema.get(combinator)
        if isinstance(options, list) and options:
            found: set[str] = set()
            for option in options[:32]:
                types = _types_of(option, depth + 1)
                if types is None:
                    return None
                found |= types
            return found
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema.get("enum")
        if isinstance(values, list) and not any(isinstance(v, str) for v in values):
            return {_json_type(v) for v in values}
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "string"


def json_depth(value: Any) -> int:
    """How deep ``value`` (parsed JSON) nests (a scalar: 0); past :data:`MAX_JSON_DEPTH` it
    stops counting and says a depth over it. Iterative: no recursion limit to hit."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if deepest > MAX_JSON_DEPTH:
                return deepest
            pending.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _non_finite(name: str, value: Any) -> str | None:
    """Where in ``value`` (named ``name``) the first number that is not finite is, or ``None``."""
    pending: list[tuple[str, Any]] = [(name, value)]
    while pending:
        where, item = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{where}: {item!r} is not a finite number"
        if isinstance(item, Mapping):
            pending.extend((f"{where}.{k}", v) for k, v in reversed(list(item.items())))
        elif isinstance(item, list | tuple):
            pending.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return None


def _number(text: str, integer: bool) -> int | float | None:
    text = text.strip()
    if not text or len(text) > MAX_NUMBER_TEXT:
        return None
    try:
        if integer and text.lstrip("+-").isdigit():
            return int(text)
        number = float(text)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    if integer:
        return int(number) if number.is_integer() else None
    return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number


def _convert(name: str, text: str, types: set[str]) -> Any:
    """``text`` as the first type of ``types`` it reads as.

    Raises:
        ValueError: it reads as none of them.
    """
    stripped = text.strip()
    if "null" in types and stripped == "null":
        return None
    if "boolean" in types and stripped.lower() in ("true", "false"):
        return stripped.lower() == "true"
    if "integer" in types and (value := _number(stripped, integer=True)) is not None:
        return value
    if "number" in types and (value := _number(stripped, integer=False)) is not None:
        return value
    containers = types & {"object", "array"}
    if containers and stripped[:1] in ("{", "["):
        if len(stripped) > MAX_JSON_TEXT:
            raise ValueError(f"{name}: the JSON text is over {MAX_JSON_TEXT:,} characters")
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            value = None
        else:
            if json_depth(value) > MAX_JSON_DEPTH:
                raise ValueError(f"{name}: the JSON value is nested over {MAX_JSON_DEPTH} levels deep")
            if _json_type(value) in containers:
                return value
    wanted = " or ".join(
        f"{t} (as JSON text)" if t in ("object", "array") else t for t in _TYPES if t in types
    )
    shown = text if len(text) <= 40 else text[:40] + "..."
    raise ValueError(f"{name}: {shown!r} is not a valid {wanted}")


def coerce_edited(values: Mapping[str, Any], schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """``values`` with each string whose property in ``schema`` (an object schema) allows only
    non-string types converted to that type (see the module docstring).

    Raises:
        ValueError: a value that cannot be converted, naming its field and the type wanted; or a
            number that is not finite anywhere in the values, naming where.
    """
    result = dict(values)
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    problems: list[str] = []
    if isinstance(properties, Mapping):
        for name, value in values.items():
            if not isinstance(value, str):
                continue
            types = _types_of(properties.get(name))
            if not types or "string" in types or not types & set(_TYPES):
                continue
            try:
                result[name] = _convert(str(name), value, types)
            except ValueError as exc:
                problems.append(str(exc))
    for name, value in result.items():
        if (problem := _non_finite(str(name), value)) is not None:
            problems.append(problem)
    if problems:
        raise ValueError("; ".join(problems))
    return result
