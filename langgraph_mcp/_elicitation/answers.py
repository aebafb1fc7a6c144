"""Questions as interrupt payloads, and answers checked against them.

Each request in an interrupt payload has a ``key`` that names *that question*: the server's own
key (or ``elicitation`` for a 2025-11-25 request, the elicitation id for a URL the server
requires) followed by ``#`` and a digest of the call (server, tool, tool-call id) and the
question (mode, message, schema, URL). When a re-issued or replayed call asks something else,
its keys differ, and an answer given for the old question is recognised as such
(:data:`STALE`) instead of being applied to the new one.

An accepted form is checked against its ``requested_schema`` (omitted fields take the schema's
defaults) before it reaches the server; a resume value that does not fit fails the resume with a
``pydantic.ValidationError`` and the interrupt stays pending.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Annotated, Any

import jsonschema
import mcp_types as types
from pydantic import AfterValidator, WithJsonSchema
from referencing.exceptions import Unresolvable

from langgraph_mcp._patterns import UnsafePattern, regex_budget, safe_validator_class
from langgraph_mcp._schema import REGISTRY
from langgraph_mcp.types import MCPElicitationRequest, MCPElicitationUrlRequest

__all__ = [
    "STALE",
    "question_key",
    "call_scope",
    "check_response",
    "elicitation_request",
    "is_stale",
    "resume_type",
    "sampling_key",
    "sampling_resume_type",
]

STALE: dict[str, Any] = {"stale": "an answer to another question"}
"""What an interrupt returns for a stored answer whose keys belong to a different question."""

_QUESTION_KEY = re.compile(r"#[0-9a-f]{8}$")


def call_scope(server: str, tool_name: str | None, tool_call_id: str | None) -> str:
    """Identity of one call, mixed into its question keys."""
    return json.dumps([server, tool_name, tool_call_id])


def _key(base: str, scope: str, question: Mapping[str, Any]) -> str:
    text = json.dumps([scope, question], sort_keys=True, default=str)
    return f"{base}#{hashlib.sha256(text.encode()).hexdigest()[:8]}"


question_key = _key
"""``<base>#<digest of the call scope and the question>``: the key of one question."""


def elicitation_request(
    base: str, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams, *, scope: str
) -> MCPElicitationRequest:
    """The payload entry for one question, keyed ``<base>#<digest of call and question>``."""
    if isinstance(params, types.ElicitRequestURLParams):
        url: MCPElicitationUrlRequest = {
            "key": "",
            "mode": "url",
            "message": params.message,
            "url": params.url,
        }
        if params.elicitation_id:
            url["elicitation_id"] = params.elicitation_id
        url["key"] = _key(base, scope, {k: v for k, v in url.items() if k != "key"})
        return url
    schema = params.requested_schema
    requested = (
        schema
        if isinstance(schema, dict)
        else schema.model_dump(mode="json", by_alias=True, exclude_none=True)
    )
    question = {"mode": "form", "message": params.message, "requested_schema": requested}
    return {
        "key": _key(base, scope, question),
        "mode": "form",
        "message": params.message,
        "requested_schema": requested,
    }


def is_stale(value: Any) -> bool:
    """Did an interrupt return an answer given for another question?"""
    return value is STALE or (isinstance(value, Mapping) and value.get("stale") == STALE["stale"])


def check_response(request: MCPElicitationRequest, response: Any) -> types.ElicitResult:
    """Validate one response to ``request``; fill schema defaults into accepted forms.

    Raises:
        ValueError: saying what is wrong.
    """
    key = request["key"]
    if not isinstance(response, Mapping):
        raise ValueError(f"response for {key!r} must be an object with an 'action'")
    action = response.get("action")
    if action in ("decline", "cancel"):
        return types.ElicitResult(action=action)
    if action != "accept":
        raise ValueError(
            f"response for {key!r}: 'action' must be 'accept', 'decline' or 'cancel', got {action!r}"
        )
    content = response.get("content")
    if request["mode"] == "url":
        if content not in (None, {}):
            raise ValueError(f"response for {key!r}: a URL request takes no content")
        return types.ElicitResult(action="accept")
    if content is None:
        content = {}
    if not isinstance(content, Mapping):
        raise ValueError(f"response for {key!r}: content must be an object")
    schema = request["requested_schema"]
    filled = dict(content)
    for name, prop in (schema.get("properties") or {}).items():
        if name not in filled and isinstance(prop, Mapping) and "default" in prop:
            filled[name] = prop["default"]
    try:
        # The server's schema may name other documents: they are never fetched (REGISTRY refuses).
        # Its patterns run on RE2, in linear time and bounded work (_patterns.py).
        validator = safe_validator_class(jsonschema.Draft202012Validator)(schema, registry=REGISTRY)
        with regex_budget():
            errors = sorted(validator.iter_errors(filled), key=lambda e: list(e.absolute_path))
    except (Unresolvable, UnsafePattern) as exc:
        raise ValueError(f"response for {key!r}: the requested schema cannot be used: {exc}") from None
    if errors:
        details = "; ".join(
            f"{'.'.join(map(str, e.absolute_path)) or '<content>'}: {e.message}" for e in errors
        )
        raise ValueError(f"response for {key!r} does not match the requested schema: {details}")
    return types.ElicitResult(action="accept", content=filled)


def _resume_schema(requests: list[MCPElicitationRequest]) -> dict[str, Any]:
    def one(request: MCPElicitationRequest) -> dict[str, Any]:
        accept_schema: dict[str, Any] = {
            "properties": {"action": {"const": "accept"}},
            "required": ["action"],
        }
        if request["mode"] == "form":
            accept_schema["properties"]["content"] = request["requested_schema"]
        return {
            "oneOf": [
                {"type": "object", **accept_schema},
                {
                    "type": "object",
                    "properties": {"action": {"enum": ["decline", "cancel"]}},
                    "required": ["action"],
                },
            ]
        }

    return {
        "type": "object",
        "properties": {
            "responses": {
                "type": "object",
                "properties": {r["key"]: one(r) for r in requests},
                "required": [r["key"] for r in requests],
            }
        },
        "required": ["responses"],
    }


def resume_type(requests: list[MCPElicitationRequest]) -> Any:
    """A type for ``interrupt(response_schema=...)``: LangGraph validates the resume value with
    it before anything is saved (an invalid answer leaves the interrupt pending), and again when
    a stored answer is replayed: an answer whose keys all belong to another question then comes
    back as :data:`STALE`."""
    keys = {r["key"] for r in requests}

    def validate(value: Any) -> dict[str, Any]:
        if (
            isinstance(value, Mapping)
            and "responses" not in value
            and ("action" in value or "type" in value or "decisions" in value)
        ):
            return STALE  # a sampling or approval decision, stored for a question no longer asked here
        if not isinstance(value, Mapping) or not isinstance(value.get("responses"), Mapping):
            raise ValueError('the resume value must be {"responses": {<request key>: <response>}}')
        responses = value["responses"]
        if any(_QUESTION_KEY.search(str(k)) and k not in keys for k in responses):
            return STALE  # given for another question
        unknown = sorted(set(responses) - keys)
        if unknown:
            raise ValueError(f"no request has the key(s) {', '.join(map(repr, unknown))}")
        missing = [r["key"] for r in requests if r["key"] not in responses]
        if missing:
            raise ValueError(f"no response for {', '.join(map(repr, missing))}")
        checked = {r["key"]: check_response(r, responses[r["key"]]) for r in requests}
        return {"responses": {k: v.model_dump(mode="json", exclude_none=True) for k, v in checked.items()}}

    return Annotated[dict[str, Any], AfterValidator(validate), WithJsonSchema(_resume_schema(requests))]


def sampling_key(params: types.CreateMessageRequestParams, *, scope: str) -> str:
    """The key naming one sampling request of a call (``sampling#<digest>``)."""
    return _key("sampling", scope, params.model_dump(mode="json", by_alias=True, exclude_none=True))


def sampling_resume_type(key: str, has_model: bool) -> Any:
    """A type for the ``mcp_sampling`` approval interrupt's resume value. A stored value that
    answered something else (an elicitation, or another sampling request when it names its
    ``key``) comes back as :data:`STALE`."""

    def validate(value: Any) -> dict[str, Any]:
        if isinstance(value, Mapping) and (
            "responses" in value
            or ("type" in value and "action" not in value)
            or "decisions" in value
            or ("key" in value and value["key"] != key and _QUESTION_KEY.search(str(value["key"])))
        ):
            return STALE
        if not isinstance(value, Mapping) or value.get("action") not in ("accept", "decline"):
            raise ValueError("the resume value must be {'action': 'accept' | 'decline', 'content'?: str}")
        content = value.get("content")
        if value["action"] == "accept" and content is None and not has_model:
            raise ValueError("no sampling_model is configured: accept with 'content' (the answer text)")
        if content is not None and not isinstance(content, str):
            raise ValueError("'content' must be the answer text")
        return dict(value)

    schema = {
        "type": "object",
        "properties": {
            "action": {"enum": ["accept", "decline"]},
            "content": {"type": "string"},
            "key": {"const": key},
        },
        "required": ["action"],
    }
    return Annotated[dict[str, Any], AfterValidator(validate), WithJsonSchema(schema)]
