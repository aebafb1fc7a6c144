"""What a server sends about a task is bounded before it is used."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from pydantic import ValidationError

from langgraph_mcp import MCPToolNode
from langgraph_mcp._session.taskwire import POLL_BOUNDS, STATUS_MESSAGE_MAX, TaskHandle, TaskState
from tests.conftest_servers import stdio_params
from tests.helpers import ai, thread, tool_graph, tool_results

BASE = {"taskId": "t1", "status": "working", "resultType": "task"}


@pytest.mark.parametrize(
    ("interval", "seconds"),
    [
        (0, POLL_BOUNDS[0]),
        (-5, POLL_BOUNDS[0]),
        (250, 0.25),
        (10**12, POLL_BOUNDS[1]),
        (None, 1.0),
        (math.nan, 1.0),
    ],
)
def test_the_poll_interval_is_kept_within_bounds(interval: float | None, seconds: float) -> None:
    handle = TaskHandle.model_validate({**BASE, "pollIntervalMs": interval}, by_name=False)
    assert handle.poll_interval() == seconds


def test_a_long_status_message_is_cut() -> None:
    state = TaskState.model_validate({**BASE, "statusMessage": "x" * 10_000}, by_name=False)
    assert state.status_message == "x" * STATUS_MESSAGE_MAX


@pytest.mark.parametrize("task_id", ["", "a" * 257, "bad\nid"])
def test_a_task_id_that_is_not_a_short_printable_string_is_refused(task_id: str) -> None:
    with pytest.raises(ValidationError):
        TaskHandle.model_validate({**BASE, "taskId": task_id}, by_name=False)


def test_an_unknown_status_is_refused() -> None:
    with pytest.raises(ValidationError):
        TaskState.model_validate({**BASE, "status": "sleeping"}, by_name=False)


async def test_a_broken_task_handle_is_an_error_message_not_a_hang(tmp_path: Path) -> None:
    node = MCPToolNode({"tasks": stdio_params("tasks", env={"TASKS_DIR": str(tmp_path)})})
    out = await tool_graph(node).ainvoke(
        {"messages": [ai(("odd_job", {}, "c1"), ("quick", {"x": 3}, "c2"))]}, thread()
    )
    results = tool_results(out)
    assert results["c1"].startswith("MCP server 'tasks' returned an invalid result for 'odd_job'")
    assert "a task id is a printable string of 1 to 256 characters" in results["c1"]
    assert "CallToolResult.content" not in results["c1"]  # read as the shape its resultType names
    assert results["c2"] == "quick 3"
