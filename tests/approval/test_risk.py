"""Approval by risk (``approval=ApprovalByRisk(...)``): a low-risk call runs unasked, a risky one
asks a person as the usual approval question (never blocked unasked), and a classifier that fails
asks too; per call and batched, in agents and in a graph of one's own. The classifier is asked as
langchain's ``AutoModeMiddleware`` asks its decision model, and never again for a call it judged."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.decisions import BaseDecisionModel, ClassifierResponse, Noul, NoulAnswer
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import Field

from langgraph_mcp import MCPConfigError, MCPToolNode, create_mcp_agent
from langgraph_mcp.elicitation import accept, resume_elicitations
from langgraph_mcp.options import ApprovalByRisk, ToolOptions
from tests.chat import ScriptModel
from tests.helpers import ai, check, thread, tool_graph, tool_results
from tests.servers import shopfront

APPROVE = {"type": "approve"}
REJECT = {"type": "reject", "message": "no"}


class Judge(BaseDecisionModel):
    """A scripted decision model: the risk of a ``rename_item`` call by its new ``name``
    (a probability, ``"error"`` to fail, ``"garbage"`` for an answer without the probability)."""

    model: str = "judge"
    verdicts: dict[str, Any] = Field(default_factory=dict)
    asked: list[str] = Field(default_factory=list)
    requests: list[Any] = Field(default_factory=list)

    @property
    def _provider(self) -> str:
        return "test"

    def _classify(self, state: Any, questions: Any) -> ClassifierResponse:
        self.asked.append(state["tool_call"]["id"])
        self.requests.append((state, questions))
        call = state["tool_call"]
        verdict = self.verdicts[call["args"].get("name", call["name"])]
        if verdict == "error":
            raise RuntimeError("the classifier is down")
        if verdict == "garbage":
            return ClassifierResponse(model=self.model, answers={})
        return ClassifierResponse(
            model=self.model, answers={"is_risky": NoulAnswer(type="noul", noul=verdict)}
        )

    async def _aclassify(self, state: Any, questions: Any) -> ClassifierResponse:
        if self.verdicts.get(state["tool_call"]["args"].get("name")) == "hang":
            self.asked.append(state["tool_call"]["id"])
            await asyncio.Event().wait()  # never answers: the policy's timeout ends it
        return self._classify(state, questions)


def shop() -> dict[str, Any]:
    return {"shop": {"server": shopfront.build_server()}}


# list_items: read-only (low); rename_item: not destructive, open world (the classifier's);
# delete_item: destructive (asks).
TURN: Any = [
    ("list_items", {}, "c1"),
    ("rename_item", {"item": "apple", "name": "safe"}, "c2"),
    ("rename_item", {"item": "pear", "name": "evil"}, "c3"),
    ("delete_item", {"item": "plum"}, "c4"),
]


def results(out: dict[str, Any]) -> dict[str, str]:
    return {m.tool_call_id: m.text for m in out["messages"] if isinstance(m, ToolMessage)}


async def test_an_agent_asks_about_the_risky_calls_of_a_turn_together_and_runs_the_rest() -> None:
    judge = Judge(verdicts={"safe": 0.1, "evil": 0.9})
    agent = create_mcp_agent(
        ScriptModel(turns=[TURN, "done"]),
        shop(),
        approval=ApprovalByRisk(classifier=judge),
        checkpointer=InMemorySaver(),
    )
    try:
        out = await agent.ainvoke({"messages": [("user", "tidy the shop")]}, thread())
        [pending] = out["__interrupt__"]
        value = pending.value
        check("interrupt", value)  # the risk entry fits the published schema
        assert value["type"] == "tool_approvals"
        assert [a["tool_call_id"] for a in value["approvals"]] == ["c3", "c4"]
        assert [a["risk"]["by"] for a in value["approvals"]] == ["classifier", "annotations"]
        assert value["approvals"][0]["risk"]["probability"] == 0.9
        assert judge.asked == ["c2", "c3"]  # read-only and destructive tools are not classified
        state, questions = judge.requests[0]
        assert isinstance(questions["is_risky"], Noul)  # AutoModeMiddleware's question
        assert state["tool_call"] == {
            "id": "c2",
            "name": "rename_item",
            "args": {"item": "apple", "name": "safe"},
        }
        assert state["messages"][0].text == "tidy the shop" and state["tool_description"]
        # Agent Chat UI's answer: no interrupt id.
        out = await agent.ainvoke(Command(resume={"decisions": [APPROVE, REJECT]}), thread())
    finally:
        await agent.mcp.aclose()
    got = results(out)
    assert (
        "apple" in got["c1"] and got["c2"] == "renamed apple to safe" and got["c3"] == "renamed pear to evil"
    )
    assert "rejected" in got["c4"] and "no" in got["c4"]
    assert judge.asked == ["c2", "c3"]  # not judged again on the resume


@pytest.mark.parametrize("failure", ["error", "garbage", "hang"])
@pytest.mark.parametrize("mode", ["batched", "per_call"])
async def test_a_failing_classifier_asks_the_person(mode: str, failure: str) -> None:
    judge = Judge(verdicts={"broken": failure})
    turn = [("rename_item", {"item": "apple", "name": "broken"}, "c1")]
    agent = create_mcp_agent(
        ScriptModel(turns=[turn, "done"]),
        shop(),
        approval=ApprovalByRisk(classifier=judge, timeout=0.01),
        approval_mode=mode,  # type: ignore[arg-type]
        checkpointer=InMemorySaver(),
    )
    try:
        out = await agent.ainvoke({"messages": [("user", "rename")]}, thread())
        [pending] = out["__interrupt__"]
        assert pending.value["type"] == "tool_approval"
        assert pending.value["risk"]["by"] == "classifier_error"
        assert results(out) == {}
        out = await agent.ainvoke(Command(resume={"decisions": [APPROVE]}), thread())
    finally:
        await agent.mcp.aclose()
    assert results(out) == {"c1": "renamed apple to broken"}
    assert judge.asked == ["c1"]


async def test_per_call_the_risky_calls_ask_on_their_own_and_are_judged_once() -> None:
    judge = Judge(verdicts={"safe": 0.2, "evil": 0.7})
    agent = create_mcp_agent(
        ScriptModel(turns=[TURN, "done"]),
        shop(),
        approval=ApprovalByRisk(classifier=judge),
        approval_mode="per_call",
        checkpointer=InMemorySaver(),
    )
    try:
        out = await agent.ainvoke({"messages": [("user", "tidy the shop")]}, thread())
        pending = {q.value["tool_call_id"]: q for q in out["__interrupt__"]}
        assert set(pending) == {"c3", "c4"}
        assert {c: q.value["type"] for c, q in pending.items()} == {
            "c3": "tool_approval",
            "c4": "tool_approval",
        }
        out = await agent.ainvoke(
            Command(resume={pending["c3"].id: REJECT, pending["c4"].id: APPROVE}), thread()
        )
    finally:
        await agent.mcp.aclose()
    got = results(out)
    assert got["c2"] == "renamed apple to safe" and got["c4"] == "deleted plum"
    assert "rejected" in got["c3"]
    assert sorted(judge.asked) == ["c2", "c3"]


async def test_a_graph_of_ones_own_judges_per_call_and_batched() -> None:
    judge = Judge(verdicts={"safe": 0.0, "evil": 1.0})
    for mode in ("per_call", "batched"):
        judge.asked.clear()
        node = MCPToolNode(shop(), approval=ApprovalByRisk(classifier=judge), approval_mode=mode)  # type: ignore[arg-type]
        async with node:
            graph = tool_graph(node)
            out = await graph.ainvoke({"messages": [ai(*TURN)]}, thread(mode))
            questions = out["__interrupt__"]
            if mode == "batched":
                [question] = questions
                assert [a["tool_call_id"] for a in question.value["approvals"]] == ["c3", "c4"]
                resume: Any = {"decisions": [APPROVE, APPROVE]}
            else:
                assert sorted(q.value["tool_call_id"] for q in questions) == ["c3", "c4"]
                resume = {q.id: APPROVE for q in questions}
            out = await graph.ainvoke(Command(resume=resume), thread(mode))
        got = tool_results(out)
        assert got["c2"] == "renamed apple to safe" and got["c3"] == "renamed pear to evil"
        assert got["c4"] == "deleted plum"
        assert sorted(judge.asked) == ["c2", "c3"], mode


async def test_by_annotations_alone_only_low_risk_tools_run_unasked() -> None:
    policy = ApprovalByRisk()
    assert policy.by_annotations({"readOnlyHint": True}) == "low"
    assert policy.by_annotations({}) == "high"  # MCP's default: may be destructive
    assert policy.by_annotations({"destructiveHint": False}) == "unclear"  # open world by default
    closed = {"destructiveHint": False, "openWorldHint": False}
    assert policy.by_annotations(closed) == "unclear"
    assert policy.by_annotations({**closed, "idempotentHint": True}) == "low"
    async with MCPToolNode(shop(), approval=policy) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("list_items", {}, "c1"))]}, thread("a"))
        assert "__interrupt__" not in out and "apple" in str(tool_results(out)["c1"])
        out = await graph.ainvoke(
            {"messages": [ai(("rename_item", {"item": "apple", "name": "x"}, "c1"))]}, thread("b")
        )
        assert out["__interrupt__"][0].value["risk"]["by"] == "annotations"
    # A tool's own policy (here a server's), the node asking nothing else.
    judge = Judge(verdicts={"x": 0.9})
    options = {"shop": ToolOptions(approval=ApprovalByRisk(classifier=judge))}
    async with MCPToolNode(shop(), server_options=options) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke(
            {"messages": [ai(("rename_item", {"item": "apple", "name": "x"}, "c1"))]}, thread("c")
        )
        assert out["__interrupt__"][0].value["risk"]["by"] == "classifier"
    with pytest.raises(MCPConfigError, match="needs a classifier"):
        ApprovalByRisk(annotations=False)
    with pytest.raises(MCPConfigError, match="not a chat model"):
        ApprovalByRisk(classifier=ScriptModel(turns=[]))
    with pytest.raises(MCPConfigError, match="threshold"):
        ApprovalByRisk(threshold=0)


@pytest.mark.parametrize("mode", ["batched", "per_call"])
@pytest.mark.parametrize("risk", [0.1, 0.9], ids=["low", "risky"])
async def test_a_call_is_judged_once_across_its_later_questions(mode: str, risk: float) -> None:
    """A call let through (or asked about) whose server then asks a question of its own: the
    resumed run neither asks the classifier again nor shifts the call's answers."""
    judge = Judge(verdicts={"confirm_info": risk})
    agent = create_mcp_agent(
        ScriptModel(turns=[[("confirm_info", {"item": "x"}, "c1")], "done"]),
        shop(),
        approval=ApprovalByRisk(annotations=False, classifier=judge),
        approval_mode=mode,  # type: ignore[arg-type]
        checkpointer=InMemorySaver(),
    )
    try:
        out = await agent.ainvoke({"messages": [("user", "confirm x")]}, thread())
        if risk > 0.5:
            [pending] = out["__interrupt__"]
            assert pending.value["type"] == "tool_approval"
            out = await agent.ainvoke(Command(resume={"decisions": [APPROVE]}), thread())
        [pending] = out["__interrupt__"]
        assert pending.value["type"] == "mcp_elicitation"
        out = await agent.ainvoke(
            resume_elicitations(
                out["__interrupt__"], lambda p: {r["key"]: accept({"ok": True}) for r in p["requests"]}
            ),
            thread(),
        )
    finally:
        await agent.mcp.aclose()
    assert '"ok": true' in results(out)["c1"]
    assert judge.asked == ["c1"]


async def test_a_synchronous_agent_judges_and_asks_the_same() -> None:
    judge = Judge(verdicts={"safe": 0.1, "evil": 0.9})
    agent = create_mcp_agent(
        ScriptModel(turns=[TURN, "done"]),
        shop(),
        approval=ApprovalByRisk(classifier=judge),
        checkpointer=InMemorySaver(),
    )
    try:
        out = await asyncio.to_thread(agent.invoke, {"messages": [("user", "tidy")]}, thread())
        [pending] = out["__interrupt__"]
        assert [a["tool_call_id"] for a in pending.value["approvals"]] == ["c3", "c4"]
        resume = Command(resume={"decisions": [REJECT, APPROVE]})
        out = await asyncio.to_thread(agent.invoke, resume, thread())
    finally:
        await agent.mcp.aclose()
    got = results(out)
    assert got["c2"] == "renamed apple to safe" and "rejected" in got["c3"] and got["c4"] == "deleted plum"
    assert judge.asked == ["c2", "c3"]
