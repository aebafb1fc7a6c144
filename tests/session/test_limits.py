"""``max_concurrent_calls``: at most N calls in flight per session, queued fairly by thread."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from langgraph_mcp import MCPConfigError, MCPPool, MCPToolNode
from langgraph_mcp._session.limits import FairLimiter
from langgraph_mcp.elicitation import accept
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import ai, call, json_content, thread, tool_graph, tools_by_name, until
from tests.servers import demo

# --- the limiter on its own ---------------------------------------------------------------------


async def test_limiter_serves_waiting_keys_round_robin() -> None:
    limiter = FairLimiter(1)
    order: list[str] = []
    gate = asyncio.Event()

    async def work(key: str, tag: str) -> None:
        async with limiter.slot(key):
            order.append(tag)
            await gate.wait()

    tasks = [asyncio.ensure_future(work("greedy", f"g{i}")) for i in range(4)]
    await asyncio.sleep(0)
    tasks.append(asyncio.ensure_future(work("polite", "p0")))
    await asyncio.sleep(0)
    assert order == ["g0"] and limiter.waiting == 4
    gate.set()
    await asyncio.gather(*tasks)
    assert order == ["g0", "p0", "g1", "g2", "g3"]  # p0 waited for the running call only
    assert limiter.active == 0


async def test_a_cancelled_waiter_takes_nothing_and_blocks_nobody() -> None:
    limiter = FairLimiter(1)
    release = asyncio.Event()

    async def hold() -> None:
        async with limiter.slot("a"):
            await release.wait()

    holder = asyncio.ensure_future(hold())
    await asyncio.sleep(0)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            async with limiter.slot("b"):
                raise AssertionError("got a slot that was taken")
    assert limiter.waiting == 0
    release.set()
    await holder
    async with limiter.slot("c"):
        assert limiter.active == 1
    assert limiter.active == 0


# --- against real servers -----------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_no_more_than_the_limit_run_at_once(transport: str, protocol: str) -> None:
    async def check(config: dict[str, Any]) -> None:
        async with MCPPool({"demo": {**config, "protocol": protocol, "max_concurrent_calls": 2}}) as pool:
            tools = await tools_by_name(pool)
            results = await asyncio.gather(
                *(call(tools["gauge"], {"tag": f"t{i}", "seconds": 0.1}, f"c{i}") for i in range(6))
            )
            assert [m.content for m in results] == [f"t{i}" for i in range(6)]
            report = json_content(await call(tools["gauge_report"], {}, "r"))
            assert report["peak"] == 2

    if transport == "stdio":
        await check(stdio_params("demo"))
    else:
        async with serve_in_loop(demo.build_server(counters=demo.Counters())) as url:
            await check({"url": url})


async def test_one_graph_cannot_starve_another() -> None:
    """Limit 1: a graph thread fires six calls; another thread's single call, made while the first
    of them runs, is the next to start, not the seventh."""
    config = {**stdio_params("demo"), "max_concurrent_calls": 1}
    async with MCPToolNode({"demo": config}) as node:
        graph = tool_graph(node)
        await node.start()
        limiter = node.pool.connection("demo").scope().limiter
        assert limiter is not None
        greedy_calls = [("gauge", {"tag": f"g{i}", "seconds": 0.2}, f"g{i}") for i in range(6)]
        greedy = asyncio.ensure_future(graph.ainvoke({"messages": [ai(*greedy_calls)]}, thread("greedy")))
        await until(lambda: limiter.waiting == 5)
        polite = await graph.ainvoke(
            {"messages": [ai(("gauge", {"tag": "p", "seconds": 0.0}, "p"))]}, thread("polite")
        )
        assert polite["messages"][-1].content == "p"
        out = await greedy
        assert [m.content for m in out["messages"] if isinstance(m, ToolMessage)] == [
            f"g{i}" for i in range(6)
        ]
        tools = await tools_by_name(node.pool)
        started = json_content(await call(tools["gauge_report"], {}, "r"))["started"]
        assert started[:2] == ["g0", "p"], started


async def test_waiting_for_a_slot_counts_toward_the_timeout() -> None:
    config = {**stdio_params("demo"), "max_concurrent_calls": 1, "tool_timeouts": {"add": 0.3}}
    async with MCPPool({"demo": config}) as pool:
        tools = await tools_by_name(pool)
        long = asyncio.ensure_future(call(tools["gauge"], {"tag": "long", "seconds": 1.0}, "c1"))
        await until(lambda: pool.connection("demo").working() > 0)
        queued = await call(tools["add"], {"a": 1, "b": 2}, "c2")
        assert queued.status == "error"
        assert "timed out after 0.3s" in queued.content
        assert (await long).content == "long"
        assert (await call(tools["add"], {"a": 1, "b": 2}, "c3")).content == "3"


def test_limit_is_validated() -> None:
    with pytest.raises(MCPConfigError, match=r"'demo'.*max_concurrent_calls"):
        MCPPool({"demo": {"command": "x", "max_concurrent_calls": 0}})


async def test_calls_waiting_for_a_slot_when_the_session_dies_go_out_on_a_new_one() -> None:
    """Limit 1: the running call kills its server; the calls that were waiting for the slot were
    never sent, so they go out on the new session and succeed."""
    config = {**stdio_params("demo"), "max_concurrent_calls": 1}
    async with MCPPool({"demo": config}) as pool:
        tools = await tools_by_name(pool)
        limiter = pool.connection("demo").scope().limiter
        assert limiter is not None
        crash = asyncio.ensure_future(call(tools["exit_process"], {}, "crash"))
        waiting = [asyncio.ensure_future(call(tools["add"], {"a": i, "b": 1}, f"c{i}")) for i in range(3)]
        await until(lambda: limiter.waiting == 3 or crash.done())
        assert (await crash).status == "error"
        results = await asyncio.gather(*waiting)
        assert [(m.status, m.content) for m in results] == [("success", str(i + 1)) for i in range(3)]
        assert pool.connection("demo").connects == 2


async def test_a_call_waiting_for_a_person_gives_its_slot_to_its_siblings() -> None:
    """2025-11-25, limit 1: a call that asks a person gives its slot back, so the other call of the
    same model turn runs at once (it does not wait, until its timeout, for a person who is only
    asked once every call of the turn has settled)."""
    config = {**stdio_params("asker"), "protocol": "legacy", "max_concurrent_calls": 1, "timeout": 20.0}
    async with MCPToolNode({"asker": config}) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke(
            {"messages": [ai(("delete_item", {"item": "a"}, "c1"), ("stats", {}, "c2"))]}, thread()
        )
        (pending,) = out["__interrupt__"]
        done = {
            m.tool_call_id: m
            for m in (await graph.aget_state(thread())).values["messages"]
            if isinstance(m, ToolMessage)
        }
        assert "c2" not in done  # the node's update waits for every call
        yes = {r["key"]: accept({"ok": True}) for r in pending.value["requests"]}
        out = await graph.ainvoke(Command(resume={pending.id: {"responses": yes}}), thread())
        results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
        assert results["c1"].content == "deleted a ()"
        assert results["c2"].status == "success", results["c2"].content
