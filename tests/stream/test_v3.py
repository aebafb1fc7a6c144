"""LangGraph's v3 event streaming: ``MCPStreamTransformer`` projects each MCP call (progress,
logs, questions, views, result) next to ``run.tool_calls``, in process and folded from the
events as a client receives them (JSON)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolCallTransformer
from langgraph.types import Command

from langgraph_mcp import MCPToolNode, ResultToState, ToolOptions, create_mcp_agent
from langgraph_mcp.demo import demo_server
from langgraph_mcp.streaming import MCPCalls, MCPStreamTransformer
from tests.chat import ScriptModel
from tests.conftest_servers import serve_in_loop
from tests.helpers import check, thread
from tests.servers import demo

# LangGraph marks the v3 protocol experimental (a LangChainBetaWarning at every run).
pytestmark = pytest.mark.filterwarnings("ignore:The v3 streaming protocol")


def _graph(node: MCPToolNode, **compile: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    return builder.compile(checkpointer=InMemorySaver(), **compile)


def _calls(*calls: tuple[str, dict[str, Any], str]) -> dict[str, Any]:
    return {
        "messages": [
            AIMessage(
                "", tool_calls=[{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in calls]
            )
        ]
    }


async def test_a_runs_mcp_calls_stream_their_progress_questions_and_results() -> None:
    node = MCPToolNode({"math": demo_server("math"), "shop": demo_server("shop")})
    graph = _graph(node, transformers=[MCPStreamTransformer, ToolCallTransformer])
    config = thread("v3")
    inputs = _calls(
        ("count_primes", {"limit": 1000}, "primes"), ("cancel_order", {"order_id": "A-1"}, "cancel")
    )
    run = await graph.astream_events(inputs, config, version="v3")
    tool_calls = asyncio.ensure_future(_names(run.tool_calls))  # LangGraph's own, read beside
    seen = [snapshot async for snapshot in run.extensions["mcp"]]
    assert await tool_calls == {"primes", "cancel"}
    for snapshot in seen:
        check("mcp-call", snapshot)
    primes = [s for s in seen if s["tool_call_id"] == "primes"]
    assert [s["change"] for s in primes][-1] == "finished" and {s["change"] for s in primes[:-1]} == {
        "progress"
    }
    assert [s["progress"] for s in primes[:-1]] == sorted(s["progress"] for s in primes[:-1])
    assert primes[-1]["status"] == "done" and primes[-1]["result"] == "168" and primes[-1]["server"] == "math"
    assert primes[-1]["args"] == {"limit": 1000} and primes[-1]["message"] == "168 primes so far"
    (cancel,) = [s for s in seen if s["tool_call_id"] == "cancel"]
    assert (cancel["status"], cancel["change"], cancel["server"]) == ("waiting", "question", "shop")
    assert cancel["questions"][0]["type"] == "mcp_elicitation"
    calls = run.extensions["mcp_calls"]
    assert isinstance(calls, MCPCalls) and list(calls) == ["primes", "cancel"]
    assert calls["cancel"]["status"] == "waiting"
    # The answer resumes the run: the question is gone and the call is done.
    key = cancel["questions"][0]["requests"][0]["key"]
    answer = {"responses": {key: {"action": "accept", "content": {"ok": True}}}}
    run = await graph.astream_events(Command(resume=answer), config, version="v3")
    done = [s async for s in run.extensions["mcp"]]
    assert (
        done[-1]["tool_call_id"] == "cancel" and done[-1]["status"] == "done" and done[-1]["questions"] == []
    )
    assert done[-1]["result"] == "order A-1 cancelled"


async def test_logs_and_error_results_and_the_sync_lane() -> None:
    async with serve_in_loop(demo.build_server()) as url:
        node = MCPToolNode({"demo": {"url": url, "log_events": True, "log_level": "info"}})
        graph = _graph(node, transformers=[MCPStreamTransformer])
        run = await graph.astream_events(_calls(("chatty", {"n": 2}, "talk")), thread("logs"), version="v3")
        seen = [s async for s in run.extensions["mcp"]]
        logs = [s["log"]["data"] for s in seen if s["change"] == "log" and s["log"] is not None]
        assert logs == ["info 0", "info 1", {"done": 2}]
        assert run.extensions["mcp_calls"]["talk"]["status"] == "done"
        assert run.extensions["mcp_calls"]["talk"]["result"] == "chatted 2"
        # An error result: shown as such (without the server's internal detail).
        inputs = _calls(("sleep", {"seconds": 0.05}, "nap"), ("crash", {}, "boom"))
        run = await graph.astream_events(inputs, thread("boom"), version="v3")
        calls = MCPCalls.from_events([e async for e in run])
        assert calls["nap"]["status"] == "done"
        assert calls["boom"]["status"] == "error" and "secret internal detail" not in str(
            calls["boom"]["result"]
        )
    # The sync lane (stream_events without a loop of one's own): the same projection.
    node = MCPToolNode({"math": demo_server("math")})
    graph = _graph(node, transformers=[MCPStreamTransformer])
    run = graph.stream_events(_calls(("add", {"a": 1, "b": 2}, "sum")), thread("sync"), version="v3")
    assert [s["result"] for s in run.extensions["mcp"]] == ["3.0"]
    await node.aclose()


@tool
def local_note(text: str) -> str:
    """A local tool (not MCP)."""
    return f"noted {text}"


async def test_an_agent_projects_its_mcp_calls_only_and_a_batched_question_per_call() -> None:
    model = ScriptModel(
        [
            [
                ("add", {"a": 2, "b": 40}, "a1"),
                ("local_note", {"text": "x"}, "n1"),
                ("cancel_order", {"order_id": "A-9"}, "c1"),
                ("book_trip", {"city": "Lisbon"}, "b1"),
            ],
            "done",
        ]
    )
    agent = create_mcp_agent(
        model,
        {"math": demo_server("math"), "shop": demo_server("shop")},
        tools=[local_note],
        approval=["cancel_order", "book_trip"],
        approval_mode="batched",
        checkpointer=InMemorySaver(),
    )
    config = thread("agent")
    try:
        run = await agent.astream_events({"messages": [HumanMessage("go")]}, config, version="v3")
        calls = MCPCalls.from_events([e async for e in run])
        # One batched question, before any call of the turn runs: each call it asks about shows it.
        assert list(calls) == ["c1", "b1"]
        assert calls["c1"]["status"] == calls["b1"]["status"] == "waiting"
        assert calls["c1"]["questions"][0]["type"] == "tool_approvals" == calls["b1"]["questions"][0]["type"]
        approve = {"decisions": [{"type": "approve"}, {"type": "approve"}]}
        run = await agent.astream_events(Command(resume=approve), config, version="v3")
        calls = run.extensions["mcp_calls"]
        seen = [s async for s in run.extensions["mcp"]]
        assert "n1" not in calls  # the local tool is in run.tool_calls only
        assert calls["a1"]["status"] == "done" and calls["a1"]["result"] == "42.0"
        # Approved, the calls ran and their servers asked their own questions.
        assert calls["c1"]["questions"][0]["type"] == "mcp_elicitation" == calls["b1"]["questions"][0]["type"]
        assert {s["tool_call_id"] for s in seen} == {"a1", "c1", "b1"}
    finally:
        await agent.mcp.aclose()


async def test_a_client_folds_the_same_calls_from_the_json_events() -> None:
    """What a client of a deployment receives is JSON: the events folded after a round trip
    through JSON give the same calls; so do the snapshots of the custom:mcp channel, as the SDK
    yields them (``{"name": "mcp", "payload": ...}``)."""
    node = MCPToolNode({"math": demo_server("math"), "shop": demo_server("shop")})
    graph = _graph(node, transformers=[MCPStreamTransformer])
    inputs = _calls(("count_primes", {"limit": 1000}, "p"), ("cancel_order", {"order_id": "A-2"}, "c"))
    run = await graph.astream_events(inputs, thread("wire"), version="v3")
    raw = [event async for event in run]
    local = run.extensions["mcp_calls"]
    wire = json.loads(json.dumps(raw, default=_json))
    from_events = MCPCalls.from_events(wire)
    channel = [{"name": "mcp", "payload": e["params"]["data"]} for e in wire if e["method"] == "custom:mcp"]
    from_channel = MCPCalls.from_events(channel)
    for folded in (from_events, from_channel):
        assert list(folded) == list(local) == ["p", "c"]
        assert {k: (v["status"], v["result"]) for k, v in folded.items()} == {
            "p": ("done", "168"),
            "c": ("waiting", None),
        }


async def _names(tool_calls: Any) -> set[str]:
    return {call.tool_call_id async for call in tool_calls}


def _json(value: Any) -> Any:
    """What a server's JSON serialiser makes of the objects in an event."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if hasattr(value, "value") and hasattr(value, "id"):  # an Interrupt
        return {"id": value.id, "value": value.value}
    return str(value)


class _Totals(MessagesState):
    total: float


async def test_a_result_into_state_and_a_subgraphs_call_finish_in_the_projection() -> None:
    """A call whose result is a ``Command`` (a result written into state) finishes in the
    projection; so does the call of a subgraph, whose question the parent saw."""
    node = MCPToolNode(
        {"math": demo_server("math")},
        tool_options={"add": ToolOptions(result=ResultToState(update={"total": "result"}))},
    )
    builder = StateGraph(_Totals)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    graph = builder.compile(checkpointer=InMemorySaver(), transformers=[MCPStreamTransformer])
    run = await graph.astream_events(_calls(("add", {"a": 1, "b": 2}, "sum")), thread("cmd"), version="v3")
    [s async for s in run.extensions["mcp"]]
    assert run.extensions["mcp_calls"]["sum"]["status"] == "done"
    assert run.extensions["mcp_calls"]["sum"]["server"] == "math"

    inner = _graph(MCPToolNode({"shop": demo_server("shop")}))
    outer_builder = StateGraph(MessagesState)
    outer_builder.add_node("inner", inner)
    outer_builder.add_edge(START, "inner")
    outer = outer_builder.compile(checkpointer=InMemorySaver(), transformers=[MCPStreamTransformer])
    config = thread("nested")
    run = await outer.astream_events(_calls(("cancel_order", {"order_id": "A-3"}, "c")), config, version="v3")
    [s async for s in run.extensions["mcp"]]
    asked = run.extensions["mcp_calls"]["c"]
    assert asked["status"] == "waiting"
    key = asked["questions"][0]["requests"][0]["key"]
    answer = {"responses": {key: {"action": "accept", "content": {"ok": True}}}}
    run = await outer.astream_events(Command(resume=answer), config, version="v3")
    [s async for s in run.extensions["mcp"]]
    assert run.extensions["mcp_calls"]["c"]["status"] == "done"


async def test_snapshots_handed_out_never_change_and_progress_is_counted_once() -> None:
    node = MCPToolNode({"math": demo_server("math")})
    graph = _graph(node, transformers=[MCPStreamTransformer])
    run = await graph.astream_events(
        _calls(("count_primes", {"limit": 800}, "p")), thread("once"), version="v3"
    )
    seen = [s async for s in run.extensions["mcp"]]
    progress = [s["progress"] for s in seen if s["change"] == "progress"]
    assert progress == sorted(set(progress))  # each value once, in order
    assert seen[0]["status"] == "running" and seen[-1]["status"] == "done"  # earlier ones kept theirs
    await node.aclose()
