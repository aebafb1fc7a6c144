"""MCP skills payload and state types; re-exported by (and documented in) :mod:`langgraph_mcp.types`."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired, TypeAlias

from pydantic import Field
from typing_extensions import TypedDict

from langgraph_mcp.types._approval import MCPApprovalActionRequest, MCPApprovalReviewConfig

__all__ = [
    "SKILL_APPROVAL_INTERRUPT_TYPE",
    "MCPLoadedSkill",
    "MCPLoadedSkillFile",
    "MCPSkillApprovalInterrupt",
    "MCPSkillApprovalResume",
    "MCPSkillDecision",
    "MCPSkillDecisions",
    "MCPSkillResponses",
    "MCPSkillFileInfo",
    "MCPSkillGrant",
    "MCPSkillLoadResult",
    "SKILL_GRANTS_KEY",
]

SKILL_APPROVAL_INTERRUPT_TYPE = "skill_approval"
SKILL_GRANTS_KEY = "mcp_skill_grants"
"""The graph state key of the tools approved skills may call without asking
(:class:`MCPSkillGrant`, by skill id)."""


class MCPSkillFileInfo(TypedDict):
    """One file of a skill, as its server lists it."""

    path: str
    """Its path within the skill's folder (``SKILL.md``, ``references/FORMS.md``)."""
    uri: str
    digest: str
    """``sha256:<64 hex digits>`` of its bytes."""
    size: int
    """Its size in bytes."""


class MCPSkillApprovalInterrupt(TypedDict):
    """The interrupt value that asks a person to approve loading one MCP skill into the model's
    context (``MCPSkillsMiddleware(approval=...)``).

    The approval holds for exactly the files shown (``fingerprint`` stands for every file's URI
    and digest, and the frontmatter): when the server later lists the skill with other files or
    digests, loading it asks again. ``action_requests`` and ``review_configs`` are those of
    langchain's ``HITLRequest`` (one action: the ``load_skill`` call), so a UI written for
    ``HumanInTheLoopMiddleware`` (Agent Chat UI) answers it unchanged. Answer with
    ``{"decisions": [{"type": "approve"}]}`` or ``{"type": "reject", "message"?: ...}`` (or
    ``{"responses": {<key>: <decision>}}``).
    """

    type: Literal["skill_approval"]
    key: str
    """Names this question: it changes when the skill's files change."""
    tool_call_id: str | None
    server: str
    """The server the skill comes from (its name in the pool's configuration)."""
    skill: str
    """The skill's id, ``<server>:<skill path>``."""
    name: str
    description: str
    """The skill's description, as its server gives it (untrusted text)."""
    uri: str
    """Its ``SKILL.md``."""
    fingerprint: str
    """``sha256:...`` of what the approval is bound to."""
    files: list[MCPSkillFileInfo] | Literal["dynamic"]
    """Every file of the skill, or ``"dynamic"``: the server does not list them, so nothing can
    be checked and an approval is never kept (each load asks again)."""
    allowed_tools: list[str]
    """The skill's ``allowed-tools`` that approving grants: the server's tools that then run
    without their own approval question in this thread while the skill stays approved. Empty
    unless the deployment lets skills grant tools (``allowed_tools=True``)."""
    allowed_decisions: list[str]
    """``approve`` and ``reject``."""
    action_requests: list[MCPApprovalActionRequest]
    review_configs: list[MCPApprovalReviewConfig]


class MCPSkillDecision(TypedDict):
    """A decision on loading a skill: ``approve``, or ``reject`` (with a ``message`` the model is
    given)."""

    type: Literal["approve", "reject"]
    message: NotRequired[str]
    key: NotRequired[str]
    """The question's ``key``: given, the decision applies only to that question."""


class MCPSkillDecisions(TypedDict):
    """langchain's ``HITLResponse`` shape (Agent Chat UI's answer), with the one decision."""

    decisions: Annotated[list[MCPSkillDecision], Field(min_length=1, max_length=1)]


class MCPSkillResponses(TypedDict):
    """The decision keyed by the question: ``{"responses": {<key>: <decision>}}``."""

    responses: Annotated[dict[str, MCPSkillDecision], Field(min_length=1, max_length=1)]


MCPSkillApprovalResume: TypeAlias = MCPSkillDecision | MCPSkillDecisions | MCPSkillResponses
"""What resumes an :class:`MCPSkillApprovalInterrupt`."""


class MCPSkillGrant(TypedDict):
    """Tools of one server that calls may make without their own approval question, because a
    person approved a skill that names them in ``allowed-tools`` (graph state
    ``mcp_skill_grants``, by skill id). It holds while the server lists the skill with the same
    ``fingerprint``: the skills middleware revokes it before the next model call otherwise."""

    server: str
    uri: str
    """The skill's ``SKILL.md``."""
    tools: list[str]
    """The MCP tool names (as the server names them)."""
    fingerprint: str


class MCPLoadedSkillFile(TypedDict):
    """One file of a loaded skill, as kept in the graph state."""

    uri: str
    digest: str | None
    """The digest it was checked against (``None``: a dynamic skill's file, not checked)."""
    size: int
    text: str | None
    """Its text as the model was given it (``None``: a binary file, not shown to the model)."""


class MCPLoadedSkill(TypedDict):
    """A skill loaded in this thread (graph state ``mcp_skills``, keyed by skill id): a resume,
    or a run of the thread in another process, serves its files from here without reading them
    again while the server lists the same digests."""

    server: str
    name: str
    uri: str
    fingerprint: str
    """What the listing said when the skill was loaded; another fingerprint means it changed."""
    files: dict[str, MCPLoadedSkillFile]
    """The files read so far, by path within the skill (``SKILL.md`` first)."""


class MCPSkillLoadResult(TypedDict):
    """``ToolMessage.artifact`` of a ``load_skill`` call that loaded a skill or read one of its
    files (a refused call has no artifact: its message says why)."""

    server: str
    skill: str
    """The skill's id, ``<server>:<skill path>``."""
    name: str
    path: str
    """The file given: ``SKILL.md`` or a path within the skill."""
    uri: str
    digest: str | None
    """The digest the file was checked against (``None``: a dynamic skill's file)."""
    size: int
    verified: bool
    """Its size and digest (and a ``SKILL.md``'s frontmatter) matched the server's listing."""
    from_state: bool
    """Served from the graph state (loaded before in this thread), not read from the server."""
    files: NotRequired[list[MCPSkillFileInfo]]
    """With ``SKILL.md``: the skill's other files, which ``load_skill`` reads on request."""
