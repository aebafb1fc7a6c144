"""What a task is comes from its thread: a second server on the same checkpointer (a restart)
finds a task it did not start, goes on with a run left part way, keeps a cancelled one
cancelled, and shows a task only to the user who owns its thread."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from mcp.shared.exceptions import MCPError

from langgraph_mcp.serve import GraphServer, ServeOptions
from langgraph_mcp.serve._calls import Call
from langgraph_mcp.serve._tasks import Run
from langgraph_mcp.serve._threads import ANONYMOUS, task_id
from tests.helpers import until
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
