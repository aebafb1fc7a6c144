"""MCP servers as a native part of LangGraph.

``MCPToolNode`` is a drop-in ``ToolNode`` whose tools live on MCP servers,
called over long-lived pooled sessions with the full ``ToolRuntime``;
``MCPMiddleware`` gives the same tools to ``create_agent``; ``create_mcp_agent``
is a prebuilt MCP agent. Graph-side options (hidden arguments, results into
state, approval) are in :mod:`langgraph_mcp.options`.

Payload, resume and stream-event types are in :mod:`langgraph_mcp.types`;
helpers that build resume values are in :mod:`langgraph_mcp.elicitation`; a scripted chat
model for testing agents offline is in :mod:`langgraph_mcp.testing`.
"""

from langgraph_mcp._call.adapter import MCPTool
from langgraph_mcp._call.output import read_tool_output
from langgraph_mcp._catalog.build import load_mcp_tools
from langgraph_mcp._graph.middleware import MCPMiddleware
from langgraph_mcp._graph.node import MCPToolNode
from langgraph_mcp._graph.prebuilt import create_mcp_agent, route_tool_calls
from langgraph_mcp._pool.pool import MCPPool
from langgraph_mcp._pool.uritemplate import expand_uri_template
from langgraph_mcp._version import __version__
from langgraph_mcp.config import (
    HTTPServerConfig,
    InProcessServerConfig,
    OutputHandling,
    RestartPolicy,
    ServerConfig,
    SSEServerConfig,
    StdioServerConfig,
    load_connections,
)
from langgraph_mcp.errors import (
    FailureKind,
    MCPArgumentError,
    MCPAuthenticationError,
    MCPConfigError,
    MCPConnectionError,
    MCPError,
    MCPProtocolError,
    MCPServerError,
    MCPSkillError,
    MCPTimeoutError,
    MCPToolCallError,
    MCPUnknownServerError,
    MissingValue,
)
from langgraph_mcp.options import (
    ApprovalByRisk,
    FromConfig,
    FromContext,
    FromState,
    FromStore,
    ResultToState,
    ToolOptions,
    ToolSearch,
)

__all__ = [
    "ApprovalByRisk",
    "FailureKind",
    "FromConfig",
    "FromContext",
    "FromState",
    "FromStore",
    "HTTPServerConfig",
    "InProcessServerConfig",
    "MCPArgumentError",
    "MCPAuthenticationError",
    "MCPConfigError",
    "MCPConnectionError",
    "MCPError",
    "MCPMiddleware",
    "MCPPool",
    "MCPProtocolError",
    "MCPServerError",
    "MCPSkillError",
    "MCPTimeoutError",
    "MCPTool",
    "MCPToolCallError",
    "MCPToolNode",
    "MCPUnknownServerError",
    "MissingValue",
    "OutputHandling",
    "RestartPolicy",
    "ResultToState",
    "SSEServerConfig",
    "ServerConfig",
    "StdioServerConfig",
    "ToolOptions",
    "ToolSearch",
    "__version__",
    "create_mcp_agent",
    "expand_uri_template",
    "load_connections",
    "load_mcp_tools",
    "read_tool_output",
    "route_tool_calls",
]
