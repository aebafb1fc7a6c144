"""Refused answers worded for the person who gave them.

A person's answer to a form that does not fit its question (a number that is not one, a required
field left empty, a choice that is not offered) is refused with :class:`AnswerRefused`: its text
names each field by its title, says why, and what to enter; never a question key or a validator's
internals. Code finds the same in its ``problems``, and the developer's wording in ``detail``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsonschema

from langgraph_mcp._support.sanitise import sanitise_text
from langgraph_mcp.errors import MCPError

__all__ = ["AnswerRefused", "field_label", "field_problem", "noun", "problem_of", "what_to_enter"]


class AnswerRefused(MCPError, ValueError):
    """A person's answer to a form that does not fit it. Its text is for that person: which field
    (by its title), why, and what to enter; the question stays open.

    Attributes:
        problems: one per field, ``{"field": <property name>, "label": <title shown>, "reason",
            "hint"}``.
        detail: the same as a developer reads it (property paths, the schema's words).
    """

    def __init__(self, problems: list[dict[str, str]], detail: str) -> None:
        self.problems, self.detail = problems, detail
        lines = [f"{p['label']}: {p['reason']}; {p['hint']}." for p in problems]
        super().__init__("Your answer was not accepted and the question is still open. " + " ".join(lines))

    def __reduce__(self) -> tuple[Any, ...]:  # pickled as it was made (a checkpoint's error write)
        return (type(self), (self.problems, self.detail))

    def errors(self) -> list[dict[str, Any]]:
        """The pydantic errors of the resume value it was refused for (its ``__cause__``, a
        ``pydantic.ValidationError``, when LangGraph checked it), else its ``problems``."""
        cause = self.__cause__
        found = getattr(cause, "errors", None)
        return list(found()) if callable(found) else [dict(p) for p in self.problems]


_FORMATS = {
    "email": "an email address, like name@example.com",
    "uri": "a web address, like https://example.com",
    "date": "a date, like 2026-12-31",
    "date-time": "a date and time, like 2026-12-31T18:00:00Z",
}


def _shown_value(value: Any) -> str:
    """``value`` as the person typed it: text quoted, anything else as JSON; at most 40
    characters."""
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 40 else value[:40] + "...")
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:40] + "..."


def _choices(prop: Mapping[str, Any]) -> list[str]:
    if isinstance(prop.get("enum"), list):
        names = prop.get("enumNames")
        if isinstance(names, list) and len(names) == len(prop["enum"]):
            return [str(n) for n in names]
        return [str(v) for v in prop["enum"]]
    options = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(options, list):
        return [
            str(o.get("title", o.get("const"))) for o in options if isinstance(o, Mapping) and "const" in o
        ]
    items = prop.get("items")
    return _choices(items) if isinstance(items, Mapping) else []


_NOUNS = {"integer": "a whole number", "number": "a number", "boolean": "yes or no", "string": "text"}


def noun(kind: Any) -> str:
    """A JSON Schema ``type`` in words (``a whole number``)."""
    return _NOUNS.get(kind, "a value of this field") if isinstance(kind, str) else "a value of this field"


def what_to_enter(prop: Mapping[str, Any]) -> str:
    """What a field takes, in words (``a whole number from 1 to 10``, ``one of: Red, Green``)."""
    if choices := _choices(prop):
        return f"choose {'any' if prop.get('type') == 'array' else 'one'} of: {', '.join(choices)}"
    kind = prop.get("type")
    if kind in ("integer", "number"):
        wanted = noun(kind)
        low = prop.get("minimum", prop.get("exclusiveMinimum"))
        high = prop.get("maximum", prop.get("exclusiveMaximum"))
        if low is not None and high is not None:
            return f"enter {wanted} from {low} to {high}"
        if low is not None:
            return f"enter {wanted} of at least {low}"
        if high is not None:
            return f"enter {wanted} of at most {high}"
        return f"enter {wanted}"
    if kind == "boolean":
        return "answer yes (true) or no (false)"
    if isinstance(prop.get("format"), str) and prop["format"] in _FORMATS:
        return f"enter {_FORMATS[prop['format']]}"
    low, high = prop.get("minLength"), prop.get("maxLength")
    if low is not None and high is not None:
        return f"enter {low} to {high} characters"
    if low is not None:
        return f"enter at least {low} character{'s' if low != 1 else ''}"
    if high is not None:
        return f"enter at most {high} characters"
    return "enter some text"


def field_problem(schema: Mapping[str, Any], field: str, reason: str) -> dict[str, str]:
    """One problem of an answer, for :class:`AnswerRefused`: ``field`` labelled by its title in
    ``schema`` (the form's requested schema), with what it takes."""
    properties = schema.get("properties")
    prop = properties.get(field) if isinstance(properties, Mapping) else None
    prop = prop if isinstance(prop, Mapping) else {}
    return {"field": field, "label": field_label(field, prop), "reason": reason, "hint": what_to_enter(prop)}


def field_label(field: str, prop: Mapping[str, Any]) -> str:
    """What a person calls a form's field: its title, else its name."""
    title = prop.get("title")
    return sanitise_text(title, 80) if isinstance(title, str) and title.strip() else field


def problem_of(schema: Mapping[str, Any], error: jsonschema.ValidationError) -> dict[str, str]:
    """The problem one schema error of a form's answer is, for :class:`AnswerRefused`."""
    path = list(error.absolute_path)
    kind, value = error.validator, error.instance
    if not path and kind == "required":
        given = value if isinstance(value, Mapping) else {}
        required = error.validator_value if isinstance(error.validator_value, list) else []
        missing = [str(p) for p in required if p not in given]
        return field_problem(schema, missing[0] if missing else "", "this field is required")
    if not path and kind in ("additionalProperties", "unevaluatedProperties"):
        return {
            "field": "",
            "label": "The form",
            "reason": "the answer has fields the form does not ask for",
            "hint": "answer only the form's fields",
        }
    field = str(path[0]) if path else ""
    if kind == "type":
        reason = f"{_shown_value(value)} is not {noun(error.validator_value)}"
    elif kind in ("enum", "const", "oneOf", "anyOf"):
        reason = f"{_shown_value(value)} is not one of the choices"
    elif kind in ("minimum", "exclusiveMinimum"):
        reason = f"{_shown_value(value)} is too small"
    elif kind in ("maximum", "exclusiveMaximum"):
        reason = f"{_shown_value(value)} is too large"
    elif kind == "minLength":
        reason = "this field is required" if value == "" else "the text is too short"
    elif kind == "maxLength":
        reason = "the text is too long"
    elif kind == "format":
        reason = (
            f"{_shown_value(value)} is not {_FORMATS.get(str(error.validator_value), 'valid').split(',')[0]}"
        )
    elif kind == "pattern":
        reason = f"{_shown_value(value)} is not in the form this field takes"
    else:
        reason = f"{_shown_value(value)} is not accepted"
    return field_problem(schema, field, reason)
