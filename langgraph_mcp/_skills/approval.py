"""A person's approval before a skill enters the model's context, bound to what was approved.

The question (:class:`~langgraph_mcp.types.MCPSkillApprovalInterrupt`) shows the skill, its server
and every file with its digest; an approval is kept in the graph state as the skill's fingerprint
(``mcp_skill_approvals``), so it holds only while the server lists exactly those files and
digests: a skill whose files changed asks again. A skill whose files are ``"dynamic"`` cannot be
bound to anything, so its approval is never kept. It is answered as langchain's
``HumanInTheLoopMiddleware`` questions are (``{"decisions": [...]}``, a bare decision, or
``{"responses": {<key>: <decision>}}``), with ``approve`` or ``reject``; any other answer is
refused and the question stays pending.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, WithJsonSchema

from langgraph_mcp._compat.langgraph import ask, shown_question
from langgraph_mcp._elicitation.answers import (
    STALE,
    call_scope,
    is_stale,
    keyed_answer,
    one_decision_schema,
    question_key,
)
from langgraph_mcp._skills.entries import MCPSkill
from langgraph_mcp.errors import MCPConfigError
from langgraph_mcp.types import MCPSkillApprovalInterrupt

__all__ = ["SKILL_DECISIONS", "SkillApproval", "ask_skill_approval", "skill_question"]

SKILL_DECISIONS = ("approve", "reject")

SkillApproval = bool | Collection[str] | None
"""Which skills ask a person before they load: ``True`` (all), ``None``/``False`` (none), or a
collection of server names (all their skills) and skill ids or ``<server>:<name>``."""


def check_policy(policy: Any) -> SkillApproval:
    """``policy`` if it is a :data:`SkillApproval` (else :class:`~langgraph_mcp.MCPConfigError`)."""
    if policy is None or isinstance(policy, bool):
        return policy
    if isinstance(policy, str | bytes) or not isinstance(policy, Collection):
        raise MCPConfigError(
            None, None, f"skill approval must be True, None or a collection of names; got {policy!r}"[:300]
        )
    if not all(isinstance(n, str) for n in policy):
        raise MCPConfigError(None, None, "skill approval names must be strings")
    return frozenset(policy)


def needs_approval(policy: SkillApproval, skill: MCPSkill) -> bool:
    if policy is None or policy is False:
        return False
    if policy is True:
        return True
    assert not isinstance(policy, bool)
    return bool({skill.server, skill.id, f"{skill.server}:{skill.name}"} & set(policy))


def skill_question(
    skill: MCPSkill, *, tool_name: str, tool_call_id: str | None, grants: tuple[str, ...]
) -> MCPSkillApprovalInterrupt:
    """The approval question for loading ``skill`` (``grants``: the tools approving grants)."""
    key = question_key("skill", call_scope(skill.server, tool_name, tool_call_id), {"fp": skill.fingerprint})
    args = {"skill": skill.id}
    files: Any = (
        "dynamic"
        if skill.files is None
        else [{"path": f.path, "uri": f.uri, "digest": f.digest, "size": f.size} for f in skill.files]
    )
    shown = f"Load the skill {skill.name!r} from MCP server {skill.server!r} into the model's context"
    if grants:
        shown += f", letting it call {', '.join(grants)} without asking"
    return {
        "type": "skill_approval",
        "key": key,
        "tool_call_id": tool_call_id,
        "server": skill.server,
        "skill": skill.id,
        "name": skill.name,
        "description": skill.description,
        "uri": skill.uri,
        "fingerprint": skill.fingerprint,
        "files": files,
        "allowed_tools": list(grants),
        "allowed_decisions": list(SKILL_DECISIONS),
        "action_requests": [
            {"name": tool_name, "args": args, "description": f"{shown}: {skill.description}"}
        ],
        "review_configs": [{"action_name": tool_name, "allowed_decisions": list(SKILL_DECISIONS)}],
    }


def _decision(value: Any, key: str) -> dict[str, Any]:
    if not isinstance(value, Mapping) or value.get("type") not in SKILL_DECISIONS:
        raise ValueError(
            f"the decision on loading a skill must be an object with 'type' one of {list(SKILL_DECISIONS)}"
        )
    if value.get("key", key) != key:
        return STALE
    if "message" in value and not isinstance(value["message"], str):
        raise ValueError("'message' must be a string")
    return dict(value)


def _resume_type(key: str) -> Any:
    def validate(value: Any) -> dict[str, Any]:
        if isinstance(value, Mapping) and isinstance(value.get("responses"), Mapping):
            answer = keyed_answer(value["responses"], key)
            return STALE if is_stale(answer) else _decision(answer, key)
        holder: Any = value
        if isinstance(value, Mapping) and isinstance(value.get("decisions"), list):
            if len(value["decisions"]) != 1:
                raise ValueError(
                    f"one decision is expected for loading a skill, got {len(value['decisions'])}"
                )
            holder, value = value["decisions"], value["decisions"][0]
        elif isinstance(value, Mapping) and ("responses" in value or "action" in value):
            return STALE
        if isinstance(value, Mapping) and "key" in value:
            return _decision(value, key)
        # A decision that names no question is taken only for the question the person was shown
        # (the skill, its files and digests, as asked): a skill that changed since, or a name
        # that now means another skill, asks again. Bound to it, so a replay is checked too.
        shown = shown_question()
        if not (isinstance(shown, Mapping) and shown.get("key") == key):
            return STALE
        decided = _decision(value, key)
        if isinstance(holder, list):
            holder[0] = {**holder[0], "key": key}
        elif isinstance(holder, dict):
            holder["key"] = key
        return decided

    decision = {
        "type": "object",
        "properties": {
            "type": {"enum": list(SKILL_DECISIONS)},
            "message": {"type": "string"},
            "key": {"const": key},
        },
        "required": ["type"],
    }
    schema = one_decision_schema(decision, key)
    return Annotated[dict[str, Any], AfterValidator(validate), WithJsonSchema(schema)]


def ask_skill_approval(question: MCPSkillApprovalInterrupt) -> dict[str, Any]:
    """Ask a person (an interrupt); the decision (``approve`` or ``reject``).

    Raises:
        GraphInterrupt: the question (the loader continues when the run resumes).
    """
    schema = _resume_type(question["key"])
    while is_stale(decision := ask(question, response_schema=schema)):
        pass
    return dict(decision)
