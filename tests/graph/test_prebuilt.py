"""``create_mcp_agent`` on its own, as a subgraph, and across processes; ``route_tool_calls``."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AnyMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command
from typing_extensions import TypedDict

from langgraph_mcp import MCPPool, MCPToolNode, create_mcp_agent, route_tool_calls
from tests.chat import ScriptModel
from tests.conftest_servers import stdio_params
from tests.helpers import ai, run_script, thread
from tests.servers import shopfront
from tests.tiers import STDIO_ERAS

RUNNER = Path(__file__).parent.parent / "agent_runner.py"


class Parent(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    summary: str


def results(messages: list[AnyMessage]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_the_agent_as_a_subgraph_interrupts_streams_and_resumes_through_the_parent(
    protocol: str,
) -> None:
    model = ScriptModel(turns=[[("delete_item", {"item": "a"}, "c1"), ("progress_work", {"steps": 2}, "c2")]])
    config = {"ask": {**stdio_params("asker"), "protocol": protocol}, "shop": stdio_params("shopfront")}
    async with MCPPool(config) as pool:
        agent = create_mcp_agent(model, pool, name="shopper")
        builder = StateGraph(Parent)
        builder.add_node("shopper", agent)
        builder.add_node("report", lambda s: {"summary": s["messages"][-1].text})
        builder.add_edge(START, "shopper")
        builder.add_edge("shopper", "report")
        builder.add_edge("report", END)
        parent = builder.compile(checkpointer=InMemorySaver())
        events: list[Any] = []
        interrupts: list[Any] = []
        async for namespace, mode, chunk in parent.astream(
            {"messages": [HumanMessage("go")]}, thread(), stream_mode=["custom", "updates"], subgraphs=True
        ):
            if mode == "custom":
                events.append(chunk)
            elif "__interrupt__" in chunk and namespace == ():  # as the parent reports it
                interrupts.extend(chunk["__interrupt__"])
        assert [i.value["tool_call_id"] for i in interrupts] == ["c1"]
        assert [e["progress"] for e in events if e["type"] == "mcp_progress"] == [1, 2]
        state = await parent.aget_state(thread())
        assert [i.value["type"] for i in state.interrupts] == ["mcp_elicitation"]
        request = interrupts[0].value["requests"][0]
        resume = {
            interrupts[0].id: {"responses": {request["key"]: {"action": "accept", "content": {"ok": True}}}}
        }
        out = await parent.ainvoke(Command(resume=resume), thread())
    got = results(out["messages"])
    assert got["c1"].text.startswith("deleted a") and got["c2"].text == "done 2"
    assert out["summary"].startswith("delete_item: deleted a")


@pytest.mark.slow  # two OS processes, each importing the package
@pytest.mark.parametrize("mode", ["async", "sync"])
def test_an_approval_is_answered_in_a_new_process(tmp_path: Path, mode: str) -> None:
    db = str(tmp_path / "agent.sqlite")

    def phase(*args: str) -> dict[str, Any]:
        return run_script(RUNNER, mode, *args)

    first = phase("start", db)
    assert sorted(i["tool_call_id"] for i in first["interrupts"]) == ["c1", "c3"]
    assert all(i["type"] == "tool_approval" for i in first["interrupts"])
    assert first["results"] == {"c2": ["success", "applepearplum"]}
    ids = first["ids"]
    resume = {
        ids["c1"]: {"type": "edit", "edited_action": {"name": "delete_item", "args": {"item": "X!"}}},
        ids["c3"]: {"type": "reject"},
    }
    second = phase("resume", db, json.dumps(resume))
    assert second["interrupts"] == []
    status, text = second["results"]["c1"]
    assert (
        status == "success" and text.startswith("Note: before this call ran") and text.endswith("deleted X!")
    )
    assert second["results"]["c3"][0] == "error" and "The tool was not executed" in second["results"]["c3"][1]
    assert second["results"]["c2"] == ["success", "applepearplum"]


@pytest.mark.slow  # two OS processes, each importing the package
@pytest.mark.parametrize("mode", ["async", "sync"])
def test_batched_approvals_are_answered_in_a_new_process(tmp_path: Path, mode: str) -> None:
    db = str(tmp_path / "agent.sqlite")

    def phase(*args: str) -> dict[str, Any]:
        return run_script(RUNNER, f"{mode}+batched", *args)

    first = phase("start", db)
    [asked] = first["interrupts"]
    assert asked["type"] == "tool_approvals"
    assert [a["tool_call_id"] for a in asked["approvals"]] == ["c1", "c3"]
    assert first["results"] == {}  # asked before any call of the turn ran
    decisions = [
        {"type": "edit", "edited_action": {"name": "delete_item", "args": {"item": "X!"}}},
        {"type": "reject"},
    ]
    second = phase("resume", db, json.dumps({"decisions": decisions}))
    assert second["interrupts"] == []
    status, text = second["results"]["c1"]
    assert status == "success" and text.startswith("Note: before this call ran")
    assert text.endswith("deleted X!")
    assert second["results"]["c3"][0] == "error" and "The tool was not executed" in second["results"]["c3"][1]
    assert second["results"]["c2"] == ["success", "applepearplum"]


async def test_route_tool_calls_sends_each_call_to_its_own_task() -> None:
    class State(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]

    async with MCPPool({"ask": stdio_params("asker"), "shop": {"server": shopfront.build_server()}}) as pool:
        builder = StateGraph(State)
        builder.add_node("model", lambda s: {})
        builder.add_node("tools", MCPToolNode(pool))
        builder.add_edge(START, "model")
        builder.add_conditional_edges("model", route_tool_calls(), ["tools", END])
        builder.add_edge("tools", END)
        graph = builder.compile(checkpointer=InMemorySaver())
        calls = ai(
            ("delete_item", {"item": "a"}, "c1"),
            ("delete_item", {"item": "b"}, "c2"),
            ("list_items", {}, "c3"),
        )
        out = await graph.ainvoke({"messages": [calls]}, thread())
        assert sorted(i.value["tool_call_id"] for i in out["__interrupt__"]) == ["c1", "c2"]
        assert set(results(out["messages"])) == {"c3"}
        resume = {
            i.id: {
                "responses": {
                    r["key"]: {"action": "accept", "content": {"ok": True}} for r in i.value["requests"]
                }
            }
            for i in out["__interrupt__"]
        }
        out = await graph.ainvoke(Command(resume=resume), thread())
    got = results(out["messages"])
    assert got["c1"].text.startswith("deleted a") and got["c2"].text.startswith("deleted b")
    assert route_tool_calls()({"messages": [HumanMessage("hi")]}) == END
    assert route_tool_calls()({"messages": out["messages"]}) == END


@pytest.mark.slow  # a server process per conversation
async def test_each_conversation_gets_its_own_session_of_a_stateful_server(pid_dir: Path) -> None:
    from tests.helpers import pid_alive, spawned_pids

    server = {
        **stdio_params("stateful", env={"DEMO_PID_DIR": str(pid_dir)}),
        "session_scope": "thread",
        "max_thread_sessions": 2,
    }

    def say(item: str) -> dict[str, Any]:
        return {"messages": [HumanMessage(f"remember {json.dumps({'item': item})}")]}

    from graphs.scripted import scripted_model

    async with MCPPool({"mem": server}) as pool:
        agent = create_mcp_agent(scripted_model(), pool, checkpointer=InMemorySaver())

        async def turn(thread_id: str, item: str) -> list[str]:
            out = await agent.ainvoke(say(item), thread(thread_id))
            return list(out["messages"][-2].artifact["structured_content"]["result"])

        assert await turn("ann", "tea") == ["tea"]
        assert await turn("bob", "coffee") == ["coffee"]
        assert await turn("ann", "cake") == ["tea", "cake"]  # ann's session kept its state
        assert await turn("bob", "milk") == ["coffee", "milk"]
        assert pool.thread_sessions("mem") == ["ann", "bob"]
        # One process for listing the tools, one per conversation.
        assert len([p for p in spawned_pids(pid_dir) if pid_alive(p)]) == 3
        assert await turn("cid", "jam") == ["jam"]  # a third conversation evicts ann's session
        assert pool.thread_sessions("mem") == ["bob", "cid"]
        for _ in range(200):
            if len([p for p in spawned_pids(pid_dir) if pid_alive(p)]) == 3:
                break
            await asyncio.sleep(0.05)
        assert len([p for p in spawned_pids(pid_dir) if pid_alive(p)]) == 3
        assert await turn("ann", "soup") == ["soup"]  # a fresh session: the old state is gone
    assert not any(pid_alive(p) for p in spawned_pids(pid_dir))


@pytest.mark.slow  # a server process per conversation and a restart
async def test_a_conversations_server_that_dies_comes_back_with_fresh_state(pid_dir: Path) -> None:
    from graphs.scripted import scripted_model

    server = {**stdio_params("stateful", env={"DEMO_PID_DIR": str(pid_dir)}), "session_scope": "thread"}
    async with MCPPool({"mem": server}) as pool:
        agent = create_mcp_agent(scripted_model(), pool, checkpointer=InMemorySaver())

        async def turn(thread_id: str, line: str) -> Any:
            out = await agent.ainvoke({"messages": [HumanMessage(line)]}, thread(thread_id))
            return out["messages"][-2]

        first = await turn("ann", 'remember {"item": "tea"}')
        assert first.artifact["structured_content"]["result"] == ["tea"]
        own = (await turn("ann", "pid")).artifact["structured_content"]["result"]
        os.kill(own, signal.SIGKILL)  # ann's own server process dies between turns
        again = await turn("ann", 'remember {"item": "cake"}')
        if again.status == "error":
            # The call raced the death (sent before the session saw it go): its outcome is
            # unknown, and it says so; the next call starts the server again.
            assert "connection was lost" in again.text, again.text
            again = await turn("ann", 'remember {"item": "cake"}')
        assert again.artifact["structured_content"]["result"] == ["cake"]  # a new process
        assert (await turn("ann", "pid")).artifact["structured_content"]["result"] != own
        other = await turn("bob", 'remember {"item": "jam"}')
        assert other.artifact["structured_content"]["result"] == ["jam"]
