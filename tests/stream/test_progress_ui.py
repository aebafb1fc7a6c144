"""Progress as a generative-UI message (``push_ui_message``), the way chat UIs show it."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph, add_messages
from langgraph.graph.ui import AnyUIMessage, ui_message_reducer
from mcp.server.mcpserver import Context, MCPServer
from typing_extensions import TypedDict

from langgraph_mcp import MCPToolNode
from langgraph_mcp.schemas import json_schema
from langgraph_mcp.types import PROGRESS_UI_NAME
from tests.servers import demo

PROTOCOLS = ["auto", "legacy"]


class UIState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    ui: Annotated[Sequence[AnyUIMessage], ui_message_reducer]


def _graph(node: MCPToolNode, state: Any = MessagesState) -> Any:
    builder = StateGraph(state)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    return builder.compile(checkpointer=InMemorySaver())


def _request(*calls: tuple[str, dict[str, Any], str]) -> dict[str, Any]:
    tool_calls = [{"name": n, "args": a, "id": i} for n, a, i in calls]
    return {"messages": [AIMessage("", id="ai-1", tool_calls=tool_calls)]}


def _demo(protocol: str, **options: Any) -> dict[str, Any]:
    return {"demo": {"server": demo.build_server(counters=demo.Counters()), "protocol": protocol, **options}}


async def _ui_events(graph: Any, request: dict[str, Any], thread: str) -> list[dict[str, Any]]:
    config = {"configurable": {"thread_id": thread}}
    return [
        chunk
        async for chunk in graph.astream(request, config, stream_mode="custom")
        if isinstance(chunk, dict) and chunk.get("type") == "ui"
    ]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_one_ui_message_per_call_updated_in_place_then_done(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with MCPToolNode(_demo(protocol)) as node:
        graph = _graph(node)
        request = _request(("sleep", {"seconds": 0.15}, "slow"), ("quiet_sleep", {"seconds": 0.05}, "quiet"))
        with caplog.at_level(logging.WARNING):
            events = await _ui_events(graph, request, "t1")
    # Only the call that reported progress has a message; every update has its one id.
    assert {e["id"] for e in events} == {f"{PROGRESS_UI_NAME}:slow"}
    assert all(e["name"] == PROGRESS_UI_NAME and e["metadata"]["merge"] is True for e in events)
    assert all(e["metadata"]["tool_call_id"] == "slow" for e in events)
    assert all(e["metadata"]["message_id"] == "ai-1" for e in events)
    running, done = events[:-1], events[-1]
    assert [e["props"]["progress"] for e in running] == [1, 2, 3]
    assert [e["props"]["message"] for e in running] == ["step 1/3", "step 2/3", "step 3/3"]
    assert {e["props"]["status"] for e in running} == {"running"}
    assert done["props"] == {
        "server": "demo",
        "tool_name": "sleep",
        "tool_call_id": "slow",
        "progress": 3,
        "total": 3,
        "message": "step 3/3",
        "status": "done",
    }
    # The graph has no "ui" state key: the message is streamed only, without a warning.
    assert "unknown channel" not in caplog.text


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_ui_state_key_keeps_the_finished_message(protocol: str) -> None:
    async with MCPToolNode(_demo(protocol)) as node:
        graph = _graph(node, UIState)
        events = await _ui_events(graph, _request(("sleep", {"seconds": 0.1}, "c1")), "t1")
        state = await graph.aget_state({"configurable": {"thread_id": "t1"}})
    assert len(events) == 3
    [kept] = state.values["ui"]
    assert kept["id"] == f"{PROGRESS_UI_NAME}:c1" and kept["metadata"]["message_id"] == "ai-1"
    assert kept["props"]["status"] == "done" and kept["props"]["progress"] == 2
    # Running updates are streamed only: the step's checkpoint holds one write for the call.
    saver = graph.checkpointer
    ui_writes = [w for step in saver.writes.values() for w in step.values() if w[1] == "ui"]
    assert len(ui_writes) == 1, ui_writes


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_call_that_fails_after_progress_is_marked_failed(protocol: str) -> None:
    async with MCPToolNode(_demo(protocol, tool_timeouts={"sleep": 0.12})) as node:
        graph = _graph(node, UIState)
        events = await _ui_events(graph, _request(("sleep", {"seconds": 5}, "c1")), "t1")
        state = await graph.aget_state({"configurable": {"thread_id": "t1"}})
    assert "timed out" in state.values["messages"][-1].content
    assert [e["props"]["status"] for e in events][-1] == "failed"
    assert {e["props"]["status"] for e in events[:-1]} == {"running"}
    assert state.values["ui"][0]["props"]["status"] == "failed"


async def test_the_message_shown_has_no_hidden_characters_and_is_bounded() -> None:
    server = MCPServer("noisy")

    @server.tool()
    async def work(ctx: Context) -> str:
        await ctx.report_progress(1, None, "\x1b[31mred\x1b[0m\u202e text" + "x" * 2000)
        return "ok"

    async with MCPToolNode({"noisy": {"server": server}}) as node:
        events = await _ui_events(_graph(node), _request(("work", {}, "c1")), "t1")
    message = events[0]["props"]["message"]
    assert message.startswith("red text") and len(message) == 500
    assert events[0]["props"]["total"] is None
    assert [e["props"]["status"] for e in events] == ["running", "done"]


def test_the_props_schema_matches_what_is_pushed() -> None:
    schema = json_schema("progress-ui-props")
    assert set(schema["required"]) == {
        "server", "tool_name", "tool_call_id", "progress", "total", "message", "status"
    }  # fmt: skip
    assert schema["properties"]["status"]["enum"] == ["running", "done", "failed"]


async def test_progress_ui_off_keeps_the_progress_events_and_sends_no_ui_message() -> None:
    async with MCPToolNode(_demo("auto", progress_ui=False)) as node:
        graph = _graph(node, UIState)
        config = {"configurable": {"thread_id": "off"}}
        request = _request(("sleep", {"seconds": 0.15}, "slow"))
        chunks = [c async for c in graph.astream(request, config, stream_mode="custom")]
        state = await graph.aget_state(config)
    assert [c["progress"] for c in chunks if c["type"] == "mcp_progress"] == [1, 2, 3]
    assert [c for c in chunks if c["type"] == "ui"] == []
    assert state.values.get("ui", []) == []
