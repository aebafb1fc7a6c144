"""A LangGraph server graph whose tools live on the bundled demo MCP servers.

Registered in ``langgraph.json`` as ``demo_agent``. The model is a scripted
stand-in (no API key): it calls every tool named in the last human message as
``tool_name {json args}`` lines, then reports the results.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition

from langgraph_mcp import MCPToolNode

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "servers"

CONNECTIONS: dict[str, Any] = {
    "math": {"command": sys.executable, "args": [str(EXAMPLES / "math_server.py")]},
    "notes": {"command": sys.executable, "args": [str(EXAMPLES / "notes_server.py")]},
}

tools = MCPToolNode(CONNECTIONS)


def scripted_model(state: MessagesState) -> dict[str, list[AIMessage]]:
    """Turns ``name {args}`` lines of the last human message into tool calls, then answers."""
    last = state["messages"][-1]
    if isinstance(last, ToolMessage):
        results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        return {"messages": [AIMessage("\n".join(f"{m.name}: {m.content}" for m in results))]}
    assert isinstance(last, HumanMessage)
    calls = []
    for i, line in enumerate(str(last.content).splitlines()):
        name, _, args = line.strip().partition(" ")
        if name:
            calls.append({"name": name, "args": json.loads(args or "{}"), "id": f"call_{i}"})
    return {"messages": [AIMessage("", tool_calls=calls)]}


builder = StateGraph(MessagesState)
builder.add_node("agent", scripted_model)
builder.add_node(tools)
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile()
