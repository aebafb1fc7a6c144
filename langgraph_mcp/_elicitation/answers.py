"""Questions as interrupt payloads, and answers checked against them.

Each request in an interrupt payload has a ``key`` that names *that question*: the server's own
key (or ``elicitation`` for a 2025-11-25 request, the elicitation id for a URL the server
requires) followed by ``#`` and a digest of the call (server, tool, tool-call id) and the
question (mode, message, schema, URL). When a re-issued or replayed call asks something else,
its keys differ, and an answer given for the old question is recognised as such
(:data:`STALE`) instead of being applied to the new one.

An accepted form is checked against its ``requested_schema`` (omitted fields take the schema's
defaults) before it reaches the server; a resume value that does not fit fails the resume and the
interrupt stays pending. A form answer that does not fit is refused with :class:`AnswerRefused`,
worded for the person who typed it (each field by its title, why, and what to enter; never a
question key), with the same as data in ``problems`` for code.

What a person is shown is the server's text, so it is made fit to show first: the message, and
the titles, descriptions and ``enumNames`` of the requested schema, are sanitised like tool
descriptions (:func:`~langgraph_mcp._support.sanitise.sanitise_text`: no terminal escapes, control,
bidi or zero-width characters; the message at most :data:`MAX_MESSAGE` characters). A question is
refused (:class:`UnfitQuestion`) when its requested schema is over :data:`MAX_REQUESTED_SCHEMA`
characters of JSON, or when its URL is not one a person may be sent to (:func:`check_url`: ``https``
only, ``http`` to a loopback host when the server's ``elicitation_loopback_http`` allows it; never a
user name in it).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Annotated, Any

import jsonschema
import mcp_types as types
from pydantic import AfterValidator, WithJsonSchema
from referencing.exceptions import Unresolvable

from langgraph_mcp._compat.langgraph import shown_question
from langgraph_mcp._elicitation.hitl import (
    bind,
    bound_to,
    decisions_as_responses,
    decisions_schema,
    keyed_elsewhere,
    shown_here,
)
from langgraph_mcp._elicitation.refusals import AnswerRefused, problem_of
from langgraph_mcp._elicitation.urls import MAX_URL, UnfitQuestion, check_url
from langgraph_mcp._support.patterns import (
    PatternNotChecked,
    UnsafePattern,
    compile_pattern,
    is_compiled,
    regex_budget,
    safe_validator_class,
)
from langgraph_mcp._support.sanitise import MAX_DESCRIPTION, sanitise_text
from langgraph_mcp._support.schema import REGISTRY, model_schema
from langgraph_mcp.types import MCPElicitationRequest, MCPElicitationUrlRequest

__all__ = [
    "AnswerRefused",
    "MAX_MESSAGE",
    "MAX_PATTERNS",
    "MAX_REQUESTED_SCHEMA",
    "MAX_URL",
    "STALE",
    "UnfitQuestion",
    "check_url",
    "question_key",
    "call_scope",
    "check_response",
    "elicitation_request",
    "is_stale",
    "keyed_answer",
    "prepare",
    "resume_type",
    "sampling_key",
    "sampling_resume_type",
]

STALE: dict[str, Any] = {"stale": "an answer to another question"}
"""What an interrupt returns for a stored answer whose keys belong to a different question."""

MAX_PATTERNS = 64
"""The most patterns (``pattern``, ``patternProperties`` names) a requested schema may have; each
is compiled before the question is asked (:func:`prepare`)."""

_QUESTION_KEY = re.compile(r"#[0-9a-f]{8}$")

MAX_MESSAGE = MAX_DESCRIPTION
"""The most characters of a question's message a person is shown (a longer one is cut)."""
MAX_REQUESTED_SCHEMA = 65_536
"""The most characters of JSON a question's ``requested_schema`` may take (a larger one is
refused): it goes into the interrupt, the checkpoint and the person's form."""


def _shown_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the text a person reads in its form sanitised (titles, descriptions,
    ``enumNames``).

    Raises:
        UnfitQuestion: it is over :data:`MAX_REQUESTED_SCHEMA` characters of JSON.
    """
    size = len(json.dumps(schema, separators=(",", ":"), default=str))
    if size > MAX_REQUESTED_SCHEMA:
        raise UnfitQuestion(
            f"the requested schema is {size:,} characters of JSON, over the limit of {MAX_REQUESTED_SCHEMA:,}"
        )
    shown = model_schema(schema)
    properties = shown.get("properties")
    if isinstance(properties, dict):
        for name, prop in properties.items():
            if isinstance(prop, dict) and isinstance(prop.get("enumNames"), list):
                names = [sanitise_text(n) if isinstance(n, str) else n for n in prop["enumNames"]]
                properties[name] = {**prop, "enumNames": names}
    return shown


def call_scope(server: str, tool_name: str | None, tool_call_id: str | None) -> str:
    """Identity of one call, mixed into its question keys."""
    return json.dumps([server, tool_name, tool_call_id])


def _key(base: str, scope: str, question: Mapping[str, Any]) -> str:
    text = json.dumps([scope, question], sort_keys=True, default=str)
    return f"{base}#{hashlib.sha256(text.encode()).hexdigest()[:8]}"


question_key = _key
"""``<base>#<digest of the call scope and the question>``: the key of one question."""


def elicitation_request(
    base: str,
    params: types.ElicitRequestFormParams | types.ElicitRequestURLParams,
    *,
    scope: str,
    loopback_http: bool = False,
) -> MCPElicitationRequest:
    """The payload entry for one question, keyed ``<base>#<digest of call and question>``, with
    its text made fit to show a person (see the module docstring). The key is the digest of the
    question as the server asked it.

    Raises:
        UnfitQuestion: the question may not be shown (its URL, its schema's size).
    """
    message = sanitise_text(params.message, MAX_MESSAGE)
    if isinstance(params, types.ElicitRequestURLParams):
        check_url(params.url, loopback_http=loopback_http)
        asked: dict[str, Any] = {"mode": "url", "message": params.message, "url": params.url}
        url: MCPElicitationUrlRequest = {"key": "", "mode": "url", "message": message, "url": params.url}
        if params.elicitation_id:
            asked["elicitation_id"] = url["elicitation_id"] = params.elicitation_id
        url["key"] = _key(base, scope, asked)
        return url
    schema = params.requested_schema
    requested = (
        schema
        if isinstance(schema, dict)
        else schema.model_dump(mode="json", by_alias=True, exclude_none=True)
    )
    if len(_patterns_in(requested, limit=MAX_PATTERNS + 1)) > MAX_PATTERNS:
        raise UnfitQuestion(f"its requested schema has more than {MAX_PATTERNS} patterns")
    shown = _shown_schema(requested)
    question = {"mode": "form", "message": params.message, "requested_schema": requested}
    return {
        "key": _key(base, scope, question),
        "mode": "form",
        "message": message,
        "requested_schema": shown,
    }


def _patterns_in(schema: object, limit: int = 10_000) -> list[str]:
    """The ``pattern`` values and ``patternProperties`` names in ``schema`` (a JSON value), at
    most ``limit`` of them."""
    found: list[str] = []
    pending = [schema]
    while pending and len(found) < limit:
        value = pending.pop()
        if isinstance(value, dict):
            if isinstance(pattern := value.get("pattern"), str):
                found.append(pattern)
            if isinstance(named := value.get("patternProperties"), dict):
                found.extend(k for k in named if isinstance(k, str))
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return found[:limit]


async def _precompile(patterns: list[str]) -> None:
    """Compile those of ``patterns`` not compiled yet in a worker thread, one at a time, so that
    checks made later on the event loop find them compiled (compiling holds the GIL, but the
    event loop runs between two patterns)."""
    for pattern in patterns:
        if not is_compiled(pattern):
            await asyncio.to_thread(_compile_quietly, pattern)


def _compile_quietly(pattern: str) -> None:
    with contextlib.suppress(UnsafePattern):  # refused: said when it is used
        compile_pattern(pattern)


async def prepare(params: types.ElicitRequestFormParams | types.ElicitRequestURLParams) -> None:
    """Compile the patterns of a form question's requested schema off the event loop, before it
    is asked: its answer is checked on the event loop (:func:`check_response`)."""
    if isinstance(params, types.ElicitRequestFormParams):
        schema = params.requested_schema
        raw = schema if isinstance(schema, dict) else schema.model_dump(mode="json", by_alias=True)
        await _precompile(_patterns_in(raw, limit=MAX_PATTERNS))


def is_stale(value: Any) -> bool:
    """Did an interrupt return an answer given for another question?"""
    return value is STALE or (isinstance(value, Mapping) and value.get("stale") == STALE["stale"])


def keyed_answer(responses: Mapping[str, Any], key: str) -> Any:
    """The answer to the one question ``key`` in a ``{"responses": {<key>: <answer>}}`` resume
    value (an approval's or a sampling request's), or :data:`STALE` when it answers another
    question.

    Raises:
        ValueError: it answers no question at all, or more than this one.
    """
    if any(_QUESTION_KEY.search(str(k)) and k != key for k in responses):
        return STALE  # given for another question
    unknown = sorted(str(k) for k in responses if k != key)
    if unknown:
        raise ValueError(f"no question has the key(s) {', '.join(map(repr, unknown))}; this one is {key!r}")
    if key not in responses:
        raise ValueError(f"no response for {key!r}")
    return responses[key]


def check_response(request: MCPElicitationRequest, response: Any) -> types.ElicitResult:
    """Validate one response to ``request``; fill schema defaults into accepted forms.

    Raises:
        AnswerRefused: an accepted form's content does not fit its schema (a ``ValueError``).
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
        # Its patterns run on RE2, in linear time and bounded work (_support.patterns.safe_validator_class).
        validator = safe_validator_class(jsonschema.Draft202012Validator)(schema, registry=REGISTRY)
        with regex_budget():
            errors = sorted(validator.iter_errors(filled), key=lambda e: list(e.absolute_path))
    except PatternNotChecked as exc:  # refused: an answer that cannot be checked does not pass
        raise ValueError(
            f"response for {key!r} cannot be checked against the requested schema: {exc.message}"
        ) from None
    except (Unresolvable, UnsafePattern) as exc:
        raise ValueError(f"response for {key!r}: the requested schema cannot be used: {exc}") from None
    if errors:
        details = "; ".join(
            f"{'.'.join(map(str, e.absolute_path)) or '<content>'}: {e.message}" for e in errors
        )
        problems: list[dict[str, str]] = []
        for error in errors:
            problem = problem_of(schema, error)
            if problem["field"] not in {p["field"] for p in problems}:  # one problem per field
                problems.append(problem)
        raise AnswerRefused(problems, f"response for {key!r} does not match the requested schema: {details}")
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


def resume_type(requests: list[MCPElicitationRequest], tool_name: str | None = None, step: int = 1) -> Any:
    """A type for ``interrupt(response_schema=...)``: LangGraph validates the resume value with
    it before anything is saved (an invalid answer leaves the interrupt pending), and again when
    a stored answer is replayed: an answer whose keys all belong to another question then comes
    back as :data:`STALE`. With ``tool_name`` (the payload has HITL fields), ``{"decisions":
    [...]}`` answers too (:func:`~langgraph_mcp._elicitation.hitl.decisions_as_responses`)."""
    keys = {r["key"] for r in requests}

    def validate(value: Any) -> dict[str, Any]:
        if is_stale(value):
            # Marked as meant for another interrupt (a task wake-up's resume given at this
            # interrupt's place: LangGraph hands a task's later interrupts a resume sent for its
            # first): never an answer, wherever it lands.
            return STALE
        if not (isinstance(value, Mapping) and ("responses" in value or "decisions" in value)) and (
            not shown_here(keys)
        ):
            # Not an answer to questions, and not sent to these questions (a run parked on a task
            # was resumed with it, at this interrupt's place): ask them.
            return STALE
        if (
            tool_name is not None
            and isinstance(value, Mapping)
            and set(value) == {"decisions"}
            and not keyed_elsewhere(value["decisions"], keys)
        ):
            decisions = value["decisions"]
            bound = bound_to(decisions, requests)
            if not bound and not shown_here(keys):
                # Decisions name no question: taken only for the one the person was shown when
                # they sent them. Replayed later (the call re-issued, the server asking something
                # else), or sent when nothing was asked, they answer nothing: ask again.
                return STALE
            value = decisions_as_responses(tool_name, requests, decisions, step)
            if not bound:
                bind(decisions, requests)
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

    schema = _resume_schema(requests)
    if tool_name is not None:  # {"responses": ...} or {"decisions": [...]}
        decisions = decisions_schema(tool_name, requests, step)["properties"]["decisions"]
        schema["properties"]["decisions"] = decisions
        schema["oneOf"] = [{"required": [schema.pop("required")[0]]}, {"required": ["decisions"]}]
    return Annotated[Any, AfterValidator(validate), WithJsonSchema(schema)]


def sampling_key(params: types.CreateMessageRequestParams, *, scope: str) -> str:
    """The key naming one sampling request of a call (``sampling#<digest>``)."""
    return _key("sampling", scope, params.model_dump(mode="json", by_alias=True, exclude_none=True))


def sampling_resume_type(key: str, has_model: bool) -> Any:
    """A type for the ``mcp_sampling`` approval interrupt's resume value (an answer, or
    ``{"responses": {<key>: <answer>}}``). A stored value that
    answered something else (an elicitation, or another sampling request when it names its
    ``key``) comes back as :data:`STALE`."""

    def validate(value: Any) -> dict[str, Any]:
        if is_stale(value):
            return STALE  # marked as meant for another interrupt (see resume_type)
        shown = shown_question()
        if not isinstance(value, Mapping) and not (isinstance(shown, Mapping) and shown.get("key") == key):
            return STALE  # not an answer, and not sent to this request (a parked run's resume)
        if (
            isinstance(value, Mapping)
            and "responses" in value
            and not isinstance(value["responses"], Mapping)
        ):
            raise ValueError("'responses' must be an object of question keys to answers")
        if isinstance(value, Mapping) and isinstance(value.get("responses"), Mapping):
            value = keyed_answer(value["responses"], key)
            if is_stale(value):
                return STALE
        if isinstance(value, Mapping) and "key" in value and not isinstance(value["key"], str):
            raise ValueError("the answer's 'key' must be a string")
        if isinstance(value, Mapping) and (
            "responses" in value
            or ("type" in value and "action" not in value)
            or "decisions" in value
            or ("key" in value and value["key"] != key)  # given for another request
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

    answer = {
        "type": "object",
        "properties": {
            "action": {"enum": ["accept", "decline"]},
            "content": {"type": "string"},
            "key": {"const": key},
        },
        "required": ["action"],
    }
    schema = {
        "anyOf": [
            answer,
            {
                "type": "object",
                "properties": {
                    "responses": {
                        "type": "object",
                        "properties": {key: answer},
                        "required": [key],
                        "additionalProperties": False,
                    }
                },
                "required": ["responses"],
            },
        ]
    }
    return Annotated[Any, AfterValidator(validate), WithJsonSchema(schema)]


def one_decision_schema(decision: Mapping[str, Any], key: str) -> dict[str, Any]:
    """The JSON Schema of what answers one approval-like question ``key``: the ``decision``
    itself, ``{"decisions": [<decision>]}``, or ``{"responses": {<key>: <decision>}}``."""
    return {
        "anyOf": [
            decision,
            {
                "type": "object",
                "properties": {
                    "decisions": {"type": "array", "items": decision, "minItems": 1, "maxItems": 1}
                },
                "required": ["decisions"],
            },
            {
                "type": "object",
                "properties": {
                    "responses": {
                        "type": "object",
                        "properties": {key: decision},
                        "required": [key],
                        "additionalProperties": False,
                    }
                },
                "required": ["responses"],
            },
        ]
    }
