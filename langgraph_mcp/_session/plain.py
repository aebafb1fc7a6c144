"""A JSON schema of the plainest shape, checked without a validator.

Most tools' ``inputSchema`` and ``outputSchema`` are an object whose properties each have a
scalar ``type`` (and a title and description), with ``required`` names. For these,
:func:`plain_check` gives a check that says *surely valid* in a few dictionary lookups; any
other verdict (an error, or a case it does not decide, such as ``1.0`` for an integer) is left to
the JSON-schema validator, which words it. It never says valid where the validator would not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["plain_check"]

_PLAIN_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}
"""Python types that surely fit a JSON-schema type (``bool`` is checked apart: never a number)."""
_ANNOTATIONS = frozenset({"title", "description"})


def _plain_fit(schema: Mapping[str, Any]) -> dict[str, tuple[type, ...]] | None:
    """For a schema of the plainest shape (an object whose properties each have only a scalar
    ``type``, a title and a description; ``required`` names; ``additionalProperties`` a bool),
    its properties' Python types; ``None`` for any other schema (checked by the validator)."""
    if schema.get("type") != "object" or not set(schema) <= {
        "type",
        "properties",
        "required",
        "additionalProperties",
        *_ANNOTATIONS,
    }:
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not (
        isinstance(properties, dict)
        and isinstance(required, list)
        and all(isinstance(r, str) for r in required)
        and isinstance(schema.get("additionalProperties", True), bool)
        and all(isinstance(schema.get(a, ""), str) for a in _ANNOTATIONS)
    ):
        return None
    fit: dict[str, tuple[type, ...]] = {}
    for name, spec in properties.items():
        if not (
            isinstance(spec, dict)
            and set(spec) <= {"type", *_ANNOTATIONS}
            and isinstance(spec.get("type"), str)
            and spec["type"] in _PLAIN_TYPES
            and all(isinstance(spec.get(a, ""), str) for a in _ANNOTATIONS)
        ):
            return None
        fit[name] = _PLAIN_TYPES[spec["type"]]
    return fit


class _PlainCheck:
    """Says surely valid for arguments that fit a plain schema (:func:`_plain_fit`); anything
    else (an error, or a case it does not decide) is left to the validator, which words it."""

    __slots__ = ("closed", "fit", "required")

    def __init__(self, schema: Mapping[str, Any], fit: dict[str, tuple[type, ...]]) -> None:
        self.fit = fit
        self.required = tuple(schema.get("required", ()))
        self.closed = schema.get("additionalProperties", True) is False

    def __call__(self, arguments: Any) -> bool:
        if type(arguments) is not dict:
            return False
        for name in self.required:
            if name not in arguments:
                return False
        fit = self.fit
        for name, value in arguments.items():
            types = fit.get(name)
            if types is None:
                if self.closed:
                    return False
                continue
            if type(value) is bool:
                if types[0] is not bool:
                    return False
            elif not isinstance(value, types) or (types[0] is bool):
                return False
        return True


def plain_check(schema: object) -> Callable[[Any], bool] | None:
    """A check that is ``True`` only for a value that surely fits ``schema``; ``None`` when the
    schema is not of the plainest shape."""
    if not isinstance(schema, Mapping):
        return None
    fit = _plain_fit(schema)
    return _PlainCheck(schema, fit) if fit is not None else None
