"""``reviewed``: the ``tools`` graph (``graphs/tools.py``) with a person's approval before each
``cancel_order`` call, served next to the bundled graphs by the ``langgraph dev`` tests."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from graphs.shared import pool
from graphs.tools import ToolsState, prepare
from langgraph_mcp import MCPToolNode

builder = StateGraph(ToolsState)
builder.add_node(prepare)
builder.add_node(MCPToolNode(pool, approval=["cancel_order"]))
builder.add_edge(START, "prepare")
builder.add_edge("prepare", "tools")
builder.add_edge("tools", END)
graph = builder.compile(name="reviewed")
