"""A ``create_mcp_agent`` deployment that takes MCP Apps views' calls, for
``tests/deploy/test_app_route.py``: the graph ``prebuilt``, its route (``app``, at most 2 calls of
a thread and 3 in all at once) and LangGraph custom auth (``auth``: ``Authorization: Bearer
<user>`` names the user, each thread is its creator's).

Its servers come from ``LANGGRAPH_MCP_CONFIG``. ``show_chart`` waits for a person's approval on
every server; the server ``apps_user``'s calls carry a per-call header."""

from __future__ import annotations

from typing import Any

from langgraph_sdk import Auth
from starlette.applications import Starlette

from langgraph_mcp import MCPPool, create_mcp_agent
from langgraph_mcp.apps import app_routes
from langgraph_mcp.deploy import config_path, lifespan
from langgraph_mcp.options import ToolOptions
from langgraph_mcp.testing import ScriptedChatModel

pool = MCPPool(config_path("mcp.json"))
graph = create_mcp_agent(
    ScriptedChatModel(unbound="reply"),
    pool,
    view_calls=True,
    approval=[f"{server}/show_chart" for server in pool.servers if server.startswith("apps")],
    server_options={"apps_user": ToolOptions(headers=lambda runtime: {"X-User": "someone"})},
    name="prebuilt",
)
app = Starlette(routes=app_routes(graph.mcp, max_calls_per_thread=2, max_calls=3), lifespan=lifespan(pool))

auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None) -> str:
    scheme, _, user = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not user.isidentifier():
        raise Auth.exceptions.HTTPException(status_code=401, detail="a bearer token naming a user")
    return user


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    if isinstance(value, dict):
        metadata = value.setdefault("metadata", {})
        if isinstance(metadata, dict):
            metadata["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}
