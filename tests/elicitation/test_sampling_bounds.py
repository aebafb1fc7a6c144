"""A server that asks the client's model again after every answer is stopped: at most
``SAMPLING_REQUESTS_MAX`` sampling requests are answered per call, in both protocol eras, during
a ``tools/call`` and while a task's result is fetched or its questions answered.

The fixture server (``tests/servers/tasks.py``) asks without end: live ``sampling/createMessage``
requests on 2025-11-25, rounds of ``SAMPLES_PER_ROUND`` sampling requests on 2026-07-28.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langgraph_mcp import MCPPool, MCPToolNode
from langgraph_mcp._session import SAMPLING_REQUESTS_MAX, routing
from langgraph_mcp.errors import MCPToolCallError
from tests.conftest_servers import spawn_http_server, stdio_params
from tests.helpers import ai, thread, tool_graph

CAP_WORDS = f"asked to sample a model more than {SAMPLING_REQUESTS_MAX} times"


class CountingModel(BaseChatModel):
    """A chat model that answers ``ok`` and counts how often it was asked."""

    calls: int = 0

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage("ok"))])

    @property
    def _llm_type(self) -> str:
        return "counting"


@pytest.fixture(params=["stdio", "http"])
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[dict[str, Any]]:
    env = {"TASKS_DIR": str(tmp_path)}
    if request.param == "stdio":
        yield stdio_params("tasks", env=env)
    else:
        async with spawn_http_server("tasks", env=env) as url:
            yield {"url": url}


async def _call(config: dict[str, Any], tool: str) -> tuple[ToolMessage, CountingModel]:
    model = CountingModel()
    # Closed before the fixture stops the server: an open session would hold an HTTP server's
    # shutdown for its graceful-shutdown timeout (1 s).
    async with MCPToolNode({"tasks": {**config, "sampling_model": model}}) as node:
        out = await tool_graph(node).ainvoke({"messages": [ai((tool, {}, "c1"))]}, thread())
    (message,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    return message, model


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_call_that_samples_without_end_is_stopped(server: dict[str, Any], protocol: str) -> None:
    message, model = await _call({**server, "protocol": protocol}, "greedy_sample")
    assert message.status == "error" and CAP_WORDS in str(message.content), message.content
    assert model.calls <= SAMPLING_REQUESTS_MAX


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_task_that_samples_without_end_is_stopped(server: dict[str, Any], protocol: str) -> None:
    # 2026-07-28: the task's questions (tasks/update); 2025-11-25: requests during tasks/result.
    tool = "sample_job" if protocol == "auto" else "sampling_job"
    message, model = await _call({**server, "protocol": protocol}, tool)
    assert message.status == "error" and CAP_WORDS in str(message.content), message.content
    assert model.calls <= SAMPLING_REQUESTS_MAX


async def test_a_direct_call_is_stopped_too(tmp_path: Path) -> None:
    # A direct call (outside a graph) answers live 2025-11-25 requests with the model too.
    model = CountingModel()
    config = {**stdio_params("tasks", env={"TASKS_DIR": str(tmp_path)}), "sampling_model": model}
    async with MCPPool({"tasks": {**config, "protocol": "legacy"}}) as pool:
        with pytest.raises(MCPToolCallError, match=CAP_WORDS):
            await pool.connection("tasks").call_tool("greedy_sample", {})
    assert model.calls <= SAMPLING_REQUESTS_MAX


async def test_calls_running_at_once_over_stdio_are_each_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Over stdio a 2025-11-25 request carries no caller context: it is tied to the one call that
    # can have sent it, and one that cannot be tied counts for each call that may have.
    # The two calls' first questions arrive together, so the router abandons both and sends them
    # again one at a time: the abandoned calls (whose questions are dropped, not counted) are
    # cancelled ``ABANDON_GRACE`` seconds later (this server keeps asking until then), and a
    # call that ended without an answer stays a possible sender for ``GHOST_GRACE`` seconds,
    # which the next call sent waits out. Both shortened here from 10 s and 5 s.
    monkeypatch.setattr(routing, "ABANDON_GRACE", 0.3)
    monkeypatch.setattr(routing, "GHOST_GRACE", 0.3)
    config = {**stdio_params("tasks", env={"TASKS_DIR": str(tmp_path)}), "protocol": "legacy"}
    message_1, message_2, model = await _two_calls(config)
    for message in (message_1, message_2):
        assert message.status == "error" and CAP_WORDS in str(message.content), message.content
    assert model.calls <= 2 * SAMPLING_REQUESTS_MAX


async def _two_calls(config: dict[str, Any]) -> tuple[ToolMessage, ToolMessage, CountingModel]:
    model = CountingModel()
    calls = ai(("greedy_sample", {}, "c1"), ("greedy_sample", {}, "c2"))
    async with MCPToolNode({"tasks": {**config, "sampling_model": model}}) as node:
        out = await tool_graph(node).ainvoke({"messages": [calls]}, thread())
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    return results["c1"], results["c2"], model


class _Answers:
    """A call's answerer: samples a fixed reply (what a sampling model would answer)."""

    async def on_log(self, params: Any) -> None:
        return None

    async def on_elicit(self, params: Any) -> Any:
        import mcp_types as types

        return types.ElicitResult(action="decline")

    async def on_sample(self, params: Any) -> Any:
        import mcp_types as types

        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="ok"), model="m"
        )


async def test_requests_no_call_can_be_tied_to_share_the_bound_among_the_calls_that_may_have_sent_them() -> (
    None
):
    """Over a transport with no caller context, a sampling request that cannot be tied to one
    call is shared among the calls that may have sent it: two calls in flight are not stopped by
    51 such requests (each may have sent half), and are by the 101st (the bound holds per call)."""
    import asyncio
    import contextvars

    import mcp_types as types

    from langgraph_mcp._session.clock import CallClock

    router = routing.Router("shared", _Answers())
    release = asyncio.Event()
    tracked: list[Any] = []
    both = asyncio.Event()

    async def call(name: str) -> None:
        clock = CallClock(None, server="shared", what=name)
        async with router.track(_Answers(), tool=name, exclusive=False, clock=clock) as flight:
            tracked.append(flight)
            if len(tracked) == 2:
                both.set()
            await release.wait()

    tasks = [asyncio.create_task(call("ann_tool")), asyncio.create_task(call("ben_tool"))]
    await both.wait()
    params = types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))],
        max_tokens=5,
    )

    async def untied() -> Any:  # a fresh context: no call's request is current
        return await asyncio.create_task(router.sample(params), context=contextvars.Context())

    answers = [await untied() for _ in range(SAMPLING_REQUESTS_MAX + 1)]
    assert not any(isinstance(a, types.ErrorData) for a in answers)
    assert [f.refusal for f in tracked] == [None, None]
    answers = [await untied() for _ in range(SAMPLING_REQUESTS_MAX)]
    assert isinstance(answers[-1], types.ErrorData)  # the 101st: past 50 each
    assert all(f.refusal is not None for f in tracked)
    release.set()
    await asyncio.gather(*tasks, return_exceptions=True)
