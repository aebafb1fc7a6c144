"""One phase of an elicitation flow, in its own process (used by test_elicitation.py).

    python tests/elicitation_runner.py start|resume|confirm <sqlite db> <calls log> <protocol> <state key>

Prints one JSON line: the pending interrupts ``[[tool_call_id, message], ...]`` and the results.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command

from langgraph_mcp import MCPToolNode
from langgraph_mcp.elicitation import accept
from tests.conftest_servers import stdio_params

ANSWERS = {"resume": {"start": "2027-06-01", "nights": 2}, "confirm": {"ok": True}}


async def main(phase: str, db: str, log: str, protocol: str, state_key: str) -> None:
    env = {"ASKER_LOG": log, **({"ASKER_STATE_KEY": state_key} if state_key else {})}
    config = {**stdio_params("asker", env=env), "protocol": protocol}
    thread = {"configurable": {"thread_id": "durable"}}
    async with AsyncSqliteSaver.from_conn_string(db) as saver, MCPToolNode({"asker": config}) as node:
        builder = StateGraph(MessagesState)
        builder.add_node(node)
        builder.add_edge(START, "tools")
        graph = builder.compile(checkpointer=saver)
        if phase == "start":
            call = {"name": "book", "args": {"city": "Oslo"}, "id": "c1"}
            out: dict[str, Any] = await graph.ainvoke(
                {"messages": [AIMessage("", tool_calls=[call])]}, thread
            )
        else:
            (pending,) = (await graph.aget_state(thread)).interrupts
            key = pending.value["requests"][0]["key"]
            resume = {pending.id: {"responses": {key: accept(ANSWERS[phase])}}}
            out = await graph.ainvoke(Command(resume=resume), thread)
    interrupts = [
        [i.value["tool_call_id"], i.value["requests"][0]["message"]] for i in out.get("__interrupt__", [])
    ]
    results = {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}
    print(json.dumps({"interrupts": interrupts, "results": results}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
