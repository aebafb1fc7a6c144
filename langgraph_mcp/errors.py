"""Exceptions raised by langgraph_mcp.

Configuration problems raise at construction (:class:`MCPConfigError`).
Server-side problems during a tool call (``isError``, a timeout, a lost
connection) do not escape an MCP tool called with a tool-call id: they become
``ToolMessage(status="error")`` results (see ``tools.py``), so a crashed or hung
server cannot take the graph run down with it. Invalid arguments raise
LangGraph's ``ToolInvocationError``, exactly as for a local tool, so the node's
``handle_tool_errors`` decides.
"""

from __future__ import annotations

from langchain_core.tools import ToolException

__all__ = [
    "MCPConfigError",
    "MCPConnectionError",
    "MCPToolCallError",
]


class MCPConfigError(ValueError):
    """A connection config is invalid. ``server`` and ``field`` say where."""

    def __init__(self, server: str | None, field: str | None, message: str) -> None:
        self.server = server
        self.field = field
        self.reason = message
        where = []
        if server is not None:
            where.append(f"MCP server {server!r}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class MCPConnectionError(RuntimeError):
    """A server could not be started or reached, or its connection died."""

    def __init__(self, server: str, message: str) -> None:
        self.server = server
        self.reason = message
        super().__init__(f"MCP server {server!r}: {message}")


class MCPToolCallError(ToolException):
    """A tool call failed: the server reported ``isError``, timed out, or the
    connection failed. Turned into ``ToolMessage(status="error")`` by the tool."""

    def __init__(self, message: str, *, kind: str = "tool_error") -> None:
        self.kind = kind
        super().__init__(message)
