"""Tasks of a served graph under concurrent and abandoned requests: two answers arriving at once
start the run once (so a cancel stops it), and a call abandoned before it gave a task id leaves no
run going."""

from __future__ import annotations

import asyncio
import types as pytypes
from typing import Any

import mcp_types as types
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict

from langgraph_mcp.serve import GraphServer, ServeOptions
from langgraph_mcp.serve._calls import Call, pending_questions
from langgraph_mcp.serve._runs import outcome_of
from langgraph_mcp.serve._tasks import TASKS_EXTENSION, Run, ServedTasks


class _State(TypedDict):
    x: str


async def test_two_answers_at_once_start_the_run_once_and_a_cancel_stops_it() -> None:
    started: list[Any] = []
    began, released = asyncio.Event(), asyncio.Event()

    async def ask(state: _State) -> dict[str, Any]:
        answer = interrupt({"question": "go on?"})
        started.append(answer)
        began.set()
        await released.wait()  # works until the test lets it go (or the run is cancelled)
        return {"x": str(answer)}

    builder = StateGraph(_State)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    server = GraphServer([builder.compile(name="g")], name="t", checkpointer=InMemorySaver())
    tool, graph = server.served("g")  # type: ignore[misc]
    run = Run("anon.races~g:1", Call(tool, graph, "anon.races", {"x": "a"}))
    server.runs.start(run, {"x": "a"})
    assert run.job is not None
    await run.job
    key = pending_questions(await outcome_of(graph, run.call.config))[0].key
    answer = {key: {"action": "accept", "content": {"answer": "yes"}}}
    await asyncio.gather(server.runs.update(run, answer), server.runs.update(run, answer))
    await began.wait()
    await asyncio.sleep(0.05)  # room for a second start, were there one
    job = run.job
    await server.runs.cancel(run)
    assert job.cancelled() and len(started) == 1  # one run, and it is the one cancelled
    assert (await server.runs.state(run))["status"] == "cancelled"


async def test_a_call_abandoned_before_it_became_a_task_leaves_no_run() -> None:
    ticks: list[int] = []
    first = asyncio.Event()

    async def slow(state: _State) -> dict[str, Any]:
        for i in range(100):
            ticks.append(i)
            first.set()
            await asyncio.sleep(0.05)
        return {"x": "done"}

    builder = StateGraph(_State)
    builder.add_node("n", slow)
    builder.add_edge(START, "n")
    builder.add_edge("n", END)
    server = GraphServer([builder.compile(name="g")], options=ServeOptions(task_after=30.0))
    tasks = ServedTasks(server, server.runs, server._levels)
    caps = pytypes.SimpleNamespace(extensions={TASKS_EXTENSION: {}}, elicitation=None)

    async def report_progress(*_: Any, **__: Any) -> None:
        return None

    ctx: Any = pytypes.SimpleNamespace(
        protocol_version="2026-07-28",
        request=None,
        request_id=1,
        session=pytypes.SimpleNamespace(client_capabilities=caps, report_progress=report_progress),
    )
    call = asyncio.ensure_future(
        tasks.intercept_tool_call(types.CallToolRequestParams(name="g", arguments={"x": "a"}), ctx, None)  # type: ignore[arg-type]
    )
    await first.wait()
    call.cancel()  # the client cancels tools/call, or goes away, before the task id
    (run,) = server.runs._runs.values()
    assert run.job is not None
    await asyncio.wait({call, run.job})
    assert run.job.cancelled() and len(ticks) < 100
