"""One phase of a tool-search scenario, in its own OS process (used by the tests).

    python tests/search_runner.py <sync|async> <start|resume> <sqlite db> [resume value as JSON]

Builds the same ``create_mcp_agent`` each time (scripted model, the ``shopfront`` and ``many``
stdio servers, ``tool_search=True``, ``approval="destructive"``) on a SQLite checkpoint: the model
searches, then calls the revealed ``delete_item``, which asks for approval. Prints one JSON line:
``{"interrupts", "ids", "results", "revealed", "seen", "started"}`` (``seen``: the sorted tool
names of each model call made in this process).

With ``SEARCH_LAZY`` set to ``{"catalog": path, "pids": dir}`` both servers are ``lazy``, the
catalog is that file, the shop server writes its pid into ``dir`` when it starts, and ``started``
lists how many files ``dir`` held at each model call.
"""

from __future__ import annotations

import asyncio
import json
import os
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


LAZY = json.loads(os.environ["SEARCH_LAZY"]) if os.environ.get("SEARCH_LAZY") else None
STARTED: list[int] = []


class Model(ScriptModel):
    def _play(self, messages: list[Any]) -> Any:
        STARTED.append(len(os.listdir(LAZY["pids"])) if LAZY else 0)
        return super()._play(messages)


def report(out: dict[str, Any], model: ScriptModel) -> str:
    return json.dumps(
        {
            **json.loads(base_report(out)),
            "revealed": out.get(REVEALED_KEY, []),
            "seen": [sorted(seen) for seen in model.seen],
            "started": STARTED,
        }
    )


def servers() -> dict[str, Any]:
    if LAZY is None:
        return {"shop": stdio_params("shopfront"), "many": stdio_params("many", "--tools", "60")}
    return {
        "shop": {**stdio_params("shopfront", env={"DEMO_PID_DIR": LAZY["pids"]}), "lazy": True},
        "many": {**stdio_params("many", "--tools", "60"), "lazy": True},
    }


def agent(checkpointer: Any, model: ScriptModel) -> Any:
    from langgraph_mcp import create_mcp_agent
    from langgraph_mcp.options import ToolSearch

    return create_mcp_agent(
        model,
        servers(),
        tool_search=ToolSearch(catalog=LAZY["catalog"]) if LAZY else True,
        approval="destructive",
        checkpointer=checkpointer,
    )


def run_sync(phase: str, db: str, extra: list[str]) -> None:
    model = Model(turns=TURNS)
    with sqlite3.connect(db, check_same_thread=False) as conn:
        graph = agent(SqliteSaver(conn), model)
        try:
            print(report(graph.invoke(inputs(phase, extra), THREAD), model))
        finally:
            graph.mcp.close()


async def run_async(phase: str, db: str, extra: list[str]) -> None:
    model = Model(turns=TURNS)
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
