"""``MCPSkillsMiddleware``: MCP servers' skills for ``create_agent``, ``create_mcp_agent`` and
deepagents' ``create_deep_agent``, with progressive disclosure.

Before each model call the middleware lists the skills the run may load (cached by each server's
session, so usually no request at all) and adds their ids, servers and descriptions to the system
message; the agent gets the ``load_skill`` tool, which reads a skill's files only when called (see
:class:`~langgraph_mcp.skills.MCPSkills`). In a deep agent it works next to deepagents' own
``SkillsMiddleware``: MCP skills keep their ids (``<server>:<path>``), so a local skill of the same
name is never shadowed by, nor taken for, an MCP one (the listing says which names are shared).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from langgraph_mcp._compat.langchain import append_to_system
from langgraph_mcp._skills.approval import SkillApproval
from langgraph_mcp._skills.catalog import Run
from langgraph_mcp._skills.entries import SkillSet
from langgraph_mcp._skills.loader import DEFAULT_MAX_FILE_BYTES, LOADER_NAME
from langgraph_mcp._skills.skills import MCPSkills
from langgraph_mcp._skills.state import GRANTS_KEY, MCPSkillsState
from langgraph_mcp._support.sync import run_sync
from langgraph_mcp.options import ToolOptions

__all__ = ["MCPSkillsAgentState", "MCPSkillsMiddleware"]


class MCPSkillsAgentState(AgentState, MCPSkillsState):
    """An agent's state with the keys MCP skills keep."""


class MCPSkillsMiddleware(AgentMiddleware):
    """Offers an agent the skills of MCP servers: their descriptions in the system message, and
    the ``load_skill`` tool that loads one (checked against its server's listing) when the model
    decides to follow it.

    ``skills`` is an :class:`~langgraph_mcp.skills.MCPSkills`, or what it takes as
    ``connections`` (an :class:`~langgraph_mcp.MCPPool`, e.g. the MCP middleware's ``pool``, or a
    configuration); the other arguments are :class:`~langgraph_mcp.skills.MCPSkills`' own (used
    only when ``skills`` is not one already).

    Example::

        mcp = MCPMiddleware("mcp.json")
        agent = create_agent(model, middleware=[mcp, MCPSkillsMiddleware(mcp.pool, approval=True)],
                             checkpointer=InMemorySaver())
    """

    state_schema = MCPSkillsAgentState

    def __init__(
        self,
        skills: Any,
        *,
        servers: Collection[str] | None = None,
        approval: SkillApproval = None,
        allowed_tools: bool = False,
        dynamic: bool = False,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        server_options: Mapping[str, ToolOptions] | None = None,
        tool_name: str = LOADER_NAME,
        name: str | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(skills, MCPSkills):
            skills = MCPSkills(
                skills,
                servers=servers,
                approval=approval,
                allowed_tools=allowed_tools,
                dynamic=dynamic,
                max_file_bytes=max_file_bytes,
                server_options=server_options,
                tool_name=tool_name,
            )
        self.skills: MCPSkills = skills
        self.tools = [skills.tool]
        self._name = name or type(self).__name__

    @property
    def name(self) -> str:
        return self._name

    async def _section(self, request: ModelRequest) -> str | None:
        runtime = request.runtime
        config = _config()
        state = request.state if isinstance(request.state, Mapping) else {}
        metadata: Any = state.get("skills_metadata") or ()
        local = [m.get("name") for m in metadata if isinstance(m, Mapping)]
        return await self.skills.prompt(
            config,
            context=runtime.context,
            store=runtime.store,
            state=state,
            local=[n for n in local if isinstance(n, str)],
        )

    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Revokes the grants of skills their server no longer lists with the files approved."""
        grants = state.get(GRANTS_KEY) if isinstance(state, Mapping) else None
        if not grants:
            return None
        listed = await self.skills.catalog.for_run(Run(_config(), runtime.context, runtime.store, state))
        return _revoked(grants, listed)

    def before_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Synchronous agents: as :meth:`abefore_model`, listed on the package's own event loop."""
        grants = state.get(GRANTS_KEY) if isinstance(state, Mapping) else None
        if not grants:
            return None
        config = _config()

        async def listed() -> SkillSet:
            return await self.skills.catalog.for_run(Run(config, runtime.context, runtime.store, state))

        return _revoked(grants, run_sync(listed, pool=self.skills.pool))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | AIMessage:
        """Adds the skills this run may load to the system message."""
        return await handler(append_to_system(request, await self._section(request)))

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | AIMessage:
        """Synchronous agents: the skills are listed on the package's own event loop."""
        section = run_sync(lambda: self._section(request), pool=self.skills.pool)
        return handler(append_to_system(request, section))


def _config() -> Any:
    try:
        return get_config()
    except RuntimeError:  # outside a graph run
        return None


def _revoked(grants: Mapping[str, Any], listed: SkillSet) -> dict[str, Any] | None:
    """The update revoking each grant whose skill is not listed with the fingerprint approved."""
    stale = {
        skill: None
        for skill, grant in grants.items()
        if not isinstance(grant, Mapping)
        or (found := listed.by_id.get(skill)) is None
        or found.fingerprint != grant.get("fingerprint")
    }
    return {GRANTS_KEY: stale} if stale else None
