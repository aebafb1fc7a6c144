"""Schemas that are surely valid JSON schemas, told without the metaschema.

Checking a tool's ``inputSchema`` against the draft 2020-12 metaschema takes milliseconds (its
``$dynamicRef`` chains are followed for every keyword): most of the time a listing of many tools
takes. Most schemas servers send use a handful of keywords whose rules are simple. For those,
:func:`surely_valid` says *valid* after a walk of the schema; for anything else (another keyword,
a ``pattern``, a ``$ref``, a value of another kind, more than ``MAX_DEPTH`` levels) it says
nothing and the metaschema decides. It never says valid where the metaschema would not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "surely_valid"]

MAX_DEPTH = 16
"""Deeper schemas are left to the metaschema."""

_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_TEXT = frozenset({"title", "description", "$comment", "format"})
_ANY = frozenset({"default", "const"})  # any JSON value
_FLAGS = frozenset({"readOnly", "writeOnly", "deprecated", "uniqueItems"})
_COUNTS = frozenset(
    {"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains"}
)
_NUMBERS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_SCHEMAS = frozenset({"items", "additionalProperties", "not", "contains", "propertyNames"})
_KNOWN = (
    _TEXT
    | _ANY
    | _FLAGS
    | _COUNTS
    | _NUMBERS
    | _SCHEMAS
    | {
        "type",
        "properties",
        "required",
        "enum",
        "examples",
        "multipleOf",
        "anyOf",
        "oneOf",
        "allOf",
    }
)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _unique_strings(value: Any, allowed: frozenset[str] | None = None) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(v, str) and (allowed is None or v in allowed) for v in value)
        and len(set(value)) == len(value)
    )


def surely_valid(schema: Any, depth: int = 0) -> bool:
    """Is ``schema`` surely a valid draft 2020-12 schema? ``False`` means *not told here*."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
        return False
    for key, value in schema.items():
        if key not in _KNOWN:
            return False
        if key == "type":
            if not (isinstance(value, str) and value in _TYPES) and not (
                _unique_strings(value, _TYPES) and value
            ):
                return False
        elif key in _TEXT:
            if not isinstance(value, str):
                return False
        elif key in _FLAGS:
            if not isinstance(value, bool):
                return False
        elif key in _COUNTS:
            if not _count(value):
                return False
        elif key in _NUMBERS:
            if not _number(value):
                return False
        elif key == "multipleOf":
            if not (_number(value) and value > 0):
                return False
        elif key in ("enum", "examples"):
            if not isinstance(value, list):
                return False
        elif key == "required":
            if not _unique_strings(value):
                return False
        elif key == "properties":
            if not (
                isinstance(value, Mapping)
                and all(isinstance(k, str) and surely_valid(v, depth + 1) for k, v in value.items())
            ):
                return False
        elif key in _SCHEMAS:
            if not surely_valid(value, depth + 1):
                return False
        elif key in ("anyOf", "oneOf", "allOf") and not (
            isinstance(value, list) and value and all(surely_valid(v, depth + 1) for v in value)
        ):
            return False
    return True
