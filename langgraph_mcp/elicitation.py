"""Server requests for input (elicitation, sampling, roots) answered durably.

With ``elicitation="interrupt"`` (the default) a question from an MCP server
pauses the graph with ``interrupt()``; the person answers with
``Command(resume=...)`` minutes or days later, possibly in another process,
and the tool call completes with that answer.

Interrupt payload (JSON; a superset of ``langchain.mcp``'s ``MCPElicitationInterrupt``)::

    {"type": "mcp_elicitation", "server": "shop", "tool_name": "delete_item",
     "tool_call_id": "call_1", "requests": [
        {"key": "confirm", "mode": "form", "message": "Really delete?",
         "requested_schema": {"type": "object", "properties": {...}, "required": [...]}},
        {"key": "login", "mode": "url", "message": "Sign in", "url": "https://..."}]}

Resume value::

    {"responses": {"confirm": {"action": "accept", "content": {...}},
                   "login": {"action": "decline"}}}

Every request needs a response. An accepted form is checked against its
``requested_schema`` (omitted fields take the schema's defaults) before it
reaches the server; an invalid resume value fails the resume with a
``pydantic.ValidationError`` and the interrupt stays pending. Several pending
interrupts are resumed by id (:func:`resume_elicitations` builds that command).

How the call is carried across the pause depends on the server's protocol era:

* **2026-07-28** (``InputRequiredResult``): each round's result is stored in the
  checkpoint (a LangGraph ``@task``), so a resumed run replays completed rounds
  instead of re-sending them and only sends the answered round. If the server
  rejects the stored ``request_state`` (expired, or the server restarted with a
  new key), the call is re-issued and the questions it repeats are answered
  from the answers already given, without asking the person again.
* A server may also refuse a call with ``-32042`` (URL elicitation required, both
  eras): the URLs are asked for like any URL-mode request and, once accepted, the
  call is sent again.
* **2025-11-25 and older** (live ``elicitation/create`` during ``tools/call``):
  the request is held open while the person answers (its ``timeout`` is paused;
  ``elicitation_timeout`` bounds the wait) and the answer is delivered to the
  waiting call when the run resumes in the same process. If the process
  restarted, the call is re-issued and the stored answers are replayed to the
  server's repeated questions: work the tool did before asking is done again.
  A stdio or SSE session cannot tell which call a request belongs to, so with
  an interrupting policy the calls on such a session run one at a time (a call
  waiting for a person does not block the others).

Sampling requests are answered by ``sampling_model`` (a LangChain chat model),
after an ``{"type": "mcp_sampling"}`` interrupt when ``sampling_approval`` is
set, or refused. Roots come from the server's ``roots`` configuration.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired, TypeAlias, TypedDict, cast

import anyio
import jsonschema
import mcp_types as types
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

# Pregel's own config keys: langgraph is pinned to 1.2.x, and a rename fails loudly here.
from langgraph._internal._constants import CONFIG_KEY_CALL, CONFIG_KEY_CHECKPOINTER, CONFIG_KEY_SCRATCHPAD
from langgraph.config import get_config
from langgraph.func import task
from langgraph.types import Command, Interrupt, interrupt
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import AfterValidator, WithJsonSchema

from langgraph_mcp.errors import MCPToolCallError
from langgraph_mcp.pool import InFlight, LogSink, ServerConnection

if TYPE_CHECKING:
    from mcp import Client

__all__ = [
    "ELICITATION_INTERRUPT_TYPE",
    "SAMPLING_INTERRUPT_TYPE",
    "ElicitationHandler",
    "MCPCallInfo",
    "MCPElicitationAccept",
    "MCPElicitationCancel",
    "MCPElicitationDecline",
    "MCPElicitationFormRequest",
    "MCPElicitationInterrupt",
    "MCPElicitationRequest",
    "MCPElicitationResponse",
    "MCPElicitationResume",
    "MCPElicitationUrlRequest",
    "MCPSamplingInterrupt",
    "MCPSamplingResume",
    "accept",
    "cancel",
    "decline",
    "resume_elicitations",
]
# Also used by tools.py / node.py (not exported from the package): CallContext, call_modern,
# call_legacy, asks_a_person, is_legacy, in_graph, durable_run.

logger = logging.getLogger("langgraph_mcp.elicitation")

ELICITATION_INTERRUPT_TYPE = "mcp_elicitation"
SAMPLING_INTERRUPT_TYPE = "mcp_sampling"
MAX_ROUNDS = 32

# -- public payload types -----------------------------------------------------------


class MCPElicitationFormRequest(TypedDict):
    """A question answered by filling in a form."""

    key: str
    mode: Literal["form"]
    message: str
    requested_schema: dict[str, Any]


class MCPElicitationUrlRequest(TypedDict):
    """A request to visit a URL (never opened automatically)."""

    key: str
    mode: Literal["url"]
    message: str
    url: str
    elicitation_id: NotRequired[str]


MCPElicitationRequest: TypeAlias = MCPElicitationFormRequest | MCPElicitationUrlRequest


class MCPElicitationInterrupt(TypedDict):
    """The ``interrupt()`` value raised when an MCP server asks a person for input."""

    type: Literal["mcp_elicitation"]
    server: str
    tool_name: str
    tool_call_id: str | None
    requests: list[MCPElicitationRequest]


class MCPElicitationAccept(TypedDict):
    action: Literal["accept"]
    content: NotRequired[dict[str, Any] | None]


class MCPElicitationDecline(TypedDict):
    action: Literal["decline"]


class MCPElicitationCancel(TypedDict):
    action: Literal["cancel"]


MCPElicitationResponse: TypeAlias = MCPElicitationAccept | MCPElicitationDecline | MCPElicitationCancel


class MCPElicitationResume(TypedDict):
    """The resume value for an :class:`MCPElicitationInterrupt`: one response per request key."""

    responses: dict[str, MCPElicitationResponse]


class MCPSamplingInterrupt(TypedDict):
    """The ``interrupt()`` value raised to approve a server's sampling request."""

    type: Literal["mcp_sampling"]
    server: str
    tool_name: str
    tool_call_id: str | None
    key: str
    request: dict[str, Any]
    """``sampling/createMessage`` params (``messages``, ``systemPrompt``, ``maxTokens``, ...)."""


class MCPSamplingResume(TypedDict):
    """``accept`` lets ``sampling_model`` answer, or answers with ``content`` itself."""

    action: Literal["accept", "decline"]
    content: NotRequired[str]


class MCPCallInfo(TypedDict):
    """Which call a request belongs to (``tool_call_id`` is ``None`` when it cannot be told)."""

    server: str
    tool_name: str
    tool_call_id: str | None


ElicitationHandler: TypeAlias = Callable[
    [MCPElicitationRequest, MCPCallInfo], Awaitable[MCPElicitationResponse]
]
"""An ``elicitation=`` policy: answers one request itself (no interrupt)."""


def accept(content: Mapping[str, Any] | None = None) -> MCPElicitationAccept:
    """An ``accept`` response (``content`` for form requests; none for URL requests)."""
    return {"action": "accept", "content": dict(content) if content is not None else None}


def decline() -> MCPElicitationDecline:
    return {"action": "decline"}


def cancel() -> MCPElicitationCancel:
    return {"action": "cancel"}


def resume_elicitations(
    interrupts: Iterable[Interrupt],
    answer: Callable[[MCPElicitationInterrupt], Mapping[str, MCPElicitationResponse]],
) -> Command[Any]:
    """``Command(resume={interrupt_id: {"responses": answer(payload)}, ...})`` for every pending
    MCP elicitation interrupt (others are left out)."""
    resume: dict[str, MCPElicitationResume] = {}
    for item in interrupts:
        value = item.value
        if isinstance(value, dict) and value.get("type") == ELICITATION_INTERRUPT_TYPE:
            resume[item.id] = {"responses": dict(answer(cast(MCPElicitationInterrupt, value)))}
    return Command(resume=resume)


# -- requests and answers -----------------------------------------------------------


def elicitation_request(
    key: str, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
) -> MCPElicitationRequest:
    if isinstance(params, types.ElicitRequestURLParams):
        url: MCPElicitationUrlRequest = {
            "key": key,
            "mode": "url",
            "message": params.message,
            "url": params.url,
        }
        if params.elicitation_id:
            url["elicitation_id"] = params.elicitation_id
        return url
    schema = params.requested_schema
    requested = (
        schema
        if isinstance(schema, dict)
        else schema.model_dump(mode="json", by_alias=True, exclude_none=True)
    )
    return {"key": key, "mode": "form", "message": params.message, "requested_schema": requested}


def _fingerprint(request: MCPElicitationRequest) -> str:
    """Identity of a question, to recognise it when a re-issued call asks it again."""
    return hashlib.sha256(json.dumps({k: v for k, v in request.items()}, sort_keys=True).encode()).hexdigest()


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
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(filled), key=lambda e: list(e.absolute_path)
    )
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


def _resume_type(requests: list[MCPElicitationRequest]) -> Any:
    """A type for ``interrupt(response_schema=...)``: LangGraph validates the resume value
    with it before anything is saved, so an invalid answer leaves the interrupt pending."""

    def validate(value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping) or not isinstance(value.get("responses"), Mapping):
            raise ValueError('the resume value must be {"responses": {<request key>: <response>}}')
        responses = value["responses"]
        keys = {r["key"] for r in requests}
        unknown = sorted(set(responses) - keys)
        if unknown:
            raise ValueError(f"no request has the key(s) {', '.join(map(repr, unknown))}")
        missing = [r["key"] for r in requests if r["key"] not in responses]
        if missing:
            raise ValueError(f"no response for {', '.join(map(repr, missing))}")
        checked = {r["key"]: check_response(r, responses[r["key"]]) for r in requests}
        return {"responses": {k: v.model_dump(mode="json", exclude_none=True) for k, v in checked.items()}}

    return Annotated[dict[str, Any], AfterValidator(validate), WithJsonSchema(_resume_schema(requests))]


def _sampling_resume_type(has_model: bool) -> Any:
    def validate(value: Any) -> dict[str, Any]:
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
        "properties": {"action": {"enum": ["accept", "decline"]}, "content": {"type": "string"}},
        "required": ["action"],
    }
    return Annotated[dict[str, Any], AfterValidator(validate), WithJsonSchema(schema)]


# -- durability: where the run is and what it has stored ------------------------------


def _graph_config() -> dict[str, Any] | None:
    try:
        return dict(get_config().get("configurable") or {})
    except RuntimeError:
        return None


def _in_graph(conf: Mapping[str, Any] | None) -> bool:
    return conf is not None and CONFIG_KEY_SCRATCHPAD in conf


def in_graph() -> bool:
    """Is the caller running inside a LangGraph graph task (where ``interrupt()`` works)?"""
    return _in_graph(_graph_config())


def durable_run(conf: Mapping[str, Any] | None) -> bool:
    """Inside a graph run whose tasks are checkpointed (so results can be stored)?"""
    return (
        _in_graph(conf)
        and conf is not None
        and conf.get(CONFIG_KEY_CHECKPOINTER) is not None
        and CONFIG_KEY_CALL in conf
    )


def _resuming(conf: Mapping[str, Any] | None) -> bool:
    """Has this task been interrupted before (so it may have stored rounds)?"""
    if conf is None:
        return False
    scratchpad = conf.get(CONFIG_KEY_SCRATCHPAD)
    if scratchpad is None:
        return False
    return bool(scratchpad.resume) or scratchpad.get_null_resume(False) is not None


async def _run_round(thunk: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """One request/response round; its result is checkpointed and replayed on resume."""
    return await thunk()


_stored_round: Any = task(name="mcp_round")(_run_round)  # type: ignore[arg-type]


def _encode(result: types.CallToolResult | types.InputRequiredResult) -> dict[str, Any]:
    kind = "input_required" if isinstance(result, types.InputRequiredResult) else "result"
    return {"kind": kind, "data": result.model_dump(mode="json", by_alias=True, exclude_none=True)}


def _decode(stored: Mapping[str, Any]) -> types.CallToolResult | types.InputRequiredResult:
    if stored["kind"] == "input_required":
        return types.InputRequiredResult.model_validate(stored["data"])
    return types.CallToolResult.model_validate(stored["data"])


# -- answering requests --------------------------------------------------------------


class _Refused(Exception):
    """A request the client will not answer; the server gets a JSON-RPC error."""


@dataclass(eq=False)
class CallContext:
    """One tool call's answers to its server's requests, per the server's policies.

    Also the call's request sink for handshake-era servers when no person is asked
    (``decline`` or a handler): the live request is answered on the spot.
    """

    connection: ServerConnection
    tool_name: str
    tool_call_id: str | None
    in_graph: bool
    answered: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Responses given in this run, by question fingerprint (replayed to repeated questions)."""

    @property
    def info(self) -> MCPCallInfo:
        return {
            "server": self.connection.name,
            "tool_name": self.tool_name,
            "tool_call_id": self.tool_call_id,
        }

    @property
    def waiting(self) -> bool:
        return False

    def _needs_graph(self, what: str) -> None:
        if not self.in_graph:
            raise MCPToolCallError(
                f"MCP server {self.connection.name!r} asked for {what} during {self.tool_name!r}; that "
                "needs a person, but the tool is not running inside a LangGraph graph, so it cannot be "
                "interrupted. Run it in a graph with a checkpointer, or configure elicitation='decline' "
                "or a handler.",
                kind="elicitation",
            )

    async def elicit(self, requests: list[MCPElicitationRequest]) -> dict[str, types.ElicitResult]:
        """Answer elicitation requests per the server's policy (may ``interrupt()``)."""
        policy = self.connection.config.elicitation
        if policy == "decline":
            return {r["key"]: types.ElicitResult(action="decline") for r in requests}
        if callable(policy):
            handler = cast(ElicitationHandler, policy)
            return {r["key"]: check_response(r, await handler(r, self.info)) for r in requests}
        pending = [r for r in requests if _fingerprint(r) not in self.answered]
        if pending:
            self._needs_graph("input")
            payload: MCPElicitationInterrupt = {
                "type": "mcp_elicitation",
                "server": self.connection.name,
                "tool_name": self.tool_name,
                "tool_call_id": self.tool_call_id,
                "requests": pending,
            }
            resume = interrupt(payload, response_schema=_resume_type(pending))
            for request in pending:
                self.answered[_fingerprint(request)] = resume["responses"][request["key"]]
        return {r["key"]: types.ElicitResult.model_validate(self.answered[_fingerprint(r)]) for r in requests}

    async def sample(
        self, key: str, params: types.CreateMessageRequestParams, *, replay: bool = False
    ) -> types.CreateMessageResult | None:
        """Answer a sampling request per ``sampling_model`` / ``sampling_approval``.

        With ``replay`` the request was answered in an earlier run: only the approval
        interrupt is consumed again (nothing is sampled) and ``None`` is returned.

        Raises:
            _Refused: no model, or the person declined.
        """
        config = self.connection.config
        model = cast("BaseChatModel | None", config.sampling_model)
        text: str | None = None
        if replay and not config.sampling_approval:
            return None
        if config.sampling_approval:
            self._needs_graph("approval of a sampling request")
            payload: MCPSamplingInterrupt = {
                "type": "mcp_sampling",
                "server": self.connection.name,
                "tool_name": self.tool_name,
                "tool_call_id": self.tool_call_id,
                "key": key,
                "request": params.model_dump(mode="json", by_alias=True, exclude_none=True),
            }
            decision = interrupt(payload, response_schema=_sampling_resume_type(model is not None))
            if replay:
                return None
            if decision["action"] == "decline":
                raise _Refused("the person declined the sampling request")
            text = decision.get("content")
        if text is not None:
            return types.CreateMessageResult(
                role="assistant",
                content=types.TextContent(type="text", text=text),
                model="human",
                stop_reason="endTurn",
            )
        if model is None:
            raise _Refused(
                f"sampling is not enabled for MCP server {self.connection.name!r} "
                "(configure sampling_model, optionally with sampling_approval)"
            )
        return await _run_sampling_model(model, params)

    # RequestSink: handshake-era live requests when nobody is asked --------------------------

    async def on_elicit(
        self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
    ) -> types.ElicitResult | types.ErrorData:
        request = elicitation_request("elicitation", params)
        try:
            return (await self.elicit([request]))["elicitation"]
        except (ValueError, MCPToolCallError) as exc:
            return _error(exc)

    async def on_sample(self, params: types.CreateMessageRequestParams) -> Any:
        try:
            result = await self.sample("sampling", params)
        except (_Refused, MCPToolCallError) as exc:
            return _error(exc)
        assert result is not None
        return result


def _sampling_messages(params: types.CreateMessageRequestParams) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    if params.system_prompt:
        messages.append(SystemMessage(params.system_prompt))
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        content: list[str | dict[str, Any]] = []
        for block in blocks:
            if isinstance(block, types.TextContent):
                content.append({"type": "text", "text": block.text})
            elif isinstance(block, types.ImageContent):
                content.append({"type": "image", "base64": block.data, "mime_type": block.mime_type})
            elif isinstance(block, types.AudioContent):
                content.append({"type": "audio", "base64": block.data, "mime_type": block.mime_type})
            else:
                content.append({"type": "text", "text": json.dumps(block.model_dump(mode="json"))})
        only = content[0] if len(content) == 1 else None
        value: Any = only["text"] if isinstance(only, dict) and only["type"] == "text" else content
        messages.append(HumanMessage(value) if message.role == "user" else AIMessage(value))
    return messages


async def _run_sampling_model(
    model: BaseChatModel, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    kwargs: dict[str, Any] = {}
    if params.stop_sequences:
        kwargs["stop"] = params.stop_sequences
    reply = await model.ainvoke(_sampling_messages(params), **kwargs)
    name = str(getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__)
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=reply.text),
        model=name,
        stop_reason="endTurn",
    )


def _error(exc: Exception) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message=str(exc))


# -- 2026-07-28: InputRequiredResult rounds ------------------------------------------------


async def _answer_round(ctx: CallContext, requests: Mapping[str, types.InputRequest]) -> dict[str, Any]:
    """Responses for one ``InputRequiredResult``: all elicitations in one interrupt, then each
    sampling request, then roots, in key order, so that replays line up with the first run."""
    responses: dict[str, Any] = {}
    forms = [
        elicitation_request(key, req.params)
        for key, req in sorted(requests.items())
        if isinstance(req, types.ElicitRequest)
    ]
    if forms:
        responses.update(await ctx.elicit(forms))
    for key, req in sorted(requests.items()):
        if isinstance(req, types.CreateMessageRequest):
            try:
                responses[key] = await ctx.sample(key, req.params)
            except _Refused as exc:
                raise MCPToolCallError(
                    f"MCP server {ctx.connection.name!r} asked to sample a model: {exc}", kind="sampling"
                ) from None
        elif isinstance(req, types.ListRootsRequest):
            responses[key] = await ctx.connection.list_roots()
    return responses


def _is_stale_state(exc: MCPError) -> bool:
    data = exc.error.data
    return (
        exc.code == types.INVALID_PARAMS
        and isinstance(data, Mapping)
        and data.get("reason") == "invalid_request_state"
    )


async def call_modern(
    ctx: CallContext,
    client: Client,
    name: str,
    arguments: Mapping[str, Any],
    send_kwargs: Mapping[str, Any],
) -> types.CallToolResult:
    """Drive ``InputRequiredResult`` rounds in the caller's frame (where ``interrupt()``
    works), storing each round in the checkpoint when the run is durable."""
    conf = _graph_config()
    durable = durable_run(conf)

    async def send(responses: dict[str, Any] | None, state: str | None) -> _Round:
        async def once() -> Any:
            return await client.session.call_tool(
                name,
                dict(arguments),
                input_responses=cast(types.InputResponses | None, responses),
                request_state=state,
                allow_input_required=True,
                **send_kwargs,
            )

        try:
            result = await once()
        except MCPError as exc:
            if exc.code != types.HEADER_MISMATCH:
                raise
            # The server's schema for this tool changed since it was listed: re-list, resend once.
            await ctx.connection.refresh_tools()
            result = await once()
        if not isinstance(result, (types.CallToolResult, types.InputRequiredResult)):
            raise MCPToolCallError(
                f"MCP server {ctx.connection.name!r} returned an unsupported result "
                f"({type(result).__name__})",
                kind="protocol",
            )
        return result

    async def stored(thunk: Callable[[], Awaitable[_Round]]) -> _Round:
        if not durable:
            return await thunk()

        async def encoded() -> dict[str, Any]:
            return _encode(await thunk())

        return _decode(await _stored_round(encoded))

    if durable and _resuming(conf):
        result = await stored(lambda: send(None, None))
    else:
        result = await send(None, None)
        if durable and isinstance(result, types.InputRequiredResult):
            first = result
            await stored(lambda: _ready(first))  # stored before anyone is asked
    rounds = 0
    while isinstance(result, types.InputRequiredResult):
        rounds += 1
        if rounds > MAX_ROUNDS:
            raise MCPToolCallError(
                f"MCP tool {name!r} asked for input more than {MAX_ROUNDS} times", kind="protocol"
            )
        responses = await _answer_round(ctx, result.input_requests or {})
        state = result.request_state
        try:
            result = await stored(functools.partial(send, responses or None, state))
        except MCPError as exc:
            if not _is_stale_state(exc):
                raise
            logger.info(
                "MCP server %r no longer accepts the stored request state of %r (%s); re-issuing the call",
                ctx.connection.name,
                name,
                exc.error.message,
            )
            result = await stored(lambda: send(None, None))
    return result


_Round: TypeAlias = "types.CallToolResult | types.InputRequiredResult"


async def _ready(result: _Round) -> _Round:
    return result


# -- 2025-11-25 and older: live server->client requests ------------------------------------


@dataclass
class _Question:
    kind: Literal["elicitation", "sampling"]
    request: Any  # MCPElicitationRequest | CreateMessageRequestParams
    answer: asyncio.Future[Any]


class _ActiveTimeout(Exception):
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"timed out after {seconds:g}s")


class HeldCall:
    """A handshake-era ``tools/call`` that stays open while its questions wait for a person.

    It lives on the connection, keyed by the graph task and tool call, so a run resumed
    in the same process finds it and delivers the answer. Its ``timeout`` counts only the
    time the server is working; ``elicitation_timeout`` bounds each wait for a person.
    """

    def __init__(
        self, connection: ServerConnection, key: tuple[str, ...] | None, timeout: float | None
    ) -> None:
        self.connection = connection
        self.key = key
        self.questions: list[_Question] = []
        self.changed = asyncio.Event()
        self.task: asyncio.Task[types.CallToolResult] | None = None
        self.record = InFlight(log_sink=None, request_sink=self)
        self._remaining = timeout
        self._active_since = time.monotonic()
        self._scope: anyio.CancelScope | None = None
        self._human_timed_out = False
        self._lock: asyncio.Lock | None = None
        self._holds_lock = False

    @property
    def waiting(self) -> bool:
        return any(not q.answer.done() for q in self.questions)

    # On the held task ------------------------------------------------------------------------

    async def run(
        self, client: Client, name: str, arguments: Mapping[str, Any], send_kwargs: Mapping[str, Any]
    ) -> types.CallToolResult:
        kwargs = {**send_kwargs, "read_timeout_seconds": None}  # our own clock, paused while waiting
        try:
            self._lock = self.connection.exclusive_lock()
            await self._acquire()
            with self.connection.track(self.record), anyio.CancelScope() as scope:
                self._scope = scope
                self._arm()
                return await client.call_tool(name, dict(arguments), **kwargs)
            if self._human_timed_out:
                limit = self.connection.config.elicitation_timeout or 0
                raise MCPToolCallError(
                    f"nobody answered MCP server {self.connection.name!r} within {limit:g}s "
                    "(elicitation_timeout); the call was cancelled",
                    kind="timeout",
                )
            raise _ActiveTimeout(send_kwargs.get("read_timeout_seconds") or 0.0)
        finally:
            self._release()
            self.changed.set()
            if self.key is not None and self.connection.held.get(self.key) is self:
                del self.connection.held[self.key]

    async def _acquire(self) -> None:
        if self._lock is not None and not self._holds_lock:
            await self._lock.acquire()
            self._holds_lock = True

    def _release(self) -> None:
        if self._lock is not None and self._holds_lock:
            self._holds_lock = False
            self._lock.release()

    def _arm(self) -> None:
        if self._scope is not None:
            self._active_since = time.monotonic()
            remaining = self._remaining
            self._scope.deadline = math.inf if remaining is None else anyio.current_time() + remaining

    def _pause(self) -> None:
        if self._scope is not None:
            if self._remaining is not None:
                self._remaining = max(0.0, self._remaining - (time.monotonic() - self._active_since))
            self._scope.deadline = math.inf

    async def _ask(self, kind: Literal["elicitation", "sampling"], request: Any) -> Any:
        loop = asyncio.get_running_loop()
        question = _Question(kind, request, loop.create_future())
        self.questions.append(question)
        self._pause()
        self._release()  # while it waits for an answer, this call cannot ask anything else
        limit = self.connection.config.elicitation_timeout
        timer = loop.call_later(limit, self._person_too_slow) if limit is not None else None
        self.changed.set()
        try:
            answer = await question.answer
        finally:
            if timer is not None:
                timer.cancel()
        await self._acquire()
        self._arm()
        return answer

    def _person_too_slow(self) -> None:
        self._human_timed_out = True
        if self._scope is not None:
            self._scope.cancel()

    async def on_elicit(
        self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
    ) -> types.ElicitResult | types.ErrorData:
        request = elicitation_request(f"elicitation_{len(self.questions) + 1}", params)
        return cast(types.ElicitResult | types.ErrorData, await self._ask("elicitation", request))

    async def on_sample(self, params: types.CreateMessageRequestParams) -> Any:
        return await self._ask("sampling", params)

    # On the tool frame --------------------------------------------------------------------------

    async def next_event(self, index: int) -> _Question | types.CallToolResult:
        """Question ``index`` once asked, or the call's result (raising its error)."""
        assert self.task is not None
        while True:
            if index < len(self.questions):
                return self.questions[index]
            if self.task.done():
                return self.task.result()
            self.changed.clear()
            waiter = asyncio.ensure_future(self.changed.wait())
            try:
                await asyncio.wait({waiter, self.task}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()


def _consume(task: asyncio.Task[Any]) -> None:
    """A held call may end while no frame awaits it (the graph is paused): log, don't warn."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        logger.debug("held MCP call ended with %r", exc)


def _held_key(runtime: Any, tool_call_id: str | None) -> tuple[str, ...] | None:
    """Where a held call is found again when the same graph task runs again."""
    if runtime is None or tool_call_id is None:
        return None
    configurable = (getattr(runtime, "config", None) or {}).get("configurable", {})
    info = getattr(runtime, "execution_info", None)
    return (
        str(configurable.get("thread_id", "")),
        str(configurable.get("checkpoint_ns", "")),
        str(getattr(info, "task_id", "") or ""),
        tool_call_id,
    )


async def call_legacy(
    ctx: CallContext,
    client: Client,
    name: str,
    arguments: Mapping[str, Any],
    send_kwargs: Mapping[str, Any],
    *,
    runtime: Any,
    log_sink: LogSink | None,
) -> types.CallToolResult:
    """A handshake-era call whose live requests may need a person (``interrupt()``)."""
    connection = ctx.connection
    key = _held_key(runtime, ctx.tool_call_id) if ctx.in_graph else None
    held = connection.held.get(key) if key is not None else None
    if held is None or held.task is None or held.task.done():
        held = HeldCall(connection, key, send_kwargs.get("read_timeout_seconds"))
        if key is not None:
            connection.held[key] = held
        held.task = asyncio.ensure_future(held.run(client, name, arguments, send_kwargs))
        held.task.add_done_callback(_consume)
    held.record.log_sink = log_sink
    index = 0
    try:
        while True:
            event = await held.next_event(index)
            if isinstance(event, types.CallToolResult):
                return event
            # Questions answered in an earlier run of this task are replayed too (without
            # delivering anything), so that each interrupt() gets back its own stored answer.
            replay = event.answer.done()
            try:
                answer = await _answer_live(ctx, event, replay=replay)
            except _Refused as exc:
                answer = _error(exc)
            if not event.answer.done():
                event.answer.set_result(answer)
            index += 1
    except _ActiveTimeout as exc:
        raise MCPError(
            types.REQUEST_TIMEOUT, f"Request 'tools/call' timed out after {exc.seconds:g}s"
        ) from None
    except BaseException:
        if not held.waiting and held.task is not None and not held.task.done():
            held.task.cancel()  # the frame is gone for another reason than waiting for a person
        raise


async def _answer_live(ctx: CallContext, question: _Question, *, replay: bool) -> Any:
    if question.kind == "sampling":
        return await ctx.sample("sampling", question.request, replay=replay)
    request = cast(MCPElicitationRequest, question.request)
    return (await ctx.elicit([request]))[request["key"]]


MAX_URL_ATTEMPTS = 3


async def retry_after_url_elicitation(
    ctx: CallContext, attempt: Callable[[], Awaitable[types.CallToolResult]]
) -> types.CallToolResult:
    """Run ``attempt``; when the server answers that the person must first visit a URL
    (``-32042``, both eras), ask them (URL-mode requests, never opened automatically) and,
    once every URL was accepted, send the call again."""
    for _ in range(MAX_URL_ATTEMPTS):
        try:
            return await attempt()
        except MCPError as exc:
            if exc.code != types.URL_ELICITATION_REQUIRED:
                raise
            wanted = UrlElicitationRequiredError.from_error(exc.error).elicitations
        requests = [
            elicitation_request(getattr(params, "elicitation_id", None) or f"url_{i + 1}", params)
            for i, params in enumerate(wanted)
        ]
        answers = await ctx.elicit(requests)
        refused = [r for r in requests if answers[r["key"]].action != "accept"]
        if refused:
            urls = ", ".join(cast(MCPElicitationUrlRequest, r)["url"] for r in refused)
            raise MCPToolCallError(
                f"MCP server {ctx.connection.name!r} needs the person to visit {urls} before "
                f"{ctx.tool_name!r} can run, and they did not ({answers[refused[0]['key']].action})",
                kind="elicitation",
            )
    raise MCPToolCallError(
        f"MCP server {ctx.connection.name!r} still asked for a URL visit after {MAX_URL_ATTEMPTS} attempts",
        kind="elicitation",
    )


def asks_a_person(config: Any) -> bool:
    """Can this server's requests ever need a person (so its calls must be held)?"""
    return config.elicitation == "interrupt" or bool(config.sampling_approval)


def is_legacy(client: Client) -> bool:
    return client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
