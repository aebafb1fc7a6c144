"""One phase of a durable agent scenario, in its own OS process (used by the tests).

    python tests/agent_runner.py <sync|async> <start|resume> <sqlite db> [resume value as JSON]

Builds the same ``create_mcp_agent`` each time (scripted model, the ``shopfront`` stdio server,
``approval="destructive"``) on a SQLite checkpoint, starts or resumes the thread ``durable``, and
prints one JSON line: ``{"interrupts": [...], "results": {tool_call_id: [status, content]}}``.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command

from langgraph_mcp import create_mcp_agent
from tests.chat import ScriptModel
from tests.conftest_servers import stdio_params

THREAD = {"configurable": {"thread_id": "durable"}}
TURNS = [
    [("delete_item", {"item": "x"}, "c1"), ("list_items", {}, "c2"), ("delete_item", {"item": "y"}, "c3")]
]


def report(out: dict[str, Any]) -> str:
    return json.dumps(
        {
            "interrupts": [i.value for i in out.get("__interrupt__", [])],
            "ids": {i.value.get("tool_call_id"): i.id for i in out.get("__interrupt__", [])},
            "results": {
                m.tool_call_id: [m.status, m.text] for m in out["messages"] if isinstance(m, ToolMessage)
            },
        }
    )


def agent(checkpointer: Any, approval_mode: Any) -> Any:
    return create_mcp_agent(
        ScriptModel(turns=TURNS),
        {"shop": stdio_params("shopfront")},
        approval="destructive",
        approval_mode=approval_mode,
        checkpointer=checkpointer,
    )


def inputs(phase: str, extra: list[str]) -> Any:
    return {"messages": [("user", "go")]} if phase == "start" else Command(resume=json.loads(extra[0]))


def run_sync(phase: str, db: str, extra: list[str], approval_mode: str) -> None:
    with sqlite3.connect(db, check_same_thread=False) as conn:
        graph = agent(SqliteSaver(conn), approval_mode)
        try:
            print(report(graph.invoke(inputs(phase, extra), THREAD)))
        finally:
            graph.mcp.close()


async def run_async(phase: str, db: str, extra: list[str], approval_mode: str) -> None:
    async with AsyncSqliteSaver.from_conn_string(db) as saver:
        graph = agent(saver, approval_mode)
        try:
            print(report(await graph.ainvoke(inputs(phase, extra), THREAD)))
        finally:
            await graph.mcp.aclose()


if __name__ == "__main__":
    mode, phase, db, *rest = sys.argv[1:]
    mode, _, approval_mode = mode.partition("+")  # e.g. "sync+batched"
    if mode == "sync":
        run_sync(phase, db, rest, approval_mode or "per_call")
    else:
        asyncio.run(run_async(phase, db, rest, approval_mode or "per_call"))
