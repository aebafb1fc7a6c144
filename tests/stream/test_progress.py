"""Progress, logs, cancellation and timeouts flow through LangGraph (real servers)."""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphDrained, NodeTimeoutError
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.runtime import RunControl
from langgraph.types import RetryPolicy, TimeoutPolicy
from mcp.server.mcpserver import Context, MCPServer

from langgraph_mcp import MCPPool, MCPToolNode
from tests.conftest_servers import stdio_params
from tests.helpers import call, server_stats, tools_by_name, until
from tests.servers import demo
from tests.tiers import STDIO_ERAS


def _calls(*calls: tuple[str, dict[str, Any], str]) -> dict[str, Any]:
    return {"messages": [AIMessage("", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls])]}


def _graph(node: MCPToolNode, *, timeout: TimeoutPolicy | None = None, checkpointer: Any = None) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node(node, timeout=timeout)
    builder.add_edge(START, "tools")
    return builder.compile(checkpointer=checkpointer)


def _progress_by_call(events: list[Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in events:
        if isinstance(event, dict) and event.get("type") == "mcp_progress":
            out[event["tool_call_id"]].append(event)
    return out


async def test_progress_events_for_parallel_calls(demo_config: dict[str, Any]) -> None:
    async with MCPToolNode({"demo": demo_config}) as node:
        graph = _graph(node)
        request = _calls(("sleep", {"seconds": 0.3}, "slow"), ("sleep", {"seconds": 0.15}, "fast"))
        custom, deltas = [], []
        async for mode, chunk in graph.astream(request, stream_mode=["custom", "tools"]):  # type: ignore[arg-type]
            if mode == "custom":
                custom.append(chunk)
            elif chunk["event"] == "tool-output-delta":
                deltas.append(chunk)
    by_call = _progress_by_call(custom)
    assert set(by_call) == {"slow", "fast"}
    for call_id, steps in (("slow", 6), ("fast", 3)):
        events = by_call[call_id]
        assert [e["progress"] for e in events] == list(range(1, steps + 1))
        assert {e["total"] for e in events} == {steps}
        assert events[-1]["message"] == f"step {steps}/{steps}"
        assert all(e["server"] == "demo" and e["tool_name"] == "sleep" for e in events)
    # The same events reach the "tools" stream as output deltas of their own call.
    assert _progress_by_call([d["delta"] for d in deltas]) == by_call
    assert all(d["tool_call_id"] == d["delta"]["tool_call_id"] for d in deltas)


async def test_progress_from_a_subgraph_and_in_astream_events() -> None:
    async with MCPToolNode({"demo": {"server": demo.build_server(counters=demo.Counters())}}) as node:
        inner = _graph(node)
        parent = StateGraph(MessagesState)
        parent.add_node("agent", inner)
        parent.add_edge(START, "agent")
        graph = parent.compile()
        request = _calls(("sleep", {"seconds": 0.1}, "c1"))

        seen = [
            (ns, chunk)
            async for ns, chunk in graph.astream(request, stream_mode="custom", subgraphs=True)
            if chunk["type"] == "mcp_progress"  # (not its generative-UI message, "type": "ui")
        ]
        assert seen and all(ns and ns[0].startswith("agent:") for ns, _ in seen)
        assert [c["progress"] for _, c in seen] == [1, 2]

        events = [e async for e in graph.astream_events(request, version="v2")]
        custom = [e for e in events if e["event"] == "on_custom_event"]
        assert [e["name"] for e in custom] == ["mcp_progress", "mcp_progress"]
        assert [e["data"]["progress"] for e in custom] == [1, 2]
        assert all(e["data"]["tool_call_id"] == "c1" for e in custom)
        # Each comes from where the tool ran (the config the call captured when it started).
        (tool_start,) = [e for e in events if e["event"] == "on_tool_start"]
        assert all(e["parent_ids"] == tool_start["parent_ids"] for e in custom)


async def test_progress_keeps_an_idle_timeout_alive() -> None:
    async with MCPToolNode({"demo": stdio_params("demo")}) as node:
        await node.start()  # connecting is not progress: connect before the timed node runs
        policy = TimeoutPolicy(idle_timeout=0.4, refresh_on="heartbeat")
        graph = _graph(node, timeout=policy)
        # 1 s of work, progress every 50 ms: the heartbeat keeps the node alive.
        out = await graph.ainvoke(_calls(("sleep", {"seconds": 1.0}, "c1")))
        assert out["messages"][-1].content == "slept 1.0"
        # The same idle limit kills a call that reports nothing.
        with pytest.raises(NodeTimeoutError):
            await graph.ainvoke(_calls(("hang", {}, "c2")))


async def _wait_for_line(path: Path, line: str, timeout: float = 10.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if path.exists() and line in path.read_text():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{line!r} never appeared in {path}: {path.read_text() if path.exists() else ''}")


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_node_timeout_cancels_the_request_on_the_server(tmp_path: Path, protocol: str) -> None:
    events = tmp_path / "events.txt"
    config = {**stdio_params("demo", env={"DEMO_EVENTS_FILE": str(events)}), "protocol": protocol}
    async with MCPToolNode({"demo": config}) as node:
        await node.start()
        graph = _graph(node, timeout=TimeoutPolicy(run_timeout=0.5))
        with pytest.raises(NodeTimeoutError):
            await graph.ainvoke(_calls(("sleep", {"seconds": 5}, "c1")))
        await _wait_for_line(events, "cancelled sleep 5")
        # The session is still the first one and still works.
        out = await _graph(node).ainvoke(_calls(("add", {"a": 1, "b": 2}, "c2")))
        assert out["messages"][-1].content == "3"
        assert node.pool.connection("demo").connects == 1


@pytest.mark.slow  # seconds of real time: the bystanders' own limits
@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_a_retry_after_a_node_timeout_leaves_other_calls_limits_alone(protocol: str) -> None:
    """A ``RetryPolicy`` re-runs a node that its ``TimeoutPolicy`` cancelled while its call was
    counting against the loop's shared timer, next to calls of other threads on the same session:
    the retried call gets a limit of its own, and the others keep theirs (one still times out when
    it should, one that finishes in time is not cut short)."""
    config = {**stdio_params("demo"), "protocol": protocol, "tool_timeouts": {"hang": 3.0}}
    async with MCPToolNode({"demo": config}) as node:
        await node.start()
        builder = StateGraph(MessagesState)
        builder.add_node(
            node,
            timeout=TimeoutPolicy(run_timeout=1.0),
            retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01, retry_on=NodeTimeoutError),
        )
        builder.add_edge(START, "tools")
        retried = builder.compile()
        bystanders = _graph(node)
        hung = asyncio.ensure_future(bystanders.ainvoke(_calls(("hang", {}, "b1"))))
        slow = asyncio.ensure_future(bystanders.ainvoke(_calls(("quiet_sleep", {"seconds": 2.5}, "b2"))))
        # Alone, the first attempt waits for a partner until the node's limit cancels it; the
        # server counts its arrival, so a retry's call makes two and is answered at once (the
        # third attempt is there for a first one cancelled before the server saw it).
        out = await asyncio.wait_for(retried.ainvoke(_calls(("rendezvous", {"n": 2, "wait": 30}, "c1"))), 30)
        assert out["messages"][-1].content == "met 2"
        done_hung, done_slow = await asyncio.wait_for(asyncio.gather(hung, slow), 30)
        assert done_slow["messages"][-1].content == "slept quietly 2.5"
        message = done_hung["messages"][-1]
        assert message.status == "error"
        assert message.content.startswith("MCP tool 'hang' on server 'demo' timed out after 3s")
        assert node.pool.connection("demo").connects == 1


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_cancelling_the_run_cancels_the_request(tmp_path: Path, protocol: str) -> None:
    events = tmp_path / "events.txt"
    config = {**stdio_params("demo", env={"DEMO_EVENTS_FILE": str(events)}), "protocol": protocol}
    async with MCPToolNode({"demo": config}) as node:
        await node.start()
        run = asyncio.create_task(_graph(node).ainvoke(_calls(("hang", {}, "c1"))))
        await asyncio.sleep(0.5)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        await _wait_for_line(events, "cancelled hang")
        assert (await server_stats(node.pool))["handshakes"] == 1


async def test_cancelling_over_http_aborts_the_request() -> None:
    counters = demo.Counters()
    server = demo.build_server(counters=counters)
    from tests.conftest_servers import serve_in_loop

    async with serve_in_loop(server) as url, MCPToolNode({"demo": url}) as node:
        await node.start()
        run = asyncio.create_task(_graph(node).ainvoke(_calls(("sleep", {"seconds": 5}, "c1"))))
        await asyncio.sleep(0.5)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        out = await _graph(node).ainvoke(_calls(("add", {"a": 2, "b": 2}, "c2")))
        assert out["messages"][-1].content == "4"
        assert node.pool.connection("demo").connects == 1


async def _drain_then_resume(node: MCPToolNode, events: Path, started: Callable[[], Awaitable[None]]) -> None:
    """Drain a run once its call is running on the server (``started()`` returns), check the
    server cancelled the call, then resume the run: the call is sent again and its result lands."""
    await node.start()
    graph = _graph(node, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t1"}}
    control = RunControl()
    run = asyncio.create_task(
        graph.ainvoke(_calls(("sleep", {"seconds": 1.5}, "c1")), thread, control=control)
    )
    await started()
    control.request_drain("deploy")
    with pytest.raises(GraphDrained, match="deploy"):
        await run
    await _wait_for_line(events, "cancelled sleep 1.5")
    assert (await graph.aget_state(thread)).next == ("tools",)
    out = await graph.ainvoke(None, thread)
    assert out["messages"][-1].content == "slept 1.5"


@pytest.mark.usefixtures("short_graces")  # its server sits out the exit grace
async def test_drain_cancels_the_call_and_resume_reissues_it(tmp_path: Path) -> None:
    events = tmp_path / "events.txt"
    config = stdio_params("demo", env={"DEMO_EVENTS_FILE": str(events)})
    async with MCPToolNode({"demo": config}) as node:
        await _drain_then_resume(node, events, lambda: asyncio.sleep(0.5))


async def test_drain_over_http_cancels_the_request_and_resume_reissues_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same over streamable HTTP: the drained call's request is cancelled on the server,
    the session goes on, and the resumed run sends the call again."""
    from tests.conftest_servers import serve_in_loop

    events = tmp_path / "events.txt"
    monkeypatch.setenv("DEMO_EVENTS_FILE", str(events))  # (the server runs in this process)
    counters = demo.Counters()
    async with (
        serve_in_loop(demo.build_server(counters=counters)) as url,
        MCPToolNode({"demo": url}) as node,
    ):
        await _drain_then_resume(node, events, lambda: until(lambda: counters.calls == 1))
        assert counters.calls == 2
        assert node.pool.connection("demo").connects == 1


# -- timeouts -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("server_options", "pool_options", "tool_timeout", "expected"),
    [
        ({}, {"default_timeout": 0.3}, None, "timed out after 0.3s (the default timeout)"),
        ({"timeout": 0.3}, {}, None, "timed out after 0.3s (server 'demo' timeout)"),
        ({"timeout": 30, "tool_timeouts": {"hang": 0.3}}, {}, None, "(server 'demo' tool_timeouts['hang'])"),
        ({"tool_timeouts": {"hang": 30}}, {}, 0.3, "timed out after 0.3s (the tool's timeout)"),
    ],
    ids=["default", "server", "server-per-tool", "tool"],
)
async def test_timeouts_say_which_limit_fired(
    tmp_path: Path,
    server_options: dict[str, Any],
    pool_options: dict[str, Any],
    tool_timeout: Any,
    expected: str,
) -> None:
    events = tmp_path / "events.txt"
    config = {**stdio_params("demo", env={"DEMO_EVENTS_FILE": str(events)}), **server_options}
    async with MCPPool({"demo": config}, **pool_options) as pool:
        tool = (await tools_by_name(pool))["hang"]
        tool.timeout = tool_timeout
        message = await call(tool)
        assert message.status == "error"
        assert message.content.startswith("MCP tool 'hang' on server 'demo' timed out after 0.3s")
        assert expected in message.content
        assert message.content.endswith("the server was asked to cancel it.")
        await _wait_for_line(events, "cancelled hang")
        assert (await call((await tools_by_name(pool))["add"], {"a": 1, "b": 1})).content == "2"


async def test_no_limit_means_no_limit() -> None:
    config = {"server": demo.build_server(counters=demo.Counters()), "tool_timeouts": {"sleep": None}}
    async with MCPPool({"demo": config}, default_timeout=0.1) as pool:
        tools = await tools_by_name(pool)
        assert (await call(tools["sleep"], {"seconds": 0.3})).content == "slept 0.3"
        assert "default timeout" in (await call(tools["hang"])).content


# -- logs -------------------------------------------------------------------------


async def test_server_logs_go_to_python_logging(
    demo_config: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    config = {**demo_config, "log_level": "info"}
    with caplog.at_level(logging.DEBUG, logger="langgraph_mcp.server.demo"):
        async with MCPPool({"demo": config}) as pool:
            assert (await call((await tools_by_name(pool))["chatty"], {"n": 2})).content == "chatted 2"
            await asyncio.sleep(0.1)
    records = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "langgraph_mcp.server.demo"]
    assert (logging.INFO, "[chatter] info 0") in records
    assert (logging.INFO, "[chatter] info 1") in records
    assert (logging.WARNING, '[chatter] {"done": 2}') in records
    if demo_config["protocol"] != "legacy":  # 2026-07-28: the requested level is honoured per request
        assert not any("debug" in text for _, text in records)


async def test_log_events_reach_the_stream(demo_config: dict[str, Any]) -> None:
    config = {**demo_config, "log_level": "debug", "log_events": True}
    async with MCPToolNode({"demo": config}) as node:
        chunks = [
            chunk
            async for chunk in _graph(node).astream(_calls(("chatty", {"n": 1}, "c1")), stream_mode="custom")
        ]
    logs = [c for c in chunks if c["type"] == "mcp_log"]
    assert [(c["level"], c["data"]) for c in logs] == [
        ("debug", "debug 0"),
        ("info", "info 0"),
        ("warning", {"done": 1}),
    ]
    assert all(c["tool_call_id"] == "c1" and c["logger"] == "chatter" and c["server"] == "demo" for c in logs)


async def test_log_events_are_off_by_default() -> None:
    config = {"server": demo.build_server(counters=demo.Counters()), "log_level": "debug"}
    async with MCPToolNode({"demo": config}) as node:
        chunks = [
            c async for c in _graph(node).astream(_calls(("chatty", {"n": 1}, "c1")), stream_mode="custom")
        ]
    assert chunks == []


async def test_direct_tool_call_without_a_graph_still_works_with_progress() -> None:
    async with MCPPool({"demo": stdio_params("demo")}) as pool:
        message = await call((await tools_by_name(pool))["sleep"], {"seconds": 0.1})
        assert isinstance(message, ToolMessage) and message.content == "slept 0.1"


async def test_every_mcp_log_level_maps_to_a_standard_python_level(caplog: pytest.LogCaptureFixture) -> None:
    server = MCPServer("levels")

    @server.tool()
    async def log_each(ctx: Context) -> str:
        """Log once at every MCP level."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for level in MCP_LEVELS:
                await ctx.log(level, f"at {level}", logger_name="lv")
        return "logged"

    with caplog.at_level(logging.DEBUG, logger="langgraph_mcp.server.levels"):
        async with MCPPool({"levels": {"server": server, "log_level": "debug"}}) as pool:
            assert (await call((await tools_by_name(pool))["log_each"])).content == "logged"
    records = {r.mcp_level: r for r in caplog.records if r.name == "langgraph_mcp.server.levels"}  # type: ignore[attr-defined]
    assert list(records) == list(MCP_LEVELS)
    assert {level: r.levelname for level, r in records.items()} == {
        "debug": "DEBUG",
        "info": "INFO",
        "notice": "INFO",
        "warning": "WARNING",
        "error": "ERROR",
        "critical": "CRITICAL",
        "alert": "CRITICAL",
        "emergency": "CRITICAL",
    }
    assert records["info"].getMessage() == "[lv] at info"
    # Levels Python has no name for keep theirs in the text.
    assert records["notice"].getMessage() == "notice: [lv] at notice"
    assert records["emergency"].getMessage() == "emergency: [lv] at emergency"


MCP_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
