"""Calls answered with a task (the 2026-07-28 tasks extension), against a real task server.

The fixture server (``tests/servers/tasks.py``) keeps its tasks in files and logs every request
about them, so each test checks what the server saw: how many tasks were created, answered and
cancelled.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command, RetryPolicy, interrupt

from langgraph_mcp import MCPPool, MCPToolNode
from langgraph_mcp._session import stdio, transports
from langgraph_mcp.errors import MCPToolCallError
from tests.conftest_servers import http_server_process, spawn_http_server, stdio_params
from tests.forkserver import command
from tests.helpers import ai, check, run_script, thread, tool_graph, until
from tests.servers import tasks as fixture
from tests.tiers import HTTP_ERAS

RUNNER = Path(__file__).resolve().parents[1] / "task_runner.py"

T = TypeVar("T")


class TaskServer:
    """One fixture task server's configuration and its request log."""

    def __init__(self, config: dict[str, Any], folder: Path) -> None:
        self.config = config
        self.folder = folder
        self.opened: list[Any] = []
        """What the test opened on this server (nodes, agents' pools), closed by the fixture."""

    def log(self) -> list[dict[str, Any]]:
        return fixture.log(self.folder)

    def events(self, event: str, tool: str | None = None) -> list[dict[str, Any]]:
        created = {e["task"]: e["tool"] for e in self.log() if e["event"] == "created"}
        return [
            e for e in self.log() if e["event"] == event and (tool is None or created.get(e["task"]) == tool)
        ]

    def release(self, label: str) -> None:
        (self.folder / f"release-{label}").touch()

    def node(self, **options: Any) -> MCPToolNode:
        """A node on this server; the fixture closes it once the test is done."""
        return self.closed_after(MCPToolNode({"tasks": {**self.config, **options}}))

    def closed_after(self, opened: T) -> T:
        """``opened`` (anything with ``aclose()``), closed by the fixture after the test."""
        self.opened.append(opened)
        return opened

    async def close_opened(self) -> None:
        for opened in self.opened:
            await opened.aclose()


@pytest.fixture(params=["stdio", "http"])
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskServer]:
    folder = tmp_path / "tasks"
    folder.mkdir()
    env = {"TASKS_DIR": str(folder)}
    # The test's nodes are closed before the server stops: a session still open would hold the
    # HTTP server's shutdown for its graceful-shutdown timeout (1 s).
    if request.param == "stdio":
        server = TaskServer(stdio_params("tasks", env=env), folder)
        yield server
        await server.close_opened()
    else:
        async with spawn_http_server("tasks", env=env) as url:
            server = TaskServer({"url": url}, folder)
            yield server
            await server.close_opened()


def _results(out: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}


async def test_a_task_is_followed_to_its_result_with_its_status_as_progress(server: TaskServer) -> None:
    graph = tool_graph(server.node())
    calls = ai(("job", {"seconds": 0.9, "label": "x"}, "c1"), ("quick", {"x": 1}, "c2"))
    progress: list[dict[str, Any]] = []
    out: dict[str, Any] = {}
    async for mode, chunk in graph.astream({"messages": [calls]}, thread(), stream_mode=["custom", "values"]):
        if mode == "custom" and chunk.get("type") == "mcp_progress":
            progress.append(chunk)
        elif mode == "values":
            out = chunk
    results = _results(out)
    assert results["c1"].content == "done x" and results["c1"].status == "success"
    assert results["c1"].artifact["structured_content"] == {"result": "done x"}
    assert results["c2"].content == "quick 1"
    messages = [p["message"] for p in progress if p["tool_call_id"] == "c1"]
    # Which steps a poll sees depends on when it runs (a busy machine may skip one); each one
    # seen is reported once, not once per poll, and in the order the server gave them.
    assert messages and set(messages) <= {"step 1", "step 2", "step 3"}
    assert messages == sorted(set(messages))
    for event in progress:
        check("progress-event", event)
    assert len(server.events("created")) == 1  # quick was no task
    assert server.events("get", "job")[-1]["status"] == "completed"
    assert not server.events("cancel")


async def test_a_question_from_a_task_is_an_interrupt_answered_once(server: TaskServer) -> None:
    graph = tool_graph(server.node())
    out = await graph.ainvoke({"messages": [ai(("ask_job", {"seconds": 0.05}, "c1"))]}, thread())
    (pending,) = (await graph.aget_state(thread())).interrupts
    check("elicitation-interrupt", pending.value)
    assert pending.value["type"] == "mcp_elicitation" and pending.value["tool_call_id"] == "c1"
    (question,) = pending.value["requests"]
    assert question["message"] == "What is your name?"
    assert "messages" in out and not _results(out)
    answer = {"responses": {question["key"]: {"action": "accept", "content": {"name": "Ada"}}}}
    out = await graph.ainvoke(Command(resume=answer), thread())
    assert _results(out)["c1"].content == "Hello, Ada!"
    assert len(server.events("created")) == 1  # the resumed run followed the same task
    (update,) = server.events("update")
    assert update["keys"] == ["name-1"]
    if "url" in server.config:  # streamable HTTP: each task request names its task for routing
        for event in [*server.events("get"), update]:
            assert event["mcp_name"] == event["task"]


async def test_a_question_can_be_declined(server: TaskServer) -> None:
    graph = tool_graph(server.node())
    await graph.ainvoke({"messages": [ai(("ask_job", {"seconds": 0}, "c1"))]}, thread())
    (pending,) = (await graph.aget_state(thread())).interrupts
    key = pending.value["requests"][0]["key"]
    out = await graph.ainvoke(Command(resume={"responses": {key: {"action": "decline"}}}), thread())
    assert _results(out)["c1"].content == "decline"


async def test_a_handler_answers_a_task_without_a_person(server: TaskServer) -> None:
    async def handler(request: Any, call: Any) -> Any:
        return {"action": "accept", "content": {"name": f"code for {call['tool_call_id']}"}}

    graph = tool_graph(server.node(elicitation=handler))
    out = await graph.ainvoke({"messages": [ai(("ask_job", {"seconds": 0}, "c7"))]}, thread())
    assert _results(out)["c7"].content == "Hello, code for c7!"
    assert len(server.events("update")) == 1


@pytest.mark.parametrize(
    ("tool", "words"),
    [("broken_job", "quota exceeded"), ("sorry_job", "it went wrong")],
)
async def test_a_task_that_fails_is_an_error_message(server: TaskServer, tool: str, words: str) -> None:
    graph = tool_graph(server.node())
    out = await graph.ainvoke({"messages": [ai((tool, {}, "c1"))]}, thread())
    message = _results(out)["c1"]
    assert message.status == "error" and words in str(message.content)


async def test_the_call_timeout_cancels_the_task_on_the_server(server: TaskServer) -> None:
    graph = tool_graph(server.node(tool_timeouts={"stuck_job": 0.4}))
    out = await graph.ainvoke({"messages": [ai(("stuck_job", {}, "c1"))]}, thread())
    message = _results(out)["c1"]
    assert message.status == "error" and "0.4" in str(message.content)
    (cancel,) = server.events("cancel")
    assert cancel["task"] == server.events("created")[0]["task"]


async def test_cancelling_the_run_cancels_the_task_on_the_server(server: TaskServer) -> None:
    graph = tool_graph(server.node())
    run = asyncio.ensure_future(graph.ainvoke({"messages": [ai(("stuck_job", {}, "c1"))]}, thread()))
    await until(lambda: len(server.events("get")) >= 2)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    await until(lambda: len(server.events("cancel")) == 1)


async def test_a_drained_run_leaves_its_task_running_and_the_next_run_follows_it(server: TaskServer) -> None:
    graph = tool_graph(server.node())
    control = RunControl()
    inputs = {"messages": [ai(("gated_job", {"label": "h"}, "c1"))]}
    run = asyncio.ensure_future(graph.ainvoke(inputs, thread(), control=control))
    await until(lambda: len(server.events("get")) >= 2)
    control.request_drain("deploy")
    with pytest.raises(GraphDrained):
        await run
    assert not server.events("cancel")  # handed over, not cancelled
    server.release("h")
    out = await graph.ainvoke(None, thread())
    assert _results(out)["c1"].content == "done h"
    assert len(server.events("created")) == 1


async def test_a_task_the_server_cancels_is_an_error_message(server: TaskServer) -> None:
    async with MCPPool({"tasks": server.config}) as pool:
        connection = pool.connection("tasks")
        call = asyncio.ensure_future(connection.call_tool("stuck_job", {}))
        await until(lambda: len(server.events("get")) >= 1)
        task_id = server.events("created")[0]["task"]
        await connection.cancel_task(task_id)  # as another client would, with the task's id
        with pytest.raises(MCPToolCallError, match="its task was cancelled: cancelled by the client"):
            await call


async def test_direct_calls_follow_tasks_but_cannot_answer_questions(server: TaskServer) -> None:
    async with MCPPool({"tasks": server.config}) as pool:
        connection = pool.connection("tasks")
        result = await connection.call_tool("job", {"seconds": 0.1, "label": "direct"})
        assert result.structured_content == {"result": "done direct"}
        with pytest.raises(MCPToolCallError, match="asked for input"):
            await connection.call_tool("ask_job", {"seconds": 0})
    (cancel,) = server.events("cancel")  # given up on: nobody would follow it
    assert cancel["task"] == server.events("created", "ask_job")[0]["task"]


async def test_a_task_that_never_stops_asking_is_cancelled(server: TaskServer) -> None:
    async def handler(request: Any, call: Any) -> Any:
        return {"action": "accept", "content": {}}

    graph = tool_graph(server.node(elicitation=handler))
    out = await graph.ainvoke({"messages": [ai(("greedy_ask", {}, "c1"))]}, thread())
    message = _results(out)["c1"]
    assert message.status == "error" and "asked for input more than 50 times" in str(message.content)
    assert len(server.events("update")) == 50
    assert len(server.events("cancel")) == 1


async def test_with_tasks_off_the_extension_is_not_advertised(server: TaskServer) -> None:
    graph = tool_graph(server.node(tasks=False))
    calls = ai(("maybe_job", {"seconds": 0}, "c1"), ("job", {"seconds": 0}, "c2"))
    results = _results(await graph.ainvoke({"messages": [calls]}, thread()))
    assert results["c1"].content == "done inline"
    assert results["c2"].status == "error" and "-32021" in str(results["c2"].content)
    assert not server.events("created")


async def test_tools_requiring_tasks_are_offered_when_tasks_are_followed(tmp_path: Path) -> None:
    # 2025-11-25 lists ``execution.taskSupport: "required"``; that era's task API is followed on a
    # server that declares task-augmented calls, while ``tasks`` is on.
    config = stdio_params("tasks", env={"TASKS_DIR": str(tmp_path)})
    legacy_config = {**config, "protocol": "legacy"}
    servers = {"modern": config, "legacy": legacy_config, "off": {**legacy_config, "tasks": False}}
    async with MCPPool(servers) as pool:
        modern = {t.name for t in await pool.connection("modern").list_tools()}
        legacy = {t.name for t in await pool.connection("legacy").list_tools()}
        off = {t.name for t in await pool.connection("off").list_tools()}
    assert "job" in modern and "job" in legacy
    assert "job" not in off and "quick" in off


async def test_detached_task_parks_the_run_and_a_resume_picks_it_up(server: TaskServer) -> None:
    graph = tool_graph(server.node(task_detach_after=0))
    await graph.ainvoke(
        {"messages": [ai(("gated_job", {"label": "g"}, "c1"), ("quick", {"x": 2}, "c2"))]}, thread()
    )
    (parked,) = (await graph.aget_state(thread())).interrupts
    check("task-interrupt", parked.value)
    created = server.events("created")
    assert parked.value == {
        "type": "mcp_task",
        "server": "tasks",
        "tool_name": "gated_job",
        "tool_call_id": "c1",
        "status": "working",
        "status_message": "waiting for the gate",
        "poll_interval_ms": 50,
    }
    out = await graph.ainvoke(Command(resume=True), thread())  # still running: parks again
    (again,) = (await graph.aget_state(thread())).interrupts
    assert again.value["tool_call_id"] == "c1" and again.id != parked.id
    assert created[0]["task"] not in json.dumps(parked.value)  # a task id may be a bearer token
    assert "c1" not in _results(out)
    server.release("g")
    out = await graph.ainvoke(Command(resume=True), thread())
    assert _results(out)["c1"].content == "done g"
    assert not (await graph.aget_state(thread())).interrupts
    assert len(server.events("created")) == 1 and not server.events("cancel")


async def test_a_parked_task_that_then_asks_gets_its_question_asked(server: TaskServer) -> None:
    # The park's resume value sits at the interrupt's place the question takes on the replay
    # (parking depends on the clock): it is not an answer, and the question is asked.
    graph = tool_graph(server.node(task_detach_after=0.2))
    await graph.ainvoke({"messages": [ai(("gated_ask", {"label": "q"}, "c1"))]}, thread())
    (parked,) = (await graph.aget_state(thread())).interrupts
    assert parked.value["type"] == "mcp_task"
    server.release("q")  # the task asks now
    await graph.ainvoke(Command(resume=True), thread())
    (pending,) = (await graph.aget_state(thread())).interrupts
    assert pending.value["type"] == "mcp_elicitation"
    key = pending.value["requests"][0]["key"]
    out = await graph.ainvoke(
        Command(resume={"responses": {key: {"action": "accept", "content": {"name": "Lin"}}}}), thread()
    )
    assert _results(out)["c1"].content == "Hello, Lin!"
    assert len(server.events("created")) == 1 and len(server.events("update")) == 1


# -- in new OS processes ---------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    folder = tmp_path / "tasks"
    folder.mkdir()
    yield str(tmp_path / "checkpoints.db"), folder


def _log(folder: Path, event: str) -> list[dict[str, Any]]:
    return [e for e in fixture.log(folder) if e["event"] == event]


@pytest.mark.slow
@pytest.mark.parametrize(("first", "second"), [("async", "async"), ("async", "sync"), ("sync", "async")])
def test_a_question_is_answered_in_a_new_process(files: tuple[str, Path], first: str, second: str) -> None:
    db, folder = files
    started = run_script(
        RUNNER, first, "start", db, str(folder), json.dumps([["ask_job", {"seconds": 0}, "c1"]])
    )
    (pending,) = started["interrupts"]
    key = pending["requests"][0]["key"]
    answer = {"responses": {key: {"action": "accept", "content": {"name": "Grace"}}}}
    done = run_script(RUNNER, second, "resume", db, str(folder), json.dumps(answer))
    assert done["results"]["c1"] == "Hello, Grace!" and not done["interrupts"]
    assert len(_log(folder, "created")) == 1
    assert len(_log(folder, "update")) == 1


@pytest.fixture(params=["stdio", "http"])
def transport_env(request: pytest.FixtureRequest, files: tuple[str, Path]) -> Iterator[str]:
    """``stdio``: each phase starts its own server process; ``http``: one server for all phases
    (``TASKS_URL``), as a remote server would be."""
    if request.param == "stdio":
        yield "stdio"
        return
    _, folder = files
    with http_server_process("tasks", env={**os.environ, "TASKS_DIR": str(folder)}) as url:
        os.environ["TASKS_URL"] = url
        try:
            yield "http"
        finally:
            del os.environ["TASKS_URL"]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["async", "sync"])
def test_sigkill_while_polling_then_the_run_goes_on_with_the_same_task(
    files: tuple[str, Path], mode: str, transport_env: str
) -> None:
    db, folder = files
    calls = json.dumps([["gated_job", {"label": "k"}, "c1"]])
    proc = subprocess.Popen(
        command(str(RUNNER), mode, "start", db, str(folder), calls),
        cwd=RUNNER.parents[1],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        asyncio.run(until(lambda: len(_log(folder, "get")) >= 2 or proc.poll() is not None))
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    (folder / "release-k").touch()
    done = run_script(RUNNER, mode, "continue", db, str(folder))
    assert done["results"]["c1"] == "done k"
    assert len(_log(folder, "created")) == 1  # the handle came from the checkpoint
    assert not _log(folder, "cancel")


@pytest.mark.slow
def test_detached_in_one_process_picked_up_in_another(files: tuple[str, Path]) -> None:
    db, folder = files
    os.environ["TASK_DETACH_AFTER"] = "0"
    try:
        started = run_script(
            RUNNER, "async", "start", db, str(folder), json.dumps([["gated_job", {"label": "d"}, "c1"]])
        )
        (parked,) = started["interrupts"]
        assert parked["type"] == "mcp_task"
        (folder / "release-d").touch()
        done = run_script(RUNNER, "sync", "resume", db, str(folder), "true")
    finally:
        del os.environ["TASK_DETACH_AFTER"]
    assert done["results"]["c1"] == "done d" and not done["interrupts"]
    assert len(_log(folder, "created")) == 1


def test_a_sync_run_follows_a_task(tmp_path: Path) -> None:
    node = MCPToolNode({"tasks": stdio_params("tasks", env={"TASKS_DIR": str(tmp_path)})})
    graph = tool_graph(node)
    out = graph.invoke({"messages": [ai(("job", {"seconds": 0.1, "label": "s"}, "c1"))]}, thread())
    assert _results(out)["c1"].content == "done s"


async def test_several_task_calls_of_one_agent_turn_each_follow_their_own_task(server: TaskServer) -> None:
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_mcp import create_mcp_agent
    from langgraph_mcp.testing import ScriptedChatModel

    calls = [
        ("ask_job", {"seconds": 0}, "a1"),
        ("ask_job", {"seconds": 0}, "a2"),
        ("job", {"seconds": 0.1, "label": "z"}, "j1"),
    ]
    agent = create_mcp_agent(
        ScriptedChatModel([calls, "done"]), {"tasks": server.config}, checkpointer=InMemorySaver()
    )
    server.closed_after(agent.mcp)
    config = thread("agent")
    await agent.ainvoke({"messages": [HumanMessage("go")]}, config)
    pending = (await agent.aget_state(config)).interrupts
    assert sorted(i.value["tool_call_id"] for i in pending) == ["a1", "a2"]
    resume = {
        i.id: {
            "responses": {
                i.value["requests"][0]["key"]: {
                    "action": "accept",
                    "content": {"name": i.value["tool_call_id"]},
                }
            }
        }
        for i in pending
    }
    out = await agent.ainvoke(Command(resume=resume), config)
    assert {k: m.content for k, m in _results(out).items()} == {
        "a1": "Hello, a1!",
        "a2": "Hello, a2!",
        "j1": "done z",
    }
    assert len(server.events("created")) == 3 and len(server.events("update")) == 2
    assert {e["task"] for e in server.events("update")} == {
        e["task"] for e in server.events("created", "ask_job")
    }


# -- both task APIs: 2026-07-28 (``auto``) and the 2025-11-25 experimental one (``legacy``) -------

PROTOCOLS = ["auto", "legacy"]


async def _stream(graph: Any, calls: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The run's last values and its ``mcp_progress`` events."""
    progress: list[dict[str, Any]] = []
    out: dict[str, Any] = {}
    async for mode, chunk in graph.astream({"messages": [calls]}, thread(), stream_mode=["custom", "values"]):
        if mode == "custom" and chunk.get("type") == "mcp_progress":
            progress.append(chunk)
        elif mode == "values":
            out = chunk
    return out, progress


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_task_id_the_server_echoes_is_masked(server: TaskServer, protocol: str) -> None:
    graph = tool_graph(server.node(protocol=protocol))
    out, progress = await _stream(graph, ai(("echo_job", {"seconds": 0.3}, "c1")))
    (created,) = server.events("created")
    task_id = created["task"]
    message = _results(out)["c1"]
    assert message.status == "error" and "failed" in str(message.content)
    assert task_id not in str(message.content), message.content
    assert "task *** failed" in str(message.content)
    assert progress, "the status message was not reported"
    for event in progress:
        assert task_id not in json.dumps(event), event
    assert {event["message"] for event in progress} == {"working on ***"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_task_result_past_the_message_limit_is_refused_like_a_direct_one(
    server: TaskServer, protocol: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A direct result is bounded by the transport's limit on one message (MAX_MESSAGE_BYTES, 256 MiB):
    # a task's result comes in a tasks/get (2026-07-28) or tasks/result (2025-11-25) message, and is
    # bounded the same way; past it, the call is an error message and nothing of it is kept.
    limit = 64 << 10
    monkeypatch.setattr(stdio, "MAX_MESSAGE_BYTES", limit)
    monkeypatch.setattr(transports, "MAX_MESSAGE_BYTES", limit)
    graph = tool_graph(server.node(protocol=protocol))
    out = await graph.ainvoke({"messages": [ai(("big_job", {"size": 4 * limit}, "c1"))]}, thread())
    message = _results(out)["c1"]
    assert message.status == "error", str(message.content)[:200]
    assert len(str(message.content)) < 2000 and "xxxx" not in str(message.content)
    # Within the limit (the text travels twice: as content and as structured content), it is taken.
    out = await graph.ainvoke({"messages": [ai(("big_job", {"size": limit // 4}, "c2"))]}, thread("t2"))
    assert _results(out)["c2"].content == "x" * (limit // 4)


# -- retries: a tool with side effects does not run twice because a sibling failed -------------


class Ended(AsyncCallbackHandler):
    """Counts the tool runs that ended (LangChain's ``on_tool_end``), so a test waits on them."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = asyncio.Event()

    async def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        self.count += 1
        self.changed.set()

    async def reached(self, count: int) -> None:
        while self.count < count:
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), 30)


def _fails_once_after(ended: Ended, calls: int) -> Any:
    """A local tool that fails once the turn's ``calls`` MCP calls have ended, then succeeds: a
    ``RetryPolicy`` runs the node again."""
    failed: list[bool] = []

    @tool
    async def flaky(item: str) -> str:
        """Fail once, then succeed."""
        if not failed:
            await ended.reached(calls)
            failed.append(True)
            raise ConnectionError("transient failure")
        return f"flaky {item} ok"

    return flaky


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_retry_policy_rerun_reads_the_task_the_failed_attempt_finished(
    server: TaskServer, protocol: str
) -> None:
    ended = Ended()
    node = server.closed_after(
        MCPToolNode({"tasks": {**server.config, "protocol": protocol}}, tools=[_fails_once_after(ended, 2)])
    )
    retry = RetryPolicy(max_attempts=2, initial_interval=0.01, retry_on=ConnectionError)
    graph = tool_graph(node, retry=retry)
    calls = ai(
        ("job", {"seconds": 0.1, "label": "a"}, "c1"),
        ("job", {"seconds": 0.1, "label": "b"}, "c2"),
        ("flaky", {"item": "x"}, "c3"),
    )
    out = await graph.ainvoke({"messages": [calls]}, {**thread(), "callbacks": [ended]})
    assert {k: m.content for k, m in _results(out).items()} == {
        "c1": "done a",
        "c2": "done b",
        "c3": "flaky x ok",
    }
    assert len(server.events("created")) == 2  # one task per call, not one per attempt
    assert not server.events("cancel")


@pytest.mark.slow  # two OS processes
def test_a_finished_task_is_read_not_started_again_when_resumed_in_a_new_process(
    files: tuple[str, Path], transport_env: str
) -> None:
    db, folder = files
    calls = [["job", {"seconds": 0.1, "label": "a"}, "c1"], ["approve", {"item": "x"}, "c2"]]
    os.environ["TASK_APPROVE"] = "1"
    try:
        started = run_script(RUNNER, "async", "start", db, str(folder), json.dumps(calls))
        assert started["interrupts"] == ["approve x?"]
        done = run_script(RUNNER, "async", "resume", db, str(folder), json.dumps("yes"))
    finally:
        del os.environ["TASK_APPROVE"]
    assert done["results"] == {"c1": "done a", "c2": "approved x: yes"}
    assert len(_log(folder, "created")) == 1 and not _log(folder, "cancel")


async def test_the_task_id_is_kept_only_in_the_stored_round(server: TaskServer) -> None:
    # The stored round must hold the id (a resumed run finds its task only through it); nothing
    # a client reads from the thread's state, its interrupts or its events shows it.
    graph = tool_graph(server.node())
    seen: list[Any] = []
    stored: list[Any] = []
    calls = ai(("ask_job", {"seconds": 0}, "c1"))
    modes = ["custom", "updates"]
    async for mode, chunk in graph.astream({"messages": [calls]}, thread(), stream_mode=modes):
        (stored if mode == "updates" and "mcp_round" in chunk else seen).append(chunk)
    (pending,) = (await graph.aget_state(thread())).interrupts
    key = pending.value["requests"][0]["key"]
    answer = Command(resume={"responses": {key: {"action": "accept", "content": {"name": "Ada"}}}})
    async for _, chunk in graph.astream(answer, thread(), stream_mode=["custom", "values"]):
        seen.append(chunk)
    (created,) = server.events("created")
    task_id = created["task"]
    seen.append(await graph.aget_state(thread(), subgraphs=True))
    seen.extend([s async for s in graph.aget_state_history(thread())])
    assert task_id not in repr(seen)
    (handle,) = [c["mcp_round"]["value"] for c in stored if c["mcp_round"]["value"]["kind"] == "task"]
    assert set(handle["data"]) == {"taskId", "status", "pollIntervalMs", "resultType"}


async def test_a_2025_task_is_not_started_again_when_its_node_resumes_in_the_same_process(
    server: TaskServer,
) -> None:
    ended = Ended()

    @tool
    async def approve(item: str) -> str:
        """Ask a person, once the turn's MCP call has ended."""
        await ended.reached(1)
        return f"approved {item}: {interrupt(f'approve {item}?')}"

    node = server.closed_after(
        MCPToolNode({"tasks": {**server.config, "protocol": "legacy"}}, tools=[approve])
    )
    graph = tool_graph(node)
    calls = ai(("job", {"seconds": 0.1, "label": "a"}, "c1"), ("approve", {"item": "x"}, "c2"))
    await graph.ainvoke({"messages": [calls]}, {**thread(), "callbacks": [ended]})
    out = await graph.ainvoke(Command(resume="yes"), thread())
    assert {k: m.content for k, m in _results(out).items()} == {"c1": "done a", "c2": "approved x: yes"}
    assert len(server.events("created")) == 1 and not server.events("cancel")


@pytest.mark.parametrize("protocol", HTTP_ERAS)
async def test_an_attempt_a_node_timeout_cuts_short_cancels_its_task(
    server: TaskServer, protocol: str
) -> None:
    # LangGraph cancels the attempt without saying why: like a cancelled run, its task is
    # cancelled on the server, so nothing is left running; a retry starts a new task (documented).
    from langgraph.errors import NodeTimeoutError
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.types import TimeoutPolicy

    node = server.closed_after(MCPToolNode({"tasks": {**server.config, "protocol": protocol}}))
    await node.start()  # connecting is not the attempt's work
    builder = StateGraph(MessagesState)
    retry = RetryPolicy(max_attempts=2, initial_interval=0.01, retry_on=NodeTimeoutError)
    builder.add_node(node, retry_policy=retry, timeout=TimeoutPolicy(run_timeout=1.0))
    builder.add_edge(START, "tools")
    graph = builder.compile()
    with pytest.raises(NodeTimeoutError):
        await graph.ainvoke({"messages": [ai(("stuck_job", {}, "c1"))]})
    await until(lambda: len(server.events("cancel")) == 2)
    assert {e["task"] for e in server.events("cancel")} == {e["task"] for e in server.events("created")}
