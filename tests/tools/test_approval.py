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
            middleware=[MCPMiddleware(pool, approval="destructive")],
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
