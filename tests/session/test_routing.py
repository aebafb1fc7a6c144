"""Which call a server's request belongs to, and what that costs concurrency.

Over stdio (and the old SSE transport) a 2025-11-25 server's question carries nothing that ties
it to the call that asked it. Calls are held one at a time only where that is needed to tie a
question to its call: calls of tools that never asked anything run in parallel, and the time a
call spends waiting for its turn counts against its timeout.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.types import Command

from langgraph_mcp import MCPPool, MCPToolNode
from langgraph_mcp.elicitation import accept
from tests.conftest_servers import stdio_params
from tests.helpers import ai, call, thread, tool_graph, tool_results, tools_by_name

LEGACY_DEMO = {**stdio_params("demo"), "protocol": "legacy"}


async def test_calls_to_tools_that_never_ask_run_in_parallel() -> None:
    # Default policy (interrupt): the server may ask, but these tools never have.
    async with MCPPool({"demo": LEGACY_DEMO}) as pool:
        tools = await tools_by_name(pool)
        results = await asyncio.gather(
            *(call(tools["rendezvous"], {"n": 4, "wait": 10}, f"c{i}") for i in range(4))
        )
        assert [r.content for r in results] == ["met 4"] * 4


async def test_hung_calls_time_out_together_and_a_bystander_is_not_held_up() -> None:
    async with MCPPool({"demo": {**LEGACY_DEMO, "tool_timeouts": {"hang": 2.0}}}) as pool:
        tools = await tools_by_name(pool)
        loop = asyncio.get_running_loop()
        started = loop.time()
        hung = [asyncio.ensure_future(call(tools["hang"], {}, f"h{i}")) for i in range(4)]
        bystander = await call(tools["add"], {"a": 1, "b": 2}, "b1")
        assert bystander.content == "3"
        assert not any(h.done() for h in hung)  # the bystander did not wait for them
        messages = await asyncio.gather(*hung)
        elapsed = loop.time() - started
        assert all(m.status == "error" and "timed out after 2s" in m.content for m in messages)
        assert elapsed < 3 * 2.0, elapsed  # together, not one after the other (2, 4, 6, 8 s)


@pytest.mark.slow  # seconds of real time queued
async def test_time_queued_behind_an_asking_call_counts_against_the_timeout() -> None:
    """Once a tool has asked, its calls take turns with other asking calls (so each question can
    be tied to its call); a call that waits for its turn longer than its timeout fails with a
    timeout and is never sent."""
    server = {**stdio_params("asker", env={"ASKER_LOG": "/dev/null"}), "protocol": "legacy"}
    server["tool_timeouts"] = {"delete_item": 1.0}
    async with MCPToolNode({"asker": server}) as node:
        graph = tool_graph(node)
        # delete_item asks: from now on its calls take turns.
        out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "x"}, "c0"))]}, thread("t0"))
        out = await _answer(graph, out, "t0")
        assert tool_results(out) == {"c0": "deleted x ()"}
        # confirm_then_work asks, then works on the server for 4 s, holding its turn.
        first = ai(("confirm_then_work", {"item": "a", "seconds": 4.0}, "c1"))
        out = await graph.ainvoke({"messages": [first]}, thread("t1"))
        working = asyncio.ensure_future(_answer(graph, out, "t1"))
        await asyncio.sleep(0.5)  # the answer reaches the server, which starts working
        out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "b"}, "c2"))]}, thread("t2"))
        assert not working.done()
        message = out["messages"][-1]
        assert message.status == "error" and "timed out after 1s" in message.content, message.content
        assert tool_results(await working) == {"c1": "deleted a ()"}


async def _answer(graph: Any, out: dict[str, Any], name: str) -> dict[str, Any]:
    (pending,) = out["__interrupt__"]
    yes = {r["key"]: accept({"ok": True}) for r in pending.value["requests"]}
    return dict(await graph.ainvoke(Command(resume={pending.id: {"responses": yes}}), thread(name)))
