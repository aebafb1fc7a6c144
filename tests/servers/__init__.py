"""MCP fixture servers for the langgraph_mcp test suite.

Each module exposes ``build_server()`` and runs as
``python -m tests.servers.<module> [--transport stdio|http|sse] [--host H] [--port N]``.
"""
