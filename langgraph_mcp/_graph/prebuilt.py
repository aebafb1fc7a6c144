"""A prebuilt MCP agent, and Send-per-call routing for hand-built graphs.

:func:`create_mcp_agent` is ``create_agent`` with an :class:`~langgraph_mcp.MCPMiddleware`
first in its middleware: a compiled graph that runs on its own or as a node (subgraph) of a
parent graph. As a subgraph it uses the parent's checkpointer, so its interrupts (elicitation,
approval) surface through the parent's stream and ``Command(resume=...)`` given to the parent
resumes it; its custom stream events (MCP progress and logs) reach the parent's
``stream_mode="custom"`` when the parent streams with ``subgraphs=True``.

:func:`route_tool_calls` is ``tools_condition`` with one ``Send`` per tool call, so each call of
an ``MCPToolNode`` (or ``ToolNode``) runs as its own task: parallel questions surface together and
a finished call is never run again when another is resumed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END
from langgraph.types import Send
from pydantic import BaseModel

from langgraph_mcp._call.approval import ApprovalMode
from langgraph_mcp._catalog.bind import DEFAULT_DECISIONS
from langgraph_mcp._graph.middleware import MCPMiddleware
from langgraph_mcp._graph.spec import MCPOptions
from langgraph_mcp._pool.pool import OnConnectionError
from langgraph_mcp._skills.middleware import MCPSkillsMiddleware
from langgraph_mcp._skills.skills import MCPSkills
from langgraph_mcp._stream.calls import MCPStreamTransformer
from langgraph_mcp.config import DEFAULT_CALL_TIMEOUT
from langgraph_mcp.errors import FailureKind, MCPConfigError
from langgraph_mcp.options import ApprovalPolicy, ToolFilter, ToolOptions, ToolSearch

__all__ = ["create_mcp_agent", "route_tool_calls"]


def create_mcp_agent(
    model: str | BaseChatModel,
    connections: Any,
    *,
    tools: Sequence[BaseTool | Callable[..., Any]] = (),
    system_prompt: str | None = None,
    middleware: Sequence[AgentMiddleware] = (),
    tool_options: Mapping[str, ToolOptions] | None = None,
    server_options: Mapping[str, ToolOptions] | None = None,
    approval: ApprovalPolicy = None,
    approval_decisions: Sequence[str] = DEFAULT_DECISIONS,
    approval_mode: ApprovalMode = "batched",
    tool_filter: ToolFilter | None = None,
    tool_search: bool | ToolSearch = False,
    raise_errors: Collection[FailureKind] = (),
    on_connection_error: OnConnectionError = "raise",
    default_timeout: float | None = DEFAULT_CALL_TIMEOUT,
    view_calls: bool = False,
    skills: bool | MCPSkills = False,
    **agent_kwargs: Any,
) -> Any:
    """An agent (``create_agent``'s compiled graph) whose tools are the MCP servers' tools, plus
    any local ``tools``.

    Nothing connects until the first model call. With ``tool_search`` on, the model finds MCP tools
    with a search tool instead of being given them all (see :class:`~langgraph_mcp.MCPMiddleware`).
    With ``view_calls`` the agent takes the calls of MCP Apps views
    (``MCPMiddleware(view_calls=True)``; serve their route with ``app_routes(agent.mcp)``). The MCP
    middleware is ``agent.mcp`` (close an owned pool with ``agent.mcp.aclose()``).

    Args:
        model: The chat model, as for ``create_agent``.
        connections: As for :class:`~langgraph_mcp.MCPToolNode`.
        tools: Local tools, as for ``create_agent``.
        system_prompt: As for ``create_agent``.
        middleware: More middleware; it runs after (inside) the MCP middleware (a
            ``ToolRetryMiddleware`` there retries the failure kinds listed in ``raise_errors``).
        tool_options: As for :class:`~langgraph_mcp.MCPToolNode`.
        server_options: As for :class:`~langgraph_mcp.MCPToolNode`.
        approval: As for :class:`~langgraph_mcp.MCPToolNode`.
        approval_decisions: As for :class:`~langgraph_mcp.MCPToolNode`.
        approval_mode: As for :class:`~langgraph_mcp.MCPMiddleware`.
        tool_filter: As for :class:`~langgraph_mcp.MCPToolNode`.
        tool_search: As for :class:`~langgraph_mcp.MCPMiddleware`.
        raise_errors: As for :class:`~langgraph_mcp.MCPMiddleware`.
        on_connection_error: As for :class:`~langgraph_mcp.MCPToolNode`.
        default_timeout: As for :class:`~langgraph_mcp.MCPToolNode`.
        view_calls: As for :class:`~langgraph_mcp.MCPMiddleware`.
        skills: Offer the servers' skills (``io.modelcontextprotocol/skills``) with progressive
            disclosure: ``True``, or an :class:`~langgraph_mcp.skills.MCPSkills` for its options
            (approval, granting tools, ...). An :class:`~langgraph_mcp.skills.MCPSkillsMiddleware`
            then follows the MCP middleware, on the same pool (``agent.skills``; ``None`` without).
        **agent_kwargs: Go to ``create_agent`` (``checkpointer``, ``store``, ``context_schema``,
            ``state_schema``, ``response_format``, ``name``, ...).
    """
    options = MCPOptions(
        tool_options=tool_options,
        server_options=server_options,
        approval=approval,
        approval_decisions=approval_decisions,
        approval_mode=approval_mode,
        tool_filter=tool_filter,
        tool_search=tool_search,
        raise_errors=raise_errors,
        on_connection_error=on_connection_error,
        default_timeout=default_timeout,
        view_calls=view_calls,
    )
    mcp = MCPMiddleware._from_options(connections, options)
    skilled: list[AgentMiddleware] = []
    if skills is True:
        skilled = [MCPSkillsMiddleware(mcp.pool, server_options=server_options)]
    elif isinstance(skills, MCPSkills):
        skilled = [MCPSkillsMiddleware(skills)]
    elif skills is not False:
        raise MCPConfigError(None, "skills", f"must be True, False or an MCPSkills, not {skills!r}"[:200])
    agent = create_agent(
        model,
        tools=list(tools),
        system_prompt=system_prompt,
        middleware=[mcp, *skilled, *middleware],
        **agent_kwargs,
    )
    # The agent's own tools, known here once: a batch of approvals never asks about their calls,
    # even in a process whose first step is a resume (no model call yet to list them from).
    own = [*tools, *(t for m in [*skilled, *middleware] for t in getattr(m, "tools", ()))]
    names = (getattr(tool, "name", getattr(tool, "__name__", None)) for tool in own)
    mcp.agent_tools = frozenset(name for name in names if isinstance(name, str))
    # stream_events(version="v3"): each MCP call's progress, logs, questions and view as
    # run.extensions["mcp"] / ["mcp_calls"], and on a deployment's custom:mcp channel.
    agent.stream_transformers = (*agent.stream_transformers, MCPStreamTransformer)
    agent.mcp = mcp  # type: ignore[attr-defined]
    agent.skills = skilled[0] if skilled else None  # type: ignore[attr-defined]
    return agent


def route_tool_calls(
    tools_node: str = "tools",
    *,
    messages_key: str = "messages",
    otherwise: str = END,
) -> Callable[[Any], list[Send] | str]:
    """A conditional-edge function: one ``Send(tools_node, [tool_call])`` per tool call of the
    last AI message that has no ``ToolMessage`` yet, or ``otherwise`` (default ``END``) when
    there is none.

    Use it as ``graph.add_conditional_edges("model", route_tool_calls(), ["tools", END])``.
    """

    def route(state: list[AnyMessage] | Mapping[str, Any] | BaseModel) -> list[Send] | str:
        if isinstance(state, list):
            messages = state
        elif isinstance(state, Mapping):
            messages = state.get(messages_key, [])
        else:
            messages = getattr(state, messages_key, [])
        last_ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if last_ai is None or not last_ai.tool_calls:
            return otherwise
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        pending = [c for c in last_ai.tool_calls if c["id"] not in answered]
        if not pending:
            return otherwise
        return [Send(tools_node, [call]) for call in pending]

    return route
