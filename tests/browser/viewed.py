"""``viewed``: the ``agent`` graph (``graphs/agent.py``) with a person's approval before each call of
``refresh_chart``, the app-only tool a chart view calls (``tests/servers/apps.py``: a view's call
of it waits for the thread's approval interrupt), and of ``plain_echo``, a model-only tool (a
model's call of it leaves the thread waiting for a person)."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import tools_condition

from graphs.agent import call_model
from graphs.shared import ChatState, pool
from langgraph_mcp import MCPToolNode
from langgraph_mcp.apps import VIEW_CALLS_KEY, route_view_calls, view_calls_node

tools = MCPToolNode(pool, approval=["refresh_chart", "plain_echo"])

builder = StateGraph(ChatState)
builder.add_node("agent", call_model)
builder.add_node(tools)
builder.add_node(view_calls_node(tools))
builder.add_conditional_edges(START, route_view_calls("agent"), ["agent", VIEW_CALLS_KEY])
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
builder.add_edge(VIEW_CALLS_KEY, END)
graph = builder.compile(name="viewed")
