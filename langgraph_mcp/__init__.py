"""MCP servers as a native part of LangGraph.

``MCPToolNode`` is a drop-in ``ToolNode`` whose tools live on MCP servers,
called over long-lived pooled sessions with the full ``ToolRuntime``.

Payload, resume and stream-event types are in :mod:`langgraph_mcp.types`;
helpers that build resume values are in :mod:`langgraph_mcp.elicitation`.
"""

from langgraph_mcp.config import (
    HTTPServerConfig,
    InProcessServerConfig,
    OutputHandling,
    ServerConfig,
    SSEServerConfig,
    StdioServerConfig,
    load_connections,
)
from langgraph_mcp.errors import (
    MCPConfigError,
    MCPConnectionError,
    MCPProtocolError,
    MCPServerError,
    MCPTimeoutError,
    MCPToolCallError,
)
from langgraph_mcp.node import MCPToolNode
from langgraph_mcp.pool import MCPPool
from langgraph_mcp.tools import MCPTool, load_mcp_tools

__version__ = "0.1.0"

__all__ = [
    "HTTPServerConfig",
    "InProcessServerConfig",
    "MCPConfigError",
    "MCPConnectionError",
    "MCPPool",
    "MCPProtocolError",
    "MCPServerError",
    "MCPTimeoutError",
    "MCPTool",
    "MCPToolCallError",
    "MCPToolNode",
    "OutputHandling",
    "SSEServerConfig",
    "ServerConfig",
    "StdioServerConfig",
    "__version__",
    "load_connections",
    "load_mcp_tools",
]
