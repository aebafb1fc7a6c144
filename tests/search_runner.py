"""One phase of a tool-search scenario, in its own OS process (used by the tests).

    python tests/search_runner.py <sync|async> <start|resume> <sqlite db> [resume value as JSON]

Builds the same ``create_mcp_agent`` each time (scripted model, the ``shopfront`` and ``many``
stdio servers, ``tool_search=True``, ``approval="destructive"``) on a SQLite checkpoint: the model
searches, then calls the revealed ``delete_item``, which asks for approval. Prints one JSON line:
``{"interrupts", "ids", "results", "revealed", "seen"}`` (``seen``: the sorted tool names of each
model call made in this process).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langgraph_mcp.options import REVEALED_KEY
from tests.agent_runner import THREAD, inputs
from tests.agent_runner import report as base_report
from tests.chat import ScriptModel
from tests.conftest_servers import stdio_params

TURNS = [
    [("search_tools", {"query": "delete an item", "limit": 1}, "s1")],
    [("delete_item", {"item": "x"}, "c1")],
]


def report(out: dict[str, Any], model: ScriptModel) -> str:
    return json.dumps(
        {
            **json.loads(base_report(out)),
            "revealed": out.get(REVEALED_KEY, []),
            "seen": [sorted(seen) for seen in model.seen],
        }
    )


def agent(checkpointer: Any, model: ScriptModel) -> Any:
    from langgraph_mcp import create_mcp_agent

    return create_mcp_agent(
        model,
        {"shop": stdio_params("shopfront"), "many": stdio_params("many", "--tools", "60")},
        tool_search=True,
        approval="destructive",
        checkpointer=checkpointer,
    )


def run_sync(phase: str, db: str, extra: list[str]) -> None:
    model = ScriptModel(turns=TURNS)
    with sqlite3.connect(db, check_same_thread=False) as conn:
        graph = agent(SqliteSaver(conn), model)
        try:
            print(report(graph.invoke(inputs(phase, extra), THREAD), model))
        finally:
            graph.mcp.close()


async def run_async(phase: str, db: str, extra: list[str]) -> None:
    model = ScriptModel(turns=TURNS)
    async with AsyncSqliteSaver.from_conn_string(db) as saver:
        graph = agent(saver, model)
        try:
            print(report(await graph.ainvoke(inputs(phase, extra), THREAD), model))
        finally:
            await graph.mcp.aclose()


if __name__ == "__main__":
    mode, phase, db, *rest = sys.argv[1:]
    if mode == "sync":
        run_sync(phase, db, rest)
    else:
        asyncio.run(run_async(phase, db, rest))
