"""``MCPToolNode``: LangGraph's ``ToolNode`` with tools that live on MCP servers.

Everything ``ToolNode`` defines is inherited unchanged: the four input shapes,
output shapes and ``Command`` merging, ``handle_tool_errors`` and its error
templates, ``Command`` validation, ``wrap_tool_call`` / ``awrap_tool_call``,
state/store/runtime injection, and execution through ``BaseTool.ainvoke`` (so
callbacks, tracing and ``stream_mode="tools"`` work). What this class adds is
the tool set: before each run it makes sure the MCP servers are connected and
their current tools are registered next to the local ``tools``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AnyMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import (
    AsyncToolCallWrapper,
    ToolCallWrapper,
    _default_handle_tool_errors,
    _get_all_injected_args,
)
from langgraph.runtime import Runtime
from pydantic import BaseModel

from langgraph_mcp.config import DEFAULT_CALL_TIMEOUT
from langgraph_mcp.errors import MCPConnectionError
from langgraph_mcp.pool import MCPPool, OnConnectionError
from langgraph_mcp.tools import MCPTool, load_mcp_tools

__all__ = ["MCPToolNode"]


class MCPToolNode(ToolNode):
    """A drop-in ``ToolNode`` whose tools live on MCP servers.

    Args:
        connections: An :class:`MCPPool` to share, or anything
            :func:`~langgraph_mcp.load_connections` accepts (a dict of servers,
            a JSON config path, an ``MCPServer``); the node then owns a pool.
        tools: Local LangChain tools (or callables) served by the same node.
            Their names win over MCP tool names.
        on_connection_error, default_timeout: For a pool the node creates; see
            :class:`MCPPool`.

    The remaining arguments are ``ToolNode``'s and mean exactly the same.

    Sessions open lazily on the first run (or with :meth:`start`) and stay open
    until :meth:`aclose` or ``async with`` exit; a node built on a shared pool
    leaves closing to the pool's owner. The node runs only asynchronously
    (``ainvoke`` / ``astream``): MCP sessions are async.
    """

    def __init__(
        self,
        connections: Any,
        *,
        tools: Sequence[BaseTool | Callable[..., Any]] = (),
        name: str = "tools",
        tags: list[str] | None = None,
        handle_tool_errors: Any = _default_handle_tool_errors,
        messages_key: str = "messages",
        wrap_tool_call: ToolCallWrapper | None = None,
        awrap_tool_call: AsyncToolCallWrapper | None = None,
        on_connection_error: OnConnectionError = "raise",
        default_timeout: float | None = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        super().__init__(
            list(tools),
            name=name,
            tags=tags,
            handle_tool_errors=handle_tool_errors,
            messages_key=messages_key,
            wrap_tool_call=wrap_tool_call,
            awrap_tool_call=awrap_tool_call,
        )
        if isinstance(connections, MCPPool):
            self.pool = connections
            self._owns_pool = False
        else:
            self.pool = MCPPool(
                connections, on_connection_error=on_connection_error, default_timeout=default_timeout
            )
            self._owns_pool = True
        self._local_tools = dict(self._tools_by_name)
        self._local_injected = dict(self._injected_args)
        self._mcp_tools: list[MCPTool] = []

    async def get_tools(self) -> list[BaseTool]:
        """Local and MCP tools, ready for ``model.bind_tools(...)``.

        Connects the servers on first use. Raises per ``on_connection_error``.
        """
        await self._sync_tools()
        return list(self._tools_by_name.values())

    async def start(self) -> None:
        """Connect every server now (concurrently) and register their tools."""
        await self._sync_tools()

    async def aclose(self) -> None:
        """Close the node's own pool (a shared pool is left to its owner)."""
        if self._owns_pool:
            await self.pool.aclose()

    async def __aenter__(self) -> MCPToolNode:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _sync_tools(self) -> None:
        tools = await load_mcp_tools(self.pool, reserved=self._local_tools)
        if tools is self._mcp_tools:
            return
        by_name: dict[str, BaseTool] = dict(self._local_tools)
        injected = dict(self._local_injected)
        for tool in tools:
            by_name[tool.name] = tool
            injected[tool.name] = _get_all_injected_args(tool)
        # Swap whole dicts so runs already in flight keep a consistent view.
        self._tools_by_name, self._injected_args, self._mcp_tools = by_name, injected, tools

    async def _afunc(
        self,
        input: list[AnyMessage] | dict[str, Any] | BaseModel,
        config: RunnableConfig,
        runtime: Runtime,
    ) -> Any:
        try:
            await self._sync_tools()
        except MCPConnectionError:
            if not self._mcp_tools:
                raise
            # Serve the last known tools: calls to an unreachable server become error messages.
        return await super()._afunc(input, config, runtime)

    def _func(
        self,
        input: list[AnyMessage] | dict[str, Any] | BaseModel,
        config: RunnableConfig,
        runtime: Runtime,
    ) -> Any:
        raise NotImplementedError(
            f"MCPToolNode {self.name!r} runs only asynchronously because MCP sessions are async: "
            "use `await graph.ainvoke(...)` or `async for chunk in graph.astream(...)` "
            "instead of `invoke` / `stream`."
        )
