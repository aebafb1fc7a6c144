"""An ``interrupt()`` of a served run as MCP questions, and the client's answers as its resume value.

Each pending interrupt becomes one or more questions (``elicitation/create`` params), keyed so the
answers can be matched to them whatever era asked them:

* this package's own payloads map exactly:
  - ``mcp_elicitation`` (:class:`~langgraph_mcp.types.MCPElicitationInterrupt`): each request is
    asked as it is (form or URL); the resume value is ``{"responses": {<key>: <answer>}}``;
  - ``tool_approval`` (:class:`~langgraph_mcp.types.MCPApprovalInterrupt`) and each call of
    ``tool_approvals``: a form with ``decision`` (one of the allowed decisions), ``message`` and,
    when editing is allowed, ``args`` (the edited arguments as a JSON object); the resume value is
    the decision (``{"responses": {<key>: <decision>}}`` for a batch); a declined form rejects;
* any other value is asked as a form with one string field, ``answer``, whose message is the
  value (its JSON when it is not a string, or its ``question``/``message`` field). The answer is
  parsed as JSON when it is JSON, kept as text otherwise, and resumes the run as it is.

A cancelled answer, or a declined answer to a question that has no "no" of its own (the last
kind), does not resume the run: the call ends with an error (:class:`Unanswered`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from langgraph_mcp.errors import MCPError
from langgraph_mcp.types import ELICITATION_INTERRUPT_TYPE
from langgraph_mcp.types._approval import APPROVAL_INTERRUPT_TYPE, APPROVALS_INTERRUPT_TYPE

__all__ = ["ANSWER_FIELD", "Question", "Unanswered", "questions_for", "resume_value"]

ANSWER_FIELD = "answer"
"""The one field of the form that asks any other interrupt value."""
_MESSAGE_MAX = 4000


class Unanswered(MCPError):
    """The client cancelled a question (or declined one that cannot be declined); caught by the
    server, which ends the call with an error result."""


@dataclass(frozen=True)
class Question:
    """One question of an interrupt: ``key`` (unique in the run's pending questions) and the
    ``elicitation/create`` params that ask it."""

    key: str
    interrupt_id: str
    params: types.ElicitRequestFormParams | types.ElicitRequestURLParams

    def request(self) -> types.ElicitRequest:
        return types.ElicitRequest(params=self.params)


def _form(message: str, schema: dict[str, Any]) -> types.ElicitRequestFormParams:
    return types.ElicitRequestFormParams.model_validate(
        {"mode": "form", "message": message[:_MESSAGE_MAX], "requestedSchema": schema}
    )


def _approval_form(approval: Mapping[str, Any]) -> types.ElicitRequestFormParams:
    allowed = [str(d) for d in approval.get("allowed_decisions") or ["approve", "reject"]]
    properties: dict[str, Any] = {
        "decision": {"type": "string", "title": "Decision", "enum": allowed},
        "message": {
            "type": "string",
            "title": "Message",
            "description": "A reason (reject) or the result (respond).",
        },
    }
    if "edit" in allowed:
        properties["args"] = {
            "type": "string",
            "title": "Arguments",
            "description": "With edit: the arguments to run the call with, as a JSON object.",
            "default": json.dumps(approval.get("args") or {}),
        }
    args = json.dumps(approval.get("args") or {}, ensure_ascii=False)
    message = f"Approve the call {approval.get('name')}({args})? {approval.get('description') or ''}".strip()
    return _form(message, {"type": "object", "properties": properties, "required": ["decision"]})


def _generic_message(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for field in ("question", "message", "prompt"):
            if isinstance(value.get(field), str):
                return str(value[field])
    return json.dumps(value, ensure_ascii=False, default=str)


def questions_for(interrupt_id: str, value: Any) -> list[Question]:
    """The questions that ask one interrupt's ``value`` (see the module docstring)."""
    prefix = interrupt_id[:16]
    kind = value.get("type") if isinstance(value, Mapping) else None
    if kind == ELICITATION_INTERRUPT_TYPE and isinstance(value.get("requests"), list):
        asked: list[Question] = []
        for request in value["requests"]:
            key = f"{prefix}/{request['key']}"
            if request.get("mode") == "url":
                params: Any = types.ElicitRequestURLParams(
                    message=str(request.get("message", ""))[:_MESSAGE_MAX],
                    url=str(request["url"]),
                    elicitation_id=str(request.get("elicitation_id") or request["key"]),
                )
            else:
                params = _form(str(request.get("message", "")), dict(request["requested_schema"]))
            asked.append(Question(key, interrupt_id, params))
        return asked
    if kind == APPROVAL_INTERRUPT_TYPE:
        return [Question(f"{prefix}/{value.get('key', 'approval')}", interrupt_id, _approval_form(value))]
    if kind == APPROVALS_INTERRUPT_TYPE and isinstance(value.get("approvals"), list):
        return [
            Question(f"{prefix}/{approval.get('key', i)}", interrupt_id, _approval_form(approval))
            for i, approval in enumerate(value["approvals"])
        ]
    schema = {
        "type": "object",
        "properties": {ANSWER_FIELD: {"type": "string", "title": "Answer", "description": "Text, or JSON."}},
        "required": [ANSWER_FIELD],
    }
    return [Question(f"{prefix}/{ANSWER_FIELD}", interrupt_id, _form(_generic_message(value), schema))]


def _decision(answer: types.ElicitResult) -> dict[str, Any]:
    if answer.action == "decline":
        return {"type": "reject", "message": "declined"}
    content = answer.content or {}
    decision: dict[str, Any] = {"type": str(content.get("decision", "approve"))}
    message = content.get("message")
    if decision["type"] in ("reject", "respond") and isinstance(message, str) and message:
        decision["message"] = message
    if decision["type"] == "edit":
        try:
            args = json.loads(str(content.get("args") or "{}"))
        except ValueError as exc:
            raise Unanswered(f"the edited arguments are not JSON: {exc}") from None
        decision["edited_action"] = {"args": args if isinstance(args, dict) else {}}
    return decision


def resume_value(value: Any, asked: Sequence[Question], answers: Mapping[str, types.ElicitResult]) -> Any:
    """The resume value of the interrupt ``value`` from the ``answers`` to its questions ``asked``
    (every key answered). Raises :class:`Unanswered` on a cancel, or a decline of a plain question."""
    for question in asked:
        if answers[question.key].action == "cancel":
            raise Unanswered("The question was cancelled; the run was not resumed.")
    kind = value.get("type") if isinstance(value, Mapping) else None

    def own_key(question: Question) -> str:
        return question.key.split("/", 1)[1]

    if kind == ELICITATION_INTERRUPT_TYPE:
        responses = {}
        for question in asked:
            answer = answers[question.key]
            entry: dict[str, Any] = {"action": answer.action}
            if answer.action == "accept" and answer.content is not None:
                entry["content"] = dict(answer.content)
            responses[own_key(question)] = entry
        return {"responses": responses}
    if kind == APPROVAL_INTERRUPT_TYPE:
        return _decision(answers[asked[0].key])
    if kind == APPROVALS_INTERRUPT_TYPE:
        return {"responses": {own_key(q): _decision(answers[q.key]) for q in asked}}
    answer = answers[asked[0].key]
    if answer.action != "accept":
        raise Unanswered("The question was declined; the run was not resumed.")
    text = str((answer.content or {}).get(ANSWER_FIELD, ""))
    try:
        return json.loads(text)
    except ValueError:
        return text
