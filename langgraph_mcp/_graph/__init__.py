"""The graph faces: ``node`` (:class:`~langgraph_mcp.MCPToolNode`), ``middleware``
(:class:`~langgraph_mcp.MCPMiddleware`), ``prebuilt`` (``create_mcp_agent``, ``route_tool_calls``),
and MCP Apps views calling back: ``viewcalls`` (the view-call node and routing) and ``approute``
(the HTTP route a view's calls arrive on)."""
