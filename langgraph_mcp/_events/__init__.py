"""MCP events (``io.modelcontextprotocol/events``, SEP-3415 draft): one subscription's loop as an
async iterator (poll, push, webhook), the checks of webhook deliveries, and triggers that turn
events into runs through a LangGraph server's API (face :mod:`langgraph_mcp.events`)."""
