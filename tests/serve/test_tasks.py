"""Served runs as MCP tasks (2026-07-28 tasks extension), followed by this package's client: a
task polled to its result through a question, cancelled with the outer run, and picked up by a
new server process on the same SQLite checkpointer."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from langgraph_mcp import MCPToolNode
from langgraph_mcp.elicitation import accept, resume_elicitations
from langgraph_mcp.serve import ANSWER_FIELD
from tests.conftest_servers import stdio_params
from tests.helpers import ai, thread, tool_graph, tool_results, until

pytestmark = pytest.mark.slow


def _served(folder: Path, *options: str, era: str = "auto") -> dict[str, Any]:
    """The served graphs over stdio, every call a task (2026-07-28), or a task for a 2025-11-25
    client too (this package's client asks for one when a tool requires it)."""
    env = {"SERVED_GATES": str(folder)}
    args = (
        "--tasks",
        "always",
        "--legacy-task-support",
        "required",
        "--poll-interval-ms",
        "50",
        "--sqlite",
        str(folder / "runs.sqlite"),
        *options,
    )
    return {**stdio_params("served_graphs", *args, env=env), "protocol": era}


def _marked_cancelled(folder: Path) -> bool:
    try:
        return list(_task_checkpoints(folder).values()) == [{"cancelled"}]
    except sqlite3.OperationalError:  # the server is writing: look again
        return False


def _task_checkpoints(folder: Path) -> dict[str, set[str]]:
    """{thread id: the ``served_run`` marks} of the threads whose runs ran as tasks."""
    with SqliteSaver.from_conn_string(str(folder / "runs.sqlite")) as saver:
        found: dict[str, set[str]] = {}
        for item in saver.list(None):
            thread = item.config["configurable"]["thread_id"]
            if item.metadata.get("served_as") == "task":
                found.setdefault(thread, set())
            if "served_run" in item.metadata:
                found.setdefault(thread, set()).add(str(item.metadata["served_run"]))
        return found


def _started(folder: Path, label: str) -> list[str]:
    return sorted(p.name.rsplit("-", 1)[1] for p in folder.glob(f"started-{label}-*"))


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_a_task_is_polled_through_its_question_to_its_result(tmp_path: Path, era: str) -> None:
    async with MCPToolNode({"served": _served(tmp_path, era=era)}) as node:
        graph = tool_graph(node, checkpointer=InMemorySaver())
        progress: list[str] = []
        out: dict[str, Any] = {}
        payload: Any = {"messages": [ai(("writer", {"topic": "tasks"}, "c1"))]}
        for _ in range(2):
            async for mode, chunk in graph.astream(payload, thread(), stream_mode=["custom", "values"]):
                if mode == "custom" and chunk.get("type") == "mcp_progress":
                    progress.append(str(chunk.get("message")))
                elif mode == "values":
                    out = chunk
            pending = (await graph.aget_state(thread())).interrupts
            if not pending:
                break
            [question] = pending
            assert question.value["type"] == "mcp_elicitation"
            assert question.value["requests"][0]["message"] == "Who writes about tasks?"
            payload = resume_elicitations(
                pending, lambda p: {r["key"]: accept({ANSWER_FIELD: "Grace"}) for r in p["requests"]}
            )
        assert '"answer": "Grace writes about tasks"' in tool_results(out)["c1"]
    assert len(_task_checkpoints(tmp_path)) == 1  # the run was a task, in either era


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_cancelling_the_outer_run_cancels_the_served_run(tmp_path: Path, era: str) -> None:
    async with MCPToolNode({"served": _served(tmp_path, era=era)}) as node:
        graph = tool_graph(node, checkpointer=InMemorySaver())
        run = asyncio.ensure_future(
            graph.ainvoke({"messages": [ai(("gated", {"label": "stop"}, "c1"))]}, thread())
        )
        await until(lambda: bool(_started(tmp_path, "stop")))
        run.cancel()
        await until(lambda: (tmp_path / "cancelled-stop").exists())
        with pytest.raises(asyncio.CancelledError):
            await run
        # The server marks the thread after the run stopped: wait for it before the server goes.
        await until(lambda: _marked_cancelled(tmp_path))
    assert not (tmp_path / "release-stop").exists()
    # cancelled through the task (tasks/cancel), which marks the thread so no restart resumes it
    assert list(_task_checkpoints(tmp_path).values()) == [{"cancelled"}]


async def test_a_task_goes_on_in_a_new_server_process_after_a_restart(tmp_path: Path) -> None:
    saver = InMemorySaver()
    call = {"messages": [ai(("gated", {"label": "restart"}, "c1"))]}
    async with MCPToolNode({"served": {**_served(tmp_path), "task_detach_after": 0}}) as node:
        graph = tool_graph(node, checkpointer=saver)
        await graph.ainvoke(call, thread())
        [parked] = (await graph.aget_state(thread())).interrupts
        assert parked.value["type"] == "mcp_task" and parked.value["status"] == "working"
        await until(lambda: len(_started(tmp_path, "restart")) == 1)
    first = _started(tmp_path, "restart")
    (tmp_path / "release-restart").touch()  # the first server process is gone: its run stopped
    async with MCPToolNode({"served": _served(tmp_path)}) as node:
        graph = tool_graph(node, checkpointer=saver)
        out = await graph.ainvoke(Command(resume=True), thread())
    assert '"result": "done restart"' in tool_results(out)["c1"]
    pids = _started(tmp_path, "restart")
    assert len(pids) == 2 and set(first) < set(pids)  # a new process ran the stopped node again
