"""MCP events (``io.modelcontextprotocol/events``, SEP-3415 draft): one subscription's loop as an
async iterator (poll and push), the checks of webhook deliveries, and (above the pool) what
turns events into runs (:mod:`langgraph_mcp.events`)."""
