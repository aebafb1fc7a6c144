"""What a call stores in the checkpoint stays with that call: resumes, retries and new processes.

Several MCP calls in one node, next to a local tool that interrupts: when the node runs again
(resumed, retried by a ``RetryPolicy``, or resumed in a new OS process), every call gets its own
result and its own questions, whatever the elicitation policy, and a call that already finished
is not sent to the server again.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.types import Command, RetryPolicy, interrupt

from langgraph_mcp import MCPToolNode
from langgraph_mcp.elicitation import accept
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import ai, run_phase, thread, tool_graph, tool_results
from tests.servers import asker

TRANSPORTS = ["stdio", "http"]
ERAS = ["auto", "legacy"]


def approver(ready: Callable[[], bool] = lambda: True) -> Any:
    """A local tool that asks a person (a plain LangGraph interrupt) once ``ready()`` is true.

    Waiting lets the MCP calls of the same node finish (and store their rounds) first.
    """

    @tool
    async def approve(item: str) -> str:
        """Ask a person to approve ``item``."""
        for _ in range(600):
            if ready():
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # let the last response be stored
        return f"approved {item}: {interrupt(f'approve {item}?')}"

    return approve


class Flaky:
    """A local tool that fails on its first call, so a ``RetryPolicy`` re-runs the node."""

    def __init__(self) -> None:
        self.calls = 0

        @tool
        def flaky(item: str) -> str:
            """Fail once, then succeed."""
            self.calls += 1
            if self.calls == 1:
                raise ConnectionError("transient failure")
            return f"flaky {item} ok"

        self.tool = flaky


class Log:
    def __init__(self, lines: Any) -> None:
        self._lines = lines

    def calls(self, tool_name: str) -> list[str]:
        return [line for line in self._lines() if line.startswith(tool_name + " ")]


@pytest.fixture(params=TRANSPORTS)
async def asker_config(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[dict[str, Any], Log]]:
    if request.param == "stdio":
        log_file = tmp_path / "calls.log"
        yield (
            stdio_params("asker", env={"ASKER_LOG": str(log_file)}),
            Log(lambda: log_file.read_text().splitlines() if log_file.exists() else []),
        )
    else:
        calls: list[str] = []
        async with serve_in_loop(asker.build_server(counters=asker.Counters(), calls_log=calls)) as url:
            yield {"url": url}, Log(lambda: list(calls))


def _handler(asked: list[tuple[str, str | None]]) -> Any:
    async def handler(request: Any, call: Any) -> Any:
        asked.append((request["message"], call["tool_call_id"]))
        return accept({"ok": True, "note": "by code"})

    return handler


# The slow call asks last on the first run and first on the replay: an index-ordered store swaps.
CALLS = (
    ("slow_confirm", {"item": "a"}, "c1"),
    ("delete_item", {"item": "b"}, "c2"),
    ("approve", {"item": "x"}, "c3"),
)
EXPECTED = {"c1": "deleted a (by code)", "c2": "deleted b (by code)", "c3": "approved x: yes"}
QUESTIONS = {"Confirm a?": "c1", "Really delete b?": "c2"}


def _assert_own_questions(asked: list[Any]) -> None:
    assert {message for message, _ in asked} == set(QUESTIONS)
    for message, call_id in asked:
        assert call_id in (QUESTIONS[message], None), (message, call_id)


@pytest.mark.parametrize("protocol", ERAS)
async def test_results_stay_with_their_call_when_a_sibling_interrupts(
    asker_config: tuple[dict[str, Any], Log], protocol: str
) -> None:
    config, _log = asker_config
    asked: list[tuple[str, str | None]] = []
    server = {**config, "protocol": protocol, "elicitation": _handler(asked)}
    # The local tool interrupts once both MCP calls got their answer (and stored their rounds).
    async with MCPToolNode({"asker": server}, tools=[approver(lambda: len(asked) >= 2)]) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(*CALLS)]}, thread())
        assert [i.value for i in out["__interrupt__"]] == ["approve x?"]
        out = await graph.ainvoke(Command(resume="yes"), thread())
        assert tool_results(out) == EXPECTED
        # The handler was only ever asked each call's own question (over stdio, a 2025-11-25
        # request that arrives while both calls run cannot be tied to either: tool_call_id None).
        _assert_own_questions(asked)


@pytest.mark.parametrize("protocol", ERAS)
async def test_finished_siblings_are_not_sent_again_with_a_code_policy(
    asker_config: tuple[dict[str, Any], Log], protocol: str
) -> None:
    config, log = asker_config
    for policy in ("decline", _handler([])):
        server = {**config, "protocol": protocol, "elicitation": policy}
        before = len(log.calls("stats"))
        finished = functools.partial(lambda n: len(log.calls("stats")) > n, before)
        async with MCPToolNode({"asker": server}, tools=[approver(finished)]) as node:
            graph = tool_graph(node)
            name = f"policy-{policy if isinstance(policy, str) else 'handler'}"
            calls = (
                ("stats", {}, "s1"),
                ("delete_item", {"item": "b"}, "c2"),
                ("approve", {"item": "x"}, "c3"),
            )
            await graph.ainvoke({"messages": [ai(*calls)]}, thread(name))
            out = await graph.ainvoke(Command(resume="yes"), thread(name))
            assert json.loads(tool_results(out)["s1"])["calls"] >= 1
            expected = "declined" if policy == "decline" else "deleted b (by code)"
            assert tool_results(out)["c2"] == expected
            # The finished call was replayed from the checkpoint, not sent again.
            assert len(log.calls("stats")) - before == 1


@pytest.mark.slow  # seconds of real time per case
async def test_results_stay_with_their_call_when_a_retry_policy_reruns_the_node(
    asker_config: tuple[dict[str, Any], Log],
) -> None:
    config, _log = asker_config
    asked: list[tuple[str, str | None]] = []
    flaky = Flaky()
    server = {**config, "elicitation": _handler(asked)}
    calls = (CALLS[0], CALLS[1], ("flaky", {"item": "x"}, "c3"))
    async with MCPToolNode({"asker": server}, tools=[flaky.tool]) as node:
        graph = tool_graph(
            node, retry=RetryPolicy(max_attempts=2, initial_interval=0.01, retry_on=ConnectionError)
        )
        out = await graph.ainvoke({"messages": [ai(*calls)]}, thread())
        assert flaky.calls == 2
        assert tool_results(out) == {**EXPECTED, "c3": "flaky x ok"}
        _assert_own_questions(asked)


@pytest.mark.slow  # two OS processes, each importing the package
def test_results_stay_with_their_call_when_resumed_in_a_new_process(tmp_path: Path) -> None:
    db, log = str(tmp_path / "state.db"), str(tmp_path / "calls.log")
    first = run_phase("siblings", "start", db, log)
    assert first["interrupts"] == ["approve x?"]
    second = run_phase("siblings", "resume", db, log)
    assert second["results"] == EXPECTED
    # Both MCP calls had finished before the interrupt: they are replayed, nothing is asked again.
    assert second["asked"] == []


async def test_more_asking_calls_than_max_concurrency_do_not_hang() -> None:
    # A stored round would be a second task waiting for a slot its own call's task holds.
    calls = [("delete_item", {"item": f"i{n}"}, f"c{n}") for n in range(4)]
    config = {**thread(), "max_concurrency": 2}
    async with MCPToolNode({"ask": stdio_params("asker")}) as node:
        graph = tool_graph(node)
        out = await asyncio.wait_for(graph.ainvoke({"messages": [ai(*calls)]}, config), 60)
        assert sorted(i.value["tool_call_id"] for i in out["__interrupt__"]) == [c[2] for c in calls]
        resume = {
            i.id: {
                "responses": {
                    r["key"]: {"action": "accept", "content": {"ok": True}} for r in i.value["requests"]
                }
            }
            for i in out["__interrupt__"]
        }
        out = await asyncio.wait_for(graph.ainvoke(Command(resume=resume), config), 60)
    assert all(str(v).startswith("deleted i") for v in tool_results(out).values())
    assert len(tool_results(out)) == 4
