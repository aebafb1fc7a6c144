"""``tools``: runs MCP tool calls with no model in the loop (offline demos, tests, batch jobs).

Input, either of:

- ``{"messages": [AIMessage with tool_calls]}`` (or the dict form
  ``{"type": "ai", "content": "", "tool_calls": [...]}``), exactly what ``ToolNode`` takes;
- ``{"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}, "id": "optional"}]}``.

Output: the thread's ``messages`` gain one ``ToolMessage`` per call. A tool that asks a question
interrupts the run (resume with ``Command(resume=...)``); progress arrives as custom stream
events (``{"type": "mcp_progress", ...}``) and as a progress bar's generative-UI message, kept in
``ui``.
"""

from __future__ import annotations

import uuid
from typing import Any, NotRequired

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph

from graphs.shared import ChatState, pool
from langgraph_mcp import MCPToolNode
from langgraph_mcp.apps import VIEW_CALLS_KEY, route_view_calls, view_calls_node
from langgraph_mcp.streaming import MCPStreamTransformer


class ToolsState(ChatState):
    tool_calls: NotRequired[list[dict[str, Any]]]


def _call(index: int, raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        raise ValueError(f"tool_calls[{index}] must be an object with a 'name' (got {raw!r})")
    args = raw.get("args", {})
    if not isinstance(args, dict):
        raise ValueError(f"tool_calls[{index}].args must be an object (got {type(args).__name__})")
    return {"name": raw["name"], "args": args, "id": str(raw.get("id") or f"call_{uuid.uuid4().hex[:12]}")}


def prepare(state: ToolsState) -> dict[str, Any]:
    """Turns a ``tool_calls`` input into the AI message ``ToolNode`` expects."""
    raw = state.get("tool_calls")
    if raw:
        calls = [_call(i, c) for i, c in enumerate(raw)]
        return {"messages": [AIMessage("", tool_calls=calls)], "tool_calls": []}
    messages = state.get("messages") or []
    if not (messages and isinstance(messages[-1], AIMessage) and messages[-1].tool_calls):
        raise ValueError(
            "the tools graph takes {'tool_calls': [{'name': ..., 'args': {...}}]} or "
            "{'messages': [an AI message with tool_calls]}"
        )
    return {}


node = MCPToolNode(pool)

builder = StateGraph(ToolsState)
builder.add_node(prepare)
builder.add_node(node)
builder.add_node(view_calls_node(node))
builder.add_conditional_edges(START, route_view_calls("prepare"), ["prepare", VIEW_CALLS_KEY])
builder.add_edge(VIEW_CALLS_KEY, END)
builder.add_edge("prepare", "tools")
builder.add_edge("tools", END)
# stream_events(version="v3") clients get each MCP call as run.extensions["mcp"] (custom:mcp).
graph = builder.compile(name="tools", transformers=[MCPStreamTransformer])
