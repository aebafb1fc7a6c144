"""``MCPMiddleware`` in ``create_agent``: tools without import-time I/O, elicitation interrupts
(parallel too), progress events, errors, and composition with langchain's own middleware."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import (
    HumanInTheLoopMiddleware,
    ToolCallLimitMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_mcp import FromContext, MCPMiddleware, MCPPool, MCPToolCallError, ToolOptions, create_mcp_agent
from tests.chat import ScriptModel
from tests.conftest_servers import stdio_params
from tests.helpers import thread
from tests.servers import shopfront
from tests.tiers import STDIO_ERAS


@dataclass
class Ctx:
    user_id: str = "alice"
    role: str = "guest"


def results(out: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}


def accept_all(interrupts: Any, content: dict[str, Any]) -> dict[str, Any]:
    return {
        i.id: {"responses": {r["key"]: {"action": "accept", "content": content} for r in i.value["requests"]}}
        for i in interrupts
    }


async def test_building_the_agent_does_no_io_and_the_model_sees_the_mcp_tools(pid_dir: Path) -> None:
    config = {"shop": stdio_params("shopfront", env={"DEMO_PID_DIR": str(pid_dir)})}
    mcp = MCPMiddleware(
        config, server_options={"shop": ToolOptions(hidden={"user_id": FromContext("user_id")})}
    )
    model = ScriptModel(turns=[[("whoami", {"note": "hi"}, "c1")]])
    agent = create_agent(model, middleware=[mcp], checkpointer=InMemorySaver(), context_schema=Ctx)
    assert list(pid_dir.iterdir()) == []  # nothing started yet
    try:
        out = await agent.ainvoke({"messages": [("user", "who am I?")]}, thread(), context=Ctx())
    finally:
        await mcp.aclose()
    assert "whoami" in model.seen[0] and "user_id" not in model.seen[0]["whoami"]["properties"]
    assert results(out)["c1"].content == '{\n  "user_id": "alice",\n  "note": "hi"\n}'
    assert out["messages"][-1].content.startswith("whoami:")


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_parallel_questions_surface_together_and_progress_streams(protocol: str) -> None:
    config = {"ask": {**stdio_params("asker"), "protocol": protocol}, "shop": stdio_params("shopfront")}
    model = ScriptModel(
        turns=[
            [
                ("delete_item", {"item": "a"}, "c1"),
                ("delete_item", {"item": "b"}, "c2"),
                ("progress_work", {"steps": 3}, "c3"),
            ]
        ]
    )
    async with MCPPool(config) as pool:
        agent = create_agent(model, middleware=[MCPMiddleware(pool)], checkpointer=InMemorySaver())
        events: list[Any] = []
        interrupts: list[Any] = []
        async for mode, chunk in agent.astream(
            {"messages": [("user", "go")]}, thread(), stream_mode=["custom", "updates"]
        ):
            if mode == "custom":
                events.append(chunk)
            elif "__interrupt__" in chunk:
                interrupts.extend(chunk["__interrupt__"])
        asked = sorted(i.value["tool_call_id"] for i in interrupts)
        assert asked == ["c1", "c2"]
        assert all(i.value["type"] == "mcp_elicitation" for i in interrupts)
        progress = [e for e in events if e["type"] == "mcp_progress"]
        assert [e["progress"] for e in progress] == [1, 2, 3]
        assert {e["tool_call_id"] for e in progress} == {"c3"}
        resume = accept_all(interrupts, {"ok": True})
        resume[next(i.id for i in interrupts if i.value["tool_call_id"] == "c2")] = {
            "responses": {
                r["key"]: {"action": "decline"}
                for r in next(i for i in interrupts if i.value["tool_call_id"] == "c2").value["requests"]
            }
        }
        out = await agent.ainvoke(Command(resume=resume), thread())
    got = results(out)
    assert got["c1"].content.startswith("deleted a")
    assert "not deleted" in got["c2"].content or "declined" in got["c2"].content
    assert got["c3"].content == "done 3"


async def test_human_in_the_loop_middleware_gates_an_mcp_tool() -> None:
    model = ScriptModel(turns=[[("delete_item", {"item": "a"}, "c1"), ("list_items", {}, "c2")]])
    hitl = HumanInTheLoopMiddleware(interrupt_on={"delete_item": True})
    async with MCPPool({"shop": {"server": shopfront.build_server()}}) as pool:
        agent = create_agent(model, middleware=[hitl, MCPMiddleware(pool)], checkpointer=InMemorySaver())
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread())
        request = out["__interrupt__"][0].value
        assert [a["name"] for a in request["action_requests"]] == ["delete_item"]
        out = await agent.ainvoke(
            Command(resume={"decisions": [{"type": "reject", "message": "no"}]}), thread()
        )
    got = results(out)
    assert got["c1"].status == "error" and "no" in got["c1"].content
    assert "apple" in str(got["c2"].content)


async def test_mcp_approval_speaks_the_hitl_per_call_format() -> None:
    model = ScriptModel(turns=[[("delete_item", {"item": "x"}, "c1")], "ok"])
    async with MCPPool({"shop": {"server": shopfront.build_server()}}) as pool:
        agent = create_agent(
            model,
            middleware=[MCPMiddleware(pool, approval="destructive", approval_mode="per_call")],
            checkpointer=InMemorySaver(),
        )
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread())
        value = out["__interrupt__"][0].value
        assert {k: value[k] for k in ("type", "tool_call_id", "name", "args")} == {
            "type": "tool_approval",
            "tool_call_id": "c1",
            "name": "delete_item",
            "args": {"item": "x"},
        }
        out = await agent.ainvoke(Command(resume={"type": "approve"}), thread())
    assert results(out)["c1"].content == "deleted x"


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_batched_mcp_approvals_are_one_hitl_request_after_the_model(sync: bool) -> None:
    turn = [
        ("delete_item", {"item": "a"}, "c1"),
        ("list_items", {}, "c2"),
        ("delete_item", {"item": "b"}, "c3"),
    ]
    model = ScriptModel(turns=[turn, "ok"])
    async with MCPPool({"shop": {"server": shopfront.build_server()}}) as pool:
        mcp = MCPMiddleware(pool, approval="destructive", approval_mode="batched")
        assert type(mcp).__name__ == "MCPMiddleware" and isinstance(mcp, MCPMiddleware)
        agent = create_agent(model, middleware=[mcp], checkpointer=InMemorySaver())

        async def run(value: Any) -> dict[str, Any]:
            if sync:
                return dict(await asyncio.to_thread(agent.invoke, value, thread()))
            return dict(await agent.ainvoke(value, thread()))

        out = await run({"messages": [("user", "go")]})
        [pending] = out["__interrupt__"]
        assert pending.value["type"] == "tool_approvals"
        assert [(a["name"], a["args"]) for a in pending.value["action_requests"]] == [
            ("delete_item", {"item": "a"}),
            ("delete_item", {"item": "b"}),
        ]
        assert results(out) == {}  # nothing of the turn ran yet
        decisions = [{"type": "approve"}, {"type": "edit", "edited_action": {"args": {"item": "B"}}}]
        out = await run(Command(resume={"decisions": decisions}))
        assert "__interrupt__" not in out
        assert "mcp_approval_decisions" not in out  # private state
    got = results(out)
    assert got["c1"].content == "deleted a"
    assert got["c3"].content.endswith("deleted B") and "changed its arguments" in got["c3"].content
    assert "apple" in str(got["c2"].content)


async def test_a_batch_resumed_by_a_new_agent_never_asks_about_the_agents_own_tools() -> None:
    """The agent's own ``list_items`` hides the MCP tool of that name. Resumed by a new agent
    object (as in a new process: no model call has listed the tools yet), the batch is the same
    two MCP calls, so the person's answer is taken, not asked again with a third question."""

    def list_items() -> str:
        """The agent's own list."""
        return "local list"

    turn = [
        ("list_items", {}, "c1"),
        ("delete_item", {"item": "a"}, "c2"),
        ("delete_item", {"item": "b"}, "c3"),
    ]
    saver = InMemorySaver()
    async with MCPPool({"shop": {"server": shopfront.build_server()}}) as pool:

        def agent() -> Any:
            model = ScriptModel(turns=[turn, "ok"])
            return create_mcp_agent(
                model, pool, tools=[list_items], approval=True, approval_mode="batched", checkpointer=saver
            )

        out = await agent().ainvoke({"messages": [("user", "go")]}, thread())
        [pending] = out["__interrupt__"]
        assert [a["tool_call_id"] for a in pending.value["approvals"]] == ["c2", "c3"]
        resumed = agent()
        assert resumed.mcp.agent_tools == {"list_items"}
        out = await resumed.ainvoke(Command(resume={"decisions": [{"type": "approve"}] * 2}), thread())
    assert "__interrupt__" not in out
    got = results(out)
    assert (got["c1"].content, got["c2"].content, got["c3"].content) == (
        "local list",
        "deleted a",
        "deleted b",
    )


async def test_batched_mode_asks_a_lone_approval_as_its_call_does() -> None:
    model = ScriptModel(turns=[[("delete_item", {"item": "x"}, "c1"), ("list_items", {}, "c2")], "ok"])
    async with MCPPool({"shop": {"server": shopfront.build_server()}}) as pool:
        mcp = MCPMiddleware(pool, approval="destructive", approval_mode="batched")
        agent = create_agent(model, middleware=[mcp], checkpointer=InMemorySaver())
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread())
        assert [i.value["type"] for i in out["__interrupt__"]] == ["tool_approval"]
        out = await agent.ainvoke(Command(resume={"type": "approve"}), thread())
    assert results(out)["c1"].content == "deleted x"


async def test_tool_retry_middleware_retries_a_lost_connection(tmp_path: Path) -> None:
    marker = tmp_path / "crashed"
    model = ScriptModel(turns=[[("flaky", {"marker": str(marker)}, "c1")]])
    retry = ToolRetryMiddleware(max_retries=2, retry_on=(MCPToolCallError,), initial_delay=0.05, jitter=False)
    async with MCPPool({"shop": stdio_params("shopfront")}) as pool:
        mcp = MCPMiddleware(pool, raise_errors=("connection",))
        agent = create_agent(model, middleware=[retry, mcp], checkpointer=InMemorySaver())
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread())
        assert marker.exists()
        assert results(out)["c1"].content == "steady"
        # Without raise_errors the lost connection is the call's (error) result, as in ToolNode.
        marker.unlink()
        plain = create_agent(
            model, middleware=[retry, MCPMiddleware(pool, name="plain")], checkpointer=InMemorySaver()
        )
        out = await plain.ainvoke({"messages": [("user", "go")]}, thread("2"))
    message = results(out)["c1"]
    assert message.status == "error" and "connection" in message.content


async def test_tool_call_limit_middleware_counts_mcp_calls() -> None:
    model = ScriptModel(
        turns=[[("list_items", {}, "c1"), ("list_items", {}, "c2"), ("list_items", {}, "c3")]]
    )
    limit = ToolCallLimitMiddleware(tool_name="list_items", run_limit=2, exit_behavior="continue")
    async with MCPPool({"shop": {"server": shopfront.build_server()}}) as pool:
        agent = create_agent(model, middleware=[limit, MCPMiddleware(pool)], checkpointer=InMemorySaver())
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread())
    statuses = sorted(m.status for m in results(out).values())
    assert statuses == ["error", "success", "success"]


async def test_tool_filter_applies_to_the_model_and_to_calls() -> None:
    def by_role(tool: Any, context: Any) -> bool:
        return context.role == "admin" or tool.metadata["mcp"].get("annotations", {}).get(
            "readOnlyHint", False
        )

    # delete_item is filtered out for a guest: the model is scripted to call it all the same.
    model = ScriptModel(
        turns=[[("delete_item", {"item": "a"}, "c1"), ("whoami", {"user_id": "u"}, "c2")]], unbound="call"
    )
    async with MCPPool({"shop": {"server": shopfront.build_server()}}) as pool:
        agent = create_agent(
            model,
            middleware=[MCPMiddleware(pool, tool_filter=by_role)],
            checkpointer=InMemorySaver(),
            context_schema=Ctx,
        )
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread(), context=Ctx(role="guest"))
        assert set(model.seen[-2]) == {"whoami", "list_items"}
        got = results(out)
        assert got["c1"].status == "error" and "not a valid tool" in got["c1"].content
        assert got["c2"].status == "success"
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread("admin"), context=Ctx(role="admin"))
        assert "delete_item" in model.seen[-2]
        assert results(out)["c1"].content == "deleted a"


def test_sync_invoke_of_an_agent_matches_ainvoke() -> None:
    import asyncio

    config = {"shop": stdio_params("shopfront")}
    turns = [[("add_to_cart", {"user_id": "s", "item": "a"}, "c1"), ("list_items", {}, "c2")]]
    mcp = MCPMiddleware(config)
    agent = create_agent(ScriptModel(turns=turns), middleware=[mcp], checkpointer=InMemorySaver())
    try:
        sync_out = agent.invoke({"messages": [("user", "go")]}, thread())
        async_mcp = MCPMiddleware(config, name="async")
        async_agent = create_agent(
            ScriptModel(turns=turns), middleware=[async_mcp], checkpointer=InMemorySaver()
        )

        async def run() -> Any:
            try:
                return await async_agent.ainvoke({"messages": [("user", "go")]}, thread())
            finally:
                await async_mcp.aclose()

        async_out = asyncio.run(run())
    finally:
        mcp.close()
    assert [m.content for m in sync_out["messages"][1:]] == [m.content for m in async_out["messages"][1:]]
    assert results(sync_out)["c1"].artifact["structured_content"] == {"items": ["a"], "count": 1}


async def test_summarization_keeps_the_mcp_tools_working_across_turns() -> None:
    from langchain.agents.middleware import SummarizationMiddleware

    summarizer = ScriptModel(turns=["summary of the talk so far"])
    model = ScriptModel(
        turns=[[("list_items", {}, "c1")], "first", [("whoami", {"user_id": "z"}, "c2")], "second"],
        turn_by="calls",
    )
    summarize = SummarizationMiddleware(summarizer, trigger=("messages", 4), keep=("messages", 2))
    async with MCPPool({"shop": {"server": shopfront.build_server()}}) as pool:
        agent = create_agent(model, middleware=[summarize, MCPMiddleware(pool)], checkpointer=InMemorySaver())
        await agent.ainvoke({"messages": [("user", "one")]}, thread())
        out = await agent.ainvoke({"messages": [("user", "two")]}, thread())
    texts = [m.text for m in out["messages"]]
    assert any("summary of the talk so far" in t for t in texts)  # the history was summarised
    assert "whoami" in model.seen[-1]  # the MCP tools are still offered after it
    assert results(out)["c2"].content == '{\n  "user_id": "z",\n  "note": ""\n}'


async def test_a_retried_call_is_approved_once(tmp_path: Path) -> None:
    marker = tmp_path / "crashed"
    model = ScriptModel(turns=[[("flaky", {"marker": str(marker)}, "c1")]])
    retry = ToolRetryMiddleware(max_retries=2, retry_on=(MCPToolCallError,), initial_delay=0.05, jitter=False)
    async with MCPPool({"shop": stdio_params("shopfront")}) as pool:
        mcp = MCPMiddleware(pool, approval=["flaky"], approval_mode="per_call", raise_errors=("connection",))
        agent = create_agent(model, middleware=[mcp, retry], checkpointer=InMemorySaver())
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread())
        assert [i.value["type"] for i in out["__interrupt__"]] == ["tool_approval"]
        out = await agent.ainvoke(Command(resume={"type": "approve"}), thread())
    assert "__interrupt__" not in out  # the retry after the crash was not asked about again
    assert marker.exists() and results(out)["c1"].content == "steady"


async def test_a_call_over_its_time_limit_is_an_error_message_and_the_agent_goes_on() -> None:
    from tests.servers import demo

    model = ScriptModel(turns=[[("sleep", {"seconds": 5}, "c1"), ("add", {"a": 1, "b": 2}, "c2")]])
    demo_server = {"server": demo.build_server(counters=demo.Counters()), "tool_timeouts": {"sleep": 0.3}}
    async with MCPPool({"demo": demo_server}) as pool:
        agent = create_agent(model, middleware=[MCPMiddleware(pool)], checkpointer=InMemorySaver())
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread())
    got = results(out)
    assert got["c1"].status == "error" and "timed out after 0.3s" in got["c1"].content
    assert got["c2"].content == "3"
    assert out["messages"][-1].text.startswith("sleep: MCP tool 'sleep'")


async def test_a_server_down_at_the_first_turn_joins_the_agent_once_it_is_up() -> None:
    from tests.conftest_servers import serve_in_loop
    from tests.helpers import free_port
    from tests.servers import other

    port = free_port()
    config = {"shop": {"server": shopfront.build_server()}, "late": f"http://127.0.0.1:{port}/mcp"}
    # The model calls echo before its server is up (so before it was offered): an error result.
    model = ScriptModel(turns=[[("echo", {"text": "hi"}, "c1")]], unbound="call")
    async with MCPMiddleware(config, on_connection_error="warn") as mcp:
        agent = create_agent(model, middleware=[mcp], checkpointer=InMemorySaver())
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread("down"))
        assert "echo" not in model.seen[-2]
        assert "'late' could not be reached" in results(out)["c1"].content
        async with serve_in_loop(other.build_server(), port=port):
            # Connects are retried after a back-off (1 s, doubling): a later turn sees the server.
            # (Turns until then fail at once; on a busy machine a retry may fail too and the next
            # comes 2 then 4 s later, so the turns are bounded by time, not by count.)
            deadline = asyncio.get_running_loop().time() + 30
            attempt = 0
            while True:
                out = await agent.ainvoke({"messages": [("user", "go")]}, thread(f"up{attempt}"))
                # The server may come up between the model's turn and the tool call: that turn's
                # model did not see it, so wait for a turn where both happened after it was up.
                seen_echo = "echo" in model.seen[-2]
                if (seen_echo and results(out)["c1"].content == "other:hi") or (
                    asyncio.get_running_loop().time() > deadline
                ):
                    break
                attempt += 1
                await asyncio.sleep(0.1)
    assert "echo" in model.seen[-2]
    assert results(out)["c1"].content == "other:hi"
