"""``approval_mode="batched"``: the calls of one turn that need approval are asked together in
one interrupt (langchain's ``HITLRequest`` shape), answered with one decision per call in order,
before any of them runs; each call then applies its own decision, checked against its own tool."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.types import Command

from langgraph_mcp import MCPConfigError, MCPToolNode
from langgraph_mcp.elicitation import accept, resume_elicitations
from langgraph_mcp.schemas import json_schema
from tests.helpers import ai, check, thread, tool_graph, tool_results
from tests.servers import asker, demo

TURN = (("add", {"a": 1, "b": 2}, "c1"), ("echo", {"text": "hi"}, "c2"), ("stats", {}, "c3"))


def servers(counters: demo.Counters) -> dict[str, Any]:
    return {"demo": {"server": demo.build_server(counters=counters)}}


def edit(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "edit", "edited_action": {"name": name, "args": args}}


async def run(graph: Any, value: Any, config: Any, sync: bool) -> dict[str, Any]:
    if sync:
        result: dict[str, Any] = await asyncio.to_thread(graph.invoke, value, config)
        return result
    out: dict[str, Any] = await graph.ainvoke(value, config)
    return out


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_two_approvals_of_a_turn_are_one_interrupt_answered_in_order(sync: bool) -> None:
    counters = demo.Counters()
    node = MCPToolNode(servers(counters), approval=["add", "echo"], approval_mode="batched")
    async with node:
        graph = tool_graph(node)
        out = await run(graph, {"messages": [ai(*TURN)]}, thread(), sync)
        [pending] = out["__interrupt__"]
        value = pending.value
        check("interrupt", value)
        assert value["type"] == "tool_approvals"
        assert [r["name"] for r in value["action_requests"]] == ["add", "echo"]
        assert [r["args"] for r in value["action_requests"]] == [{"a": 1, "b": 2}, {"text": "hi"}]
        assert [c["action_name"] for c in value["review_configs"]] == ["add", "echo"]
        assert [a["tool_call_id"] for a in value["approvals"]] == ["c1", "c2"]
        assert counters.calls == 0  # nothing ran before the person answered, not even `stats`
        # As a review form sends it: the edited number as text.
        out = await run(
            graph,
            Command(resume={"decisions": [edit("add", a="5", b="2"), {"type": "approve"}]}),
            thread(),
            sync,
        )
    results = tool_results(out)
    assert results["c1"].endswith("\n\n7")
    assert 'changed its arguments to {"a": 5, "b": 2}' in results["c1"]
    assert results["c2"] == "hi"
    assert '"calls"' in results["c3"]
    assert "__interrupt__" not in out
    assert counters.calls == 3


async def test_a_wrong_answer_is_refused_and_the_question_stays() -> None:
    counters = demo.Counters()
    async with MCPToolNode(servers(counters), approval=["add", "echo"], approval_mode="batched") as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(*TURN)]}, thread())
        [pending] = out["__interrupt__"]
        approvals = pending.value["approvals"]
        refused = {
            "2 decisions are expected .* got 1": {"decisions": [{"type": "approve"}]},
            "asks about 2 tool calls": {"type": "approve"},
            r"decision 1 \(add\): .*a: 'five' is not a valid integer": {
                "decisions": [edit("add", a="five", b="2"), {"type": "approve"}]
            },
            "decision 2 carries another call's key": {
                "decisions": [{"type": "approve"}, {"type": "approve", "key": approvals[0]["key"]}]
            },
            "decisions are missing for echo": {"responses": {approvals[0]["key"]: {"type": "approve"}}},
            r"decision 2 \(echo\): decision 'respond' is not allowed": {
                "decisions": [{"type": "approve"}, {"type": "respond", "message": "no"}]
            },
        }
        for message, answer in refused.items():
            with pytest.raises(Exception, match=message):
                await graph.ainvoke(Command(resume=answer), thread())
            state = await graph.aget_state(thread())
            assert [i.value["key"] for i in state.interrupts] == [pending.value["key"]], message
        assert counters.calls == 0
        # Keyed by each call's question: one rejected with a reason, one approved.
        answer = {
            "responses": {
                approvals[0]["key"]: {"type": "reject", "message": "not now"},
                approvals[1]["key"]: {"type": "approve"},
            }
        }
        out = await graph.ainvoke(Command(resume=answer), thread())
    results = tool_results(out)
    assert results["c1"] == "User rejected the tool call for `add` with reason: not now"
    assert results["c2"] == "hi"
    assert counters.calls == 2  # echo and stats; add never ran


async def test_the_interrupt_and_its_answers_fit_the_published_schemas() -> None:
    counters = demo.Counters()
    async with MCPToolNode(servers(counters), approval=True, approval_mode="batched") as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(*TURN)]}, thread())
        [pending] = out["__interrupt__"]
        check("approvals-interrupt", pending.value)
        assert len(pending.value["action_requests"]) == 3
        answer = {"decisions": [{"type": "approve"}] * 3}
        check("approvals-resume", answer)
        check("approvals-resume", {"responses": {pending.value["key"]: answer}})
        out = await graph.ainvoke(Command(resume={"responses": {pending.value["key"]: answer}}), thread())
    assert sorted(tool_results(out)) == ["c1", "c2", "c3"]
    assert json_schema("approvals-interrupt")["properties"]["type"] == {
        "const": "tool_approvals",
        "type": "string",
    }


async def test_one_approval_in_a_turn_keeps_the_single_question() -> None:
    counters = demo.Counters()
    async with MCPToolNode(servers(counters), approval=["add"], approval_mode="batched") as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(*TURN)]}, thread())
        [pending] = out["__interrupt__"]
        assert pending.value["type"] == "tool_approval"
        out = await graph.ainvoke(Command(resume={"decisions": [{"type": "approve"}]}), thread())
    assert tool_results(out)["c1"] == "3"


async def test_a_call_whose_arguments_break_the_schema_is_not_asked_about() -> None:
    counters = demo.Counters()
    async with MCPToolNode(servers(counters), approval=["add", "echo"], approval_mode="batched") as node:
        graph = tool_graph(node)
        turn = (("add", {"a": "x"}, "c1"), ("echo", {"text": "hi"}, "c2"), ("add", {"a": 1, "b": 1}, "c3"))
        out = await graph.ainvoke({"messages": [ai(*turn)]}, thread())
        [pending] = out["__interrupt__"]
        assert [a["tool_call_id"] for a in pending.value["approvals"]] == ["c2", "c3"]
        out = await graph.ainvoke(Command(resume={"decisions": [{"type": "approve"}] * 2}), thread())
    results = tool_results(out)
    assert "validation error" in results["c1"].lower() or "Error" in results["c1"]
    assert results["c2"] == "hi"
    assert results["c3"] == "2"


async def test_questions_a_server_asks_after_the_approval_stay_with_their_calls() -> None:
    calls: list[str] = []
    server = {"server": asker.build_server(counters=asker.Counters(), calls_log=calls)}
    async with MCPToolNode({"asker": server}, approval=True, approval_mode="batched") as node:
        graph = tool_graph(node)
        turn = (("delete_item", {"item": "a"}, "c1"), ("delete_item", {"item": "b"}, "c2"))
        out = await graph.ainvoke({"messages": [ai(*turn)]}, thread())
        [pending] = out["__interrupt__"]
        assert pending.value["type"] == "tool_approvals"
        out = await graph.ainvoke(Command(resume={"decisions": [{"type": "approve"}] * 2}), thread())
        asked = sorted(
            (i.value["tool_call_id"], i.value["requests"][0]["message"]) for i in out["__interrupt__"]
        )
        assert asked == [("c1", "Really delete a?"), ("c2", "Really delete b?")]
        out = await graph.ainvoke(resume_elicitations(out["__interrupt__"], _yes), thread())
    assert tool_results(out) == {"c1": "deleted a ()", "c2": "deleted b ()"}  # confirmed, no note
    assert "__interrupt__" not in out


def _yes(payload: Any) -> dict[str, Any]:
    return {r["key"]: accept({"ok": True}) for r in payload["requests"]}


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(MCPConfigError, match="approval_mode must be one of"):
        MCPToolNode({"demo": {"server": demo.build_server()}}, approval=True, approval_mode="together")  # type: ignore[arg-type]


async def test_decisions_are_not_replayed_onto_another_set_of_calls() -> None:
    """The deployment's approval policy changes while a call of the turn waits for a server's
    question: when the node runs again, the calls needing approval are others, and the stored
    decisions (given for the first set) are not applied to them by position: it asks again."""
    from langgraph.checkpoint.memory import InMemorySaver

    server = {"server": asker.build_server(counters=asker.Counters())}
    turn = (
        ("delete_item", {"item": "a"}, "c1"),
        ("book", {"city": "Oslo"}, "c2"),
        ("pick_options", {}, "c3"),
    )
    saver = InMemorySaver()
    async with MCPToolNode(
        {"asker": server}, approval=["delete_item", "book"], approval_mode="batched"
    ) as node:
        graph = tool_graph(node, checkpointer=saver)
        out = await graph.ainvoke({"messages": [ai(*turn)]}, thread())
        [pending] = out["__interrupt__"]
        assert [a["tool_call_id"] for a in pending.value["approvals"]] == ["c1", "c2"]
        answer = {"decisions": [{"type": "approve"}, {"type": "reject"}]}
        out = await graph.ainvoke(Command(resume=answer), thread())
        assert sorted(i.value["tool_call_id"] for i in out["__interrupt__"]) == [
            "c1",
            "c3",
        ]  # server questions
        questions = out["__interrupt__"]
    async with MCPToolNode(
        {"asker": server}, approval=["book", "pick_options"], approval_mode="batched"
    ) as node:
        graph = tool_graph(node, checkpointer=saver)
        out = await graph.ainvoke(resume_elicitations(questions, _yes), thread())
        [pending] = out["__interrupt__"]
    assert pending.value["type"] == "tool_approvals"
    assert [a["tool_call_id"] for a in pending.value["approvals"]] == ["c2", "c3"]


async def test_two_calls_that_are_the_same_call_cannot_be_given_different_decisions() -> None:
    """A model that repeats a call with the same id and arguments: both ask under one key, so a
    reject for one and an approve for the other is refused rather than applied to both."""
    counters = demo.Counters()
    async with MCPToolNode(servers(counters), approval=["add"], approval_mode="batched") as node:
        graph = tool_graph(node)
        turn = (("add", {"a": 1, "b": 2}, "c1"), ("add", {"a": 1, "b": 2}, "c1"))
        out = await graph.ainvoke({"messages": [ai(*turn)]}, thread())
        assert out["__interrupt__"][0].value["type"] == "tool_approvals"
        with pytest.raises(Exception, match="decisions 1 and 2 differ, but they are for the same call"):
            mixed = {"decisions": [{"type": "reject"}, {"type": "approve"}]}
            await graph.ainvoke(Command(resume=mixed), thread())
        assert counters.calls == 0
        both = {"decisions": [{"type": "reject"}, {"type": "reject"}]}
        out = await graph.ainvoke(Command(resume=both), thread())
    assert counters.calls == 0
    assert "__interrupt__" not in out
