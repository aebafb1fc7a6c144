"""What a task is comes from its thread: a second server on the same checkpointer (a restart)
finds a task it did not start, goes on with a run left part way, keeps a cancelled one
cancelled, and shows a task only to the user who owns its thread."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from mcp.shared.exceptions import MCPError

from langgraph_mcp import MCPToolNode
from langgraph_mcp.serve import GraphServer, ServeOptions
from langgraph_mcp.serve._calls import Call
from langgraph_mcp.serve._tasks import Run
from langgraph_mcp.serve._threads import ANONYMOUS, task_id
from tests.helpers import ai, thread, tool_graph, tool_results, until
from tests.servers import served_graphs


def _start(server: GraphServer, label: str) -> Run:
    call = server.begin("gated", {"label": label}, None, None)
    assert isinstance(call, Call)
    run = Run(task_id(call.thread, f"gated:{label}"), call)
    server.runs.start(run, call.payload)
    return run


async def test_a_restarted_server_goes_on_with_a_stopped_run_and_keeps_a_cancelled_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVED_GATES", str(tmp_path))
    saver = InMemorySaver()
    first = GraphServer([served_graphs.gated], checkpointer=saver, options=ServeOptions(tasks="always"))
    stopped, cancelled = _start(first, "go"), _start(first, "stop")
    await until(lambda: len(list(tmp_path.glob("started-*"))) == 2)
    assert (await first.runs.state(stopped))["status"] == "working"
    await first.runs.cancel(cancelled)
    assert (tmp_path / "cancelled-stop").exists()
    assert stopped.job is not None
    stopped.job.cancel()  # the first process ends: its run stops part way, unmarked
    await asyncio.wait({stopped.job})

    second = GraphServer([served_graphs.gated], checkpointer=saver, options=ServeOptions(tasks="always"))
    again = second.runs.find(stopped.task_id, ANONYMOUS)
    gone = second.runs.find(cancelled.task_id, ANONYMOUS)
    assert (await second.runs.state(gone))["status"] == "cancelled"
    assert (await second.runs.state(again))["status"] == "working"  # resumed from its checkpoint
    (tmp_path / "release-go").touch()
    assert again.job is not None
    await asyncio.wait({again.job})
    state = await second.runs.state(again)
    assert state["status"] == "completed"
    assert state["result"]["structuredContent"] == {"label": "go", "result": "done go"}
    assert (await second.runs.state(gone))["status"] == "cancelled"
    with pytest.raises(MCPError, match="Task not found"):
        second.runs.find(stopped.task_id, "u0123456789abcdef0123")  # another user


def _count_looks(server: GraphServer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statuses of every look at a task (its handle, each ``tasks/get``), as they happen."""
    looks: list[str] = []
    state = server.runs.state

    async def counted(run: Run) -> dict[str, Any]:
        found = await state(run)
        looks.append(str(found["status"]))
        return found

    monkeypatch.setattr(server.runs, "state", counted)
    return looks


async def _follow(server: GraphServer, call: Any) -> tuple[dict[str, Any], list[str]]:
    """Call a served tool through ``MCPToolNode`` in process: the final output and the progress
    messages the outer graph's stream got."""
    async with MCPToolNode({"served": {"transport": "in_process", "server": server}}) as node:
        graph = tool_graph(node, checkpointer=InMemorySaver())
        progress: list[str] = []
        out: dict[str, Any] = {}
        async for mode, chunk in graph.astream(
            {"messages": [ai(call)]}, thread(), stream_mode=["custom", "values"]
        ):
            if mode == "custom" and chunk.get("type") == "mcp_progress":
                progress.append(str(chunk["message"]))
            elif mode == "values":
                out = chunk
        return out, progress


async def test_a_quick_run_is_answered_inline_with_its_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVED_GATES", str(tmp_path))
    (tmp_path / "release-quick").touch()
    server = GraphServer([served_graphs.gated], options=ServeOptions(tasks="auto", task_after=30))
    looks = _count_looks(server, monkeypatch)
    out, progress = await _follow(server, ("gated", {"label": "quick"}, "c1"))
    assert looks == []  # no task handle, no tasks/get
    assert '"result": "done quick"' in tool_results(out)["c1"]
    assert progress == ["preparing quick", "prepare done", "wait done", "finish done"]
    [run] = server.runs._runs.values()  # it ran as a possible task, and ended within the wait
    assert run.job is not None and run.job.done() and run.inline is None


async def test_a_slow_run_becomes_a_task_the_client_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVED_GATES", str(tmp_path))
    server = GraphServer(
        [served_graphs.gated], options=ServeOptions(tasks="auto", task_after=0.05, poll_interval_ms=50)
    )

    looks = _count_looks(server, monkeypatch)

    async def release_once_a_task() -> None:
        await until(lambda: bool(looks))  # the call was answered with the task's handle
        (tmp_path / "release-slow").touch()

    opener = asyncio.ensure_future(release_once_a_task())
    out, progress = await _follow(server, ("gated", {"label": "slow"}, "c1"))
    await opener
    assert '"result": "done slow"' in tool_results(out)["c1"]
    assert looks[0] == "working" and looks[-1] == "completed"  # the handle, then the polls
    # status messages of the task, then no more from the call that started it
    assert progress and set(progress) <= {"preparing slow", "prepare done", "wait done", "finish done"}
