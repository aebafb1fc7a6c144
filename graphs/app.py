"""The custom app ``langgraph.json`` mounts (``"http": {"app": "graphs.app:app"}``).

It adds no routes; its lifespan closes the shared MCP pool when the server stops, so no stdio
server outlives it (``SIGTERM``, ``Ctrl-C`` and hot reloads alike).
"""

from __future__ import annotations

from starlette.applications import Starlette

from graphs.shared import pool
from langgraph_mcp.deploy import lifespan

app = Starlette(lifespan=lifespan(pool))
