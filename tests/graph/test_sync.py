"""Synchronous use: ``graph.invoke`` with ``MCPToolNode``, ``tool.invoke``, closing from sync code."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from langgraph_mcp import MCPPool, MCPToolNode, load_mcp_tools
from langgraph_mcp._support.sync import run_sync, sync_loop
from tests.conftest_servers import stdio_params
from tests.helpers import ai, pid_alive, spawned_pids, thread, tool_graph
from tests.tiers import STDIO_ERAS

CALLS = [("delete_item", {"item": "a"}, "c1"), ("list_items", {}, "c2"), ("whoami", {"user_id": "u"}, "c3")]


def answer(out: dict[str, Any]) -> Command[Any]:
    return Command(
        resume={
            i.id: {
                "responses": {
                    r["key"]: {"action": "accept", "content": {"ok": True}} for r in i.value["requests"]
                }
            }
            for i in out["__interrupt__"]
        }
    )


def contents(out: dict[str, Any]) -> dict[str, Any]:
    return {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}


@pytest.mark.slow  # several server processes per case
@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_graph_invoke_asks_resumes_and_matches_ainvoke(protocol: str, pid_dir: Path) -> None:
    env = {"DEMO_PID_DIR": str(pid_dir)}
    config = {
        "ask": {**stdio_params("asker"), "protocol": protocol},
        "shop": stdio_params("shopfront", env=env),
    }
    node = MCPToolNode(config)
    graph = tool_graph(node)
    try:
        out = graph.invoke({"messages": [ai(*CALLS)]}, thread())
        assert [i.value["tool_call_id"] for i in out["__interrupt__"]] == ["c1"]
        sync_results = contents(graph.invoke(answer(out), thread()))
        assert len(spawned_pids(pid_dir)) == 1  # one session, kept between the two runs
    finally:
        node.pool.close()
    assert not any(pid_alive(p) for p in spawned_pids(pid_dir))

    async def run_async() -> dict[str, Any]:
        async with MCPToolNode(config) as anode:
            agraph = tool_graph(anode)
            first = await agraph.ainvoke({"messages": [ai(*CALLS)]}, thread())
            return contents(await agraph.ainvoke(answer(first), thread()))

    assert sync_results == asyncio.run(run_async())
    assert sync_results["c1"].startswith("deleted a")


def test_tool_invoke_works_without_a_graph() -> None:
    pool = MCPPool({"shop": stdio_params("shopfront")})
    try:
        tools = {t.name: t for t in run_sync(lambda: load_mcp_tools(pool))}
        assert tools["whoami"].invoke({"user_id": "z"}) == '{\n  "user_id": "z",\n  "note": ""\n}'
        message = tools["list_items"].invoke(
            {"name": "list_items", "args": {}, "id": "c1", "type": "tool_call"}
        )
        assert isinstance(message, ToolMessage) and "apple" in str(message.content)
    finally:
        pool.close()


def test_the_background_loop_may_not_wait_for_itself() -> None:
    async def nested() -> Any:
        return run_sync(lambda: asyncio.sleep(0))

    with pytest.raises(RuntimeError, match="own event loop"):
        asyncio.run_coroutine_threadsafe(nested(), sync_loop()).result(10)


def test_graph_stream_delivers_progress_events() -> None:
    node = MCPToolNode({"shop": stdio_params("shopfront")})
    try:
        chunks = list(
            tool_graph(node).stream(
                {"messages": [ai(("progress_work", {"steps": 3}, "c1"))]}, thread(), stream_mode="custom"
            )
        )
    finally:
        node.pool.close()
    progress = [c for c in chunks if c["type"] == "mcp_progress"]  # (not the UI message, "ui")
    assert [(c["type"], c["progress"], c["tool_call_id"]) for c in progress] == [
        ("mcp_progress", 1, "c1"),
        ("mcp_progress", 2, "c1"),
        ("mcp_progress", 3, "c1"),
    ]


def test_a_sync_wrap_tool_call_wraps_each_call() -> None:
    seen: list[str] = []

    def wrap(request: Any, execute: Any) -> Any:
        seen.append(request.tool_call["id"])
        result = execute(request)
        return result.model_copy(update={"content": f"wrapped: {result.content}"})

    node = MCPToolNode({"shop": stdio_params("shopfront")}, wrap_tool_call=wrap)
    try:
        out = tool_graph(node).invoke(
            {"messages": [ai(("whoami", {"user_id": "w"}, "c1"), ("delete_item", {"item": "q"}, "c2"))]},
            thread(),
        )
    finally:
        node.pool.close()
    assert sorted(seen) == ["c1", "c2"]
    assert contents(out)["c2"] == "wrapped: deleted q"


def test_more_asking_calls_than_worker_threads_do_not_hang() -> None:
    # Each call's task holds a worker thread while its call runs; nothing it does may need one.
    calls = [("delete_item", {"item": f"i{n}"}, f"c{n}") for n in range(8)]
    node = MCPToolNode({"ask": stdio_params("asker")})
    graph = tool_graph(node)
    config = {**thread(), "max_concurrency": 2}
    try:
        out = graph.invoke({"messages": [ai(*calls)]}, config)
        assert sorted(i.value["tool_call_id"] for i in out["__interrupt__"]) == sorted(c[2] for c in calls)
        out = graph.invoke(answer(out), config)
    finally:
        node.pool.close()
    assert all(str(v).startswith("deleted") for v in contents(out).values()) and len(contents(out)) == 8


@pytest.mark.slow  # two server processes per case
@pytest.mark.parametrize("first", ["async", "sync"])
def test_a_run_started_one_way_resumes_the_other(first: str) -> None:
    def allowed(tool: Any, context: Any) -> bool:
        return tool.name != "pick_options"

    calls = [
        ("pick_options", {}, "c1"),
        ("delete_item", {"item": "a"}, "c2"),
        ("delete_item", {"item": "b"}, "c3"),
    ]
    config = {"ask": stdio_params("asker")}
    node = MCPToolNode(config, tool_filter=allowed)
    graph = tool_graph(node)

    async def run_async(value: Any) -> Any:
        return await graph.ainvoke(value, thread())

    def run(mode: str, value: Any) -> Any:
        return asyncio.run(run_async(value)) if mode == "async" else graph.invoke(value, thread())

    try:
        out = run(first, {"messages": [ai(*calls)]})
        assert sorted(i.value["tool_call_id"] for i in out["__interrupt__"]) == ["c2", "c3"]
        out = run("sync" if first == "async" else "async", answer(out))
    finally:
        node.pool.close()
    got = contents(out)
    assert list(got) == ["c1", "c2", "c3"]
    assert got["c1"].startswith("Error: pick_options is not a valid tool")
    assert got["c2"].startswith("deleted a") and got["c3"].startswith("deleted b")


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_a_sync_node_in_an_async_graph_may_invoke_an_asking_tool(protocol: str) -> None:
    from langgraph.graph import START, MessagesState, StateGraph

    async with MCPPool({"ask": {**stdio_params("asker"), "protocol": protocol}}) as pool:
        tool = {t.name: t for t in await load_mcp_tools(pool)}["delete_item"]

        def node(state: MessagesState) -> dict[str, Any]:
            message = tool.invoke(
                {"name": "delete_item", "args": {"item": "z"}, "id": "c1", "type": "tool_call"}
            )
            return {"messages": [message]}

        builder = StateGraph(MessagesState)
        builder.add_node("work", node)
        builder.add_edge(START, "work")
        from langgraph.checkpoint.memory import InMemorySaver

        graph = builder.compile(checkpointer=InMemorySaver())
        out = await graph.ainvoke({"messages": []}, thread())
        assert out["__interrupt__"][0].value["type"] == "mcp_elicitation"
        out = await graph.ainvoke(answer(out), thread())
    assert out["messages"][-1].content.startswith("deleted z")


def test_a_server_that_dies_between_sync_runs_is_started_again(tmp_path: Path) -> None:
    marker = tmp_path / "crashed"
    node = MCPToolNode({"shop": stdio_params("shopfront")})
    graph = tool_graph(node)
    try:
        out = graph.invoke({"messages": [ai(("flaky", {"marker": str(marker)}, "c1"))]}, thread("a"))
        message = out["messages"][-1]
        assert message.status == "error" and "connection" in message.content  # it died mid-call
        out = graph.invoke({"messages": [ai(("flaky", {"marker": str(marker)}, "c2"))]}, thread("b"))
    finally:
        node.close()
    assert out["messages"][-1].content == "steady"
