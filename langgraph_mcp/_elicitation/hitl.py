"""A server's questions as a human-in-the-loop request, and HITL decisions as their answers.

A UI written for langchain's ``HumanInTheLoopMiddleware`` (Agent Chat UI) shows an interrupt
that has ``action_requests`` and ``review_configs`` as a form with Approve, Edit and Reject, and
resumes with ``{"decisions": [...]}``, one decision per action request. The elicitation payload
carries those fields as well as its own (one action request per question, in order), and such a
resume value is read as ``{"responses": ...}``: ``approve`` accepts a form as shown (its
defaults) and a URL request as visited, ``edit`` accepts the edited fields (text typed as the
schema says, :mod:`langgraph_mcp._support.coerce`), ``reject`` declines. A decision carries no question
key: it is bound to its question by its position, and the list to the interrupt it was sent for
(a plain resume value is taken only by the interrupt pending when it was sent). A list of another
length, or a decision a question does not allow, is refused and the question stays pending.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph_mcp._compat.langgraph import shown_question
from langgraph_mcp._elicitation.refusals import AnswerRefused, field_label, field_problem, noun, what_to_enter
from langgraph_mcp._support.coerce import coerce_edited
from langgraph_mcp.types import (
    MCPElicitationActionRequest,
    MCPElicitationRequest,
    MCPElicitationReviewConfig,
)

__all__ = [
    "action_names",
    "bind",
    "bound_to",
    "decisions_as_responses",
    "decisions_schema",
    "hitl_fields",
    "keyed_elsewhere",
    "shown_here",
]


MAX_NAME_MESSAGE = 60
"""The most characters of a question's message its action request's ``name`` shows."""


def _short(message: str) -> str:
    text = " ".join(message.split())
    if len(text) <= MAX_NAME_MESSAGE:
        return text
    cut = text[:MAX_NAME_MESSAGE].rsplit(" ", 1)[0] or text[:MAX_NAME_MESSAGE]
    return cut.rstrip(" ,;:.") + "..."


def action_names(tool_name: str, requests: Sequence[MCPElicitationRequest], step: int = 1) -> list[str]:
    """The action request name of each question, what a UI shows as the form's title: the tool's
    name, ``(step N)`` from the call's second question on, ``(link)`` for a URL request, then the
    question's message (shortened); ``#2``, ``#3``... added when a name would repeat (a UI finds a
    question's review config by its name)."""
    names: list[str] = []
    for request in requests:
        label = tool_name + (f" (step {step})" if step > 1 else "")
        label += "" if request["mode"] == "form" else " (link)"
        short = _short(request["message"])
        base = f"{label}: {short}" if short else label
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base} #{n}"
        names.append(name)
    return names


def _former_names(tool_name: str, requests: Sequence[MCPElicitationRequest]) -> list[str]:
    """The names earlier releases gave (the tool's name only): an edit stored with one still
    answers its question."""
    names: list[str] = []
    for request in requests:
        base = tool_name if request["mode"] == "form" else f"{tool_name} (link)"
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base} #{n}"
        names.append(name)
    return names


def _described(request: MCPElicitationRequest) -> str:
    """The question as a person reads it behind the form: its message, then a URL request's link or
    a form's fields, each with what to enter."""
    if request["mode"] == "url":
        return f"{request['message']}\n\nLink: {request['url']}"
    schema = request["requested_schema"]
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return request["message"]
    listed = schema.get("required")
    required = listed if isinstance(listed, list) else []
    lines = []
    for name, prop in properties.items():
        prop = prop if isinstance(prop, Mapping) else {}
        need = "required" if name in required else "optional"
        lines.append(f"- {field_label(str(name), prop)} ({need}): {what_to_enter(prop)}")
    return request["message"] + "\n\n" + "\n".join(lines)


def _fields(request: MCPElicitationRequest) -> dict[str, Any]:
    if request["mode"] != "form":
        return {}
    properties = request["requested_schema"].get("properties")
    if not isinstance(properties, Mapping):
        return {}
    return {
        str(name): prop["default"] if isinstance(prop, Mapping) and "default" in prop else ""
        for name, prop in properties.items()
    }


def _allowed(request: MCPElicitationRequest) -> list[str]:
    return ["approve", "edit", "reject"] if _fields(request) else ["approve", "reject"]


def hitl_fields(
    tool_name: str, requests: Sequence[MCPElicitationRequest], step: int = 1
) -> tuple[list[MCPElicitationActionRequest], list[MCPElicitationReviewConfig]]:
    """``action_requests`` and ``review_configs`` for the payload that asks ``requests``, the
    call's ``step``-th question."""
    actions: list[MCPElicitationActionRequest] = []
    configs: list[MCPElicitationReviewConfig] = []
    for name, request in zip(action_names(tool_name, requests, step), requests, strict=True):
        actions.append({"name": name, "args": _fields(request), "description": _described(request)})
        config: MCPElicitationReviewConfig = {"action_name": name, "allowed_decisions": _allowed(request)}
        if request["mode"] == "form":
            config["args_schema"] = request["requested_schema"]
        configs.append(config)
    return actions, configs


def _content(request: MCPElicitationRequest, args: Mapping[str, Any]) -> dict[str, Any]:
    """A form's fields as its answer's content, typed as its schema says. A field still empty
    (``""``, as shown for a field without a default) is left out: a UI cannot leave a field out,
    and a required one is then refused as missing rather than answered with nothing."""
    if request["mode"] != "form":
        return {}
    schema = request["requested_schema"]
    placeholders = {k for k, v in _fields(request).items() if v == ""}
    given = {k: v for k, v in args.items() if not (v == "" and k in placeholders)}
    try:
        return coerce_edited(given, schema)
    except ValueError as exc:
        detail = str(exc)
    # Which fields did not read as their type: said to the person, field by field.
    problems = []
    for name, value in given.items():
        try:
            coerce_edited({name: value}, schema)
        except ValueError:
            shown = json.dumps(value if len(str(value)) <= 40 else str(value)[:40] + "...")
            problem = field_problem(schema, str(name), "")
            prop = (schema.get("properties") or {}).get(name)
            wanted = noun(prop.get("type")) if isinstance(prop, Mapping) else "a value of this field"
            problem["reason"] = f"{shown} is not {wanted}"
            problems.append(problem)
    raise AnswerRefused(problems, detail) if problems else ValueError(detail)


def decisions_as_responses(
    tool_name: str, requests: Sequence[MCPElicitationRequest], decisions: Any, step: int = 1
) -> dict[str, Any]:
    """``{"responses": ...}`` for a ``{"decisions": [...]}`` resume value (still to be checked
    against each question's schema).

    Raises:
        ValueError: saying what is wrong (the question then stays pending).
    """
    if not isinstance(decisions, list):
        raise ValueError("'decisions' must be a list of decisions, one per question")
    if len(decisions) != len(requests):
        raise ValueError(
            f"{len(decisions)} decision(s) for {len(requests)} question(s): give one per action "
            "request, in order"
        )
    responses: dict[str, Any] = {}
    former = _former_names(tool_name, requests)
    for index, (name, request, decision) in enumerate(
        zip(action_names(tool_name, requests, step), requests, decisions, strict=True), start=1
    ):
        where = f"decision {index} ({name!r})"
        if not isinstance(decision, Mapping) or not isinstance(decision.get("type"), str):
            raise ValueError(f"{where} must be an object with a 'type'")
        kind, allowed = decision["type"], _allowed(request)
        if kind not in allowed:
            raise ValueError(f"{where}: {kind!r} is not allowed; allowed: {allowed}")
        if kind == "reject":
            responses[request["key"]] = {"action": "decline"}
            continue
        if kind == "approve":
            args: Mapping[str, Any] = _fields(request)
        else:
            action = decision.get("edited_action")
            if not isinstance(action, Mapping) or not isinstance(action.get("args"), Mapping):
                raise ValueError(f"{where}: an 'edit' needs 'edited_action': {{'args': {{...}}}}")
            if action.get("name", name) not in (name, former[index - 1]):
                raise ValueError(f"{where}: the edit names {action.get('name')!r}, not this question")
            args = action["args"]
        try:
            content = _content(request, args)
        except AnswerRefused:
            raise  # worded for the person already
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        responses[request["key"]] = (
            {"action": "accept", "content": content} if request["mode"] == "form" else {"action": "accept"}
        )
    return {"responses": responses}


def decisions_schema(
    tool_name: str, requests: Sequence[MCPElicitationRequest], step: int = 1
) -> dict[str, Any]:
    """The JSON Schema of a ``{"decisions": [...]}`` answer to ``requests``."""
    items = []
    for name, request in zip(action_names(tool_name, requests, step), requests, strict=True):
        decision: dict[str, Any] = {
            "type": "object",
            "properties": {"type": {"enum": _allowed(request)}, "message": {"type": "string"}},
            "required": ["type"],
        }
        if request["mode"] == "form":
            decision["properties"]["edited_action"] = {
                "type": "object",
                "properties": {"name": {"const": name}, "args": {"type": "object"}},
                "required": ["args"],
            }
        items.append(decision)
    return {
        "type": "object",
        "properties": {
            "decisions": {
                "type": "array",
                "prefixItems": items,
                "minItems": len(items),
                "maxItems": len(items),
            }
        },
        "required": ["decisions"],
    }


# -- which question a list of decisions answers -----------------------------------------------


def shown_here(keys: set[str]) -> bool:
    """Was the interrupt being answered pending, showing exactly these questions?"""
    shown = shown_question()
    if not isinstance(shown, Mapping) or not isinstance(shown.get("requests"), list):
        return False
    return {r.get("key") for r in shown["requests"] if isinstance(r, Mapping)} == keys


def bound_to(decisions: Any, requests: list[MCPElicitationRequest]) -> bool:
    """Does each decision carry the key of its question, in order (see :func:`bind`)?"""
    return (
        isinstance(decisions, list)
        and len(decisions) == len(requests)
        and all(
            isinstance(d, Mapping) and d.get("key") == r["key"]
            for d, r in zip(decisions, requests, strict=True)
        )
    )


def bind(decisions: list[Any], requests: list[MCPElicitationRequest]) -> None:
    """Write each question's key into its decision, in the resume value itself: LangGraph stores
    that object as this interrupt's answer, so a replay of it (the call re-issued in a later step
    or another process) is checked against the question it was given for, like a keyed answer."""
    for decision, request in zip(decisions, requests, strict=True):
        if isinstance(decision, dict):
            decision["key"] = request["key"]


def keyed_elsewhere(decisions: Any, keys: set[str]) -> bool:
    """Does a decision in the list name another question's ``key`` (a tool approval's)? Such a
    list was given for another question."""
    return isinstance(decisions, list) and any(
        isinstance(d, Mapping) and "key" in d and d["key"] not in keys for d in decisions[:256]
    )
