"""MCP calls in LangGraph's v3 event streaming (``stream_events(version="v3")``).

:class:`MCPStreamTransformer` projects each MCP tool call of a run (its progress, logs, task
status, pending questions and MCP Apps view) as :class:`~langgraph_mcp.types.MCPCallSnapshot`
objects, next to LangGraph's own ``run.tool_calls``: ``run.extensions["mcp"]`` (a snapshot per
change) and ``run.extensions["mcp_calls"]`` (:class:`MCPCalls`, the latest per call). A
deployment streams the snapshots on the ``custom:mcp`` channel of its event streaming API, and
:meth:`MCPCalls.from_events` folds them (or any run's events) on the client.

``create_mcp_agent`` registers the transformer itself; for a graph of your own, compile with
``transformers=[MCPStreamTransformer]``. See the how-to guide "Progress, logs and timeouts".
"""

from langgraph_mcp._stream.calls import MCP_CHANNEL, MCPCalls, MCPStreamTransformer

__all__ = ["MCP_CHANNEL", "MCPCalls", "MCPStreamTransformer"]
