"""A ``create_mcp_agent`` deployment that takes MCP Apps views' calls, for
``tests/deploy/test_app_route.py``: the graph ``prebuilt``, the same agent built by hand as a
``StateGraph`` whose ``START`` routes views' calls (``routed``), the route (``app``, at most 2 calls of
a thread, 3 of a user and 4 in all at once) and LangGraph custom auth (``auth``: ``Authorization: Bearer
<user>`` names the user, each thread is its creator's).

Its servers come from ``LANGGRAPH_MCP_CONFIG``. ``show_chart`` waits for a person's approval on
every server; the server ``apps_user``'s calls carry a per-call header."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph_sdk import Auth
from starlette.applications import Starlette

from langgraph_mcp import MCPPool, MCPToolNode, create_mcp_agent
from langgraph_mcp.apps import VIEW_CALLS_KEY, MCPAppCallsState, app_routes, route_view_calls, view_calls_node
from langgraph_mcp.deploy import config_path, lifespan
from langgraph_mcp.options import ToolOptions
from langgraph_mcp.testing import ScriptedChatModel

pool = MCPPool(config_path("mcp.json"))
APPROVAL = [f"{server}/show_chart" for server in pool.servers if server.startswith("apps")]
graph = create_mcp_agent(
    ScriptedChatModel(unbound="reply"),
    pool,
    view_calls=True,
    approval=APPROVAL,
    server_options={"apps_user": ToolOptions(headers=lambda runtime: {"X-User": "someone"})},
    name="prebuilt",
)


class State(MessagesState, MCPAppCallsState):
    pass


tools = MCPToolNode(pool, approval=APPROVAL)
model = ScriptedChatModel(unbound="reply")


async def agent(state: State, config: RunnableConfig) -> dict[str, Any]:
    bound = model.bind_tools(await tools.get_tools())
    return {"messages": [await bound.ainvoke(state["messages"], config)]}


builder = StateGraph(State)
builder.add_node("agent", agent)
builder.add_node(tools)
builder.add_node(view_calls_node(tools))
builder.add_conditional_edges(START, route_view_calls("agent"), ["agent", VIEW_CALLS_KEY])
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
builder.add_edge(VIEW_CALLS_KEY, END)
routed = builder.compile(name="routed")

app = Starlette(
    routes=app_routes(graph.mcp, max_calls_per_thread=2, max_calls_per_user=3, max_calls=4),
    lifespan=lifespan(pool),
)

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
