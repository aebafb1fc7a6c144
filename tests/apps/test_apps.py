"""MCP Apps (``io.modelcontextprotocol/ui``): app-only tools never reach the model; with
``apps: true`` the extension is advertised and a tool's ``ui://`` view travels with its result as
an ``mcp-app`` generative-UI message."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph, add_messages
from langgraph.graph.ui import AnyUIMessage, ui_message_reducer
from langgraph.prebuilt.tool_node import INVALID_TOOL_NAME_ERROR_TEMPLATE
from typing_extensions import TypedDict

from langgraph_mcp import MCPMiddleware, MCPPool, MCPToolNode, create_mcp_agent, load_mcp_tools
from langgraph_mcp.options import ToolOptions
from langgraph_mcp.schemas import json_schema
from langgraph_mcp.types import APP_UI_NAME
from tests.chat import ScriptModel
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import check, record_texts
from tests.servers import apps

CASES = [("stdio", "auto"), ("stdio", "legacy"), ("http", "auto"), ("http", "legacy")]
ERA = {"auto": "2026-07-28", "legacy": "legacy"}
OFFERED = [
    "show_chart",
    "long_chart",
    "broken_view",
    "fail_chart",
    "plain_echo",
    "old_style",
    "touch_view",
    "add_view",
]
"""What the model is offered, in listing order: not ``refresh_chart`` and ``stats`` (app only),
nor ``odd_visibility`` (a visibility that is not a list)."""
MODEL_TOOLS = set(OFFERED)
SECRET = "sk-apps-0123456789"
EXTENSION = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}


class UIState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    ui: Annotated[Sequence[AnyUIMessage], ui_message_reducer]


@pytest.fixture(params=CASES, ids=[f"{t}-{p}" for t, p in CASES])
async def apps_config(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, Any]]:
    """The apps server over stdio or loopback HTTP, in both protocol eras (``apps`` left off)."""
    transport, protocol = request.param
    if transport == "stdio":
        yield {**stdio_params("apps"), "protocol": protocol}
    else:
        async with serve_in_loop(apps.build_server(secret=SECRET)) as url:
            yield {"url": url, "protocol": protocol}


def _graph(node: MCPToolNode) -> Any:
    builder = StateGraph(UIState)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    return builder.compile(checkpointer=InMemorySaver())


def _request(*calls: tuple[str, dict[str, Any], str]) -> dict[str, Any]:
    tool_calls = [{"name": n, "args": a, "id": i} for n, a, i in calls]
    return {"messages": [AIMessage("", id="ai-1", tool_calls=tool_calls)]}


async def _run(
    graph: Any, request: dict[str, Any], thread: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The run's UI messages on ``stream_mode="custom"``, and the state after it."""
    config = {"configurable": {"thread_id": thread}}
    events = [
        chunk
        async for chunk in graph.astream(request, config, stream_mode="custom")
        if isinstance(chunk, dict) and chunk.get("type") == "ui"
    ]
    return events, (await graph.aget_state(config)).values


def _results(state: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


async def _stats(pool: MCPPool) -> dict[str, Any]:
    result = await pool.connection("apps").call_tool("stats", {})
    assert result.structured_content is not None
    return result.structured_content


def _refusal(name: str) -> str:
    return INVALID_TOOL_NAME_ERROR_TEMPLATE.format(requested_tool=name, available_tools=", ".join(OFFERED))


# -- visibility ------------------------------------------------------------------------------


async def test_tools_meant_only_for_a_view_are_never_offered_to_the_model(
    apps_config: dict[str, Any],
) -> None:
    async with MCPPool({"apps": apps_config}) as pool:
        node = MCPToolNode(pool)
        assert {t.name for t in await node.get_tools()} == MODEL_TOOLS
        assert pool.connection("apps").era == ERA[apps_config["protocol"]]
        middleware = MCPMiddleware(pool)
        assert {t.name for t in await middleware.get_tools()} == MODEL_TOOLS
        assert [t.name for t in await load_mcp_tools(pool)] == OFFERED
        # The pool's catalog keeps them (a view may call them).
        listed = {t.name for t in await pool.connection("apps").list_tools()}
        assert {"refresh_chart", "stats", "odd_visibility"} <= listed

        # The prebuilt agent: the model is not given them, and its call to one is refused.
        model = ScriptModel(turns=[[("refresh_chart", {"city": "Oslo"}, "c1")], "done"], unbound="call")
        agent = create_mcp_agent(model, pool)
        out = await agent.ainvoke({"messages": [("user", "refresh")]})
        assert set(model.seen[0]) == MODEL_TOOLS
        [refused] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        assert refused.status == "error"
        assert refused.content == _refusal("refresh_chart")

        # The node: a call to one is refused as a call to a tool the run may not use.
        graph = _graph(node)
        _, state = await _run(
            graph, _request(("stats", {}, "c1"), ("plain_echo", {"text": "hi"}, "c2")), "t1"
        )
        results = _results(state)
        assert results["c1"].status == "error"
        assert results["c1"].content == _refusal("stats")
        assert results["c2"].content == "hi"
        # An unknown tool's message does not name them either.
        _, state = await _run(graph, _request(("no_such_tool", {}, "c3")), "t2")
        assert _results(state)["c3"].content == _refusal("no_such_tool")
        stats = await _stats(pool)
    assert stats["advertised"] is None or "io.modelcontextprotocol/ui" not in stats["advertised"]


async def test_a_tool_filter_still_applies_to_the_tools_the_model_may_see() -> None:
    async with serve_in_loop(apps.build_server()) as url:
        node = MCPToolNode(
            {"apps": {"url": url}}, tool_filter=lambda tool, context: tool.name != "show_chart"
        )
        async with node:
            assert {t.name for t in await node.get_tools()} == MODEL_TOOLS - {"show_chart"}


# -- the option, and the view --------------------------------------------------------------


async def test_the_extension_is_advertised_only_with_the_option(apps_config: dict[str, Any]) -> None:
    async with MCPPool({"apps": {**apps_config, "apps": True}}) as pool:
        stats = await _stats(pool)
    # Tasks and skills are advertised by default (tasks: true, skills: true), events always.
    assert stats["advertised"] == {
        **EXTENSION,
        "io.modelcontextprotocol/tasks": {},
        "io.modelcontextprotocol/skills": {},
        "io.modelcontextprotocol/events": {},
    }


async def test_a_view_travels_with_the_result_of_its_tool(apps_config: dict[str, Any]) -> None:
    hidden = ToolOptions(hidden={"account": lambda runtime: SECRET})
    async with MCPPool({"apps": {**apps_config, "apps": True}}) as pool:
        node = MCPToolNode(pool, tool_options={"show_chart": hidden})
        graph = _graph(node)
        events, state = await _run(graph, _request(("show_chart", {"city": "Oslo"}, "c1")), "t1")
        stats = await _stats(pool)
    result = _results(state)["c1"]
    assert result.status == "success" and result.artifact["structured_content"]["temps"] == apps.TEMPS
    [event] = events
    assert event["name"] == APP_UI_NAME and event["id"] == f"{APP_UI_NAME}:c1"
    assert event["metadata"]["tool_call_id"] == "c1" and event["metadata"]["message_id"] == "ai-1"
    props = event["props"]
    check("app-ui-props", props)
    assert props["server"] == "apps" and props["tool_name"] == props["mcp_tool"] == "show_chart"
    assert props["tool_call_id"] == "c1" and props["thread_id"] == "t1"
    assert props["resource_uri"] == apps.CHART_URI and props["mime_type"] == "text/html;profile=mcp-app"
    assert props["html"] == apps.chart_html(1)
    assert props["csp"] == {
        "connectDomains": ["https://api.example.com"],
        "resourceDomains": ["https://cdn.example.com"],
    }
    assert props["permissions"] == {"clipboardWrite": {}} and props["prefers_border"] is True
    # The hidden argument is never among the arguments shown.
    assert props["arguments"] == {"city": "Oslo"}
    assert props["result"]["isError"] is False
    assert props["result"]["structuredContent"]["temps"] == apps.TEMPS
    assert props["result"]["content"][0]["type"] == "text"
    # The graph's "ui" key keeps the same message.
    [kept] = state["ui"]
    assert kept["id"] == event["id"] and kept["props"] == props
    assert stats["reads"] == {apps.CHART_URI: 1}


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_an_agent_streams_the_view_of_its_tools_result(protocol: str) -> None:
    model = ScriptModel(turns=[[("show_chart", {"city": "Oslo"}, "c1")], "done"])
    async with (
        serve_in_loop(apps.build_server()) as url,
        MCPPool({"apps": {"url": url, "protocol": protocol, "apps": True}}) as pool,
    ):
        agent = create_mcp_agent(model, pool, checkpointer=InMemorySaver())
        events, state = await _run(agent, {"messages": [("user", "chart")]}, "t1")
    [event] = events
    assert event["name"] == APP_UI_NAME and event["metadata"]["tool_call_id"] == "c1"
    assert event["metadata"]["message_id"] == state["messages"][1].id
    assert event["props"]["html"] == apps.chart_html(1) and event["props"]["arguments"] == {"city": "Oslo"}
    assert _results(state)["c1"].artifact["structured_content"]["city"] == "Oslo"


async def test_the_view_is_read_once_per_session_until_it_changes(apps_config: dict[str, Any]) -> None:
    async with MCPPool({"apps": {**apps_config, "apps": True}}) as pool:
        graph = _graph(MCPToolNode(pool))
        connection = pool.connection("apps")

        async def shown(thread: str) -> str:
            events, _ = await _run(graph, _request(("show_chart", {"city": "Oslo"}, "c1")), thread)
            [event] = events
            html: str = event["props"]["html"]
            return html

        assert await shown("t1") == apps.chart_html(1)
        assert await shown("t2") == apps.chart_html(1)
        assert (await _stats(pool))["reads"] == {apps.CHART_URI: 1}

        # The server says the view was updated: it is read again.
        async with pool.subscribe("apps", apps.CHART_URI) as updates:
            await connection.call_tool("touch_view", {})
            assert (await asyncio.wait_for(anext(updates), 10))["uri"] == apps.CHART_URI
        assert await shown("t3") == apps.chart_html(2)
        assert (await _stats(pool))["reads"] == {apps.CHART_URI: 2}

        # The server says its resource list changed: read again.
        before = {str(r.uri) for r in await pool.list_resources("apps")}
        added = (await connection.call_tool("add_view", {})).structured_content
        assert added is not None
        for _ in range(500):
            if added["result"] in {str(r.uri) for r in await pool.list_resources("apps")}:
                break
            await asyncio.sleep(0.02)
        assert added["result"] not in before
        assert await shown("t4") == apps.chart_html(3)
        assert await shown("t5") == apps.chart_html(3)
        assert (await _stats(pool))["reads"] == {apps.CHART_URI: 3}


async def test_a_view_that_cannot_be_shown_leaves_the_result_as_it_is(
    apps_config: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    # The server's error names a secret of its configuration: no log record shows it.
    if "url" in apps_config:
        config = {**apps_config, "apps": True, "headers": {"X-Key": SECRET}}
    else:
        config = {**apps_config, "apps": True, "env": {**apps_config["env"], "APPS_KEY": SECRET}}
    async with MCPPool({"apps": config}) as pool:
        graph = _graph(MCPToolNode(pool))
        request = _request(
            ("broken_view", {"text": "x"}, "broken"),
            ("fail_chart", {"city": "Oslo"}, "failed"),
            ("old_style", {"text": "y"}, "old"),
            ("plain_echo", {"text": "z"}, "plain"),
        )
        with caplog.at_level(logging.DEBUG, logger="langgraph_mcp"):
            events, state = await _run(graph, request, "t1")
        stats = await _stats(pool)
    results = _results(state)
    assert results["broken"].status == "success" and results["broken"].content == "broken x"
    assert results["failed"].status == "error" and "no chart for Oslo" in str(results["failed"].content)
    assert results["old"].content == "old y" and results["plain"].content == "z"
    # Only the tool whose view could be read has a message (the deprecated key names one too).
    assert [e["id"] for e in events] == [f"{APP_UI_NAME}:old"]
    assert [m["id"] for m in state["ui"]] == [f"{APP_UI_NAME}:old"]
    assert stats["reads"] == {apps.BROKEN_URI: 1, apps.CHART_URI: 1}
    warnings = [r for r in caplog.records if r.name == "langgraph_mcp.apps" and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and apps.BROKEN_URI in warnings[0].getMessage()
    assert "the view is gone (key ***)" in warnings[0].getMessage()
    assert all(SECRET not in text for text in record_texts(caplog.records))


async def test_without_the_option_no_view_is_read() -> None:
    async with serve_in_loop(apps.build_server()) as url, MCPPool({"apps": {"url": url}}) as pool:
        events, state = await _run(
            _graph(MCPToolNode(pool)), _request(("show_chart", {"city": "Oslo"}, "c1")), "t1"
        )
        stats = await _stats(pool)
    assert events == [] and not state.get("ui")
    assert _results(state)["c1"].status == "success"
    assert stats["reads"] == {}


async def test_a_view_too_long_to_carry_comes_without_its_html() -> None:
    async with (
        serve_in_loop(apps.build_server(big=True)) as url,
        MCPPool({"apps": {"url": url, "apps": True}}) as pool,
    ):
        events, _ = await _run(
            _graph(MCPToolNode(pool)), _request(("show_chart", {"city": "Oslo"}, "c1")), "t1"
        )
    [event] = events
    assert "html" not in event["props"]
    assert event["props"]["resource_uri"] == apps.CHART_URI and event["props"]["csp"]
    check("app-ui-props", event["props"])


async def test_a_result_too_long_to_carry_comes_without_its_content() -> None:
    async with (
        serve_in_loop(apps.build_server()) as url,
        MCPPool({"apps": {"url": url, "apps": True}}) as pool,
    ):
        graph = _graph(MCPToolNode(pool))
        calls = (("long_chart", {"size": 300_000}, "c1"), ("long_chart", {"size": 1_000}, "c2"))
        events, state = await _run(graph, _request(*calls), "t1")
    by_call = {e["metadata"]["tool_call_id"]: e["props"]["result"] for e in events}
    assert by_call["c1"] == {"content": [], "isError": False, "truncated": True}
    assert by_call["c2"]["content"][0]["text"] == "x" * 1_000 and "truncated" not in by_call["c2"]
    assert len(_results(state)["c1"].content) >= 1_000  # the tool message keeps its own result
    for event in events:
        check("app-ui-props", event["props"])


def test_the_props_schema_names_what_is_always_there() -> None:
    schema = json_schema("app-ui-props")
    assert set(schema["required"]) == {
        "server", "tool_name", "mcp_tool", "tool_call_id", "resource_uri", "mime_type", "arguments", "result"
    }  # fmt: skip
