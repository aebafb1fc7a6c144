"""The graph state MCP skills keep: the skills loaded in a thread, and the approvals given.

Both keys are checkpointed with the thread, so a resume, or the thread's next run in another
process, knows what was loaded (and serves it without reading it again) and what a person
approved (for exactly which files).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, NotRequired

from typing_extensions import TypedDict

from langgraph_mcp.types import SKILL_GRANTS_KEY, MCPLoadedSkill, MCPSkillGrant

__all__ = [
    "APPROVALS_KEY",
    "GRANTS_KEY",
    "LOADED_KEY",
    "MCPSkillsState",
    "merge_approvals",
    "merge_grants",
    "merge_loaded",
]

LOADED_KEY = "mcp_skills"
APPROVALS_KEY = "mcp_skill_approvals"
GRANTS_KEY = SKILL_GRANTS_KEY


def merge_loaded(
    current: Mapping[str, MCPLoadedSkill] | None, update: Mapping[str, MCPLoadedSkill] | None
) -> dict[str, MCPLoadedSkill]:
    """The loaded skills with ``update`` over them: a skill loaded again with the same fingerprint
    gains the files read since; with another fingerprint (it changed), it is replaced."""
    merged = dict(current or {})
    for skill, loaded in (update or {}).items():
        before = merged.get(skill)
        if before is not None and before.get("fingerprint") == loaded.get("fingerprint"):
            merged[skill] = {**loaded, "files": {**before.get("files", {}), **loaded.get("files", {})}}
        else:
            merged[skill] = loaded
    return merged


def merge_approvals(current: Mapping[str, Any] | None, update: Mapping[str, Any] | None) -> dict[str, Any]:
    """The approvals with ``update`` over them (skill id -> the fingerprint approved)."""
    return {**(current or {}), **(update or {})}


def merge_grants(
    current: Mapping[str, MCPSkillGrant] | None, update: Mapping[str, MCPSkillGrant | None] | None
) -> dict[str, MCPSkillGrant]:
    """The grants with ``update`` over them (``None`` revokes a skill's grant)."""
    merged = dict(current or {})
    for skill, grant in (update or {}).items():
        if grant is None:
            merged.pop(skill, None)
        else:
            merged[skill] = grant
    return merged


class MCPSkillsState(TypedDict):
    """The state keys MCP skills need, for a graph of your own: mix it into the state schema of
    the graph whose tool node runs the ``load_skill`` tool (``MCPSkillsMiddleware`` adds them to
    an agent's state itself)."""

    mcp_skills: NotRequired[Annotated[dict[str, MCPLoadedSkill], merge_loaded]]
    """The skills loaded in this thread, by skill id (``<server>:<skill path>``)."""
    mcp_skill_approvals: NotRequired[Annotated[dict[str, str], merge_approvals]]
    """Skill id -> the fingerprint a person approved it for."""
    mcp_skill_grants: NotRequired[Annotated[dict[str, MCPSkillGrant], merge_grants]]
    """Skill id -> the tools a person let it call without asking (``allowed_tools=True``); revoked
    when the skill's server lists it with other files."""
