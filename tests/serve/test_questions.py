"""Interrupt values as MCP questions, and answers as the resume value the run gets."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest

from langgraph_mcp.serve import ANSWER_FIELD
from langgraph_mcp.serve._questions import Unanswered, questions_for, resume_value


def _accept(content: dict[str, Any] | None = None) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


def test_this_packages_elicitation_payload_is_asked_as_it_is() -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    value = {
        "type": "mcp_elicitation",
        "requests": [
            {"key": "confirm#1", "mode": "form", "message": "Sure?", "requested_schema": schema},
            {"key": "login#2", "mode": "url", "message": "Sign in", "url": "https://auth.example.com/x"},
        ],
    }
    form, url = questions_for("interrupt-id-0123456789", value)
    assert isinstance(form.params, types.ElicitRequestFormParams) and form.params.requested_schema == schema
    assert isinstance(url.params, types.ElicitRequestURLParams)
    assert (url.params.url, url.params.elicitation_id) == ("https://auth.example.com/x", "login#2")
    assert form.key != url.key and form.key.endswith("/confirm#1")
    answers = {form.key: _accept({"ok": True}), url.key: types.ElicitResult(action="decline")}
    assert resume_value(value, [form, url], answers) == {
        "responses": {
            "confirm#1": {"action": "accept", "content": {"ok": True}},
            "login#2": {"action": "decline"},
        }
    }


def _approval(key: str, allowed: list[str]) -> dict[str, Any]:
    return {
        "type": "tool_approval",
        "name": "rm",
        "args": {"path": "/tmp/x"},
        "key": key,
        "allowed_decisions": allowed,
    }


def test_a_batch_of_approvals_is_one_form_per_call_answered_by_key() -> None:
    value = {
        "type": "tool_approvals",
        "key": "turn",
        "approvals": [_approval("a", ["approve", "reject"]), _approval("b", ["approve", "respond"])],
    }
    first, second = questions_for("i", value)
    assert first.params.requested_schema["properties"]["decision"]["enum"] == ["approve", "reject"]  # type: ignore[union-attr]
    assert "args" not in first.params.requested_schema["properties"]  # type: ignore[union-attr]
    answers = {
        first.key: types.ElicitResult(action="decline"),
        second.key: _accept({"decision": "respond", "message": "done already"}),
    }
    assert resume_value(value, [first, second], answers) == {
        "responses": {
            "a": {"type": "reject", "message": "declined"},
            "b": {"type": "respond", "message": "done already"},
        }
    }


@pytest.mark.parametrize(
    ("value", "message", "answer", "resumed"),
    [
        ("Your name?", "Your name?", "Ada", "Ada"),
        ({"question": "How many?"}, "How many?", "3", 3),
        ({"k": [1, 2]}, '{"k": [1, 2]}', '{"pick": 2}', {"pick": 2}),
    ],
)
def test_any_other_value_is_one_text_field_parsed_as_json_when_it_is(
    value: Any, message: str, answer: str, resumed: Any
) -> None:
    [question] = questions_for("i", value)
    assert question.params.message == message
    assert list(question.params.requested_schema["properties"]) == [ANSWER_FIELD]  # type: ignore[union-attr]
    assert resume_value(value, [question], {question.key: _accept({ANSWER_FIELD: answer})}) == resumed


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_plain_question_declined_or_cancelled_does_not_resume(action: str) -> None:
    [question] = questions_for("i", "Go on?")
    with pytest.raises(Unanswered):
        resume_value("Go on?", [question], {question.key: types.ElicitResult(action=action)})  # type: ignore[arg-type]
