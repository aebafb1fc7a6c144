"""Interoperability with a task server nobody here wrote: ``fastmcp-tasks`` (FastMCP's
implementation of the 2026-07-28 tasks extension, ``io.modelcontextprotocol/tasks``), pinned by
``tests/interop/fastmcp_tasks``, over stdio and loopback streamable HTTP.

``tests/interop/fastmcp_tasks/server.py`` logs what its tool bodies do, with the id of the task
each ran in, so the tests check what happened on the server: how many tasks were started, that
an answer reached the same task, that a cancellation stopped it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_mcp import MCPToolNode
from langgraph_mcp.errors import MCPServerError
from tests.helpers import ai, check, thread, tool_graph, tools_by_name, until
from tests.interop.servers import fastmcp_tasks_http, fastmcp_tasks_stdio

# One worker runs the module (tests/conftest.py, ONE_WORKER): its HTTP server starts once.
pytestmark = [pytest.mark.interop]

TIMEOUTS = {"stuck": 0.5}


class TasksServer:
    """The fastmcp-tasks server's entries, and what its tools logged."""

    def __init__(self, log: Path, url: str) -> None:
        self.log = log
        self.url = url

    def node(self, transport: str, **options: Any) -> MCPToolNode:
        """A node on the server over ``transport`` (stdio: a process of its own, with the same log)."""
        options = {"tool_timeouts": TIMEOUTS, **options}
        if transport == "stdio":
            return MCPToolNode({"t": fastmcp_tasks_stdio(self.log, **options)})
        return MCPToolNode({"t": {"url": self.url, **options}})

    def events(self, label: str) -> list[tuple[str, str]]:
        """``(event, task id)`` of what the tools run for ``label`` did, in order (the task id is
        ``None`` for a call that ran in the foreground, not as a task)."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [(e["event"], e["task"]) for e in map(json.loads, lines) if e["label"] == label]

    def release(self, label: str, step: int) -> None:
        """Let ``job(label)`` go past its step ``step``."""
        self.log.with_name(f"{self.log.name}.{label}-{step}").touch()


@pytest.fixture(scope="module")
def tasks_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TasksServer]:
    log = tmp_path_factory.mktemp("fastmcp-tasks") / "log"
    with fastmcp_tasks_http(log) as url:
        yield TasksServer(log, url)


def _results(out: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}


async def _result_and_progress(node: MCPToolNode, server: TasksServer, label: str) -> None:
    """A task runs to its result, its status messages are progress events, and its errors are
    error messages."""
    graph = tool_graph(node)
    progress: list[dict[str, Any]] = []
    out: dict[str, Any] = {}
    calls = ai(
        ("job", {"label": label, "steps": 3}, "c1"),
        ("broken", {}, "c2"),
        ("faulty", {}, "c3"),
        ("nag", {}, "c4"),
    )
    async for mode, chunk in graph.astream(
        {"messages": [calls]}, thread(label), stream_mode=["custom", "values"]
    ):
        if mode == "custom" and chunk.get("type") == "mcp_progress":
            check("progress-event", chunk)
            progress.append(chunk)
            if chunk["tool_call_id"] == "c1":
                server.release(label, int(chunk["progress"]))  # the next step once this one was seen
        elif mode == "values":
            out = chunk
    assert node.pool.connection("t").offers_tasks
    assert [(p["progress"], p["total"], p["message"]) for p in progress if p["tool_call_id"] == "c1"] == [
        (1, None, "step 1 of 3"),
        (2, None, "step 2 of 3"),
        (3, None, "step 3 of 3"),
    ]
    results = _results(out)
    assert (results["c1"].content, results["c1"].status) == (f"done {label}", "success")
    # A tool error is a completed task whose result has ``isError``; a JSON-RPC error is a
    # ``failed`` task carrying it. Both are error messages.
    assert results["c2"].status == "error" and "quota exceeded" in str(results["c2"].content)
    assert results["c3"].status == "error" and "backend unreachable" in str(results["c3"].content)
    # fastmcp-tasks asks from a task only by returning an InputRequiredResult (``ask``).
    assert results["c4"].status == "error" and "ctx.elicit() is not supported" in str(results["c4"].content)
    (started, task_id), (finished, same) = server.events(label)
    assert (started, finished) == ("started", "finished") and task_id == same  # one task, run once


async def _question_answered_with_update(node: MCPToolNode, server: TasksServer, label: str) -> None:
    """Each question from a task is an ``mcp_elicitation`` interrupt, asked once; the resumed run
    answers it with ``tasks/update`` on the same task."""
    graph = tool_graph(node)
    out = await graph.ainvoke({"messages": [ai(("ask", {"label": label}, "c1"))]}, thread(label))
    (pending,) = out["__interrupt__"]
    check("elicitation-interrupt", pending.value)
    assert (pending.value["type"], pending.value["tool_call_id"]) == ("mcp_elicitation", "c1")
    (question,) = pending.value["requests"]
    assert question["message"] == f"Your name, for {label}?"
    answer = {"responses": {question["key"]: {"action": "accept", "content": {"name": "Ada"}}}}
    out = await graph.ainvoke(Command(resume=answer), thread(label))
    (pending,) = out["__interrupt__"]
    (question,) = pending.value["requests"]  # the next question only: the first is not asked again
    assert question["message"] == "Shout Ada?"
    answer = {"responses": {question["key"]: {"action": "accept", "content": {"shout": True}}}}
    out = await graph.ainvoke(Command(resume=answer), thread(label))
    assert "__interrupt__" not in out
    assert _results(out)["c1"].content == "Hello, ADA!"
    # Each resumed run polled the task it had (no new tools/call, so no new task), and each
    # answer reached that task once: fastmcp-tasks ran the body again, in the same task, with it.
    events = server.events(label)
    assert [event for event, _ in events] == ["started", "answered name", "answered shout"]
    assert len({task for _, task in events}) == 1


async def _timeout_cancels(node: MCPToolNode, server: TasksServer, label: str) -> None:
    """When the call's time limit runs out, ``tasks/cancel`` stops the task on the server."""
    graph = tool_graph(node)
    out = await graph.ainvoke({"messages": [ai(("stuck", {"label": label}, "c1"))]}, thread(label))
    message = _results(out)["c1"]
    assert message.status == "error" and "0.5" in str(message.content)
    await until(lambda: [event for event, _ in server.events(label)] == ["started", "cancelled"])
    (_, task_id), _ = server.events(label)
    state = await node.pool.connection("t").get_task(task_id, timeout=10)
    assert state.status == "cancelled"


SCENARIOS = {
    "result": _result_and_progress,
    "question": _question_answered_with_update,
    "timeout": _timeout_cancels,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_over_http(tasks_server: TasksServer, scenario: str) -> None:
    async with tasks_server.node("http") as node:
        await SCENARIOS[scenario](node, tasks_server, f"http-{scenario}")


@pytest.mark.slow
async def test_over_stdio(tasks_server: TasksServer) -> None:
    """The same, over stdio; one server process for all (it takes seconds to start)."""
    async with tasks_server.node("stdio") as node:
        for scenario, run in SCENARIOS.items():
            await run(node, tasks_server, f"stdio-{scenario}")


async def test_a_run_parks_on_the_task_and_picks_it_up(tasks_server: TasksServer) -> None:
    """``task_detach_after``: the run parks with an ``mcp_task`` interrupt holding the server's
    task id; once the task is done, resuming the run reads its result (the task is not sent again)."""
    label = "parked"
    async with tasks_server.node("http", task_detach_after=0) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("job", {"label": label, "steps": 1}, "c1"))]}, thread())
        (pending,) = out["__interrupt__"]
        check("task-interrupt", pending.value)
        ((_, task_id),) = tasks_server.events(label)
        assert (pending.value["type"], pending.value["tool_call_id"]) == ("mcp_task", "c1")
        assert task_id not in json.dumps(pending.value)  # a task id may be a bearer token
        assert pending.value["poll_interval_ms"] == 50  # as the server asked
        tasks_server.release(label, 1)
        await until(lambda: [event for event, _ in tasks_server.events(label)] == ["started", "finished"])
        out = await graph.ainvoke(Command(resume=True), thread())
        assert _results(out)["c1"].content == f"done {label}"
    assert {task for _, task in tasks_server.events(label)} == {task_id}


@pytest.mark.parametrize("options", [{"tasks": False}, {"protocol": "legacy"}], ids=["tasks-off", "legacy"])
async def test_without_the_extension_the_server_runs_calls_in_the_foreground(
    tasks_server: TasksServer, options: dict[str, Any]
) -> None:
    """Without the extension (``tasks: false``, or a 2025-11-25 session, where extensions do not
    exist) fastmcp-tasks creates no task, and refuses a tool that only runs as a task with -32021
    (Missing Required Client Capability).

    2026-07-28 listings say nothing of tasks (the extension dropped the tool-level
    ``execution.taskSupport``; the server decides call by call), so with ``tasks: false`` that tool
    is offered and its call is an error message. 2025-11-25 listings mark it
    ``taskSupport: "required"`` (the experimental task API, not implemented here): it is left out.
    """
    label = "-".join(f"{k}-{v}" for k, v in options.items())
    async with tasks_server.node("http", **options) as node:
        tools = await tools_by_name(node.pool)
        era = node.pool.connection("t").protocol_version
        assert era == ("2026-07-28" if "tasks" in options else "2025-11-25")
        assert ("must" in tools) is ("tasks" in options)
        graph = tool_graph(node)
        calls = [("broken", {"label": label}, "c1")]
        if "must" in tools:
            calls.append(("must", {"label": label}, "c2"))
        results = _results(await graph.ainvoke({"messages": [ai(*calls)]}, thread()))
        assert results["c1"].status == "error" and "quota exceeded" in str(results["c1"].content)
        if "must" in tools:
            assert results["c2"].status == "error" and "-32021" in str(results["c2"].content)
        with pytest.raises(MCPServerError) as refused:
            await node.pool.connection("t").call_tool("must", {"label": label})
        assert refused.value.code == -32021
    assert tasks_server.events(label) == [("started", None)]  # broken ran in the foreground; must never ran


@pytest.mark.slow
async def test_a_task_the_server_no_longer_has_ends_the_call_with_its_error(
    tasks_server: TasksServer,
) -> None:
    """A run parked on a task is resumed against a server that no longer has it (here: another
    server process, as after a restart; fastmcp-tasks keeps its tasks in memory, and may discard
    one once its ``ttlMs`` has passed): the call ends with the server's error, and no new task is
    started."""
    label = "lost"
    saver = InMemorySaver()
    async with tasks_server.node("http", task_detach_after=0) as node:
        graph = tool_graph(node, checkpointer=saver)
        out = await graph.ainvoke({"messages": [ai(("job", {"label": label, "steps": 1}, "c1"))]}, thread())
        (pending,) = out["__interrupt__"]
        assert pending.value["type"] == "mcp_task"
    tasks_server.release(label, 1)  # the first server finishes the task; the run never sees it
    await until(lambda: [event for event, _ in tasks_server.events(label)] == ["started", "finished"])
    with fastmcp_tasks_http(tasks_server.log) as restarted:
        async with MCPToolNode({"t": {"url": restarted, "task_detach_after": 0}}) as node:
            graph = tool_graph(node, checkpointer=saver)
            out = await graph.ainvoke(Command(resume=True), thread())
    message = _results(out)["c1"]
    ((_, task_id),) = {(e, t) for e, t in tasks_server.events(label) if e == "started"}
    assert message.status == "error" and " not found" in str(message.content)
    assert task_id not in str(message.content)  # the server's words, its task id masked
    assert len(tasks_server.events(label)) == 2  # nothing started on the second server
