"""Human in the loop: MCP tools ask questions, the graph pauses, the person answers.

Two tool calls run in parallel against the bundled shop server; each asks the person
for input (one of them twice). Every question pauses the graph with an ``interrupt()``
carrying an ``mcp_elicitation`` payload; the answers go back with ``Command(resume=...)``
and reach their own call. Offline, no API key.

    uv run examples/elicitation.py            # answer on the terminal
    uv run examples/elicitation.py --auto     # answer automatically (CI)
    uv run examples/elicitation.py --legacy   # talk to the server over the 2025-11-25 protocol
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from langgraph_mcp import MCPToolNode  # noqa: E402
from langgraph_mcp.elicitation import accept, cancel, decline, resume_elicitations  # noqa: E402

REQUEST = AIMessage(
    "",
    tool_calls=[
        {"name": "cancel_order", "args": {"order_id": "A-1002"}, "id": "call_cancel"},
        {"name": "book_trip", "args": {"city": "Lisbon"}, "id": "call_trip"},
    ],
)

AUTO_VALUES = {"ok": True, "start": "2027-04-12", "reason": "changed my mind"}


def ask_field(name: str, prop: dict[str, Any], required: bool, auto: bool) -> Any:
    """Read one form field from the terminal (empty input keeps the default)."""
    choices = prop.get("enum") or [o["const"] for o in prop.get("oneOf", []) if "const" in o]
    default = prop.get("default")
    if auto:
        return AUTO_VALUES.get(name, default)
    hint = f" [{'/'.join(map(str, choices))}]" if choices else ""
    hint += f" (default {default!r})" if "default" in prop else ""
    while True:
        raw = input(f"    {prop.get('description') or prop.get('title') or name}{hint}: ").strip()
        if not raw:
            if "default" in prop or not required:
                return default
            print("    a value is required")
            continue
        kind = prop.get("type")
        try:
            if kind == "boolean":
                return raw.lower() in ("y", "yes", "true", "1")
            if kind == "integer":
                return int(raw)
            if kind == "number":
                return float(raw)
        except ValueError:
            print(f"    not a valid {kind}")
            continue
        return raw


def answer_payload(payload: dict[str, Any], auto: bool) -> dict[str, Any]:
    print(f"\n[{payload['server']}] {payload['tool_name']} ({payload['tool_call_id']}) asks:")
    responses: dict[str, Any] = {}
    for request in payload["requests"]:
        print(f"  {request['message']}")
        if request["mode"] == "url":
            print(f"  open this URL yourself: {request['url']}")
        action = "a" if auto else input("  (a)ccept, (d)ecline or (c)ancel? [a] ").strip().lower() or "a"
        if action.startswith("d"):
            responses[request["key"]] = decline()
        elif action.startswith("c"):
            responses[request["key"]] = cancel()
        elif request["mode"] == "url":
            responses[request["key"]] = accept()
        else:
            schema = request["requested_schema"]
            required = set(schema.get("required", []))
            content = {
                name: value
                for name, prop in schema.get("properties", {}).items()
                if (value := ask_field(name, prop, name in required, auto)) is not None
            }
            if auto:
                print(f"  -> {json.dumps(content)}")
            responses[request["key"]] = accept(content)
    return responses


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--auto", action="store_true", help="answer every question automatically")
    parser.add_argument("--legacy", action="store_true", help="use the 2025-11-25 protocol")
    ns = parser.parse_args()

    server = {
        "command": sys.executable,
        "args": [str(HERE / "servers" / "shop_server.py")],
        "protocol": "legacy" if ns.legacy else "auto",
    }
    async with MCPToolNode({"shop": server}) as tools:
        builder = StateGraph(MessagesState)
        builder.add_node(tools)
        builder.add_edge(START, "tools")
        graph = builder.compile(
            checkpointer=InMemorySaver()
        )  # use a SQLite/Postgres saver to survive restarts
        thread = {"configurable": {"thread_id": "demo"}}

        out = await graph.ainvoke({"messages": [REQUEST]}, thread)
        while pending := out.get("__interrupt__"):
            print(f"\n--- the graph is paused on {len(pending)} question(s) ---")
            out = await graph.ainvoke(
                resume_elicitations(pending, lambda p: answer_payload(p, ns.auto)), thread
            )

        print("\nresults:")
        for message in out["messages"]:
            if isinstance(message, ToolMessage):
                print(f"  {message.tool_call_id}: {message.content}")


if __name__ == "__main__":
    asyncio.run(main())
