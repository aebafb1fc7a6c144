"""The custom app ``langgraph.json`` mounts (``"http": {"app": "graphs.app:app"}``).

Its routes (``/mcp-apps/...``, :func:`langgraph_mcp.apps.app_routes`) take the calls MCP Apps
views make and run them on their thread, as the caller (the server's authentication applies).
Its lifespan closes the shared MCP pool when the server stops, so no stdio server outlives it
(``SIGTERM``, ``Ctrl-C`` and hot reloads alike).
"""

from __future__ import annotations

from starlette.applications import Starlette

from graphs.agent import views
from graphs.shared import pool
from langgraph_mcp.apps import app_routes
from langgraph_mcp.deploy import lifespan

app = Starlette(routes=app_routes(views), lifespan=lifespan(pool))
