"""MCPToolNode behaves like ToolNode: the same scenarios through both give the same messages.

The stock ``ToolNode`` runs local tools; ``MCPToolNode`` runs the same tools served by the
demo MCP server (in-process and over stdio), filtered to the same three names.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import InjectedState, ToolNode, tools_condition
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolInvocationError, _get_all_injected_args
from langgraph.types import Command
from typing_extensions import TypedDict

from langgraph_mcp import FromState, MCPPool, MCPTool, MCPToolNode, ToolOptions
from tests.conftest_servers import stdio_params
from tests.helpers import runtime_config, send_per_call
from tests.servers import demo, many


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@tool
async def sleep(seconds: float) -> str:
    """Sleep, reporting progress about every 50 ms."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


LOCAL_TOOLS = [add, echo, sleep]
SERVED = ["add", "echo", "sleep"]

Factory = Callable[..., Awaitable[ToolNode]]


# The node behaves the same over any transport: the stdio cases (a server process each) are slow.
@pytest.fixture(params=["in_process", pytest.param("stdio", marks=pytest.mark.slow)])
async def make_nodes(
    request: pytest.FixtureRequest,
) -> AsyncIterator[Callable[..., Awaitable[tuple[Any, Any]]]]:
    """Builds (stock ToolNode over local tools, MCPToolNode over the same tools via MCP)."""
    nodes: list[MCPToolNode] = []

    async def make(**options: Any) -> tuple[ToolNode, MCPToolNode]:
        if request.param == "in_process":
            server: dict[str, Any] = {"server": demo.build_server(counters=demo.Counters())}
        else:
            server = stdio_params("demo")
        node = MCPToolNode({"demo": {**server, "tools": SERVED}}, **options)
        nodes.append(node)
        await node.start()
        return ToolNode(LOCAL_TOOLS, **options), node

    yield make
    for node in nodes:
        await node.aclose()


def norm(value: Any) -> Any:
    """What must be equal between the two nodes (MCP results also carry an artifact)."""
    if isinstance(value, ToolMessage):
        return ("tool", value.content, value.name, value.tool_call_id, value.status)
    if isinstance(value, Command):
        return ("command", norm(value.update), value.goto, value.graph)
    if isinstance(value, dict):
        return {k: norm(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [norm(v) for v in value]
    return value


def ai(*calls: tuple[str, dict[str, Any], str]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls])


CALLS = ai(
    ("add", {"a": 2, "b": 3}, "c1"), ("echo", {"text": "hi"}, "c2"), ("sleep", {"seconds": 0.05}, "c3")
)


async def both(make: Any, payload: Any, **options: Any) -> tuple[Any, Any]:
    local, mcp = await make(**options)
    expected = await local.ainvoke(payload, runtime_config())
    got = await mcp.ainvoke(payload, runtime_config())
    return expected, got


# -- inputs and outputs -------------------------------------------------------


@pytest.mark.parametrize(
    "shape",
    ["dict", "list", "tool_calls", "tool_call_with_context"],
)
async def test_every_input_shape(make_nodes: Any, shape: str) -> None:
    messages: list[AnyMessage] = [HumanMessage("go"), CALLS]
    payload: Any = {
        "dict": {"messages": messages},
        "list": messages,
        "tool_calls": [{**c, "type": "tool_call"} for c in CALLS.tool_calls],
        "tool_call_with_context": {
            "__type": "tool_call_with_context",
            "tool_call": {**CALLS.tool_calls[0], "type": "tool_call"},
            "state": {"messages": messages},
        },
    }[shape]
    expected, got = await both(make_nodes, payload)
    assert norm(got) == norm(expected)
    flat = got if isinstance(got, list) else got["messages"]
    assert flat[0].content == "5"


async def test_parallel_calls_keep_call_order(make_nodes: Any) -> None:
    calls = ai(
        ("sleep", {"seconds": 0.3}, "slow"),
        ("sleep", {"seconds": 0.01}, "fast"),
        ("echo", {"text": "x"}, "echo"),
    )
    expected, got = await both(make_nodes, {"messages": [calls]})
    assert norm(got) == norm(expected)
    assert [m.tool_call_id for m in got["messages"]] == ["slow", "fast", "echo"]


async def test_missing_input_errors_match(make_nodes: Any) -> None:
    local, mcp = await make_nodes()
    for payload in ({"messages": []}, {"messages": [HumanMessage("no ai message")]}):
        with pytest.raises(ValueError) as stock:
            await local.ainvoke(payload, runtime_config())
        with pytest.raises(ValueError) as ours:
            await mcp.ainvoke(payload, runtime_config())
        assert str(ours.value) == str(stock.value)


# -- errors ----------------------------------------------------------------------


async def test_unknown_tool_message(make_nodes: Any) -> None:
    expected, got = await both(make_nodes, {"messages": [ai(("nope", {}, "c1"))]})
    assert norm(got) == norm(expected)
    assert got["messages"][0].content == "Error: nope is not a valid tool, try one of [add, echo, sleep]."


def _typed_handler(e: ToolInvocationError) -> str:
    return f"typed:{e.tool_name}"


@pytest.mark.parametrize(
    "handler",
    [None, True, "custom message", lambda e: f"H:{type(e).__name__}", ToolInvocationError, _typed_handler],
    ids=["default", "true", "string", "callable", "type", "annotated"],
)
async def test_invalid_arguments_under_every_handler(make_nodes: Any, handler: Any) -> None:
    options = {} if handler is None else {"handle_tool_errors": handler}
    payload = {"messages": [ai(("add", {"a": 1}, "c1"), ("add", {"a": "x", "b": 1}, "c2"))]}
    expected, got = await both(make_nodes, payload, **options)
    assert norm(got) == norm(expected)
    assert all(m.status == "error" for m in got["messages"])


@pytest.mark.parametrize("handler", [False, (TypeError,)], ids=["false", "other-type"])
async def test_invalid_arguments_raise_when_not_handled(make_nodes: Any, handler: Any) -> None:
    local, mcp = await make_nodes(handle_tool_errors=handler)
    payload = {"messages": [ai(("add", {"a": 1}, "c1"))]}
    with pytest.raises(ToolInvocationError) as stock:
        await local.ainvoke(payload, runtime_config())
    with pytest.raises(ToolInvocationError) as ours:
        await mcp.ainvoke(payload, runtime_config())
    assert ours.value.message == stock.value.message


# -- wrappers ----------------------------------------------------------------------


async def _double_a(request: ToolCallRequest, execute: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
    call = request.tool_call
    if call["name"] == "add":
        request = request.override(tool_call={**call, "args": {**call["args"], "a": call["args"]["a"] * 2}})
    return await execute(request)


async def _short_circuit(
    request: ToolCallRequest, execute: Callable[[ToolCallRequest], Awaitable[Any]]
) -> Any:
    if request.tool_call["name"] == "echo":
        return ToolMessage("cached", tool_call_id=request.tool_call["id"], name="echo")
    return await execute(request)


async def _retry_once(request: ToolCallRequest, execute: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
    first = await execute(request)
    if first.status == "error":
        fixed = {**request.tool_call, "args": {"a": 0, "b": 0, **request.tool_call["args"]}}
        return await execute(request.override(tool_call=fixed))
    return first


async def _to_command(request: ToolCallRequest, execute: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
    result = await execute(request)
    return Command(update={"messages": [result], "count": 1})


async def _explode(request: ToolCallRequest, execute: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
    raise ValueError("wrapper blew up")


@pytest.mark.parametrize(
    ("wrapper", "handler"),
    [
        (_double_a, None),
        (_short_circuit, None),
        (_retry_once, None),
        (_to_command, None),
        (_explode, True),
        (_explode, (TypeError,)),
    ],
    ids=["override-args", "short-circuit", "retry", "command", "raises-handled", "raises-filtered-type"],
)
async def test_awrap_tool_call(make_nodes: Any, wrapper: Any, handler: Any) -> None:
    options: dict[str, Any] = {"awrap_tool_call": wrapper}
    if handler is not None:
        options["handle_tool_errors"] = handler
    payload = {
        "messages": [
            ai(("add", {"a": 2, "b": 3}, "c1"), ("echo", {"text": "hi"}, "c2"), ("add", {"a": 1}, "c3"))
        ]
    }
    expected, got = await both(make_nodes, payload, **options)
    assert norm(got) == norm(expected)


async def test_wrapper_error_propagates_by_default(make_nodes: Any) -> None:
    local, mcp = await make_nodes(awrap_tool_call=_explode)
    payload = {"messages": [ai(("add", {"a": 2, "b": 3}, "c1"))]}
    for node in (local, mcp):
        with pytest.raises(ValueError, match="wrapper blew up"):
            await node.ainvoke(payload, runtime_config())


# -- in graphs ------------------------------------------------------------------------


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    count: Annotated[int, operator.add]


def _scripted_agent(state: State) -> dict[str, Any]:
    if any(isinstance(m, ToolMessage) for m in state["messages"]):
        return {"messages": [AIMessage("done")]}
    return {"messages": [CALLS]}


def _graph(tools_node: ToolNode, *, send: bool) -> Any:
    builder = StateGraph(State)
    builder.add_node("agent", _scripted_agent)
    builder.add_node(tools_node)
    builder.add_edge(START, "agent")
    if send:
        builder.add_conditional_edges(
            "agent",
            send_per_call,
            ["tools", END],
        )
    else:
        builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


@pytest.mark.parametrize("send", [False, True], ids=["tools_condition", "send-per-call"])
async def test_agent_loop_in_a_graph(make_nodes: Any, send: bool) -> None:
    local, mcp = await make_nodes(awrap_tool_call=_to_command)
    start = {"messages": [HumanMessage("go")], "count": 0}
    expected = await _graph(local, send=send).ainvoke(start)
    got = await _graph(mcp, send=send).ainvoke(start)
    strip = [(m.type, m.content, getattr(m, "tool_call_id", None)) for m in got["messages"]]
    assert strip == [(m.type, m.content, getattr(m, "tool_call_id", None)) for m in expected["messages"]]
    assert got["count"] == expected["count"] == 3
    assert got["messages"][-1].content == "done"


async def test_tools_stream_and_callbacks(make_nodes: Any) -> None:
    class Recorder(AsyncCallbackHandler):
        def __init__(self) -> None:
            self.events: list[tuple[str, str]] = []

        async def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kw: Any) -> None:
            self.events.append(("start", serialized["name"]))

        async def on_tool_end(self, output: Any, **kw: Any) -> None:
            self.events.append(("end", output.tool_call_id))

    local, mcp = await make_nodes()
    streams = []
    for node in (local, mcp):
        recorder = Recorder()
        graph = _graph(node, send=False)
        parts = [
            (p["event"], p.get("tool_call_id"))
            async for p in graph.astream(
                {"messages": [HumanMessage("go")], "count": 0},
                {"callbacks": [recorder]},
                stream_mode="tools",  # type: ignore[arg-type]
            )
        ]
        lifecycle = [p for p in parts if p[0] != "tool-output-delta"]
        streams.append((sorted(lifecycle, key=str), sorted(recorder.events)))
    assert streams[1] == streams[0]
    assert ("tool-finished", "c1") in streams[1][0]
    # MCP progress of the "sleep" call also arrives as output deltas (see tests/stream/test_progress.py).
    assert ("start", "add") in streams[1][1]


# -- MCPToolNode specifics -------------------------------------------------------------


@tool
def shout(text: str) -> Command:
    """Uppercase text and count the call (returns a Command)."""
    return Command(update={"count": 1})


async def test_local_tools_served_next_to_mcp_tools() -> None:
    @tool
    def add(a: int, b: int) -> str:  # shadows the MCP tool of the same name
        """Local add."""
        return f"local {a + b}"

    server = {"server": demo.build_server(counters=demo.Counters()), "tools": ["add", "echo"]}
    async with MCPToolNode({"demo": server}, tools=[add]) as node:
        names = [t.name for t in await node.get_tools()]
        assert names == ["add", "demo_add", "echo"]
        out = await node.ainvoke(
            {"messages": [ai(("add", {"a": 1, "b": 2}, "c1"), ("demo_add", {"a": 1, "b": 2}, "c2"))]},
            runtime_config(),
        )
        assert [m.content for m in out["messages"]] == ["local 3", "3"]
        assert isinstance(node.tools_by_name["demo_add"], MCPTool)


async def test_each_tool_gets_the_injected_arguments_toolnode_computes_for_it() -> None:
    """MCP tools' injected arguments are worked out once for all of them (LangGraph builds a
    pydantic model per tool to find them: seconds for a thousand tools); each must still be
    exactly what ``ToolNode`` computes for that tool, with options and next to local tools."""

    @tool
    def local(x: int, state: Annotated[dict[str, Any], InjectedState]) -> str:
        """A local tool reading the graph state."""
        return str(x)

    server = many.build_server(tools=12)
    options = {"tool_3": ToolOptions(hidden={"n_3": FromState("n")})}
    async with MCPToolNode({"many": server}, tools=[local], tool_options=options) as node:
        tools = await node.get_tools()
        assert len(tools) == 13
        for t in tools:
            assert node._injected_args[t.name] == _get_all_injected_args(t), t.name
        assert node._injected_args["local"].state == {"state": None}
        assert node._injected_args["tool_0"].runtime is not None


async def test_shared_pool_is_left_open() -> None:
    async with MCPPool({"demo": {"server": demo.build_server(counters=demo.Counters())}}) as pool:
        first, second = MCPToolNode(pool), MCPToolNode(pool, name="more_tools")
        assert [t.name for t in await first.get_tools()] == [t.name for t in await second.get_tools()]
        await first.aclose()
        assert pool.connection("demo").connected
        out = await second.ainvoke({"messages": [ai(("add", {"a": 1, "b": 1}, "c1"))]}, runtime_config())
        assert out["messages"][0].content == "2"


async def test_unreachable_servers_fail_the_run_clearly() -> None:
    async with MCPToolNode({"gone": {"command": "/nonexistent/server"}}) as node:
        with pytest.raises(Exception, match="command '/nonexistent/server' not found"):
            await node.ainvoke({"messages": [ai(("add", {"a": 1, "b": 1}, "c1"))]}, runtime_config())


async def test_server_lost_after_start_gives_error_messages() -> None:
    node = MCPToolNode({"demo": {**stdio_params("demo"), "tools": SERVED}})
    await node.start()
    await node.pool.aclose()  # as if the server went away for good
    out = await node.ainvoke({"messages": [CALLS]}, runtime_config())
    assert [m.status for m in out["messages"]] == ["error"] * 3
    assert all("MCP server 'demo'" in m.content for m in out["messages"])


async def test_parallel_calls_under_a_checkpointer(make_nodes: Any) -> None:
    """With a checkpointer, parallel MCP calls run as tasks of their own; the messages are the same."""
    from langgraph.checkpoint.memory import InMemorySaver

    local, mcp = await make_nodes()
    outputs = []
    for node in (local, mcp):
        builder = StateGraph(State)
        builder.add_node(node)
        builder.add_edge(START, "tools")
        graph = builder.compile(checkpointer=InMemorySaver())
        out = await graph.ainvoke({"messages": [CALLS], "count": 0}, {"configurable": {"thread_id": "t"}})
        outputs.append([norm(m) for m in out["messages"] if isinstance(m, ToolMessage)])
    assert outputs[1] == outputs[0]
    assert [m[1] for m in outputs[1]] == ["5", "hi", "slept 0.05"]


async def test_a_call_that_cannot_start_fails_the_run_instead_of_hanging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fault injection: starting the second call's task raises; the calls already started must
    settle and the error must reach the caller (with a checkpointer and several calls, each call
    runs as a task of its own)."""
    from langgraph.checkpoint.memory import InMemorySaver

    import langgraph_mcp._graph.node as node_module
    from tests.servers import asker

    real = node_module._tool_call_task
    started: list[Any] = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        started.append(args)
        if len(started) == 2:
            raise RuntimeError("cannot start this call")
        return real(*args, **kwargs)

    monkeypatch.setattr(node_module, "_tool_call_task", failing)
    server = {"server": asker.build_server(counters=asker.Counters())}
    async with MCPToolNode({"asker": server}) as node:
        builder = StateGraph(State)
        builder.add_node(node)
        builder.add_edge(START, "tools")
        graph = builder.compile(checkpointer=InMemorySaver())
        message = ai(("delete_item", {"item": "a"}, "c1"), ("stats", {}, "c2"), ("where", {}, "c3"))
        with pytest.raises(RuntimeError, match="cannot start this call"):
            await asyncio.wait_for(
                graph.ainvoke({"messages": [message], "count": 0}, {"configurable": {"thread_id": "t"}}), 20
            )
        # Nothing the node started is left waiting for the batch to settle.
        for _ in range(40):
            leftover = [t for t in asyncio.all_tasks() if "ToolNode" in t.get_coro().__qualname__]
            if not leftover:
                break
            await asyncio.sleep(0.05)
        assert leftover == []
