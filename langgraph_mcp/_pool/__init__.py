"""The pool: ``pool`` (:class:`~langgraph_mcp.MCPPool`, one connection per server), ``threads``
(sessions per thread), ``resources``, ``prompts``, ``content`` (MCP content blocks converted),
``uritemplate``, and ``toolstore`` (the persisted tool catalog lazy servers are listed from)."""
