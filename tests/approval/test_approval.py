"""A resume value is only an answer to a question that was asked: a ``Command(resume=...)`` sent
to a thread with no pending question (a static breakpoint, a failed run) must not approve the
next destructive call, nor answer the next question a server asks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command

from langgraph_mcp import MCPMiddleware, MCPPool, MCPToolNode
from tests.chat import ScriptModel
from tests.conftest_servers import stdio_params
from tests.helpers import ai, thread, tool_results
from tests.servers import shopfront
from tests.tiers import STDIO_ERAS

APPROVE = {"type": "approve"}


def shop() -> dict[str, Any]:
    return {"shop": {"server": shopfront.build_server()}}


def paused_before_tools(node: MCPToolNode) -> Any:
    """``START -> tools`` with a static breakpoint before ``tools``: a paused run with no question."""
    builder = StateGraph(MessagesState)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    return builder.compile(checkpointer=InMemorySaver(), interrupt_before=["tools"])


async def test_a_resume_sent_with_no_question_pending_does_not_approve_the_next_call() -> None:
    async with MCPToolNode(shop(), approval="destructive") as node:
        graph = paused_before_tools(node)
        out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "x"}, "c1"))]}, thread())
        assert "__interrupt__" not in out and (await graph.aget_state(thread())).next == ("tools",)
        out = await graph.ainvoke(Command(resume=APPROVE), thread())
        assert tool_results(out) == {}  # nothing was deleted
        [question] = out["__interrupt__"]
        assert question.value["type"] == "tool_approval" and question.value["tool_call_id"] == "c1"
        # The person answers the question now shown: that is the approval.
        out = await graph.ainvoke(Command(resume=APPROVE), thread())
    assert tool_results(out) == {"c1": "deleted x"}


def test_the_same_holds_in_a_synchronous_run() -> None:
    node = MCPToolNode(shop(), approval="destructive")
    try:
        graph = paused_before_tools(node)
        graph.invoke({"messages": [ai(("delete_item", {"item": "x"}, "c1"))]}, thread())
        out = graph.invoke(Command(resume=APPROVE), thread())
        assert tool_results(out) == {}
        assert out["__interrupt__"][0].value["type"] == "tool_approval"
        out = graph.invoke(Command(resume=APPROVE), thread())
        assert tool_results(out) == {"c1": "deleted x"}
    finally:
        node.close()


async def test_an_agent_paused_before_its_tools_still_asks() -> None:
    """``create_agent`` with ``MCPMiddleware(approval=...)`` and a breakpoint before its tools."""
    model = ScriptModel(turns=[[("delete_item", {"item": "x"}, "c1")], "done"])
    async with MCPPool(shop()) as pool:
        agent = create_agent(
            model,
            middleware=[MCPMiddleware(pool, approval="destructive", approval_mode="per_call")],
            checkpointer=InMemorySaver(),
            interrupt_before=["tools"],
        )
        out = await agent.ainvoke({"messages": [("user", "delete x")]}, thread())
        out = await agent.ainvoke(Command(resume={"decisions": [APPROVE]}), thread())
        assert not [m for m in out["messages"] if isinstance(m, ToolMessage)]
        assert out["__interrupt__"][0].value["name"] == "delete_item"
        out = await agent.ainvoke(Command(resume={"decisions": [APPROVE]}), thread())
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.content for m in results] == ["deleted x"]


@pytest.mark.parametrize("protocol", STDIO_ERAS)
@pytest.mark.parametrize(
    "stray",
    [
        {"responses": {"confirm": {"action": "accept", "content": {"ok": True}}}},
        {"action": "accept"},
        APPROVE,
    ],
    ids=["elicitation-shaped", "sampling-shaped", "approval-shaped"],
)
async def test_a_resume_sent_with_no_question_pending_does_not_answer_a_server_question(
    stray: dict[str, Any], protocol: str
) -> None:
    """The same for a server's question (a 2026-07-28 round, or a held 2025-11-25 request): it is
    asked, not answered (nor refused as a bad answer) by a value sent before it existed."""
    async with MCPToolNode({"shop": {**stdio_params("shopfront"), "protocol": protocol}}) as node:
        graph = paused_before_tools(node)
        await graph.ainvoke({"messages": [ai(("confirm_info", {"item": "x"}, "c1"))]}, thread())
        out = await graph.ainvoke(Command(resume=stray), thread())
        assert tool_results(out) == {}
        [question] = out["__interrupt__"]
        assert question.value["type"] == "mcp_elicitation"
        [request] = question.value["requests"]
        assert request["message"] == "Confirm x?"
        answer = {"action": "accept", "content": {"ok": False}}
        out = await graph.ainvoke(Command(resume={"responses": {request["key"]: answer}}), thread())
    assert json.loads(tool_results(out)["c1"])["ok"] is False


# -- a person's decision outlives the policy that asked for it ------------------------------------


REJECT = {"type": "reject", "message": "not these"}


def shop_graph(node: MCPToolNode, saver: InMemorySaver) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("mode", ["per_call", "batched"])
async def test_a_recorded_reject_is_honoured_where_the_approval_policy_was_removed(mode: str) -> None:
    """The person rejected both calls; the resume reaches a process whose node no longer asks
    for approval (its configuration changed in a deploy): neither call runs."""
    saver = InMemorySaver()
    turn = ai(("delete_item", {"item": "x"}, "c1"), ("delete_item", {"item": "y"}, "c2"))
    async with MCPToolNode(shop(), approval="destructive", approval_mode=mode) as asking:  # type: ignore[arg-type]
        out = await shop_graph(asking, saver).ainvoke({"messages": [turn]}, thread())
    questions = out["__interrupt__"]
    if mode == "per_call":
        assert sorted(q.value["tool_call_id"] for q in questions) == ["c1", "c2"]
        resume: Any = {q.id: REJECT for q in questions}
    else:
        [question] = questions
        assert [r["args"] for r in question.value["action_requests"]] == [{"item": "x"}, {"item": "y"}]
        resume = {"decisions": [REJECT, REJECT]}
    async with MCPToolNode(shop()) as unasking:  # the new process: no approval configured
        out = await shop_graph(unasking, saver).ainvoke(Command(resume=resume), thread())
    results = tool_results(out)
    assert set(results) == {"c1", "c2"}
    assert all("rejected" in text and "deleted" not in text for text in results.values()), results
    assert "__interrupt__" not in out


async def test_an_approval_recorded_before_the_policy_was_removed_runs_the_call() -> None:
    saver = InMemorySaver()
    async with MCPToolNode(shop(), approval="destructive") as asking:
        out = await shop_graph(asking, saver).ainvoke(
            {"messages": [ai(("delete_item", {"item": "x"}, "c1"))]}, thread()
        )
    assert out["__interrupt__"]
    async with MCPToolNode(shop()) as unasking:
        out = await shop_graph(unasking, saver).ainvoke(Command(resume=APPROVE), thread())
    assert tool_results(out) == {"c1": "deleted x"}


@pytest.mark.parametrize("mode", ["per_call", "batched"])
async def test_an_agent_resumed_without_its_approval_policy_honours_the_reject(mode: str) -> None:
    """``create_agent`` with ``MCPMiddleware``: the same, the resume reaching an agent built
    without ``approval``."""
    saver = InMemorySaver()
    turns: Any = [[("delete_item", {"item": "x"}, "c1"), ("delete_item", {"item": "y"}, "c2")], "done"]
    async with MCPPool(shop()) as pool:
        asking = MCPMiddleware(pool, approval="destructive", approval_mode=mode)  # type: ignore[arg-type]
        agent = create_agent(ScriptModel(turns=turns), middleware=[asking], checkpointer=saver)
        out = await agent.ainvoke({"messages": [("user", "delete x and y")]}, thread())
        questions = out["__interrupt__"]
        resume: Any = (
            {q.id: REJECT for q in questions} if mode == "per_call" else {"decisions": [REJECT, REJECT]}
        )
        unasking = create_agent(
            ScriptModel(turns=turns),
            middleware=[MCPMiddleware(pool, approval_mode="per_call")],
            checkpointer=saver,
        )
        out = await unasking.ainvoke(Command(resume=resume), thread())
    results = {m.tool_call_id: m.text for m in out["messages"] if isinstance(m, ToolMessage)}
    if mode == "per_call":
        assert set(results) == {"c1", "c2"}
        assert all("rejected" in text and "deleted" not in text for text in results.values()), results
    else:
        # The question was asked by the batched mode's own step, which an agent built without
        # it does not have: LangGraph cannot resume that step, the run ends there, and no call
        # runs (the model's calls stay unanswered).
        assert results == {}
