"""Quickstart: a LangGraph agent loop whose tools live on two MCP servers.

Runs offline: a scripted stand-in for the chat model decides which tools to
call, so no API key is needed. Swap ``scripted_model`` for
``ChatAnthropic(...).bind_tools(await tools_node.get_tools())`` and nothing
else changes.

    uv run --no-dev examples/quickstart.py

(``--no-dev``: only the package and its runtime dependencies, none of the dev tools.)
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition

from langgraph_mcp import MCPToolNode
from langgraph_mcp.demo import demo_server

CONNECTIONS: dict[str, Any] = {
    # A child process spoken to over stdio (the usual .mcp.json shape): the bundled math server.
    "math": {"command": sys.executable, "args": ["-m", "langgraph_mcp.demo", "math"]},
    # An MCPServer object running in this process.
    "notes": demo_server("notes"),
}


def scripted_model(state: MessagesState) -> dict[str, list[AIMessage]]:
    """Plays the LLM: three tool calls in parallel, one follow-up, then an answer."""
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    if not results:
        return {
            "messages": [
                AIMessage(
                    "",
                    tool_calls=[
                        {"name": "describe", "args": {"values": [3, 1, 4, 1, 5, 9]}, "id": "call_stats"},
                        {"name": "search_notes", "args": {"query": "train"}, "id": "call_search"},
                        {"name": "add", "args": {"a": 2, "b": 40}, "id": "call_add"},
                    ],
                )
            ]
        }
    if len(results) == 3:
        search = next(m for m in results if m.tool_call_id == "call_search")
        found = search.artifact["structured_content"]["result"]  # structuredContent rides in the artifact
        title = found[0] if found else "trip"
        return {
            "messages": [
                AIMessage("", tool_calls=[{"name": "read_note", "args": {"title": title}, "id": "call_read"}])
            ]
        }
    by_id = {m.tool_call_id: m for m in results}
    stats = by_id["call_stats"].artifact["structured_content"]
    answer = (
        f"The mean is {stats['mean']:.3f} (median {stats['median']}), 2 + 40 = {by_id['call_add'].content}, "
        f"and your travel note says: {by_id['call_read'].content}"
    )
    return {"messages": [AIMessage(answer)]}


async def main() -> None:
    async with MCPToolNode(CONNECTIONS) as tools_node:
        tools = await tools_node.get_tools()  # what you would pass to model.bind_tools(...)
        print("tools:", ", ".join(t.name for t in tools))
        for name, conn in tools_node.pool.connections.items():
            print(f"  {name}: protocol {conn.protocol_version}")

        builder = StateGraph(MessagesState)
        builder.add_node("agent", scripted_model)
        builder.add_node(tools_node)  # registered as "tools", like ToolNode
        builder.add_edge(START, "agent")
        builder.add_conditional_edges("agent", tools_condition)
        builder.add_edge("tools", "agent")
        graph = builder.compile()

        question = HumanMessage("Summarise my numbers, add 2 and 40, and find my train note.")
        async for update in graph.astream({"messages": [question]}, stream_mode="updates"):
            for node, delta in update.items():
                for msg in delta["messages"]:
                    if isinstance(msg, AIMessage) and msg.tool_calls:
                        calls = ", ".join(f"{c['name']}({c['args']})" for c in msg.tool_calls)
                        print(f"[{node}] calls {calls}")
                    elif isinstance(msg, ToolMessage):
                        print(f"[{node}] {msg.name} -> {msg.content} ({msg.status})")
                    else:
                        print(f"[{node}] {msg.content}")


if __name__ == "__main__":
    asyncio.run(main())
