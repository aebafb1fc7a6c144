"""``reviewed_agent``: the ``agent`` graph (``graphs/agent.py``) with a person's approval before
each ``add`` call, the calls of one turn asked about together (as Agent Chat UI needs), served
next to the bundled graphs by the browser tests."""

from __future__ import annotations

from langgraph.graph import START, StateGraph
from langgraph.prebuilt import tools_condition

from graphs.agent import call_model
from graphs.shared import ChatState, pool
from langgraph_mcp import MCPToolNode

builder = StateGraph(ChatState)
builder.add_node("agent", call_model)
builder.add_node(MCPToolNode(pool, approval=["add"], approval_mode="batched"))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile(name="reviewed_agent")
