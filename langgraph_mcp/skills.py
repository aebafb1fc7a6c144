"""MCP skills (``io.modelcontextprotocol/skills``) in LangGraph agents and graphs.

A server that declares the skills extension lists skills: folders of instructions (a ``SKILL.md``
and the files it refers to) for one kind of task. This module offers them to a model with
progressive disclosure: the model sees each skill's id, server and description, and loads a skill
(and later a file it lists) with the ``load_skill`` tool when it decides to follow it. Every file
is read from the skill's own server only then, and checked against the server's listing (size,
SHA-256 digest, frontmatter) before the model sees it; a file the listing does not name is never
read. Approval, where asked for, holds only for the files it showed.

* :class:`MCPSkillsMiddleware`: for ``create_agent``, ``create_mcp_agent(skills=...)`` and
  deepagents' ``create_deep_agent(middleware=[...])``.
* :class:`MCPSkills`: the same parts for a graph of your own (the tool, the prompt section) and
  for code (:meth:`MCPSkills.list`, :meth:`MCPSkills.read`).
* :class:`MCPSkillsState`: the state keys (``mcp_skills``, ``mcp_skill_approvals``).

See the how-to guide "MCP skills".
"""

from langgraph_mcp._skills.entries import MCPSkill, MCPSkillFile
from langgraph_mcp._skills.middleware import MCPSkillsAgentState, MCPSkillsMiddleware
from langgraph_mcp._skills.skills import MCPSkills
from langgraph_mcp._skills.state import MCPSkillsState
from langgraph_mcp.errors import MCPSkillError

__all__ = [
    "MCPSkill",
    "MCPSkillError",
    "MCPSkillFile",
    "MCPSkills",
    "MCPSkillsAgentState",
    "MCPSkillsMiddleware",
    "MCPSkillsState",
]
