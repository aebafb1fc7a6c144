"""Live progress bars for MCP tools running inside a LangGraph graph.

Two long MCP tool calls run in parallel; their progress notifications arrive as
``stream_mode="custom"`` events (``{"type": "mcp_progress", ...}``) and drive one
progress bar per tool call. Offline: no model, no API key.

    uv run examples/progress.py
"""

from __future__ import annotations

import asyncio
import sys

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from langgraph_mcp import MCPToolNode

CONNECTIONS = {"math": {"command": sys.executable, "args": ["-m", "langgraph_mcp.demo", "math"]}}

REQUEST = AIMessage(
    "",
    tool_calls=[
        {"name": "count_primes", "args": {"limit": 60_000}, "id": "primes_60k"},
        {"name": "count_primes", "args": {"limit": 150_000}, "id": "primes_150k"},
    ],
)


async def main() -> None:
    console = Console()
    async with MCPToolNode(CONNECTIONS) as tools:
        await tools.start()
        builder = StateGraph(MessagesState)
        builder.add_node(tools)
        builder.add_edge(START, "tools")
        graph = builder.compile()

        columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[note]}"))
        with Progress(*columns, TimeElapsedColumn(), console=console) as bars:
            tasks: dict[str, TaskID] = {}
            async for mode, chunk in graph.astream(
                {"messages": [REQUEST]}, stream_mode=["custom", "updates"]
            ):
                if mode == "custom" and chunk.get("type") == "mcp_progress":
                    call_id = chunk["tool_call_id"]
                    if call_id not in tasks:
                        label = escape(f"{chunk['tool_name']} [{call_id}]")  # [..] is markup
                        tasks[call_id] = bars.add_task(label, total=None, note="")
                    bars.update(
                        tasks[call_id],
                        completed=chunk["progress"],
                        total=chunk["total"],
                        note=chunk["message"] or "",
                    )
                elif mode == "updates":
                    for message in chunk.get("tools", {}).get("messages", []):
                        if isinstance(message, ToolMessage):
                            console.print(f"{message.tool_call_id}: {message.content} primes")


if __name__ == "__main__":
    asyncio.run(main())
