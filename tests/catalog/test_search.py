"""Tool search: the model sees the search tool and the tools revealed in the thread; reveals live
in graph state (interrupts, new processes, subgraphs); unrevealed calls are refused; the filter,
hidden arguments and approval still apply."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import tools_condition
from langgraph.types import Command
from typing_extensions import TypedDict

from langgraph_mcp import (
    FromContext,
    MCPConfigError,
    MCPToolNode,
    ToolOptions,
    create_mcp_agent,
    route_tool_calls,
)
from langgraph_mcp._catalog.bm25 import MAX_QUERY_TERMS, BM25Index, words
from langgraph_mcp.options import REVEALED_KEY, ToolSearch, ToolSearchState, merge_revealed
from tests.chat import ScriptModel
from tests.conftest_servers import stdio_params
from tests.helpers import run_script, thread
from tests.tiers import STDIO_ERAS

RUNNER = Path(__file__).parent.parent / "search_runner.py"
SEARCH = "search_tools"


@dataclass
class Ctx:
    user_id: str = "alice"


def results(messages: list[AnyMessage]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}


def servers(protocol: str = "auto") -> dict[str, Any]:
    return {
        "shop": {**stdio_params("shopfront"), "protocol": protocol},
        "many": stdio_params("many", "--tools", "60"),
    }


# -- the ranking -------------------------------------------------------------------------------


def test_words_split_names_and_fold_plural_forms() -> None:
    assert words("readFile list_directory getCurrentTime git-diff") == words(
        "read file list directory current time git diff"
    )
    assert len(words("readFile list_directory getCurrentTime git-diff")) == 8
    assert words("staged staging") == words("stage stage")
    assert words("directories files") == words("directory file")


def test_bm25_ranks_by_name_and_description_and_bounds_a_query() -> None:
    index = BM25Index()
    index.add([("read_file", 3.0), ("Read a file from disk", 1.0)])
    index.add([("list_directory", 3.0), ("List the entries of a folder", 1.0)])
    index.add([("send_email", 3.0), ("Send an email message", 1.0)])
    assert index.top("what is in this folder", 2) == [1]
    assert index.top("read the file", 3, keep=lambda doc: doc != 0) == []
    long_query = " ".join(f"word{i}x" for i in range(10_000)) + " email"
    assert len(index.query_terms(long_query)) == MAX_QUERY_TERMS
    assert index.top(long_query, 3) == []  # past the bounds: never read


def test_the_reducer_keeps_every_reveal_in_order() -> None:
    assert merge_revealed(["a/x", "b/y"], ["b/y", "c/z", 3]) == ["a/x", "b/y", "c/z"]  # type: ignore[list-item]
    assert merge_revealed(None, "a/x") == ["a/x"]
    assert merge_revealed(["a/x"], None) == ["a/x"]


def test_bad_settings_fail_at_construction() -> None:
    with pytest.raises(MCPConfigError):
        ToolSearch(name="search tools")
    with pytest.raises(MCPConfigError):
        ToolSearch(limit=30, max_limit=20)
    with pytest.raises(MCPConfigError):
        create_mcp_agent(ScriptModel(turns=[]), {"shop": {"command": "never-started"}}, tool_search="yes")  # type: ignore[arg-type]


# -- an agent that searches --------------------------------------------------------------------


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_the_agent_searches_gets_the_reveal_and_calls_the_tool(protocol: str) -> None:
    model = ScriptModel(
        turns=[
            [(SEARCH, {"query": "delete an item from the shop", "limit": 2}, "s1")],
            [("delete_item", {"item": "pear"}, "c1")],
            "done",
        ]
    )
    agent = create_mcp_agent(model, servers(protocol), tool_search=True, checkpointer=InMemorySaver())
    try:
        out = await agent.ainvoke({"messages": [("user", "remove the pear")]}, thread())
    finally:
        await agent.mcp.aclose()
    got = results(out["messages"])
    found = got["s1"].artifact["tools"]
    assert found[0] == {
        "name": "delete_item",
        "server": "shop",
        "description": "Delete an item.",
        "arguments": ["item"],
    }
    assert len(found) == 2 and "1. delete_item (server 'shop')" in got["s1"].text
    assert got["c1"].text == "deleted pear"
    revealed = [f"{t['server']}/{t['name']}" for t in found]
    assert out[REVEALED_KEY] == revealed
    # Turn by turn, the model saw the search tool and only what a search had revealed.
    assert [sorted(seen) for seen in model.seen] == [
        [SEARCH],
        sorted([SEARCH, *(t["name"] for t in found)]),
        sorted([SEARCH, *(t["name"] for t in found)]),
    ]


def test_a_sync_agent_searches_and_calls_the_revealed_tool() -> None:
    model = ScriptModel(turns=[[(SEARCH, {"query": "items of the shop"}, "s1")], [("list_items", {}, "c1")]])
    agent = create_mcp_agent(model, servers(), tool_search=ToolSearch(limit=3), checkpointer=InMemorySaver())
    try:
        out = agent.invoke({"messages": [("user", "what is for sale?")]}, thread())
    finally:
        agent.mcp.close()
    got = results(out["messages"])
    assert got["s1"].artifact["tools"][0]["name"] == "list_items"
    assert len(got["s1"].artifact["tools"]) == 3
    assert got["c1"].text == "applepearplum"
    assert sorted(model.seen[1]) == sorted([SEARCH, *(t["name"] for t in got["s1"].artifact["tools"])])


async def test_a_call_to_a_tool_never_revealed_is_refused() -> None:
    model = ScriptModel(
        turns=[[("delete_item", {"item": "pear"}, "c1"), ("tool_7", {"n_7": 1}, "c2")]], unbound="call"
    )
    agent = create_mcp_agent(model, servers(), tool_search=True, checkpointer=InMemorySaver())
    try:
        out = await agent.ainvoke({"messages": [("user", "remove the pear")]}, thread())
    finally:
        await agent.mcp.aclose()
    got = results(out["messages"])
    for call_id, name in (("c1", "delete_item"), ("c2", "tool_7")):
        assert got[call_id].status == "error"
        assert f"Error: {name} is not a valid tool, try one of [{SEARCH}]." == got[call_id].text
    assert out.get(REVEALED_KEY, []) == []


async def test_the_filter_and_hidden_arguments_shape_what_a_search_finds() -> None:
    def no_deleting(tool: Any, context: Any) -> bool:
        return bool(tool.mcp_name != "delete_item")

    model = ScriptModel(
        turns=[
            [(SEARCH, {"query": "delete item whoami user", "limit": 20}, "s1")],
            [("delete_item", {"item": "pear"}, "c1"), ("whoami", {"note": "hi"}, "c2")],
        ],
        unbound="call",
    )
    agent = create_mcp_agent(
        model,
        servers(),
        tool_search=True,
        tool_filter=no_deleting,
        context_schema=Ctx,
        server_options={"shop": ToolOptions(hidden={"user_id": FromContext("user_id")})},
        checkpointer=InMemorySaver(),
    )
    try:
        out = await agent.ainvoke({"messages": [("user", "go")]}, thread(), context=Ctx())
    finally:
        await agent.mcp.aclose()
    got = results(out["messages"])
    found = {t["name"]: t for t in got["s1"].artifact["tools"]}
    assert "delete_item" not in found and "shop/delete_item" not in out[REVEALED_KEY]
    assert found["whoami"]["arguments"] == ["note"]  # the hidden user_id is not the model's
    assert "delete_item" not in model.seen[1] and "user_id" not in model.seen[1]["whoami"]["properties"]
    assert got["c1"].status == "error" and "is not a valid tool" in got["c1"].text
    assert json.loads(got["c2"].text) == {"user_id": "alice", "note": "hi"}


async def test_a_revealed_tool_still_asks_for_approval_and_the_reveal_outlives_the_interrupt() -> None:
    model = ScriptModel(
        turns=[[(SEARCH, {"query": "delete item", "limit": 1}, "s1")], [("delete_item", {"item": "x"}, "c1")]]
    )
    agent = create_mcp_agent(
        model, servers(), tool_search=True, approval="destructive", checkpointer=InMemorySaver()
    )
    try:
        first = await agent.ainvoke({"messages": [("user", "go")]}, thread())
        [asked] = first["__interrupt__"]
        assert asked.value["type"] == "tool_approval" and asked.value["tool_call_id"] == "c1"
        state = await agent.aget_state(thread())
        assert state.values[REVEALED_KEY] == ["shop/delete_item"]
        out = await agent.ainvoke(Command(resume={asked.id: {"type": "approve"}}), thread())
    finally:
        await agent.mcp.aclose()
    assert results(out["messages"])["c1"].text == "deleted x"
    assert sorted(model.seen[-1]) == sorted([SEARCH, "delete_item"])


# -- a graph of your own -----------------------------------------------------------------------


class State(MessagesState, ToolSearchState):
    pass


@pytest.mark.parametrize("routing", ["tools_condition", "route_tool_calls"])
async def test_a_hand_built_graph_offers_the_revealed_tools_from_its_state(routing: str) -> None:
    # route_tool_calls sends each call alone (Send): the node reads the reveals from the graph state.
    route = tools_condition if routing == "tools_condition" else route_tool_calls("tools")
    model = ScriptModel(turns=[[(SEARCH, {"query": "shop items list"}, "s1")], [("list_items", {}, "c1")]])
    async with MCPToolNode(servers(), tool_search=ToolSearch(limit=1)) as node:

        async def call_model(state: State) -> dict[str, Any]:
            tools = await node.get_tools(state=state)
            return {"messages": [await model.bind_tools(tools).ainvoke(state["messages"])]}

        builder = StateGraph(State)
        builder.add_node("model", call_model)
        builder.add_node("tools", node)
        builder.add_edge(START, "model")
        builder.add_conditional_edges("model", route, ["tools", END])
        builder.add_edge("tools", "model")
        graph = builder.compile(checkpointer=InMemorySaver())
        out = await graph.ainvoke({"messages": [HumanMessage("what is for sale?")]}, thread())
        assert sorted(t.name for t in await node.get_tools()) == [SEARCH]
    assert out[REVEALED_KEY] == ["shop/list_items"]
    assert results(out["messages"])["c1"].text == "applepearplum"
    assert [sorted(s) for s in model.seen] == [[SEARCH], ["list_items", SEARCH], ["list_items", SEARCH]]


class Parent(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    mcp_revealed_tools: Annotated[list[str], merge_revealed]


async def test_a_parent_graph_keeps_the_reveals_of_its_agent_subgraph_between_turns() -> None:
    model = ScriptModel(
        turns=[[(SEARCH, {"query": "list shop items", "limit": 1}, "s1")], "ok", [("list_items", {}, "c2")]]
    )
    agent = create_mcp_agent(model, servers(), tool_search=True)
    builder = StateGraph(Parent)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    parent = builder.compile(checkpointer=InMemorySaver())
    try:
        await parent.ainvoke({"messages": [HumanMessage("find it")]}, thread())
        out = await parent.ainvoke({"messages": [HumanMessage("now list")]}, thread())
    finally:
        await agent.mcp.aclose()
    assert out[REVEALED_KEY] == ["shop/list_items"]
    assert results(out["messages"])["c2"].text == "applepearplum"
    assert isinstance(out["messages"][-1], AIMessage)


# -- across processes --------------------------------------------------------------------------


@pytest.mark.slow  # two OS processes, each importing the package
@pytest.mark.parametrize("mode", ["async", "sync"])
def test_reveals_survive_an_approval_answered_in_a_new_process(tmp_path: Path, mode: str) -> None:
    db = str(tmp_path / "agent.sqlite")

    def phase(*args: str) -> dict[str, Any]:
        return run_script(RUNNER, mode, *args)

    first = phase("start", db)
    [asked] = first["interrupts"]
    assert asked["tool_call_id"] == "c1" and first["revealed"] == ["shop/delete_item"]
    second = phase("resume", db, json.dumps({first["ids"]["c1"]: {"type": "approve"}}))
    assert second["interrupts"] == [] and second["results"]["c1"] == ["success", "deleted x"]
    assert second["revealed"] == ["shop/delete_item"]
    # The resumed process offered its model the reveal it read from SQLite.
    assert second["seen"] == [["delete_item", SEARCH]]
