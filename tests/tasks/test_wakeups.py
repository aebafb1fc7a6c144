"""Runs parked on a task are resumed when the task changes: pushed where the server offers task
status notifications, polled where it does not; in process (``TaskWakeups(pool, graph=...)``)
against the fixture task server over loopback HTTP.

The deployment path (the LangGraph server's API and store, a lease across processes) is
``tests/deploy/test_task_wakeups.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from langgraph.store.memory import InMemoryStore

from langgraph_mcp import MCPPool, MCPToolNode
from langgraph_mcp._elicitation.parked import PARKED_NAMESPACE, TASKS_KEY_ENV
from langgraph_mcp.errors import MCPConfigError
from langgraph_mcp.events import TaskWakeups
from tests.conftest_servers import spawn_http_server, stdio_params
from tests.helpers import ai, thread, tool_graph, until
from tests.servers import tasks as fixture

KEY = Fernet.generate_key().decode()


class Tasks:
    def __init__(self, url: str, folder: Path) -> None:
        self.url = url
        self.folder = folder

    def log(self) -> list[dict[str, Any]]:
        return fixture.log(self.folder)

    def events(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.log() if e["event"] == event]

    def release(self, label: str) -> None:
        (self.folder / f"release-{label}").touch()


async def _serve(tmp_path: Path, **env: str) -> AsyncIterator[Tasks]:
    folder = tmp_path / "tasks"
    folder.mkdir()
    async with spawn_http_server("tasks", env={"TASKS_DIR": str(folder), **env}) as url:
        yield Tasks(url, folder)


@pytest.fixture
async def pushing(tmp_path: Path) -> AsyncIterator[Tasks]:
    async for server in _serve(tmp_path):
        yield server


@pytest.fixture(params=["0", "refuse"])
async def silent(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Tasks]:
    """A server that acknowledges no task (``0``), or answers the listen with an error."""
    async for server in _serve(tmp_path, TASKS_NOTIFY=request.param):
        yield server


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TASKS_KEY_ENV, KEY)


def _graph(tasks: Tasks, store: InMemoryStore) -> tuple[Any, MCPToolNode]:
    node = MCPToolNode({"tasks": {"url": tasks.url, "task_detach_after": 0}})
    graph = tool_graph(node)
    graph.store = store
    return graph, node


def _after_listen(tasks: Tasks, honored: int) -> list[str]:
    """The events logged after the last listen acknowledged for ``honored`` tasks."""
    log = tasks.log()
    found = [n for n, e in enumerate(log) if e["event"] == "listen" and e["honored"] == honored]
    return [e["event"] for e in log[found[-1] + 1 :]] if found else []


def _gets_before_listen(tasks: Tasks) -> list[dict[str, Any]]:
    log = tasks.log()
    first = next((n for n, e in enumerate(log) if e["event"] == "listen"), len(log))
    return [e for e in log[:first] if e["event"] == "get"]


def _results(state: Any) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in state.values["messages"] if m.type == "tool"}


async def test_parked_runs_are_resumed_when_the_server_pushes_their_tasks_status(pushing: Tasks) -> None:
    store = InMemoryStore()
    graph, node = _graph(pushing, store)
    calls = ai(("gated_job", {"label": "a"}, "c1"), ("gated_job", {"label": "b"}, "c2"))
    await graph.ainvoke({"messages": [calls]}, thread())
    parked = (await graph.aget_state(thread())).interrupts
    assert sorted(i.value["tool_call_id"] for i in parked) == ["c1", "c2"]
    records = store.search(PARKED_NAMESPACE)
    assert len(records) == 2
    task_ids = [e["task"] for e in pushing.events("created")]
    for record in records:  # sealed: neither the task id nor the thread is readable
        raw = json.dumps(record.value)
        assert set(record.value) == {"sealed"}
        assert not any(task_id in raw or task_id in record.key for task_id in task_ids)

    pool = MCPPool({"tasks": {"url": pushing.url}})
    async with pool, TaskWakeups(pool, graph=graph, scan_interval=0.1) as wakeups:
        # The listen is acknowledged for both tasks, and each is looked at once.
        await until(lambda: _after_listen(pushing, 2).count("get") == 2, timeout=30)
        looked = len(pushing.events("get"))
        # Two seconds of a poll loop would be two more tasks/get per task: none are sent (an
        # absence has no event to wait on; the interval is twice the least poll interval).
        await asyncio.sleep(2.0)
        assert len(pushing.events("get")) == looked

        pushing.release("a")

        # The run is resumed for c1's task: c1's call reads its result; c2's is still running, so
        # its call looks once and parks again (the node's messages wait for both, as ToolNode's
        # do), and only c2's record is left, watched anew.
        def only_c2_parked() -> bool:
            interrupts = graph.get_state(thread()).interrupts
            return [i.value["tool_call_id"] for i in interrupts] == ["c2"] and (
                len(store.search(PARKED_NAMESPACE)) == 1
            )

        await until(only_c2_parked, timeout=30)
        # c2's new park is covered by a listen, and looked at once (still working).
        await until(lambda: _after_listen(pushing, 1) == ["get"], timeout=30)
        assert wakeups.resumed == 1
        first = [e for e in pushing.events("get") if e["status"] == "completed"]
        assert len(first) == 1  # c1's call read its result once

        pushing.release("b")
        await until(lambda: "c2" in _results(graph.get_state(thread())), timeout=30)
        await until(lambda: not graph.get_state(thread()).next, timeout=30)
        assert _results(await graph.aget_state(thread())) == {"c1": "done a", "c2": "done b"}
        assert wakeups.resumed == 2
        assert [e["status"] for e in pushing.events("notified")] == ["completed", "completed"]
        await until(lambda: not store.search(PARKED_NAMESPACE), timeout=10)
    await node.aclose()


async def test_a_server_that_sends_no_status_has_its_parked_tasks_polled(silent: Tasks) -> None:
    store = InMemoryStore()
    graph, node = _graph(silent, store)
    await graph.ainvoke({"messages": [ai(("gated_job", {"label": "a"}, "c1"))]}, thread())
    assert len((await graph.aget_state(thread())).interrupts) == 1

    pool = MCPPool({"tasks": {"url": silent.url}})
    async with pool, TaskWakeups(pool, graph=graph, scan_interval=0.1) as wakeups:
        # Acknowledged for none of them, or refused: polled (about once a second), and a refused
        # listen is not asked again in a loop (the next one comes after a back-off).
        await until(lambda: len(silent.events("get")) >= 3 + len(_gets_before_listen(silent)), timeout=30)
        assert len(silent.events("listen")) <= 2
        silent.release("a")
        await until(lambda: "c1" in _results(graph.get_state(thread())), timeout=30)
        assert _results(await graph.aget_state(thread()))["c1"] == "done a"
        assert wakeups.resumed == 1
        assert not silent.events("notified")
    await node.aclose()


async def test_nothing_is_recorded_without_a_key_and_the_wakeups_refuse_to_start(
    pushing: Tasks, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TASKS_KEY_ENV)
    store = InMemoryStore()
    graph, node = _graph(pushing, store)
    await graph.ainvoke({"messages": [ai(("gated_job", {"label": "a"}, "c1"))]}, thread())
    assert len((await graph.aget_state(thread())).interrupts) == 1  # parked all the same
    assert not store.search(PARKED_NAMESPACE)
    with pytest.raises(MCPConfigError, match=TASKS_KEY_ENV):
        TaskWakeups(MCPPool({}), graph=graph)
    await node.aclose()


async def test_a_wake_up_given_again_never_answers_the_question_the_task_asks_next(pushing: Tasks) -> None:
    # The run parks, is woken when its task asks a question, and the call asks a person. The
    # same wake-up given again (a stale resume: LangGraph gives a task's later interrupts a
    # resume sent for its first) is taken for an answer to another question: the question is
    # asked again, and the person's own answer completes the task.
    from langgraph.types import Command

    from langgraph_mcp._events.wakeups import wakeup_value

    store = InMemoryStore()
    graph, node = _graph(pushing, store)
    await graph.ainvoke({"messages": [ai(("gated_ask", {"label": "q"}, "c1"))]}, thread())
    (park,) = (await graph.aget_state(thread())).interrupts
    assert park.value["type"] == "mcp_task"

    def asking() -> list[Any]:
        return [i for i in graph.get_state(thread()).interrupts if i.value["type"] == "mcp_elicitation"]

    pool = MCPPool({"tasks": {"url": pushing.url}})
    async with pool, TaskWakeups(pool, graph=graph, scan_interval=0.1) as wakeups:
        await until(lambda: _after_listen(pushing, 1) == ["get"], timeout=30)
        pushing.release("q")  # the task now asks for a name
        await until(lambda: bool(asking()), timeout=30)
        assert wakeups.resumed == 1
        # A person is asked now: the run is no longer parked on the task, and its record is gone.
        await until(lambda: not store.search(PARKED_NAMESPACE), timeout=10)
    (question,) = asking()
    await graph.ainvoke(Command(resume={park.id: wakeup_value("input_required")}), thread())
    (still,) = asking()
    assert still.value["requests"] == question.value["requests"]
    assert not pushing.events("update")  # nothing was answered
    answer = {
        "responses": {question.value["requests"][0]["key"]: {"action": "accept", "content": {"name": "Ada"}}}
    }
    await graph.ainvoke(Command(resume={still.id: answer}), thread())
    await until(lambda: "c1" in _results(graph.get_state(thread())), timeout=30)
    assert _results(await graph.aget_state(thread()))["c1"] == "Hello, Ada!"
    await node.aclose()


async def test_over_stdio_a_listen_outlives_the_request_timeout_and_its_server_being_killed(
    tmp_path: Path,
) -> None:
    # The wake-ups' own server process (stdio) listens for longer than the pool's request timeout
    # (1 s) without being cut; killed, it is started again, listened to again, and the run parked
    # meanwhile is woken when its task finishes.
    folder = tmp_path / "tasks"
    folder.mkdir()
    server = stdio_params("tasks", env={"TASKS_DIR": str(folder)})
    tasks = Tasks("", folder)
    store = InMemoryStore()
    node = MCPToolNode({"tasks": {**server, "task_detach_after": 0}})
    graph = tool_graph(node)
    graph.store = store
    await graph.ainvoke({"messages": [ai(("gated_job", {"label": "s"}, "c1"))]}, thread())
    assert len((await graph.aget_state(thread())).interrupts) == 1

    def listens() -> list[dict[str, Any]]:
        return [e for e in tasks.events("listen") if e["honored"] == 1]

    pool = MCPPool({"tasks": {**server, "timeout": 1}})
    async with pool, TaskWakeups(pool, graph=graph, scan_interval=0.1) as wakeups:
        await until(lambda: bool(listens()), timeout=30)
        await asyncio.sleep(2.5)  # over twice the request timeout: an absence has no event to wait on
        [first] = listens()
        os.kill(first["pid"], signal.SIGKILL)
        await until(lambda: any(e["pid"] != first["pid"] for e in listens()), timeout=60)
        tasks.release("s")
        await until(lambda: "c1" in _results(graph.get_state(thread())), timeout=30)
        assert _results(await graph.aget_state(thread()))["c1"] == "done s"
        assert wakeups.resumed == 1
    await node.aclose()
