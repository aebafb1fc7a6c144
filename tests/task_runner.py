"""One phase of a task scenario, in its own OS process (used by tests/tasks).

    python tests/task_runner.py <mode> <phase> <sqlite db> <tasks dir> [payload]

``mode`` is ``async`` (``ainvoke`` on ``AsyncSqliteSaver``) or ``sync`` (``invoke`` on
``SqliteSaver``). Each phase opens the SQLite checkpoint, builds an ``MCPToolNode`` over the
stdio fixture server ``tests/servers/tasks.py`` (a new server process each time, its tasks kept
in ``<tasks dir>``) and runs the thread ``tasks``:

- ``start <calls>``: the first run, with ``<calls>`` a JSON list of ``[tool, args, id]``;
- ``resume <value>``: ``Command(resume=<value>)`` (JSON);
- ``continue``: the run goes on from its checkpoint with no input (after a crash).

It prints one JSON line: ``{"interrupts": [...], "results": {tool_call_id: content}}``.
``TASK_DETACH_AFTER`` in the environment sets the server's ``task_detach_after``; with
``TASKS_URL`` the server is that streamable HTTP one (started by the test, kept across phases).
With ``TASK_APPROVE`` set, the node also has a local tool ``approve(item)`` that waits until
``TASK_APPROVE`` tasks have completed (by the server's log), then asks a person (an interrupt):
the turn's MCP calls have finished when the run stops.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.types import Command, interrupt

from langgraph_mcp import MCPToolNode
from tests.conftest_servers import stdio_params
from tests.helpers import ai, tool_graph, until

THREAD = {"configurable": {"thread_id": "tasks"}}


def _node(tasks_dir: str) -> MCPToolNode:
    server: dict[str, Any] = (
        {"url": os.environ["TASKS_URL"]}
        if "TASKS_URL" in os.environ
        else stdio_params("tasks", env={"TASKS_DIR": tasks_dir})
    )
    if "TASK_DETACH_AFTER" in os.environ:
        server["task_detach_after"] = float(os.environ["TASK_DETACH_AFTER"])
    tools = (
        [_approve(Path(tasks_dir) / "log", int(os.environ["TASK_APPROVE"]))]
        if "TASK_APPROVE" in os.environ
        else []
    )
    return MCPToolNode({"tasks": server}, tools=tools)


def _approve(log: Path, tasks: int) -> BaseTool:
    def completed() -> int:
        lines = log.read_text().splitlines() if log.exists() else []
        return len({e["task"] for e in map(json.loads, lines) if e.get("status") == "completed"})

    @tool
    async def approve(item: str) -> str:
        """Ask a person to approve ``item`` once the turn's tasks have completed."""
        await until(lambda: completed() >= tasks, timeout=60)
        return f"approved {item}: {interrupt(f'approve {item}?')}"

    return approve


def _input(phase: str, payload: str | None) -> Any:
    if phase == "start":
        assert payload is not None
        return {"messages": [ai(*(tuple(call) for call in json.loads(payload)))]}
    if phase == "resume":
        assert payload is not None
        return Command(resume=json.loads(payload))
    assert phase == "continue"
    return None


def _report(graph: Any, out: dict[str, Any], state: Any) -> None:
    results = {m.tool_call_id: m.content for m in out.get("messages", []) if isinstance(m, ToolMessage)}
    print(json.dumps({"interrupts": [i.value for i in state.interrupts], "results": results}))


async def run_async(phase: str, db: str, tasks_dir: str, payload: str | None) -> None:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(db) as saver:
        graph = tool_graph(_node(tasks_dir), checkpointer=saver)
        out = await graph.ainvoke(_input(phase, payload), THREAD)
        _report(graph, out, await graph.aget_state(THREAD))


def run_sync(phase: str, db: str, tasks_dir: str, payload: str | None) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(db) as saver:
        graph = tool_graph(_node(tasks_dir), checkpointer=saver)
        out = graph.invoke(_input(phase, payload), THREAD)
        _report(graph, out, graph.get_state(THREAD))


if __name__ == "__main__":
    mode, phase, db, tasks_dir, *rest = sys.argv[1:]
    payload = rest[0] if rest else None
    if mode == "sync":
        run_sync(phase, db, tasks_dir, payload)
    else:
        asyncio.run(run_async(phase, db, tasks_dir, payload))
