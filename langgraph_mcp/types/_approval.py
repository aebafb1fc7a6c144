"""Approval payload and resume types; re-exported by (and documented in) :mod:`langgraph_mcp.types`."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypeAlias

from pydantic import Field
from typing_extensions import TypedDict

__all__ = [
    "APPROVALS_INTERRUPT_TYPE",
    "APPROVAL_INTERRUPT_TYPE",
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
]

# -- approval --------------------------------------------------------------------------------

APPROVAL_INTERRUPT_TYPE = "tool_approval"
APPROVALS_INTERRUPT_TYPE = "tool_approvals"


class MCPApprovalActionRequest(TypedDict):
    """The call, as in langchain's ``HITLRequest``."""

    name: str
    args: dict[str, Any]
    description: str


class MCPApprovalReviewConfig(TypedDict):
    """The decisions allowed for the call, as in langchain's ``HITLRequest``."""

    action_name: str
    allowed_decisions: list[str]


class MCPApprovalRisk(TypedDict):
    """Why an approval policy by risk (``ApprovalByRisk``) asks about a call."""

    by: Literal["annotations", "classifier", "classifier_error"]
    """What judged it: the tool's MCP annotations, the risk classifier, or the classifier's
    failure (an error, a timeout, an answer without the probability: the person decides)."""
    reason: str
    """The judgement in a few words, for the person."""
    probability: NotRequired[float]
    """With ``classifier``: the probability that the call is risky."""


class MCPApprovalInterrupt(TypedDict):
    """The interrupt value that asks a person to approve one MCP tool call before it runs.

    The top-level fields are those of langchain's ``ToolApprovalRequest``
    (``HumanInTheLoopMiddleware(interrupt_mode="per_call")``); ``action_requests`` and
    ``review_configs`` are those of its ``HITLRequest`` (batched mode), with this one call.
    A UI written for either works unchanged. Answer with one decision
    (:class:`MCPApprovalDecision`) or with ``{"decisions": [<one decision>]}``.
    """

    type: Literal["tool_approval"]
    tool_call_id: str | None
    name: str
    """The tool's exposed name."""
    args: dict[str, Any]
    """The arguments the model chose (hidden arguments are not shown)."""
    description: str
    server: str
    mcp_tool: str
    """The tool's name on its server."""
    annotations: dict[str, Any]
    """The tool's MCP annotations (``readOnlyHint``, ``destructiveHint``, ...)."""
    key: str
    """Names this question; a decision that carries another ``key`` is not applied to it."""
    allowed_decisions: list[str]
    """The decision ``type``s a person may take (of approve, edit, reject, respond)."""
    action_requests: list[MCPApprovalActionRequest]
    review_configs: list[MCPApprovalReviewConfig]
    risk: NotRequired[MCPApprovalRisk]
    """With ``approval=ApprovalByRisk(...)``: why this call is asked about."""


class MCPApprovalEditedAction(TypedDict):
    """The call to run instead: the same tool (``name`` may be left out), other arguments."""

    name: NotRequired[str]
    args: dict[str, Any]


class MCPApprovalDecision(TypedDict):
    """A decision, as in ``HumanInTheLoopMiddleware``:

    * ``{"type": "approve"}``: run the call as the model chose it;
    * ``{"type": "edit", "edited_action": {"name": <same tool>, "args": {...}}}``: run it with
      these arguments instead (checked against the tool's schema);
    * ``{"type": "reject", "message"?: str}``: do not run it; the model gets an error
      ``ToolMessage`` (with the reason, if given);
    * ``{"type": "respond", "message": str}``: do not run it; the model gets ``message`` as the
      tool's result (only when allowed).
    """

    type: Literal["approve", "edit", "reject", "respond"]
    edited_action: NotRequired[MCPApprovalEditedAction]
    """With ``edit``: the arguments to run the call with (checked against the tool's schema)."""
    message: NotRequired[str]
    """With ``reject``: the reason the model is given; with ``respond``: the tool result it gets."""
    key: NotRequired[str]
    """The question's ``key``: given, the decision applies only to that question."""


class MCPApprovalDecisions(TypedDict):
    """langchain's ``HITLResponse`` shape, with the one decision for this call."""

    decisions: Annotated[list[MCPApprovalDecision], Field(min_length=1, max_length=1)]
    """Exactly one decision."""


class MCPApprovalResponses(TypedDict):
    """A decision keyed like every other answer: ``{"responses": {<the interrupt's key>: <decision>}}``."""

    responses: Annotated[dict[str, MCPApprovalDecision], Field(min_length=1, max_length=1)]
    """The interrupt's ``key`` and its decision (one entry)."""


MCPApprovalResume: TypeAlias = MCPApprovalDecision | MCPApprovalDecisions | MCPApprovalResponses
"""What resumes an :class:`MCPApprovalInterrupt`: a decision, ``{"decisions": [<decision>]}`` or
``{"responses": {<key>: <decision>}}``."""


class MCPApprovalsInterrupt(TypedDict):
    """The interrupt value that asks a person to approve several MCP tool calls of one model turn
    at once (``approval_mode="batched"``).

    ``action_requests`` and ``review_configs`` are those of langchain's ``HITLRequest``, one per
    call in call order, so a UI written for ``HumanInTheLoopMiddleware`` works unchanged.
    Answer with ``{"decisions": [...]}``, one decision per action request, in the same order
    (:class:`MCPApprovalsDecisions`); each decision is checked against its own call.
    """

    type: Literal["tool_approvals"]
    key: str
    """Names this question; ``{"responses": {<key>: {"decisions": [...]}}}`` answers it too."""
    approvals: list[MCPApprovalInterrupt]
    """Each call's own question, in call order, with its ``key``, server and annotations."""
    action_requests: list[MCPApprovalActionRequest]
    review_configs: list[MCPApprovalReviewConfig]


class MCPApprovalsDecisions(TypedDict):
    """langchain's ``HITLResponse``: one decision per action request, in order."""

    decisions: Annotated[list[MCPApprovalDecision], Field(min_length=1)]
    """As many decisions as the interrupt has ``action_requests``, in the same order."""


class MCPApprovalsResponses(TypedDict):
    """Decisions keyed by question: the interrupt's ``key`` with :class:`MCPApprovalsDecisions`,
    or every call's ``key`` (from ``approvals``) with its decision."""

    responses: dict[str, MCPApprovalsDecisions | MCPApprovalDecision]


MCPApprovalsResume: TypeAlias = MCPApprovalsDecisions | MCPApprovalsResponses
"""What resumes an :class:`MCPApprovalsInterrupt`."""
