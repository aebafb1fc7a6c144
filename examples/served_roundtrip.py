"""The round trip: a graph served over MCP by this package, called by ``MCPToolNode`` in another
graph; the served graph's question becomes the outer graph's interrupt, and a person's answer
(``Command(resume=...)``) resumes both. Offline, no API key.

    uv run examples/served_roundtrip.py            # answer on the terminal
    uv run examples/served_roundtrip.py --auto     # answer automatically (CI)
    uv run examples/served_roundtrip.py --legacy   # speak the 2025-11-25 protocol to the served graph

The served graph is ``examples/served_graph.py``, started as
``python -m langgraph_mcp.serve examples/served_graph.py:graph`` over stdio.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_mcp import MCPToolNode
from langgraph_mcp.elicitation import accept, resume_elicitations
from langgraph_mcp.serve import ANSWER_FIELD

SERVED = Path(__file__).with_name("served_graph.py")
CALL = AIMessage("", tool_calls=[{"name": "release_note", "args": {"version": "1.2.0"}, "id": "call_1"}])


def answer(payload: dict[str, Any], auto: bool) -> dict[str, Any]:
    """An answer to every question of one interrupt (the served graph asks one)."""
    answers = {}
    for request in payload["requests"]:
        print(f"{payload['server']} asks: {request['message']}")
        text = "yes" if auto else (input("  your answer: ").strip() or "yes")
        answers[request["key"]] = accept({ANSWER_FIELD: text})
    return answers


async def main(auto: bool, legacy: bool) -> str:
    served = {
        "command": sys.executable,
        "args": ["-m", "langgraph_mcp.serve", f"{SERVED}:graph", "--tasks", "never"],
        "protocol": "legacy" if legacy else "auto",
    }
    async with MCPToolNode({"releases": served}) as tools:
        builder = StateGraph(MessagesState)
        builder.add_node("tools", tools)
        builder.add_edge(START, "tools")
        graph = builder.compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "roundtrip"}}
        out = await graph.ainvoke({"messages": [CALL]}, config)
        while out.get("__interrupt__"):  # the served graph asked: a person answers here
            out = await graph.ainvoke(
                resume_elicitations(out["__interrupt__"], lambda p: answer(p, auto)), config
            )
    [result] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    print("result:", result.content)
    return str(result.content)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--auto", action="store_true", help="answer automatically")
    parser.add_argument("--legacy", action="store_true", help="use the 2025-11-25 protocol")
    args = parser.parse_args()
    text = asyncio.run(main(args.auto, args.legacy))
    assert '"published": true' in text, text
