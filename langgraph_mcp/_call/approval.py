"""Asking a person to approve one MCP tool call before it is sent.

The question is an ``interrupt()`` raised in the call's own frame, so it is as durable as the
call's elicitation questions: the decision is stored in the checkpoint and a run resumed in any
process gets it back. The question carries a ``key`` (a digest of the call and its arguments);
a stored decision that names another key, or an answer to another kind of question, is not
applied to this one. A call's decision is remembered for the rest of that execution of its graph
task, so the same call running again within it (a retry middleware) is not asked twice.

A decision a person took is applied even where the policy that asked for it is gone: a run
resumed in a process whose configuration no longer asks about the call (:func:`recorded_outcome`)
finds the question it was asked pending, with its answer, and applies that answer (a reject stays
a reject) instead of running the call unasked.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langchain_core.messages import ToolMessage
from langgraph.types import Command
from pydantic import AfterValidator, TypeAdapter, ValidationError, WithJsonSchema

from langgraph_mcp._call.call import Call, Next
from langgraph_mcp._call.results import call_site, failure
from langgraph_mcp._compat.langgraph import (
    ask,
    graph_configurable,
    in_graph,
    pending_questions,
    shown_question,
    task_scratchpad,
)
from langgraph_mcp._elicitation.answers import (
    STALE,
    call_scope,
    is_stale,
    keyed_answer,
    one_decision_schema,
    question_key,
)
from langgraph_mcp._session.skillwire import entry_fingerprint
from langgraph_mcp._support.coerce import coerce_edited
from langgraph_mcp.errors import MCPToolCallError
from langgraph_mcp.options import ApprovalByRisk
from langgraph_mcp.types import SKILL_GRANTS_KEY, MCPApprovalInterrupt, MCPApprovalRisk, MCPApprovalsInterrupt

__all__ = [
    "APPROVAL_MODES",
    "DECISIONS",
    "EDITED",
    "EDIT_NOTICE",
    "GIVEN",
    "LOW_RISK",
    "ApprovalMode",
    "ApprovalRequest",
    "Approved",
    "approval_request",
    "ask_approval",
    "allowed_in",
    "approve",
    "ask_together",
    "escalated",
    "judge_risk",
    "question_pending",
    "recorded_outcome",
    "rekeyed",
    "recorded_turn",
    "turn_pending",
    "with_edit_notice",
]

ApprovalMode = Literal["per_call", "batched"]
APPROVAL_MODES: tuple[ApprovalMode, ...] = ("per_call", "batched")

DECISIONS = ("approve", "edit", "reject", "respond")
EDIT_NOTICE = (
    "Note: before this call ran, a person changed its arguments to {args}. The result below is "
    "for those arguments, not for the ones you chose; this was intended, do not call again with "
    "the original ones."
)
"""Put before the result of an edited call, so the model knows what ran."""
_MEMORY = 256
_decided: OrderedDict[int, tuple[object, dict[str, dict[str, Any]]]] = OrderedDict()
"""id(scratchpad) -> (scratchpad, {question key: decision}): the decisions taken in one execution
of a graph task (its scratchpad is new each time the task runs, resumes included), kept so that
a call that runs again within that execution (a retry middleware) is not asked twice. Bounded."""
_decided_lock = threading.Lock()  # synchronous runs decide on worker threads
GIVEN: contextvars.ContextVar[Mapping[str, Mapping[str, Any]] | None] = contextvars.ContextVar(
    "langgraph_mcp_given_decisions", default=None
)
"""Decisions taken for a whole turn (question key -> decision), set around the calls they
belong to: a call whose key is here takes its decision without asking. An entry without a
``type`` (:func:`escalated`) is no decision: the call asks its own question, its risk judged."""
EDITED: contextvars.ContextVar[dict[str, dict[str, Any]] | None] = contextvars.ContextVar(
    "langgraph_mcp_edited_calls", default=None
)
"""Set by a face around a call to learn whether a person edited it: tool call id -> the
arguments it ran with (the face then shows them in the AI message's tool call)."""
LOW_RISK = {"type": "approve", "risk": "low"}
"""The decision a turn records for a call its risk policy let through unasked."""
logger = logging.getLogger("langgraph_mcp.approval")


class Approved:
    """The person's go-ahead: run the call with ``arguments`` (edited or as the model chose)."""

    def __init__(self, arguments: dict[str, Any], edited: bool) -> None:
        self.arguments = arguments
        self.edited = edited


def _refuse_malformed(value: Any, name: str) -> None:
    """A resume value whose ``responses`` or ``decisions`` is not what the shape says is refused,
    not taken for an answer to another question (the client is told, not asked again)."""
    if not isinstance(value, Mapping):
        return
    if "responses" in value and not isinstance(value["responses"], Mapping):
        raise ValueError(f"'responses' must be an object of question keys to answers (tool {name!r})")
    if "decisions" in value and not isinstance(value["decisions"], list):
        raise ValueError(f"'decisions' must be a list of one decision (tool {name!r})")


def _decision_checker(
    key: str,
    name: str,
    allowed: Sequence[str],
    check: Callable[[dict[str, Any]], None],
    schema: Mapping[str, Any] | None,
) -> Callable[[Any], dict[str, Any]]:
    """Checks one bare decision for one call: the decision to apply, :data:`STALE` when it was
    taken for another call (its ``key``), or ``ValueError`` (the question stays pending)."""

    def one(value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping) or value.get("type") not in DECISIONS:
            raise ValueError(
                f"the decision for tool {name!r} must be an object with 'type' one of {list(allowed)}"
            )
        if not isinstance(value.get("key", key), str):
            raise ValueError(f"the decision's 'key' for tool {name!r} must be a string")
        if value.get("key", key) != key:
            return STALE  # decided for another call
        kind = value["type"]
        if kind not in allowed:
            raise ValueError(f"decision {kind!r} is not allowed for tool {name!r}; allowed: {list(allowed)}")
        if kind == "edit":
            action = value.get("edited_action")
            if not isinstance(action, Mapping) or not isinstance(action.get("args"), Mapping):
                raise ValueError("an 'edit' decision needs 'edited_action': {'name': ..., 'args': {...}}")
            if action.get("name", name) != name:
                raise ValueError(f"an edit may change the arguments of {name!r}, not the tool")
            # A form sends every edited value as text: typed as the tool's schema says first.
            try:
                args = coerce_edited(action["args"], schema)
            except ValueError as exc:
                raise ValueError(f"the edited arguments do not fit tool {name!r}: {exc}") from None
            check(args)
            value = {**value, "edited_action": {**action, "args": args}}
        if kind == "respond" and not isinstance(value.get("message"), str):
            raise ValueError("a 'respond' decision needs 'message' (the text the model gets)")
        if "message" in value and not isinstance(value["message"], str):
            raise ValueError("'message' must be a string")
        return dict(value)

    return one


def _decision_schema(key: str, name: str, allowed: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "type": {"enum": list(allowed)},
            "edited_action": {
                "type": "object",
                "properties": {"name": {"const": name}, "args": {"type": "object"}},
                "required": ["args"],
            },
            "message": {"type": "string"},
            "key": {"const": key},
        },
        "required": ["type"],
    }


def _resume_type(request: ApprovalRequest) -> Any:
    key, name = request.key, request.name

    def validate(value: Any) -> dict[str, Any]:
        _refuse_malformed(value, name)
        keyed = isinstance(value, Mapping) and isinstance(value.get("responses"), Mapping)
        if keyed:
            value = keyed_answer(value["responses"], key)
            if is_stale(value):
                return STALE  # answers to other questions
        elif isinstance(value, Mapping) and isinstance(value.get("decisions"), list):
            decisions = value["decisions"]
            if len(decisions) != 1:
                raise ValueError(f"one decision is expected for tool {name!r}, got {len(decisions)}")
            value = decisions[0]
        if not keyed and isinstance(value, Mapping) and ("responses" in value or "action" in value):
            return STALE  # an answer to an elicitation or sampling question
        return request.decide(value)

    decision = _decision_schema(key, name, request.allowed)
    resume_schema = one_decision_schema(decision, key)
    return Annotated[dict[str, Any], AfterValidator(validate), WithJsonSchema(resume_schema)]


def _decide(request: ApprovalRequest, remember: bool) -> dict[str, Any]:
    key = request.key
    given = GIVEN.get()
    if given is not None and "type" in given.get(key, {}):
        return dict(given[key])  # decided with the other calls of its turn
    scratchpad = task_scratchpad(graph_configurable()) if remember else None
    if scratchpad is not None:
        with _decided_lock:
            entry = _decided.get(id(scratchpad))
            if entry is not None and entry[0] is scratchpad and key in entry[1]:
                return dict(entry[1][key])
    schema = _resume_type(request)
    while is_stale(decision := ask(request.payload, response_schema=schema)):
        pass
    if scratchpad is not None:
        with _decided_lock:
            entry = _decided.get(id(scratchpad))
            if entry is None or entry[0] is not scratchpad:
                entry = _decided[id(scratchpad)] = (scratchpad, {})
            entry[1][key] = dict(decision)
            _decided.move_to_end(id(scratchpad))
            while len(_decided) > _MEMORY:
                _decided.popitem(last=False)
    return dict(decision)


@dataclass(frozen=True)
class ApprovalRequest:
    """One call's approval question: its ``key``, the interrupt value, and how a decision for it
    is checked (:meth:`decide`)."""

    key: str
    name: str
    tool_call_id: str | None
    allowed: tuple[str, ...]
    payload: MCPApprovalInterrupt
    decide: Callable[[Any], dict[str, Any]]
    """One bare decision, checked: the decision, :data:`STALE` (taken for another call), or
    ``ValueError``."""


def approval_request(
    *,
    server: str,
    mcp_tool: str,
    name: str,
    description: str,
    annotations: Mapping[str, Any],
    arguments: dict[str, Any],
    tool_call_id: str | None,
    allowed: Sequence[str],
    check: Callable[[dict[str, Any]], None],
    schema: Mapping[str, Any] | None = None,
) -> ApprovalRequest:
    """The question that asks whether this call may run with ``arguments``."""
    key = question_key("approval", call_scope(server, name, tool_call_id), {"args": arguments})
    payload: MCPApprovalInterrupt = {
        "type": "tool_approval",
        "tool_call_id": tool_call_id,
        "name": name,
        "args": arguments,
        "description": description,
        "server": server,
        "mcp_tool": mcp_tool,
        "annotations": dict(annotations),
        "key": key,
        "allowed_decisions": list(allowed),
        "action_requests": [{"name": name, "args": arguments, "description": description}],
        "review_configs": [{"action_name": name, "allowed_decisions": list(allowed)}],
    }
    return ApprovalRequest(
        key=key,
        name=name,
        tool_call_id=tool_call_id,
        allowed=tuple(allowed),
        payload=payload,
        decide=_decision_checker(key, name, allowed, check, schema),
    )


def ask_approval(request: ApprovalRequest) -> Approved | ToolMessage:
    """Ask a person (an interrupt) whether the call may run; the arguments to run it with, or the
    message the model gets instead. A decision that does not fit (edited arguments the tool
    refuses, after values sent as text were typed as its schema says) is refused and the
    question stays pending. A decision taken for this very call with the rest of its turn
    (:data:`GIVEN`) is applied without asking.

    Raises:
        MCPToolCallError: not inside a LangGraph graph, so nobody can be asked.
        GraphInterrupt: the question (the call continues when the run resumes).
    """
    given = GIVEN.get()
    if (given is None or "type" not in given.get(request.key, {})) and not in_graph(graph_configurable()):
        raise MCPToolCallError(
            f"MCP tool {request.name!r} (server {request.payload['server']!r}) needs a person's "
            "approval, but it is not running inside a LangGraph graph, so nobody can be asked. Run "
            "it in a graph with a checkpointer.",
            kind="approval",
        )
    # Only a call with an id is remembered: two calls without one that ask the same are two
    # questions.
    decision = _decide(request, remember=request.tool_call_id is not None)
    return _outcome(decision, request.payload["args"], request.name, request.tool_call_id)


def _outcome(
    decision: Mapping[str, Any], arguments: dict[str, Any], name: str, tool_call_id: str | None
) -> Approved | ToolMessage:
    kind = decision["type"]
    if kind == "approve":
        return Approved(arguments, edited=False)
    if kind == "edit":
        return Approved(dict(decision["edited_action"]["args"]), edited=True)
    if kind == "respond":
        return ToolMessage(content=decision["message"], name=name, tool_call_id=tool_call_id or "")
    reason = decision.get("message")
    content = (
        f"User rejected the tool call for `{name}` with reason: {reason}"
        if reason
        else f"User rejected the tool call for `{name}` with id {tool_call_id}. The tool was not "
        "executed. Do not retry this tool call unless the user explicitly requests it."
    )
    return ToolMessage(content=content, name=name, tool_call_id=tool_call_id or "", status="error")


# -- batched ----------------------------------------------------------------------------------


def _together_type(key: str, requests: Sequence[ApprovalRequest]) -> Any:
    count = len(requests)
    keys = [r.key for r in requests]

    def bound(decisions: list[Any]) -> bool:
        return len(decisions) == count and all(
            isinstance(d, Mapping) and d.get("key") == k for d, k in zip(decisions, keys, strict=True)
        )

    def validate(value: Any, keyed: bool = False) -> dict[str, Any]:
        if isinstance(value, Mapping) and "decisions" in value:
            decisions = value["decisions"]
            if not isinstance(decisions, list):
                raise ValueError("'decisions' must be a list of decisions, one per action request, in order")
            shown = shown_question()
            if not (keyed or bound(decisions) or (isinstance(shown, Mapping) and shown.get("key") == key)):
                # Decisions bound by position only: taken for this question only when it is the
                # one the person was shown. Replayed for another set of calls (a listing that
                # changed), or sent when nothing was asked, they answer nothing: ask again.
                return STALE
            if len(decisions) != count:
                raise ValueError(
                    f"{count} decisions are expected (one per action request, in order), got {len(decisions)}"
                )
            bind = True
        elif isinstance(value, Mapping) and isinstance(value.get("responses"), Mapping):
            responses = value["responses"]
            if key in responses:
                return validate(responses[key], keyed=True)
            present = [k for k in keys if k in responses]
            if not present:
                return STALE  # answers to other questions
            if len(present) != count:
                missing = [r.name for r in requests if r.key not in responses]
                raise ValueError(
                    f"decisions are missing for {', '.join(missing)}: answer every call together"
                )
            decisions = [responses[k] for k in keys]
            bind = False
        elif isinstance(value, Mapping) and ("responses" in value or "action" in value):
            return STALE  # an answer to an elicitation or sampling question
        else:
            raise ValueError(
                f"this question asks about {count} tool calls: answer with "
                "{'decisions': [<decision>, ...]}, one per action request, in order"
            )
        taken: dict[str, Any] = {}
        for index, (request, decision) in enumerate(zip(requests, decisions, strict=True)):
            try:
                checked = request.decide(decision)
            except ValueError as exc:
                raise ValueError(f"decision {index + 1} ({request.name}): {exc}") from None
            if is_stale(checked):
                raise ValueError(f"decision {index + 1} carries another call's key, not {request.name!r}'s")
            if request.key in taken and _essence(taken[request.key]) != _essence(checked):
                # Two calls of the turn that are the same call (same tool, id and arguments): each
                # applies the decision found under their one key, so they must be given the same.
                first = keys.index(request.key) + 1
                raise ValueError(
                    f"decisions {first} and {index + 1} differ, but they are for the same call "
                    f"({request.name!r}, same id and arguments): give both the same decision"
                )
            taken[request.key] = checked
        if bind:
            # LangGraph stores this very object as the answer: each decision now names its call,
            # so a replay of it is checked against the calls it was given for.
            # (New objects: one decision object may be given for several calls.)
            for index, request in enumerate(requests):
                decisions[index] = {**decisions[index], "key": request.key}
        return taken

    items = [_decision_schema(r.key, r.name, r.allowed) for r in requests]
    together = {
        "type": "object",
        "properties": {
            "decisions": {"type": "array", "prefixItems": items, "minItems": count, "maxItems": count}
        },
        "required": ["decisions"],
    }
    schema = {
        "anyOf": [
            together,
            {
                "type": "object",
                "properties": {
                    "responses": {
                        "type": "object",
                        "properties": {key: together}
                        | {r.key: i for r, i in zip(requests, items, strict=True)},
                        "additionalProperties": False,
                    }
                },
                "required": ["responses"],
            },
        ]
    }
    return Annotated[dict[str, Any], AfterValidator(validate), WithJsonSchema(schema)]


def _essence(decision: Mapping[str, Any]) -> dict[str, Any]:
    """A decision without the ``key`` it may carry."""
    return {k: v for k, v in decision.items() if k != "key"}


def ask_together(requests: Sequence[ApprovalRequest]) -> dict[str, dict[str, Any]]:
    """Ask about several calls of one turn in one interrupt (:class:`MCPApprovalsInterrupt`);
    the decision for each call, by its question ``key``. Call inside a graph.

    Raises:
        GraphInterrupt: the question.
    """
    key = question_key("approvals", json.dumps([r.key for r in requests]), {})
    payload: MCPApprovalsInterrupt = {
        "type": "tool_approvals",
        "key": key,
        "approvals": [r.payload for r in requests],
        "action_requests": [r.payload["action_requests"][0] for r in requests],
        "review_configs": [r.payload["review_configs"][0] for r in requests],
    }
    schema = _together_type(key, requests)
    while is_stale(taken := ask(payload, response_schema=schema)):
        pass
    return {k: dict(v) for k, v in taken.items()}


# -- a decision outlives the policy that asked for it -----------------------------------------


def _pending_about(key: str) -> Mapping[str, Any] | None:
    """The pending approval question (one call's, or a turn's) that asked about the call whose
    question key is ``key``: the person's answer to it is in the resume."""
    for value in pending_questions(graph_configurable()):
        if not isinstance(value, Mapping):
            continue
        if value.get("type") == "tool_approval" and value.get("key") == key:
            return value
        approvals = value.get("approvals") if value.get("type") == "tool_approvals" else None
        if isinstance(approvals, list) and any(
            isinstance(a, Mapping) and a.get("key") == key for a in approvals
        ):
            return value
    return None


def _allowed(value: Mapping[str, Any]) -> tuple[str, ...]:
    allowed = value.get("allowed_decisions")
    if isinstance(allowed, list) and allowed and all(a in DECISIONS for a in allowed):
        return tuple(allowed)
    return DECISIONS


def turn_pending() -> bool:
    """Does the run resume a question about several calls of a turn?"""
    return any(
        isinstance(v, Mapping) and v.get("type") == "tool_approvals"
        for v in pending_questions(graph_configurable())
    )


def recorded_turn(keys: Sequence[str]) -> list[str] | None:
    """The keys, in the order asked, of the pending question about several calls of a turn that
    asked about any of the calls whose question keys are ``keys`` (``None``: none is pending).
    Its answer is in the resume, whatever the policy of this process says now."""
    for value in pending_questions(graph_configurable()):
        approvals = (
            value.get("approvals")
            if isinstance(value, Mapping) and value.get("type") == "tool_approvals"
            else None
        )
        if not isinstance(approvals, list):
            continue
        asked = [str(a.get("key")) for a in approvals if isinstance(a, Mapping)]
        if set(asked) & set(keys):
            return asked
    return None


def allowed_in(key: str) -> tuple[str, ...]:
    """The decisions the pending question about the call with question key ``key`` allowed."""
    for value in pending_questions(graph_configurable()):
        if not isinstance(value, Mapping):
            continue
        shown = value.get("approvals") if value.get("type") == "tool_approvals" else [value]
        for one in shown if isinstance(shown, list) else []:
            if isinstance(one, Mapping) and one.get("key") == key:
                return _allowed(one)
    return DECISIONS


def recorded_outcome(
    question: Callable[[Sequence[str]], ApprovalRequest],
) -> Approved | ToolMessage | None:
    """For a call no approval policy asks about: ``None``, unless the run resumes an approval
    question this very call was asked (the policy was removed since, in this process); then
    that question's answer is taken and applied as :func:`ask_approval` would (a reject is a
    reject). ``question(allowed)`` makes the call's question with the decisions it allows.

    Raises:
        GraphInterrupt: the pending question has no answer in this resume (asked again).
    """
    conf = graph_configurable()
    if not in_graph(conf):
        return None
    if not any(
        isinstance(v, Mapping) and v.get("type") in ("tool_approval", "tool_approvals")
        for v in pending_questions(conf)
    ):
        return None  # the run resumes no approval question: no call's question is built
    probe = question(DECISIONS)
    pending = _pending_about(probe.key)
    if pending is None:
        return None
    if pending.get("type") == "tool_approval":
        return ask_approval(question(_allowed(pending)))
    given = GIVEN.get()
    if given is not None and probe.key in given:  # the turn's answer, taken before its calls ran
        return ask_approval(question(DECISIONS))
    # Asked with the rest of its turn, but the turn's answer was not taken (a face that does not
    # ask about turns): the call is not run unasked.
    return ToolMessage(
        content=f"The tool call `{probe.name}` was not executed: a person's decision about it is "
        "pending, and it could not be applied here.",
        name=probe.name,
        tool_call_id=probe.tool_call_id or "",
        status="error",
    )


# -- approval by risk -------------------------------------------------------------------------

_RISK_QUESTION = "is_risky"
"""The question id ``AutoModeMiddleware`` asks its decision model, and reads the answer of."""
_RECENT = 30
"""Messages the classifier is shown at most (as ``AutoModeMiddleware``)."""


async def judge_risk(
    policy: ApprovalByRisk,
    *,
    name: str,
    description: str,
    annotations: Mapping[str, Any],
    arguments: Mapping[str, Any],
    tool_call_id: str | None,
    messages: Sequence[Any],
) -> MCPApprovalRisk | None:
    """``None`` when ``policy`` lets this call run unasked (low risk); else why a person is asked.
    The classifier is asked as langchain's ``AutoModeMiddleware`` asks it; whatever goes wrong
    with it (an error, no answer within the policy's ``timeout``, an answer without the
    probability) asks the person."""
    verdict = policy.by_annotations(annotations)
    if verdict == "low":
        return None
    if verdict == "high":
        return _risk("annotations", "its tool may be destructive (MCP annotations)")
    if policy.classifier is None:
        return _risk("annotations", "its tool's MCP annotations do not show it is low risk")
    from langchain_core.decisions import Noul  # langchain-core 1.5+, only with a classifier

    state: dict[str, Any] = {
        "messages": list(messages)[-_RECENT:],
        "tool_call": {"id": tool_call_id, "name": name, "args": dict(arguments)},
    }
    if description:
        state["tool_description"] = description
    request = {
        "state": state,
        "questions": {_RISK_QUESTION: Noul(instructions=policy.instructions, criteria=policy.criteria)},
    }
    try:
        response = await asyncio.wait_for(policy.classifier.ainvoke(request), policy.timeout)
        answer = getattr(response, "nouls", {})[_RISK_QUESTION]
        probability = float(answer.noul)
        if not 0.0 <= probability <= 1.0:
            raise ValueError(f"a probability out of range: {probability}")
    except TimeoutError:
        logger.warning(
            "the risk classifier gave no answer about %r in %ss: a person is asked", name, policy.timeout
        )
        return _risk("classifier_error", f"the risk classifier gave no answer in {policy.timeout}s")
    except Exception as exc:  # fail closed: whatever failed, a person decides
        logger.warning(
            "the risk classifier failed about %r (%s): a person is asked", name, type(exc).__name__
        )
        return _risk("classifier_error", f"the risk classifier failed ({type(exc).__name__})")
    if probability < policy.threshold:
        return None
    risk = _risk("classifier", "the risk classifier found it risky")
    risk["probability"] = probability
    return risk


def _risk(by: Literal["annotations", "classifier", "classifier_error"], reason: str) -> MCPApprovalRisk:
    return {"by": by, "reason": reason}


def escalated(risk: MCPApprovalRisk | None) -> dict[str, Any]:
    """The :data:`GIVEN` entry of a call its turn judged risky but asked no question about: the
    call asks its own (with ``risk`` in it), without judging again."""
    return {"escalated": dict(risk) if risk else None}


def question_pending() -> bool:
    """Does the run resume any question (so a turn's risk is not judged again, see
    :func:`_approval_phase`)?"""
    return bool(pending_questions(graph_configurable()))


def rekeyed(request: ApprovalRequest, arguments: dict[str, Any]) -> str:
    """The question key of the call of ``request`` with ``arguments`` instead (an edited call,
    shown with its edited arguments, asks under this key when it runs)."""
    server = request.payload["server"]
    return question_key(
        "approval", call_scope(server, request.name, request.tool_call_id), {"args": arguments}
    )


def _answers(request: ApprovalRequest, value: Any) -> bool:
    """Is ``value`` (an answer this task was given) an answer to ``request``?"""
    try:
        decided = TypeAdapter(_resume_type(request)).validate_python(value)
    except ValidationError:
        return False
    return not is_stale(decided)


def _approval_phase(request: ApprovalRequest, tool_call_id: str | None) -> Literal["asked", "passed"] | None:
    """Where this call's task stands, when it runs again: ``"asked"`` (its approval question was
    asked: its answer is taken, whatever a classifier would say now), ``"passed"`` (its risk let it
    through before, and a later question of the call is pending or answered), or ``None`` (not
    judged yet). A judgement is never made twice for one call, so a classifier that changes its
    mind cannot run a call a person rejected, nor shift the answers of the call's questions."""
    conf = graph_configurable()
    pending = pending_questions(conf)
    if _pending_about(request.key) is not None:
        return "asked"
    answered = getattr(task_scratchpad(conf), "resume", None)  # this task's answers, in order
    if answered:
        return "asked" if _answers(request, answered[0]) else "passed"
    if tool_call_id is not None and any(
        isinstance(v, Mapping) and v.get("tool_call_id") == tool_call_id for v in pending
    ):
        return "passed"  # another question of this call is pending: its approval was passed
    return None


def _messages_of(call: Call) -> list[Any]:
    state = call.runtime.state if call.runtime is not None else None
    if isinstance(state, Mapping):
        messages = state.get(call.messages_key)
    elif isinstance(state, list):
        messages = state
    else:
        messages = getattr(state, call.messages_key, None)
    return list(messages) if isinstance(messages, list) else []


async def _risky(
    call: Call, policy: ApprovalByRisk, request: ApprovalRequest
) -> tuple[bool, MCPApprovalRisk | None]:
    """Does the call ask (else it runs unasked), and why (``None``: a judgement made before, by
    its turn or an earlier run of its task, whose question is answered or replayed as asked)."""
    given = (GIVEN.get() or {}).get(request.key)
    if given is not None:
        return True, None if "type" in given else given.get("escalated") or None
    phase = _approval_phase(request, call.tool_call_id) if in_graph(graph_configurable()) else None
    if phase is not None:
        return phase == "asked", None
    risk = await judge_risk(
        policy,
        name=call.name,
        description=request.payload["description"],
        annotations=request.payload["annotations"],
        arguments=call.arguments,
        tool_call_id=call.tool_call_id,
        messages=_messages_of(call),
    )
    return risk is not None, risk


async def approve(call: Call, next_step: Next) -> Any:
    """A step of the call (:func:`~langgraph_mcp._call.pipeline.run_pipeline`): a person's
    decision before the call is sent. Rejected, the call stops here; edited, it goes on with the
    edited arguments and, back, its result says what ran (:func:`with_edit_notice`). Without
    approval, an answer asked before this process's policy stopped asking still holds."""
    outcome: Approved | ToolMessage | None
    if call.approval and _granted(call):
        return await next_step(call)  # a skill a person approved may call it without asking
    if call.approval:
        request: ApprovalRequest = call.question(call.arguments, call.approval)
        policy = call.options.approval
        if isinstance(policy, ApprovalByRisk):
            asks, risk = await _risky(call, policy, request)
            if not asks:
                return await next_step(call)  # low risk: runs unasked
            if risk is not None:
                request.payload["risk"] = risk  # the person sees why they are asked
        try:
            outcome = ask_approval(request)
        except MCPToolCallError as exc:
            return failure(call_site(call), str(exc), kind=exc.kind)
    else:
        outcome = _given_outcome(call) or recorded_outcome(
            lambda allowed: call.question(call.arguments, allowed)
        )
        if outcome is None:
            return await next_step(call)
    if not isinstance(outcome, Approved):
        return outcome, None
    if not outcome.edited:
        return await next_step(call)
    hidden = call.options.hidden
    call.arguments = {k: v for k, v in outcome.arguments.items() if k not in hidden}
    edited = EDITED.get()
    if edited is not None and call.tool_call_id is not None:
        edited[call.tool_call_id] = dict(call.arguments)
    return with_edit_notice(await next_step(call), call.arguments, call.messages_key)


def _given_outcome(call: Call) -> Approved | ToolMessage | None:
    """For a call no approval policy asks about: the decision its turn took for it anyway (a
    turn's question asked before this process's policy stopped asking, answered in this run),
    applied as asked (a reject stays a reject); else ``None``."""
    given = GIVEN.get()
    if not given:
        return None
    request: ApprovalRequest = call.question(call.arguments, DECISIONS)
    if "type" not in given.get(request.key, {}):
        return None
    return ask_approval(request)


def _granted(call: Call) -> bool:
    state = call.runtime.state if call.runtime is not None else None
    return skill_granted(state, call.server, call.mcp_name, call.connection)


def skill_granted(state: Any, server: str, tool: str, connection: Any) -> bool:
    """Did a person approve a skill whose ``allowed-tools`` names MCP tool ``tool`` of ``server``
    (graph state ``mcp_skill_grants``), and does the server (``connection``'s listing as cached,
    no request) still list that skill with the files approved? Its calls then run without their
    own approval question. Anything that cannot be told (no listing cached, the skill gone or
    changed) asks."""
    grants = state.get(SKILL_GRANTS_KEY) if isinstance(state, Mapping) else None
    if not isinstance(grants, Mapping):
        return False
    for grant in grants.values():
        if (
            isinstance(grant, Mapping)
            and grant.get("server") == server
            and tool in (grant.get("tools") or ())
            and _still_listed(connection, grant)
        ):
            return True
    return False


def _still_listed(connection: Any, grant: Mapping[str, Any]) -> bool:
    listing = connection.cached_listing("skills") if connection is not None else None
    for entry in listing or ():
        if entry.uri == grant.get("uri"):
            return entry_fingerprint(entry) == grant.get("fingerprint")
    return False


def with_edit_notice(result: Any, arguments: dict[str, Any], messages_key: str) -> Any:
    """``result`` with :data:`EDIT_NOTICE` before its content, so the model knows what ran."""
    notice = EDIT_NOTICE.format(args=json.dumps(arguments, ensure_ascii=False, default=str))

    def noted(content: Any) -> Any:
        if isinstance(content, str):
            return f"{notice}\n\n{content}"
        return [{"type": "text", "text": notice}, *content]

    def noted_messages(messages: Any) -> Any:
        if not isinstance(messages, list):
            return messages
        return [
            m.model_copy(update={"content": noted(m.content)}) if isinstance(m, ToolMessage) else m
            for m in messages
        ]

    content, artifact = result
    if isinstance(content, ToolMessage):
        return content.model_copy(update={"content": noted(content.content)}), artifact
    if isinstance(content, Command):
        update = content.update
        if isinstance(update, dict) and messages_key in update:
            update = {**update, messages_key: noted_messages(update[messages_key])}
        elif isinstance(update, list | tuple):
            update = [
                (item[0], noted_messages(item[1]))
                if isinstance(item, tuple) and len(item) == 2 and item[0] == messages_key
                else item
                for item in update
            ]
        else:
            return result  # nothing the notice can be put on
        return Command(update=update, goto=content.goto, graph=content.graph, resume=content.resume), artifact
    return noted(content), artifact
