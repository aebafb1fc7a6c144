"""``langgraph_mcp.testing.ScriptedChatModel`` driving real MCP servers: in ``create_agent`` with
``MCPMiddleware``, in ``create_mcp_agent``, bound by hand in a graph with ``MCPToolNode``; sync and
async; its record of what each call saw; and its failures."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition

from langgraph_mcp import FromContext, MCPMiddleware, MCPPool, MCPToolNode, ToolOptions, create_mcp_agent
from langgraph_mcp.testing import ModelCall, ScriptedChatModel
from tests.conftest_servers import stdio_params
from tests.helpers import thread
from tests.servers import demo, shopfront


@dataclass
class Ctx:
    user_id: str = "ann"


def shop() -> dict[str, Any]:
    return {"shop": {"server": shopfront.build_server()}}


def results(out: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


async def test_turns_drive_create_agent_with_the_middleware_and_the_record_shows_the_tools() -> None:
    model = ScriptedChatModel(
        [
            [("list_items", {}), ("whoami", {"note": "hi"}, "who")],
            [("delete_item", {"item": "pear"})],
        ]
    )
    options = {"shop": ToolOptions(hidden={"user_id": FromContext("user_id")})}
    async with MCPMiddleware(shop(), server_options=options) as mcp:
        agent = create_agent(model, middleware=[mcp], checkpointer=InMemorySaver(), context_schema=Ctx)
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread(), context=Ctx())
    got = results(out)
    assert [m.name for m in got] == ["list_items", "whoami", "delete_item"]
    assert got[1].tool_call_id == "who"
    # Calls without an id got fresh, distinct ones.
    ids = [m.tool_call_id for m in got]
    assert len(set(ids)) == 3 and ids[0].startswith("call_")
    # Past the script: one line per result of the last round.
    assert out["messages"][-1].text == "delete_item: deleted pear"
    assert len(model.calls) == 3 and all(isinstance(c, ModelCall) for c in model.calls)
    first = model.calls[0]
    assert set(first.tools) >= {"list_items", "whoami", "delete_item"}
    # The model saw the schema MCPMiddleware offers: the hidden argument is not in it.
    assert set(first.tools["whoami"]["properties"]) == {"note"}
    assert [m.text for m in first.messages] == ["go"]
    assert first.reply.tool_calls[1] == {
        "name": "whoami",
        "args": {"note": "hi"},
        "id": "who",
        "type": "tool_call",
    }
    assert model.calls[-1].reply.text == out["messages"][-1].text
    assert isinstance(model.calls[-1].messages[-1], ToolMessage)


def test_sync_invoke_runs_the_same_script_as_ainvoke() -> None:
    import asyncio

    script = [[("add_to_cart", {"user_id": "s", "item": "plum", "quantity": 2}, "c1")], "Two plums."]
    config = {"shop": stdio_params("shopfront")}
    sync_model = ScriptedChatModel(script)
    pool = MCPPool(config)
    try:
        agent = create_mcp_agent(sync_model, pool, checkpointer=InMemorySaver())
        sync_out = agent.invoke({"messages": [("user", "go")]}, thread())
    finally:
        pool.close()

    async_model = ScriptedChatModel(script)

    async def run() -> dict[str, Any]:
        async with MCPPool(config) as pool:
            agent = create_mcp_agent(async_model, pool, checkpointer=InMemorySaver())
            return await agent.ainvoke({"messages": [("user", "go")]}, thread())

    async_out = asyncio.run(run())
    for out in (sync_out, async_out):
        assert results(out)[0].artifact["structured_content"] == {"items": ["plum", "plum"], "count": 2}
        assert out["messages"][-1].text == "Two plums."
    assert len(sync_model.calls) == len(async_model.calls) == 2
    assert sync_model.calls[0].tools == async_model.calls[0].tools


async def test_bound_by_hand_in_a_graph_with_the_tool_node_reading_lines() -> None:
    """No turns: the last human message is the script, one call per line."""
    async with MCPToolNode({"demo": {"server": demo.build_server(counters=demo.Counters())}}) as node:
        model = ScriptedChatModel()

        async def agent(state: MessagesState) -> dict[str, Any]:
            bound = model.bind_tools(await node.get_tools())
            return {"messages": [await bound.ainvoke(state["messages"])]}

        builder = StateGraph(MessagesState)
        builder.add_node("agent", agent)
        builder.add_node(node)
        builder.add_edge(START, "agent")
        builder.add_conditional_edges("agent", tools_condition)
        builder.add_edge("tools", "agent")
        graph = builder.compile()
        ask = HumanMessage('add {"a": 2, "b": 40}\n\necho {"text": "hi"}')
        out = await graph.ainvoke({"messages": [ask]})
    assert [(m.name, m.text) for m in results(out)] == [("add", "42"), ("echo", "hi")]
    assert out["messages"][-1].text == "add: 42\necho: hi"
    # The object the test holds recorded the calls of the copies bind_tools made.
    assert len(model.calls) == 2
    assert model.calls[0].tools["add"]["required"] == ["a", "b"]
    assert model.bound_tools is None  # bind_tools returns a copy; the original stays unbound


async def test_a_scripted_tool_that_was_not_bound_fails_the_run_and_says_why() -> None:
    model = ScriptedChatModel([[("list_item", {})]])  # misspelt
    async with MCPPool(shop()) as pool:
        agent = create_mcp_agent(model, pool)
        with pytest.raises(
            ValueError, match="turn 0 calls 'list_item', but this model call was given only "
        ) as err:
            await agent.ainvoke({"messages": [("user", "go")]})
    assert "list_items" in str(err.value) and "unbound='call'" in str(err.value)
    assert model.calls == []

    # A model no one gave tools to says so.
    unbound = ScriptedChatModel([[("add", {"a": 1, "b": 2})]])
    with pytest.raises(ValueError, match="bind_tools was never called"):
        create_agent(unbound).invoke({"messages": [("user", "go")]})
    # Line mode checks the same way.
    with pytest.raises(ValueError, match="the last human message calls 'nope'"):
        ScriptedChatModel().bind_tools([]).invoke("nope")


async def test_unbound_reply_answers_in_text_and_unbound_call_lets_the_tool_side_refuse() -> None:
    def guests(tool: Any, context: Any) -> bool:
        return tool.name != "delete_item"

    script = [[("delete_item", {"item": "a"}, "c1"), ("list_items", {}, "c2")]]
    async with MCPPool(shop()) as pool:
        replying = ScriptedChatModel(script, unbound="reply")
        agent = create_mcp_agent(replying, pool, tool_filter=guests)
        out = await agent.ainvoke({"messages": [("user", "go")]})
        first = out["messages"][1]
        assert first.text == "I have no tool named delete_item."
        assert [c["id"] for c in first.tool_calls] == ["c2"]
        assert [m.tool_call_id for m in results(out)] == ["c2"]

        calling = ScriptedChatModel(script, unbound="call")
        agent = create_mcp_agent(calling, pool, tool_filter=guests)
        out = await agent.ainvoke({"messages": [("user", "go")]})
    by_id = {m.tool_call_id: m for m in results(out)}
    assert "delete_item" not in calling.calls[0].tools
    assert by_id["c1"].status == "error" and "not a valid tool" in by_id["c1"].text
    assert by_id["c2"].status == "success"


async def test_turns_follow_each_conversation_or_count_calls() -> None:
    script: list[Any] = [
        [("list_items", {})],
        "first answer",
        [("whoami", {"user_id": "u"})],
        "second answer",
    ]
    async with MCPPool(shop()) as pool:
        per_thread = ScriptedChatModel(script)
        agent = create_mcp_agent(per_thread, pool, checkpointer=InMemorySaver())
        a1 = await agent.ainvoke({"messages": [("user", "one")]}, thread("a"))
        b1 = await agent.ainvoke({"messages": [("user", "one")]}, thread("b"))
        a2 = await agent.ainvoke({"messages": [("user", "two")]}, thread("a"))
        assert a1["messages"][-1].text == b1["messages"][-1].text == "first answer"  # each thread from turn 0
        assert a2["messages"][-1].text == "second answer"
        assert results(a2)[-1].name == "whoami"

        by_call = ScriptedChatModel(script, turn_by="calls")
        agent = create_mcp_agent(by_call, pool, checkpointer=InMemorySaver())
        await agent.ainvoke({"messages": [("user", "one")]}, thread("a"))
        b = await agent.ainvoke({"messages": [("user", "one")]}, thread("b"))  # goes on where a stopped
        assert results(b)[-1].name == "whoami" and b["messages"][-1].text == "second answer"
        done = await agent.ainvoke({"messages": [("user", "three")]}, thread("c"))
        assert done["messages"][-1].text == "done"  # played out, no results since the last AI message


async def test_an_ai_message_turn_is_sent_as_written_with_ids_filled_in() -> None:
    turn = AIMessage("Let me look.", tool_calls=[{"name": "list_items", "args": {}, "id": None}])
    model = ScriptedChatModel([turn])
    async with MCPPool(shop()) as pool:
        out = await create_mcp_agent(model, pool).ainvoke({"messages": [("user", "go")]})
    reply = out["messages"][1]
    assert reply.text == "Let me look." and reply.tool_calls[0]["id"].startswith("call_")
    assert turn.tool_calls[0]["id"] is None  # the script itself is not changed
    assert out["messages"][-1].text.startswith("list_items: ")


def test_lines_with_unreadable_arguments_are_answered_in_text() -> None:
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    model = ScriptedChatModel().bind_tools([add])
    assert "could not read the arguments for add" in model.invoke('add {"a": 1').text
    assert "must be a JSON object" in model.invoke("add [1, 2]").text
    assert model.invoke("").text == "Write one line per call, `tool_name {json args}`. Tools: add"
    reply = model.invoke("add")
    assert isinstance(reply, AIMessage) and reply.tool_calls[0]["args"] == {}


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ([42], "turn 0 is a int"),
        ([[("add",)]], r"call 0 of turn 0 is \('add',\)"),
        (["ok", [("add", {"a": 1}, 7)]], "call 0 of turn 1"),
        ([[{"name": "", "args": {}}]], "call 0 of turn 0"),
    ],
)
def test_a_malformed_script_fails_when_the_model_is_built(turns: list[Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ScriptedChatModel(turns)


DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "testing.md"


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.DOTALL)


async def test_the_first_example_of_the_testing_page_runs() -> None:
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(python_blocks(DOCS_PAGE)[0], str(DOCS_PAGE), "exec"), namespace)
    await namespace["test_the_agent_adds"]()


def test_the_error_the_testing_page_shows_is_the_one_raised() -> None:
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    shown = re.search(r"```text\nValueError: (.*?)```", DOCS_PAGE.read_text(), flags=re.DOTALL)
    assert shown is not None
    with pytest.raises(ValueError) as err:
        ScriptedChatModel([[("ad", {})]]).bind_tools([add]).invoke("go")
    assert str(err.value) == " ".join(shown.group(1).split())


def test_a_string_is_not_taken_for_a_list_of_turns() -> None:
    with pytest.raises(ValueError, match="turns is a list of turns"):
        ScriptedChatModel("All done")  # type: ignore[arg-type]


def test_turns_by_call_are_each_played_once_from_many_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    model = ScriptedChatModel([f"turn {i}" for i in range(200)], turn_by="calls")
    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(lambda _: model.invoke("go").text, range(200)))
    assert sorted(replies) == sorted(f"turn {i}" for i in range(200))


def test_a_sampling_answer_for_another_request_is_not_applied() -> None:
    from pydantic import TypeAdapter

    from langgraph_mcp._elicitation.answers import STALE, sampling_resume_type

    adapter: TypeAdapter[Any] = TypeAdapter(sampling_resume_type("sampling#0123abcd", True))
    assert adapter.validate_python({"action": "accept", "content": "x", "key": "c1"}) == STALE
    assert adapter.validate_python({"action": "accept", "content": "x"})["content"] == "x"
    with pytest.raises(ValueError):
        adapter.validate_python({"responses": None})


def test_the_final_answer_separates_the_items_of_a_list_result() -> None:
    """``search_notes`` returns a list: one text block per title, read ``a, b, c`` in the answer."""
    from langgraph_mcp.demo import demo_server

    agent = create_mcp_agent(ScriptedChatModel(), {"notes": demo_server("notes")})
    try:
        out = agent.invoke({"messages": [("user", 'search_notes {"query": "a"}')]})
    finally:
        agent.mcp.close()
    assert len(results(out)[0].content) == 3  # three blocks, which ToolMessage.text runs together
    assert out["messages"][-1].text == "search_notes: groceries, trip, ideas"
