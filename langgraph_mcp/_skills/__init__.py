"""MCP skills (``io.modelcontextprotocol/skills``): each server's skills as a run sees them, a
loader that reads and checks a skill's files when the model asks, approval bound to what was
approved, and the middleware that offers them to an agent (:mod:`langgraph_mcp.skills`)."""
