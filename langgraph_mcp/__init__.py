"""MCP servers as a native part of LangGraph.

``MCPToolNode`` is a drop-in ``ToolNode`` whose tools live on MCP servers,
called over long-lived pooled sessions with the full ``ToolRuntime``.
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
from langgraph_mcp.content import MCPToolArtifact
from langgraph_mcp.elicitation import (
    ElicitationHandler,
    MCPCallInfo,
    MCPElicitationAccept,
    MCPElicitationCancel,
    MCPElicitationDecline,
    MCPElicitationFormRequest,
    MCPElicitationInterrupt,
    MCPElicitationRequest,
    MCPElicitationResponse,
    MCPElicitationResume,
    MCPElicitationUrlRequest,
    MCPSamplingInterrupt,
    MCPSamplingResume,
    accept,
    cancel,
    decline,
    resume_elicitations,
)
from langgraph_mcp.errors import (
    MCPConfigError,
    MCPConnectionError,
    MCPToolCallError,
)
from langgraph_mcp.node import MCPToolNode
from langgraph_mcp.pool import MCPPool
from langgraph_mcp.progress import MCPLogEvent, MCPProgressEvent
from langgraph_mcp.tools import MCPTool, load_mcp_tools

__version__ = "0.1.0"

__all__ = [
    "ElicitationHandler",
    "MCPCallInfo",
    "MCPElicitationAccept",
    "MCPElicitationCancel",
    "MCPElicitationDecline",
    "MCPElicitationFormRequest",
    "MCPElicitationInterrupt",
    "MCPElicitationRequest",
    "MCPElicitationResponse",
    "MCPElicitationResume",
    "MCPElicitationUrlRequest",
    "MCPSamplingInterrupt",
    "MCPSamplingResume",
    "HTTPServerConfig",
    "InProcessServerConfig",
    "MCPConfigError",
    "MCPConnectionError",
    "MCPLogEvent",
    "MCPPool",
    "MCPProgressEvent",
    "MCPTool",
    "MCPToolArtifact",
    "MCPToolCallError",
    "MCPToolNode",
    "OutputHandling",
    "SSEServerConfig",
    "ServerConfig",
    "StdioServerConfig",
    "__version__",
    "accept",
    "cancel",
    "decline",
    "load_connections",
    "load_mcp_tools",
    "resume_elicitations",
]
