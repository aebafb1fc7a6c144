"""Public payload, resume, stream-event and artifact types (plain JSON ``TypedDict``s).

Everything here crosses a boundary a user's code or UI sees: ``interrupt()`` values raised when
an MCP server asks for input, the resume values that answer them, custom stream events, and
``ToolMessage.artifact``. All are JSON-serialisable, so they are safe in checkpoints and over
the LangGraph server API.

Elicitation interrupt (a superset of ``langchain.mcp``'s ``MCPElicitationInterrupt``, so a UI
written for that works unchanged)::

    {"type": "mcp_elicitation", "server": "shop", "tool_name": "delete_item",
     "tool_call_id": "call_1", "requests": [
        {"key": "confirm#1a2b3c", "mode": "form", "message": "Really delete?",
         "requested_schema": {"type": "object", "properties": {...}, "required": [...]}},
        {"key": "login#4d5e6f", "mode": "url", "message": "Sign in", "url": "https://..."}]}

Each request ``key`` names that exact question (it changes when the server asks something
else), so an answer can never be applied to a question it was not given for. Resume value::

    {"responses": {"confirm#1a2b3c": {"action": "accept", "content": {...}},
                   "login#4d5e6f": {"action": "decline"}}}

Every interrupt this package raises answers to that one shape, ``{"responses": {<key>: <answer>}}``:
an approval's and a sampling request's ``key`` is at the top of their payload. (Approvals also take
a bare decision or ``{"decisions": [<decision>]}``, as langchain's ``HumanInTheLoopMiddleware``
does, and sampling requests a bare answer.)

:func:`langgraph_mcp.schemas.json_schemas` gives a JSON Schema (draft 2020-12) for each payload,
resume value and event, for clients in other languages.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, NotRequired, TypeAlias

from pydantic import Field
from typing_extensions import TypedDict

from langgraph_mcp.types._approval import (
    APPROVAL_INTERRUPT_TYPE,
    APPROVALS_INTERRUPT_TYPE,
    MCPApprovalActionRequest,
    MCPApprovalDecision,
    MCPApprovalDecisions,
    MCPApprovalEditedAction,
    MCPApprovalInterrupt,
    MCPApprovalResponses,
    MCPApprovalResume,
    MCPApprovalReviewConfig,
    MCPApprovalRisk,
    MCPApprovalsDecisions,
    MCPApprovalsInterrupt,
    MCPApprovalsResponses,
    MCPApprovalsResume,
)
from langgraph_mcp.types._apps import (
    APP_UI_NAME,
    MCPAppCallRequest,
    MCPAppCallResponse,
    MCPAppContext,
    MCPAppToolResult,
    MCPAppUIProps,
)
from langgraph_mcp.types._calls import MCPCallSnapshot
from langgraph_mcp.types._catalog import MCPToolCatalog, MCPToolCatalogServer
from langgraph_mcp.types._events import MCPEventInput, MCPEventMessage, MCPEventPayload
from langgraph_mcp.types._oauth import AUTHORIZATION_INTERRUPT_TYPE, MCPAuthorizationInterrupt
from langgraph_mcp.types._skills import (
    SKILL_APPROVAL_INTERRUPT_TYPE,
    SKILL_GRANTS_KEY,
    MCPLoadedSkill,
    MCPLoadedSkillFile,
    MCPSkillApprovalInterrupt,
    MCPSkillApprovalResume,
    MCPSkillDecision,
    MCPSkillDecisions,
    MCPSkillFileInfo,
    MCPSkillGrant,
    MCPSkillLoadResult,
    MCPSkillResponses,
)
from langgraph_mcp.types._tasks import TASK_INTERRUPT_TYPE, MCPTaskInterrupt

__all__ = [
    "MCPEventInput",
    "MCPEventMessage",
    "MCPEventPayload",
    "APPROVALS_INTERRUPT_TYPE",
    "APP_UI_NAME",
    "AUTHORIZATION_INTERRUPT_TYPE",
    "APPROVAL_INTERRUPT_TYPE",
    "ELICITATION_INTERRUPT_TYPE",
    "PROGRESS_UI_NAME",
    "SAMPLING_INTERRUPT_TYPE",
    "SKILL_APPROVAL_INTERRUPT_TYPE",
    "SKILL_GRANTS_KEY",
    "TASK_INTERRUPT_TYPE",
    "ElicitationHandler",
    "MCPAppCallRequest",
    "MCPAppCallResponse",
    "MCPAppContext",
    "MCPAppToolResult",
    "MCPAppUIProps",
    "MCPApprovalActionRequest",
    "MCPApprovalDecision",
    "MCPApprovalDecisions",
    "MCPApprovalEditedAction",
    "MCPApprovalInterrupt",
    "MCPApprovalResponses",
    "MCPApprovalResume",
    "MCPApprovalReviewConfig",
    "MCPApprovalRisk",
    "MCPApprovalsDecisions",
    "MCPApprovalsInterrupt",
    "MCPApprovalsResponses",
    "MCPApprovalsResume",
    "MCPAuthorizationInterrupt",
    "MCPCallInfo",
    "MCPCallSnapshot",
    "MCPElicitationAccept",
    "MCPElicitationActionRequest",
    "MCPElicitationCancel",
    "MCPElicitationDecision",
    "MCPElicitationDecisions",
    "MCPElicitationDecline",
    "MCPElicitationEditedAction",
    "MCPElicitationFormRequest",
    "MCPElicitationInterrupt",
    "MCPElicitationRequest",
    "MCPElicitationResponse",
    "MCPElicitationResume",
    "MCPElicitationResumeValue",
    "MCPElicitationReviewConfig",
    "MCPElicitationUrlRequest",
    "MCPInterrupt",
    "MCPLoadedSkill",
    "MCPLoadedSkillFile",
    "MCPLogEvent",
    "MCPProgressEvent",
    "MCPProgressUIProps",
    "MCPResourceUpdatedEvent",
    "MCPSamplingInterrupt",
    "MCPSamplingResponses",
    "MCPSamplingResume",
    "MCPSamplingResumeValue",
    "MCPSkillApprovalInterrupt",
    "MCPSkillApprovalResume",
    "MCPSkillDecision",
    "MCPSkillDecisions",
    "MCPSkillFileInfo",
    "MCPSkillGrant",
    "MCPSkillLoadResult",
    "MCPSkillResponses",
    "MCPStreamEvent",
    "MCPTaskInterrupt",
    "MCPToolArtifact",
    "MCPToolCatalog",
    "MCPToolCatalogServer",
]

ELICITATION_INTERRUPT_TYPE = "mcp_elicitation"
SAMPLING_INTERRUPT_TYPE = "mcp_sampling"


# -- elicitation ------------------------------------------------------------------------------


class MCPElicitationFormRequest(TypedDict):
    """A question answered by filling in a form."""

    key: str
    """Names this exact question: the key of its answer in the resume value's ``responses``."""
    mode: Literal["form"]
    message: str
    """The server's question, cleaned to be shown to a person."""
    requested_schema: dict[str, Any]
    """A JSON Schema (an object of primitive fields) that an accepted answer's ``content`` fits."""


class MCPElicitationUrlRequest(TypedDict):
    """A request to visit a URL (never opened automatically)."""

    key: str
    """Names this exact question: the key of its answer in the resume value's ``responses``."""
    mode: Literal["url"]
    message: str
    """Why the person should visit the URL, cleaned to be shown to a person."""
    url: str
    """An ``https://`` URL (``http://`` only to a loopback host when the server allows it)."""
    elicitation_id: NotRequired[str]
    """The server's id of this request, when it sent one."""


MCPElicitationRequest: TypeAlias = MCPElicitationFormRequest | MCPElicitationUrlRequest


class MCPElicitationActionRequest(TypedDict):
    """One question as a human-in-the-loop action request (langchain's ``HITLRequest``), so a UI
    written for tool approvals (Agent Chat UI) shows it as a form it can answer."""

    name: str
    """The question's title, as a UI shows it above the form: the tool's name, ``(step N)`` from
    the call's second question on (the interrupt's ``step``), ``(link)`` for a URL request, then
    the question's message, shortened (``book (step 2): Book 2 nights from 2026-12-24?``); ``#2``,
    ``#3``... added when it would repeat within the payload."""
    args: dict[str, Any]
    """A form's fields as shown: the schema's default, or ``""`` for a field without one. A URL
    request has none."""
    description: str
    """The question's message (cleaned as ``message`` is); then a URL request's URL, or a form's
    fields, one a line, each with its title, whether it is required and what to enter."""


class MCPElicitationReviewConfig(TypedDict):
    """The decisions a question can take, as in langchain's ``HITLRequest``: ``approve`` accepts
    the fields as shown (a URL request: the person went there), ``edit`` accepts edited fields,
    ``reject`` declines."""

    action_name: str
    """The ``name`` of the action request it is for."""
    allowed_decisions: list[str]
    """``["approve", "edit", "reject"]`` for a form with fields, ``["approve", "reject"]`` otherwise."""
    args_schema: NotRequired[dict[str, Any]]
    """A form's ``requested_schema``."""


class MCPElicitationInterrupt(TypedDict):
    """The ``interrupt()`` value raised when an MCP server asks a person for input.

    ``action_requests`` and ``review_configs`` present the same questions, in the same order, as
    a human-in-the-loop request (langchain's ``HITLRequest``); such a UI answers with
    ``{"decisions": [...]}`` (:class:`MCPElicitationDecisions`), one decision per question."""

    type: Literal["mcp_elicitation"]
    server: str
    """The name of the MCP server that asks."""
    tool_name: str
    """The tool whose call the question belongs to."""
    tool_call_id: str | None
    requests: list[MCPElicitationRequest]
    """One or more questions; answer each of them, by its ``key``."""
    step: NotRequired[int]
    """Which of the call's interrupts for a person's answers this is: 1 for its first, 2 for the
    second round of a two-round question, ..."""
    action_requests: NotRequired[list[MCPElicitationActionRequest]]
    """One per request, in the order of ``requests``."""
    review_configs: NotRequired[list[MCPElicitationReviewConfig]]
    """One per request, in the order of ``requests``."""


class MCPElicitationAccept(TypedDict):
    """The person answered: ``content`` fits the form request's ``requested_schema`` (fields left
    out take the schema's defaults); a URL request is accepted with no ``content``."""

    action: Literal["accept"]
    content: NotRequired[dict[str, Any] | None]


class MCPElicitationDecline(TypedDict):
    """The person said no."""

    action: Literal["decline"]


class MCPElicitationCancel(TypedDict):
    """The person dismissed the question without answering."""

    action: Literal["cancel"]


MCPElicitationResponse: TypeAlias = MCPElicitationAccept | MCPElicitationDecline | MCPElicitationCancel


class MCPElicitationResume(TypedDict):
    """The resume value for an :class:`MCPElicitationInterrupt`: one response per request key."""

    responses: dict[str, MCPElicitationResponse]
    """``{<request key>: <response>}``, one for every request of the interrupt."""


class MCPElicitationEditedAction(TypedDict):
    """A form's fields as the person edited them (values may be text: typed as the schema says)."""

    name: NotRequired[str]
    """The action request's ``name``, when given."""
    args: dict[str, Any]


class MCPElicitationDecision(TypedDict):
    """A human-in-the-loop decision on one question: ``approve`` accepts it as shown, ``edit``
    accepts ``edited_action.args`` as the form's content, ``reject`` declines (``message`` is
    not sent to the server)."""

    type: Literal["approve", "edit", "reject"]
    edited_action: NotRequired[MCPElicitationEditedAction]
    message: NotRequired[str]


class MCPElicitationDecisions(TypedDict):
    """langchain's ``HITLResponse`` shape: one decision per question, in the order of the
    interrupt's ``action_requests`` (a list of another length is refused)."""

    decisions: Annotated[list[MCPElicitationDecision], Field(min_length=1)]


MCPElicitationResumeValue: TypeAlias = MCPElicitationResume | MCPElicitationDecisions
"""What resumes an :class:`MCPElicitationInterrupt`: ``{"responses": {<key>: <response>}}`` or
``{"decisions": [<decision>, ...]}``."""


# -- sampling ---------------------------------------------------------------------------------


class MCPSamplingInterrupt(TypedDict):
    """The ``interrupt()`` value raised to approve a server's sampling request."""

    type: Literal["mcp_sampling"]
    server: str
    tool_name: str
    tool_call_id: str | None
    key: str
    """Names this request: the key of its answer in a ``{"responses": {<key>: ...}}`` resume value."""
    request: dict[str, Any]
    """``sampling/createMessage`` params (``messages``, ``systemPrompt``, ``maxTokens``, ``tools``, ...)."""
    tools: NotRequired[list[str]]
    """The names of the tools the request offers the model (only when it offers tools)."""


class MCPSamplingResume(TypedDict):
    """``accept`` lets ``sampling_model`` answer, or answers with ``content`` itself."""

    action: Literal["accept", "decline"]
    content: NotRequired[str]
    """The answer text (instead of the configured ``sampling_model``'s)."""
    key: NotRequired[str]
    """The request's ``key``: given, the answer applies only to that request."""


class MCPSamplingResponses(TypedDict):
    """An answer to an :class:`MCPSamplingInterrupt`, keyed like every other answer."""

    responses: Annotated[dict[str, MCPSamplingResume], Field(min_length=1, max_length=1)]
    """``{<the interrupt's key>: <answer>}`` (one entry)."""


MCPSamplingResumeValue: TypeAlias = MCPSamplingResume | MCPSamplingResponses
"""What resumes an :class:`MCPSamplingInterrupt`: an answer, or ``{"responses": {<key>: <answer>}}``."""


# -- code policies ----------------------------------------------------------------------------


class MCPCallInfo(TypedDict):
    """The call a server's request belongs to. ``tool_name`` and ``tool_call_id`` are ``None``
    when that cannot be told: a 2025-11-25 server over stdio or SSE asked while several calls
    were running, and an answer that needs no person is given without knowing which."""

    server: str
    tool_name: str | None
    tool_call_id: str | None


ElicitationHandler: TypeAlias = Callable[
    [MCPElicitationRequest, MCPCallInfo], Awaitable[MCPElicitationResponse]
]
"""An ``elicitation=`` policy: an async function that answers one request itself (no interrupt)."""


# -- stream events ----------------------------------------------------------------------------


class MCPProgressEvent(TypedDict):
    """A ``stream_mode="custom"`` event for one MCP progress notification."""

    type: Literal["mcp_progress"]
    server: str
    tool_name: str
    tool_call_id: str | None
    progress: float
    """How far the call is; it only grows during a call."""
    total: float | None
    """What ``progress`` reaches when the call is done, when the server knows it."""
    message: str | None


PROGRESS_UI_NAME = "mcp-progress"
"""The component name of the generative-UI message that shows a call's progress."""


class MCPProgressUIProps(TypedDict):
    """The props of the generative-UI message (``name`` :data:`PROGRESS_UI_NAME`) that shows one
    tool call's progress: pushed with ``push_ui_message`` at the call's first progress
    notification, updated in place (same id, ``merge=True``) at each one, and marked ``done`` or
    ``failed`` when the call ends."""

    server: str
    tool_name: str
    tool_call_id: str
    progress: float
    """How far the call is; it only grows during a call."""
    total: float | None
    """What ``progress`` reaches when the call is done, when the server knows it."""
    message: str | None
    """The server's latest progress message, without secrets or hidden characters, at most 500
    characters."""
    status: Literal["running", "done", "failed"]
    """``running`` while the call runs; ``done`` once it returned a result (an ``isError`` result
    included); ``failed`` when it raised (timeout, lost connection, cancelled run)."""


class MCPLogEvent(TypedDict):
    """A ``stream_mode="custom"`` event for one MCP log notification."""

    type: Literal["mcp_log"]
    server: str
    tool_name: str
    tool_call_id: str | None
    level: str
    """The MCP log level: debug, info, notice, warning, error, critical, alert or emergency."""
    logger: str | None
    data: Any
    """What the server logged: any JSON value (a string, an object, ...)."""


class MCPResourceUpdatedEvent(TypedDict):
    """A subscribed resource changed (``stream_mode="custom"`` when the subscription was opened
    in a graph node; also what :meth:`MCPPool.subscribe` yields). Read it again to see how."""

    type: Literal["mcp_resource_updated"]
    server: str
    uri: str


# -- results ----------------------------------------------------------------------------------


class MCPToolArtifact(TypedDict):
    """``ToolMessage.artifact`` of an MCP tool call (plain JSON, checkpoint-safe).

    ``structured_content`` has the same meaning as in ``langchain.mcp``'s artifact.
    """

    structured_content: dict[str, Any] | None
    content: list[dict[str, Any]]
    """Content blocks routed away from the model by ``output_handling``."""
    meta: NotRequired[dict[str, Any]]
    """The result's ``_meta``, when the server sent one."""
    server: NotRequired[str]
    """The server that produced the result (resource links in it are read from there)."""
    full_text: NotRequired[str]
    """The whole text of an output cut by ``max_chars`` with ``overflow: "artifact"``."""


# -- any interrupt, any event -----------------------------------------------------------------

MCPInterrupt: TypeAlias = (
    MCPElicitationInterrupt
    | MCPApprovalInterrupt
    | MCPApprovalsInterrupt
    | MCPSamplingInterrupt
    | MCPTaskInterrupt
    | MCPAuthorizationInterrupt
    | MCPSkillApprovalInterrupt
)
"""Any ``interrupt()`` value this package raises; ``type`` tells which."""

MCPStreamEvent: TypeAlias = MCPProgressEvent | MCPLogEvent | MCPResourceUpdatedEvent
"""Any ``stream_mode="custom"`` event this package emits; ``type`` tells which."""
