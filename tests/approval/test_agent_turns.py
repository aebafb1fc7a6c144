"""Agents as Agent Chat UI drives them: with no option set, two approvals of one turn are one
question answered with ``{"decisions": [...]}`` (no interrupt id); an edited call is shown with
the arguments that ran in the AI message's tool call; and a question left unanswered (the person
typed instead, the UI added "Successfully handled tool call.") never reaches the model as a
success."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command

from langgraph_mcp import MCPToolNode, ResultToState, ToolOptions, create_mcp_agent
from tests.chat import ScriptModel
from tests.helpers import thread
from tests.servers import shopfront

APPROVE = {"type": "approve"}


def shop() -> dict[str, Any]:
    return {"shop": {"server": shopfront.build_server()}}


def edit(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "edit", "edited_action": {"name": name, "args": args}}


def results(out: dict[str, Any]) -> dict[str, str]:
    return {m.tool_call_id: m.text for m in out["messages"] if isinstance(m, ToolMessage)}


def shown_args(out: dict[str, Any]) -> dict[str, Any]:
    """The arguments of each tool call as the AI messages show them (a UI's tool-call cards)."""
    return {c["id"]: c["args"] for m in out["messages"] if isinstance(m, AIMessage) for c in m.tool_calls}


async def test_two_approvals_of_a_turn_are_one_question_answered_by_decisions() -> None:
    turn = [("delete_item", {"item": "x"}, "c1"), ("delete_item", {"item": "y"}, "c2")]
    agent = create_mcp_agent(
        ScriptModel(turns=[turn, "done"]), shop(), approval="destructive", checkpointer=InMemorySaver()
    )
    try:
        out = await agent.ainvoke({"messages": [("user", "delete x and y")]}, thread())
        [pending] = out["__interrupt__"]
        assert pending.value["type"] == "tool_approvals"
        assert [r["args"] for r in pending.value["action_requests"]] == [{"item": "x"}, {"item": "y"}]
        # Agent Chat UI's answer: the decisions, in order, with no interrupt id; the edit as text.
        out = await agent.ainvoke(
            Command(resume={"decisions": [APPROVE, edit("delete_item", item="z")]}), thread()
        )
    finally:
        await agent.mcp.aclose()
    got = results(out)
    assert got["c1"] == "deleted x"
    assert got["c2"].endswith("deleted z") and "changed its arguments" in got["c2"]
    assert shown_args(out) == {"c1": {"item": "x"}, "c2": {"item": "z"}}  # the card shows what ran
    assert "__interrupt__" not in out


async def test_a_turns_reject_holds_in_an_agent_rebuilt_without_approval() -> None:
    """The turn was asked under ``approval=``; the resume reaches an agent built without it (both
    with the default mode): the turn's step still takes the answer, and a reject stays a reject."""
    saver = InMemorySaver()
    turns: Any = [[("delete_item", {"item": "x"}, "c1"), ("delete_item", {"item": "y"}, "c2")], "done"]
    asking = create_mcp_agent(ScriptModel(turns=turns), shop(), approval="destructive", checkpointer=saver)
    unasking = create_mcp_agent(ScriptModel(turns=turns), shop(), checkpointer=saver)
    try:
        out = await asking.ainvoke({"messages": [("user", "delete x and y")]}, thread())
        assert out["__interrupt__"][0].value["type"] == "tool_approvals"
        reject = {"type": "reject", "message": "keep them"}
        out = await unasking.ainvoke(Command(resume={"decisions": [reject, reject]}), thread())
    finally:
        await asking.mcp.aclose()
        await unasking.mcp.aclose()
    got = results(out)
    assert set(got) == {"c1", "c2"} and all("keep them" in t and "deleted" not in t for t in got.values())


@pytest.mark.parametrize("mode", ["batched", "per_call"])
async def test_an_edit_asked_on_its_own_is_shown_in_the_tool_call(mode: str) -> None:
    turn = [("delete_item", {"item": "x"}, "c1"), ("list_items", {}, "c2")]
    agent = create_mcp_agent(
        ScriptModel(turns=[turn, "done"]),
        shop(),
        approval=["delete_item"],
        approval_mode=mode,  # type: ignore[arg-type]
        checkpointer=InMemorySaver(),
    )
    try:
        out = await agent.ainvoke({"messages": [("user", "delete x")]}, thread())
        [pending] = out["__interrupt__"]
        assert pending.value["type"] == "tool_approval"
        out = await agent.ainvoke(Command(resume={"decisions": [edit("delete_item", item="w")]}), thread())
    finally:
        await agent.mcp.aclose()
    assert results(out)["c1"].endswith("deleted w")
    shown = shown_args(out)
    # Batched asks at most one call of a turn on its own, so its edit is shown; per call, a turn
    # of several calls keeps the model's arguments (two calls' edits would overwrite each other).
    assert shown["c1"] == ({"item": "w"} if mode == "batched" else {"item": "x"})


@pytest.mark.parametrize("question", ["approval", "elicitation"])
async def test_a_question_left_unanswered_never_reaches_the_model_as_a_success(question: str) -> None:
    call = (
        ("delete_item", {"item": "x"}, "c1")
        if question == "approval"
        else ("confirm_info", {"item": "x"}, "c1")
    )
    model = ScriptModel(turns=[[call], "noted"])
    approval = "destructive" if question == "approval" else None
    agent = create_mcp_agent(model, shop(), approval=approval, checkpointer=InMemorySaver())
    try:
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread())
        assert out["__interrupt__"]
        # What Agent Chat UI sends when the person types while the question is pending.
        fake = ToolMessage(content="Successfully handled tool call.", tool_call_id="c1", name=call[0])
        out = await agent.ainvoke({"messages": [fake, HumanMessage("never mind, what's new?")]}, thread())
    finally:
        await agent.mcp.aclose()
    seen = [m for m in model.calls[-1].messages if isinstance(m, ToolMessage)]
    assert len(seen) == 1 and "Successfully" not in seen[0].text
    assert "question was dropped" in seen[0].text
    if question == "approval":
        assert "was not executed: it was waiting for a person's approval" in seen[0].text
    else:
        assert "did not complete: its server asked the person a question" in seen[0].text
    [stored] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert stored.status == "error" and stored.text == seen[0].text
    assert "__interrupt__" not in out
    assert out["messages"][-1].text == "noted"


async def test_a_call_that_finished_beside_the_pending_question_gets_its_real_result() -> None:
    """Per call, a call of the turn finished while another's question was pending: the new run
    drops both from the thread, the UI makes up a result for each; the finished one gets its real
    result back, the other says it did not run. The new run is served by a new agent (a new
    process: its tools not listed yet)."""
    turn = [("rename_item", {"item": "a", "name": "b"}, "c1"), ("delete_item", {"item": "x"}, "c2")]
    saver = InMemorySaver()
    model = ScriptModel(turns=[turn, "noted"])
    agents = [
        create_mcp_agent(model, shop(), approval="destructive", approval_mode="per_call", checkpointer=saver)
        for _ in range(2)
    ]
    try:
        out = await agents[0].ainvoke({"messages": [("user", "go")]}, thread())
        assert [q.value["tool_call_id"] for q in out["__interrupt__"]] == ["c2"]
        fakes = [
            ToolMessage(content="Successfully handled tool call.", tool_call_id=c, name=n) for n, _, c in turn
        ]
        out = await agents[1].ainvoke({"messages": [*fakes, HumanMessage("what happened?")]}, thread())
    finally:
        for agent in agents:
            await agent.mcp.aclose()
    seen = {m.tool_call_id: m for m in model.calls[-1].messages if isinstance(m, ToolMessage)}
    assert seen["c1"].text == "renamed a to b" and seen["c1"].artifact is not None
    assert seen["c2"].text.startswith(
        "The tool call `delete_item` was not executed: it was waiting for a person's approval"
    )
    assert results(out) == {"c1": "renamed a to b", "c2": seen["c2"].text}


async def test_a_turn_left_unanswered_in_a_synchronous_agent() -> None:
    """Batched (the default): nothing of the turn ran; each call says what it waited for."""
    turn = [
        ("delete_item", {"item": "x"}, "c1"),
        ("delete_item", {"item": "y"}, "c2"),
        ("list_items", {}, "c3"),
    ]
    model = ScriptModel(turns=[turn, "noted"])
    agent = create_mcp_agent(model, shop(), approval="destructive", checkpointer=InMemorySaver())
    try:
        out = await asyncio.to_thread(agent.invoke, {"messages": [("user", "go")]}, thread())
        assert out["__interrupt__"][0].value["type"] == "tool_approvals"
        fakes = [
            ToolMessage(content="Successfully handled tool call.", tool_call_id=c, name=n) for n, _, c in turn
        ]
        said = {"messages": [*fakes, HumanMessage("stop")]}
        out = await asyncio.to_thread(agent.invoke, said, thread())
    finally:
        await agent.mcp.aclose()
    got = results(out)
    assert all(
        got[c].startswith(
            "The tool call `delete_item` was not executed: it was waiting for a person's approval"
        )
        for c in ("c1", "c2")
    )
    assert got["c3"].startswith(
        "The tool call `list_items` was not executed: it was waiting, with the other calls"
    )


async def test_a_real_result_with_those_words_is_left_alone() -> None:
    model = ScriptModel(turns=[[("list_items", {}, "c1")], "ok"])
    agent = create_mcp_agent(model, shop(), checkpointer=InMemorySaver())
    try:
        await agent.ainvoke({"messages": [("user", "go")]}, thread())
        # A local (non-MCP) call's own result with those words, after an MCP call: not touched.
        own = AIMessage("", tool_calls=[{"name": "other", "args": {}, "id": "k1"}])
        said = ToolMessage(content="Successfully handled tool call.", tool_call_id="k1", name="other")
        await agent.ainvoke({"messages": [own, said, HumanMessage("and?")]}, thread())
    finally:
        await agent.mcp.aclose()
    assert [m.text for m in model.calls[-1].messages if isinstance(m, ToolMessage)][-1] == said.text


def own_graph(model: ScriptModel, node: MCPToolNode, saver: Any = None) -> Any:
    """A graph of one's own (as ``graphs/agent.py``): the repair node first, then the model."""

    def call_model(state: MessagesState) -> dict[str, Any]:
        tools = list(node.tools_by_name.values())  # listed by ``node.start()``
        return {"messages": [model.bind_tools(tools).invoke(state["messages"])]}

    async def acall_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.bind_tools(await node.get_tools()).ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("repair", node.unanswered_repair)
    builder.add_node("agent", RunnableLambda(call_model, afunc=acall_model))
    builder.add_node(node)
    builder.add_edge(START, "repair")
    builder.add_edge("repair", "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver if saver is not None else InMemorySaver())


@pytest.mark.parametrize("question", ["approval", "elicitation"])
async def test_the_repair_node_of_a_graph_of_ones_own(question: str) -> None:
    """``MCPToolNode.unanswered_repair`` does in a hand-built graph what the middleware does."""
    call = (
        ("delete_item", {"item": "x"}, "c1")
        if question == "approval"
        else ("confirm_info", {"item": "x"}, "c1")
    )
    model = ScriptModel(turns=[[call], "noted"])
    node = MCPToolNode(shop(), approval="destructive" if question == "approval" else None)
    graph = own_graph(model, node)
    try:
        out = await graph.ainvoke({"messages": [("user", "go")]}, thread())
        assert out["__interrupt__"]
        fake = ToolMessage(content="Successfully handled tool call.", tool_call_id="c1", name=call[0])
        out = await graph.ainvoke({"messages": [fake, HumanMessage("never mind")]}, thread())
    finally:
        await node.aclose()
    [seen] = [m for m in model.calls[-1].messages if isinstance(m, ToolMessage)]
    waited = (
        "was not executed: it was waiting for a person's approval"
        if question == "approval"
        else ("did not complete: its server asked the person a question")
    )
    assert waited in seen.text and "Successfully" not in seen.text and seen.status == "error"
    [stored] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert stored.id == fake.id or stored.text == seen.text
    assert out["messages"][-1].text == "noted"


async def test_the_repair_node_leaves_a_run_without_made_up_results_alone() -> None:
    """No made-up result: no update, nothing read; a synchronous run works too."""
    model = ScriptModel(turns=[[("list_items", {}, "c1")], "ok", "again"])
    node = MCPToolNode(shop())
    graph = own_graph(model, node)
    try:
        await node.start()
        first = await asyncio.to_thread(graph.invoke, {"messages": [("user", "go")]}, thread())
        second = await asyncio.to_thread(graph.invoke, {"messages": [("user", "more")]}, thread())
    finally:
        await node.aclose()
    assert [m.text for m in first["messages"]][-1] == "ok"
    assert second["messages"][: len(first["messages"])] == first["messages"]  # nothing rewritten
    assert node.unanswered_repair is node.unanswered_repair  # one node per tool node


@pytest.mark.parametrize("result", ["message", "command"])
async def test_the_repair_node_in_a_new_process_gives_a_finished_call_its_real_result(result: str) -> None:
    """A turn of two calls (per call): one finished, one waits for its approval; the person types
    instead. The new run is served by a new node (a new process: its tools not listed yet): the
    finished call gets its real result back (returned by its task, as a message or, results into
    state, a ``Command``), the other says it did not run."""
    turn = [("rename_item", {"item": "a", "name": "b"}, "c1"), ("delete_item", {"item": "x"}, "c2")]
    saver = InMemorySaver()
    model = ScriptModel(turns=[turn, "noted"])
    options = {"rename_item": ToolOptions(result=ResultToState())} if result == "command" else {}
    nodes = [MCPToolNode(shop(), approval="destructive", tool_options=options) for _ in range(2)]
    try:
        out = await own_graph(model, nodes[0], saver).ainvoke({"messages": [("user", "go")]}, thread())
        assert [q.value["tool_call_id"] for q in out["__interrupt__"]] == ["c2"]
        fakes = [
            ToolMessage(content="Successfully handled tool call.", tool_call_id=c, name=n) for n, _, c in turn
        ]
        said = {"messages": [*fakes, HumanMessage("what happened?")]}
        out = await own_graph(model, nodes[1], saver).ainvoke(said, thread())
    finally:
        for node in nodes:
            await node.aclose()
    seen = {m.tool_call_id: m for m in model.calls[-1].messages if isinstance(m, ToolMessage)}
    assert seen["c1"].text == "renamed a to b" and seen["c1"].artifact is not None
    assert seen["c2"].text.startswith("The tool call `delete_item` was not executed: it was waiting")
    assert results(out) == {"c1": "renamed a to b", "c2": seen["c2"].text}
