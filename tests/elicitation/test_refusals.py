"""A form answer refused in the words of the person who gave it (``_elicitation.refusals``):
each field by its title, why, and what to enter; never a question key or a validator's words."""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_mcp._elicitation.answers import check_response
from langgraph_mcp._elicitation.refusals import AnswerRefused

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 8},
        "code": {"type": "string", "title": "Booking code", "pattern": "^[A-Z]{3}[0-9]{3}$"},
        "note": {"type": "string", "maxLength": 5},
        "agree": {"type": "boolean", "title": "I agree"},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
    },
    "required": ["guests", "agree"],
}
KEY = "booking#0a1b2c3d"


def refused(content: dict[str, Any]) -> AnswerRefused:
    request: Any = {"key": KEY, "mode": "form", "message": "Book?", "requested_schema": SCHEMA}
    with pytest.raises(AnswerRefused) as info:
        check_response(request, {"action": "accept", "content": content})
    assert KEY not in str(info.value) and "required property" not in str(info.value)
    assert KEY in info.value.detail  # the developer's wording keeps the key
    return info.value


def test_each_kind_of_misfit_is_said_with_what_to_enter() -> None:
    said = {
        p["field"]: f"{p['label']}: {p['reason']}; {p['hint']}."
        for p in refused(
            {"guests": 0, "code": "abc", "note": "too long", "agree": "yes", "size": "m"}
        ).problems
    }
    assert said == {
        "guests": "Guests: 0 is too small; enter a whole number from 1 to 8.",
        "code": 'Booking code: "abc" is not in the form this field takes; enter some text.',
        "note": "note: the text is too long; enter at most 5 characters.",
        "agree": 'I agree: "yes" is not yes or no; answer yes (true) or no (false).',
        "size": 'size: "m" is not one of the choices; choose one of: Small, Large.',
    }
    missing = refused({"guests": 2})
    assert str(missing) == (
        "Your answer was not accepted and the question is still open. "
        "I agree: this field is required; answer yes (true) or no (false)."
    )
