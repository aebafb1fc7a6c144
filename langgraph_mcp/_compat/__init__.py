"""Private names of the libraries this package builds on, one module per library: ``mcp`` (the
SDK; no LangGraph import, so the session layer may use it) and ``langgraph``."""
