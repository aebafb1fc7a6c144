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
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_mcp import MCPToolNode
from langgraph_mcp.elicitation import accept, cancel, decline, resume_elicitations

REQUEST = AIMessage(
    "",
    tool_calls=[
        {"name": "cancel_order", "args": {"order_id": "A-1002"}, "id": "call_cancel"},
        {"name": "book_trip", "args": {"city": "Lisbon"}, "id": "call_trip"},
    ],
)

AUTO_VALUES = {"ok": True, "start": "2027-04-12", "reason": "changed my mind"}

YES, NO = ("y", "yes", "true"), ("n", "no", "false")
ACTIONS = {word[0]: word for word in ("accept", "decline", "cancel")} | {
    word: word for word in ("accept", "decline", "cancel")
}


def ask_action() -> str:
    """Accept, decline or cancel: asked again until the answer is one of those (empty: accept)."""
    while True:
        raw = input("  (a)ccept, (d)ecline or (c)ancel? [a] ").strip().lower() or "a"
        if raw in ACTIONS:
            return ACTIONS[raw]
        print("    answer a, d or c (or accept, decline, cancel)")


def ask_field(name: str, prop: dict[str, Any], required: bool, auto: bool) -> Any:
    """Read one form field from the terminal (empty input keeps the default)."""
    choices = prop.get("enum") or [o["const"] for o in prop.get("oneOf", []) if "const" in o]
    default = prop.get("default")
    if auto:
        return AUTO_VALUES.get(name, default)
    kind = prop.get("type")
    if kind == "boolean":
        hint = " [y/n]"
    elif choices:
        hint = f" [{'/'.join(map(str, choices))}]"
    else:
        hint = f" ({kind})" if kind in ("integer", "number") else ""
    if "default" in prop:
        hint += f" (default {('y' if default else 'n') if kind == 'boolean' else default!r})"
    while True:
        raw = input(f"    {prop.get('description') or prop.get('title') or name}{hint}: ").strip()
        if not raw:
            if "default" in prop or not required:
                return default
            print("    a value is required")
            continue
        if kind == "boolean":
            if raw.lower() in YES + NO:
                return raw.lower() in YES
            print("    answer y or n")
            continue
        try:
            value: Any = int(raw) if kind == "integer" else float(raw) if kind == "number" else raw
        except ValueError:
            print(f"    not a valid {kind}")
            continue
        if choices and value not in choices:
            print(f"    answer one of {', '.join(map(str, choices))}")
            continue
        low, high = prop.get("minimum"), prop.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            print(f"    answer a number from {low} to {high}")
            continue
        return value


def answer_payload(payload: dict[str, Any], auto: bool) -> dict[str, Any]:
    print(f"\n[{payload['server']}] {payload['tool_name']} ({payload['tool_call_id']}) asks:")
    responses: dict[str, Any] = {}
    for request in payload["requests"]:
        print(f"  {request['message']}")
        if request["mode"] == "url":
            print(f"  open this URL yourself: {request['url']}")
        action = "accept" if auto else ask_action()
        if action == "decline":
            responses[request["key"]] = decline()
        elif action == "cancel":
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
        "args": ["-m", "langgraph_mcp.demo", "shop"],
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
