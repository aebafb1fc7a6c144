"""Graph-side options through ``MCPToolNode``: hidden arguments, per-call headers and ``_meta``,
results into state, approval, and the per-run tool filter."""

from __future__ import annotations

import asyncio
import json
import operator
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from langchain_core.messages import AnyMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command
from typing_extensions import TypedDict

from langgraph_mcp import (
    FromConfig,
    FromContext,
    FromState,
    FromStore,
    MCPPool,
    MCPToolNode,
    ResultToState,
    ToolOptions,
)
from langgraph_mcp.types import MCPApprovalInterrupt
from tests.conftest_servers import serve_in_loop
from tests.helpers import ai, json_content, thread, tool_graph, tool_results
from tests.servers import shopfront


@dataclass
class Ctx:
    user_id: str
    token: str = ""


class ShopState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    account: str
    cart: list[str]
    cart_size: int
    visited: Annotated[list[str], operator.add]


def shop() -> dict[str, Any]:
    return {"shop": {"server": shopfront.build_server()}}


def shop_graph(node: MCPToolNode, *, store: Any = None, checkpointer: Any = None) -> Any:
    builder = StateGraph(ShopState, context_schema=Ctx)
    builder.add_node(node)
    builder.add_node("checkout", lambda s: {"visited": ["checkout"]})
    builder.add_edge(START, "tools")
    builder.add_edge("checkout", END)
    return builder.compile(checkpointer=checkpointer or InMemorySaver(), store=store)


# -- hidden arguments ---------------------------------------------------------------------------


async def test_hidden_arguments_leave_the_schema_are_filled_and_forged_values_are_dropped() -> None:
    store = InMemoryStore()
    await store.aput(("users", "alice"), "profile", {"note": {"text": "from the store"}})
    options = {
        "whoami": ToolOptions(
            hidden={
                "user_id": FromContext("user_id"),
                "note": FromStore(("users", "{user_id}"), "profile", "note.text"),
            }
        ),
        "add_to_cart": ToolOptions(hidden={"user_id": FromState("account")}),
    }
    async with MCPToolNode(shop(), tool_options=options) as node:
        tools = {t.name: t for t in await node.get_tools()}
        assert set(tools["whoami"].args) == set()
        assert "user_id" not in tools["add_to_cart"].args and "item" in tools["add_to_cart"].args
        assert "user_id" not in tools["add_to_cart"].tool_call_schema.get("required", [])
        graph = shop_graph(node, store=store)
        out = await graph.ainvoke(
            {
                "account": "acct-7",
                "messages": [
                    ai(
                        ("whoami", {"user_id": "mallory", "note": "forged"}, "c1"),
                        ("add_to_cart", {"item": "pear", "user_id": "mallory"}, "c2"),
                    )
                ],
            },
            thread(),
            context=Ctx(user_id="alice"),
        )
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert json_content(results["c1"]) == {"user_id": "alice", "note": "from the store"}
    assert json_content(results["c2"]) == {"items": ["pear"], "count": 1}
    assert results["c1"].artifact["structured_content"]["user_id"] == "alice"


async def test_hidden_arguments_from_config_and_a_function() -> None:
    options = ToolOptions(
        hidden={"user_id": FromConfig("user"), "note": lambda rt: f"call {rt.tool_call_id}"}
    )
    async with MCPToolNode(shop(), server_options={"shop": options}) as node:
        out = await tool_graph(node).ainvoke(
            {"messages": [ai(("whoami", {}, "c9"))]}, {"configurable": {"thread_id": "t", "user": "carol"}}
        )
    assert json_content(out["messages"][-1]) == {"user_id": "carol", "note": "call c9"}


async def test_a_missing_hidden_value_is_an_error_message_and_the_server_is_not_called() -> None:
    options = {"add_to_cart": ToolOptions(hidden={"user_id": FromContext("user_id")})}
    async with MCPToolNode(shop(), tool_options=options) as node:
        graph = shop_graph(node)
        out = await graph.ainvoke({"messages": [ai(("add_to_cart", {"item": "plum"}, "c1"))]}, thread("a"))
        message = out["messages"][-1]
        assert message.status == "error"
        assert "hidden argument 'user_id'" in message.content and "run context" in message.content
        # The cart is untouched: the next (well-formed) call sees only its own item.
        out = await graph.ainvoke(
            {"messages": [ai(("add_to_cart", {"item": "fig"}, "c2"))]}, thread("b"), context=Ctx(user_id="")
        )
        assert json_content(out["messages"][-1]) == {"items": ["fig"], "count": 1}


async def test_server_options_must_name_a_configured_server() -> None:
    with pytest.raises(ValueError, match=r"server_options names no configured MCP server: \['nope'\]"):
        MCPToolNode(shop(), server_options={"nope": ToolOptions()})


# -- headers and _meta --------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_each_call_carries_its_own_headers_and_meta(protocol: str) -> None:
    options = ToolOptions(
        headers=lambda rt: {"Authorization": f"Bearer {rt.context.token}"},
        meta=lambda rt: {"example.com/user": rt.context.user_id},
    )
    async with serve_in_loop(shopfront.build_server(), "http") as url:
        config = {"shop": {"url": url, "protocol": protocol, "headers": {"X-Tenant": "acme"}}}
        async with MCPPool(config) as pool:
            node = MCPToolNode(pool, server_options={"shop": options})
            graph = shop_graph(node)

            async def run(user: str) -> Any:
                out = await graph.ainvoke(
                    {"messages": [ai(("request_info", {}, f"c-{user}"))]},
                    thread(user),
                    context=Ctx(user_id=user, token=f"tok-{user}"),
                )
                return json_content(out["messages"][-1])

            seen = await asyncio.gather(*(run(u) for u in ("ann", "ben", "cid", "dee")))
    for user, info in zip(("ann", "ben", "cid", "dee"), seen, strict=True):
        assert info == {
            "meta": {"example.com/user": user},
            "authorization": f"Bearer tok-{user}",
            "tenant": "acme",
        }


# -- results into state -------------------------------------------------------------------------


async def test_a_result_becomes_a_command_that_updates_state_and_routes() -> None:
    options = {
        "add_to_cart": ToolOptions(
            hidden={"user_id": FromContext("user_id")},
            result=ResultToState(update={"cart": "items", "cart_size": "count"}, goto="checkout"),
        )
    }
    async with MCPToolNode(shop(), tool_options=options) as node:
        graph = shop_graph(node)
        out = await graph.ainvoke(
            {"messages": [ai(("add_to_cart", {"item": "plum", "quantity": 2}, "c1"))]},
            thread(),
            context=Ctx(user_id="u1"),
        )
    assert out["cart"] == ["plum", "plum"] and out["cart_size"] == 2
    assert out["visited"] == ["checkout"]
    message = out["messages"][-1]
    assert message.tool_call_id == "c1" and message.status == "success"


async def test_a_result_without_the_mapped_value_is_an_error_and_updates_nothing() -> None:
    options = {"list_items": ToolOptions(result=ResultToState(update={"cart": "items"}))}
    async with MCPToolNode(shop(), tool_options=options) as node:
        graph = shop_graph(node)
        out = await graph.ainvoke({"messages": [ai(("list_items", {}, "c1"))]}, thread())
    assert "cart" not in out
    assert out["messages"][-1].status == "error"
    assert "'items'" in out["messages"][-1].content


async def test_a_result_function_may_build_the_command() -> None:
    def to_state(message: ToolMessage, runtime: Any) -> Command[Any]:
        cart = message.artifact["structured_content"]["items"]
        return Command(update={"cart": cart, "messages": [message], "visited": [runtime.tool_call_id]})

    options = {"add_to_cart": ToolOptions(hidden={"user_id": FromContext("user_id")}, result=to_state)}
    async with MCPToolNode(shop(), tool_options=options) as node:
        out = await shop_graph(node).ainvoke(
            {"messages": [ai(("add_to_cart", {"item": "kiwi"}, "c7"))]}, thread(), context=Ctx(user_id="u")
        )
    assert out["cart"] == ["kiwi"] and out["visited"] == ["c7"]


# -- approval -----------------------------------------------------------------------------------


async def test_destructive_policy_follows_the_annotations() -> None:
    async with MCPToolNode(shop(), approval="destructive") as node:
        needs = {t.name for t in await node.get_tools() if getattr(t, "needs_approval", False)}
    # read-only and destructiveHint=false tools run freely; no annotations means "may destroy".
    assert needs == {"delete_item", "unannotated", "request_info", "confirm_info", "progress_work", "flaky"}


async def test_approve_edit_reject_and_respond() -> None:
    calls = [
        ("delete_item", {"item": "a"}, "c1"),
        ("delete_item", {"item": "b"}, "c2"),
        ("delete_item", {"item": "c"}, "c3"),
        ("delete_item", {"item": "d"}, "c4"),
        ("list_items", {}, "c5"),
    ]
    decisions = ("approve", "edit", "reject", "respond")
    async with MCPToolNode(shop(), approval=["delete_item"], approval_decisions=decisions) as node:
        graph = tool_graph(node)
        config = thread()
        out = await graph.ainvoke({"messages": [ai(*calls)]}, config)
        asked: list[MCPApprovalInterrupt] = [i.value for i in out["__interrupt__"]]
        assert [a["tool_call_id"] for a in asked] == ["c1", "c2", "c3", "c4"]
        first = asked[0]
        assert first["type"] == "tool_approval" and first["name"] == "delete_item"
        assert first["args"] == {"item": "a"} and first["server"] == "shop"
        assert first["annotations"] == {"destructiveHint": True}
        assert first["action_requests"] == [
            {"name": "delete_item", "args": {"item": "a"}, "description": "Delete an item."}
        ]
        assert first["review_configs"] == [
            {"action_name": "delete_item", "allowed_decisions": list(decisions)}
        ]
        ids = {i.value["tool_call_id"]: i.id for i in out["__interrupt__"]}
        resume = {
            ids["c1"]: {"type": "approve"},
            ids["c2"]: {
                "decisions": [
                    {"type": "edit", "edited_action": {"name": "delete_item", "args": {"item": "B!"}}}
                ]
            },
            ids["c3"]: {"type": "reject", "message": "not that one"},
            ids["c4"]: {"type": "respond", "message": "kept it"},
        }
        out = await graph.ainvoke(Command(resume=resume), config)
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["c1"].content == "deleted a"
    assert results["c2"].content.endswith("\n\ndeleted B!")
    assert results["c3"].status == "error" and "with reason: not that one" in results["c3"].content
    assert results["c4"].content == "kept it" and results["c4"].status == "success"
    assert "apple" in str(results["c5"].content)


async def test_a_bad_decision_leaves_the_question_pending() -> None:
    async with MCPToolNode(shop(), approval=["delete_item"]) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "a"}, "c1"))]}, thread())
        key = out["__interrupt__"][0].value["key"]
        with pytest.raises(Exception, match="not allowed"):
            await graph.ainvoke(Command(resume={"type": "respond", "message": "x"}), thread())
        with pytest.raises(Exception, match="not the tool"):
            await graph.ainvoke(
                Command(resume={"type": "edit", "edited_action": {"name": "other", "args": {}}}), thread()
            )
        state = await graph.aget_state(thread())
        assert [i.value["key"] for i in state.interrupts] == [key]
        out = await graph.ainvoke(Command(resume={"type": "approve", "key": key}), thread())
    assert tool_results(out) == {"c1": "deleted a"}


async def test_an_edit_is_checked_against_the_schema_and_hidden_arguments_stay_hidden() -> None:
    options = {"add_to_cart": ToolOptions(hidden={"user_id": FromContext("user_id")}, approval=True)}
    async with MCPToolNode(shop(), tool_options=options) as node:
        graph = shop_graph(node)
        config = thread()
        out = await graph.ainvoke(
            {"messages": [ai(("add_to_cart", {"item": "a"}, "c1"))]}, config, context=Ctx(user_id="real")
        )
        assert out["__interrupt__"][0].value["args"] == {"item": "a"}
        bad = {"type": "edit", "edited_action": {"args": {"item": 5}}}
        with pytest.raises(
            Exception, match=r"the edited arguments do not fit tool 'add_to_cart': item: .*string"
        ):
            await graph.ainvoke(Command(resume=bad), config, context=Ctx(user_id="real"))
        assert [i.value["args"] for i in (await graph.aget_state(config)).interrupts] == [{"item": "a"}]
        edit = {"type": "edit", "edited_action": {"args": {"item": "b", "user_id": "forged"}}}
        out = await graph.ainvoke(Command(resume=edit), config, context=Ctx(user_id="real"))
    message = out["messages"][-1]
    notice, _, result = message.content.partition("\n\n")
    assert notice.startswith('Note: before this call ran, a person changed its arguments to {"item": "b"}')
    assert json.loads(result) == {"items": ["b"], "count": 1}  # user_id came from the context


async def test_approval_true_asks_before_every_tool() -> None:
    async with MCPToolNode(shop(), approval=True) as node:
        assert all(getattr(t, "needs_approval", False) for t in await node.get_tools())
    with pytest.raises(ValueError, match="approval must be"):
        MCPToolNode(shop(), approval="everything")


async def test_a_server_hidden_argument_goes_only_to_tools_that_declare_it() -> None:
    options = ToolOptions(hidden={"user_id": FromContext("user_id")})
    async with MCPToolNode(shop(), server_options={"shop": options}) as node:
        tools = {t.name: t for t in await node.get_tools()}
        assert "user_id" in tools["whoami"].options.hidden
        assert "user_id" not in tools["list_items"].options.hidden
        # No context at all: the tools that need none still work.
        out = await tool_graph(node).ainvoke({"messages": [ai(("list_items", {}, "c1"))]}, thread())
    assert out["messages"][-1].status == "success"


async def test_per_call_headers_never_replace_the_protocols_own(caplog: pytest.LogCaptureFixture) -> None:
    options = ToolOptions(
        headers=lambda rt: {"X-Tenant": "per-call", "Mcp-Session-Id": "bogus", "Accept": "x/y"}
    )
    async with serve_in_loop(shopfront.build_server(), "http") as url:
        config = {"shop": {"url": url, "protocol": "legacy", "headers": {"X-Tenant": "configured"}}}
        async with MCPToolNode(config, server_options={"shop": options}) as node:
            graph = tool_graph(node)
            for n in range(2):
                out = await graph.ainvoke({"messages": [ai(("request_info", {}, f"c{n}"))]}, thread(str(n)))
                assert json_content(out["messages"][-1])["tenant"] == "per-call"
    dropped = [r.getMessage() for r in caplog.records if "is set by the protocol" in r.getMessage()]
    assert len(dropped) == 2 and "'Mcp-Session-Id'" in dropped[0] and "'Accept'" in dropped[1]


async def test_approval_outside_a_graph_is_a_clear_error() -> None:
    async with MCPToolNode(shop(), approval="destructive") as node:
        tool = {t.name: t for t in await node.get_tools()}["delete_item"]
        message = await tool.ainvoke(
            {"name": "delete_item", "args": {"item": "a"}, "id": "c1", "type": "tool_call"}
        )
    assert message.status == "error" and "needs a person's approval" in message.content


# -- tool filter --------------------------------------------------------------------------------


async def test_the_filter_hides_tools_from_the_model_and_refuses_their_calls() -> None:
    def only_reads(tool: Any, context: Any) -> bool:
        return context is not None and (
            context.user_id == "admin"
            or tool.metadata["mcp"].get("annotations", {}).get("readOnlyHint", False)
        )

    async with MCPToolNode(shop(), tool_filter=only_reads) as node:
        visitor = {t.name for t in await node.get_tools(Ctx(user_id="guest"))}
        admin = {t.name for t in await node.get_tools(Ctx(user_id="admin"))}
        assert visitor == {"whoami", "list_items"}
        assert "delete_item" in admin
        graph = shop_graph(node)
        out = await graph.ainvoke(
            {
                "messages": [
                    ai(("delete_item", {"item": "a"}, "c1"), ("list_items", {}, "c2"), ("nope", {}, "c4"))
                ]
            },
            thread(),
            context=Ctx(user_id="guest"),
        )
        results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
        assert results["c1"].status == "error"
        assert (
            results["c1"].content
            == "Error: delete_item is not a valid tool, try one of [whoami, list_items]."
        )
        assert results["c2"].status == "success"
        # An unknown name gets the same message: the hidden tools are not revealed.
        assert results["c4"].content == "Error: nope is not a valid tool, try one of [whoami, list_items]."
        out = await graph.ainvoke(
            {"messages": [ai(("delete_item", {"item": "a"}, "c3"))]},
            thread("2"),
            context=Ctx(user_id="admin"),
        )
        assert out["messages"][-1].content == "deleted a"


async def test_a_result_can_update_the_parent_graph() -> None:
    options = {
        "add_to_cart": ToolOptions(
            hidden={"user_id": FromContext("user_id")},
            result=ResultToState(update={"cart": "items"}, graph=Command.PARENT),
        )
    }

    class Inner(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]

    async with MCPToolNode(shop(), tool_options=options) as node:
        inner = StateGraph(Inner, context_schema=Ctx)
        inner.add_node(node)
        inner.add_edge(START, "tools")
        outer = StateGraph(ShopState, context_schema=Ctx)
        outer.add_node("inner", inner.compile())
        outer.add_edge(START, "inner")
        graph = outer.compile(checkpointer=InMemorySaver())
        out = await graph.ainvoke(
            {"messages": [ai(("add_to_cart", {"item": "fig"}, "c1"))]}, thread(), context=Ctx(user_id="p")
        )
    assert out["cart"] == ["fig"]
    assert out["messages"][-1].tool_call_id == "c1"


def test_answers_of_one_kind_are_never_applied_to_another_kind_of_question() -> None:
    from pydantic import TypeAdapter

    from langgraph_mcp._elicitation.answers import is_stale, resume_type, sampling_resume_type

    form = {
        "key": "confirm#0123abcd",
        "mode": "form",
        "message": "ok?",
        "requested_schema": {"type": "object"},
    }
    elicitation = TypeAdapter(resume_type([form]))  # type: ignore[list-item]
    sampling = TypeAdapter(sampling_resume_type("sampling#0123abcd", True))
    for decision in ({"type": "approve"}, {"decisions": [{"type": "reject"}]}):
        assert is_stale(elicitation.validate_python(decision))
        assert is_stale(sampling.validate_python(decision))


async def test_two_approvals_in_one_task_keep_their_own_decisions() -> None:
    from langgraph.graph import MessagesState

    async with MCPToolNode(shop(), approval=["delete_item"]) as node:
        tool = {t.name: t for t in await node.get_tools()}["delete_item"]

        async def both(state: MessagesState) -> dict[str, Any]:
            first = await tool.ainvoke(
                {"name": "delete_item", "args": {"item": "a"}, "id": "c1", "type": "tool_call"}
            )
            second = await tool.ainvoke(
                {"name": "delete_item", "args": {"item": "b"}, "id": "c2", "type": "tool_call"}
            )
            return {"messages": [first, second]}

        builder = StateGraph(MessagesState)
        builder.add_node("both", both)
        builder.add_edge(START, "both")
        graph = builder.compile(checkpointer=InMemorySaver())
        out = await graph.ainvoke({"messages": []}, thread())
        assert [i.value["args"] for i in out["__interrupt__"]] == [{"item": "a"}]
        out = await graph.ainvoke(Command(resume={"type": "approve"}), thread())
        assert [i.value["args"] for i in out["__interrupt__"]] == [{"item": "b"}]
        out = await graph.ainvoke(Command(resume={"type": "reject"}), thread())
    got = tool_results(out)
    assert got["c1"] == "deleted a"
    assert got["c2"].startswith("User rejected the tool call for `delete_item`")


async def test_a_resumed_call_whose_server_is_down_is_not_called_unknown() -> None:
    from tests.conftest_servers import stdio_params

    saver = InMemorySaver()
    up = {"ask": stdio_params("asker"), "shop": {"server": shopfront.build_server()}}
    async with MCPToolNode(up) as node:
        out = await tool_graph(node, checkpointer=saver).ainvoke(
            {"messages": [ai(("pick_options", {}, "c1"), ("list_items", {}, "c2"))]}, thread()
        )
        assert [i.value["tool_call_id"] for i in out["__interrupt__"]] == ["c1"]
    # As in a new process where the asking server does not start.
    down = {"ask": {"command": "/nonexistent/asker"}, "shop": {"server": shopfront.build_server()}}
    async with MCPToolNode(down) as node:
        request = out["__interrupt__"][0].value["requests"][0]
        out = await tool_graph(node, checkpointer=saver).ainvoke(
            Command(resume={"responses": {request["key"]: {"action": "decline"}}}),
            thread(),
        )
    message = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}["c1"]
    assert message.status == "error"
    assert "cannot be called now: MCP server(s) 'ask' could not be reached" in message.content


def test_the_edit_notice_goes_on_the_tool_message_of_any_command_shape() -> None:
    from langgraph_mcp._call.approval import with_edit_notice

    message = ToolMessage("result", tool_call_id="c1")
    as_list, _ = with_edit_notice(
        (Command(update=[("messages", [message]), ("cart", [1])]), None), {"a": 1}, "messages"
    )
    assert as_list.update[0][1][0].content.endswith("\n\nresult") and as_list.update[1] == ("cart", [1])
    as_dict, _ = with_edit_notice((Command(update={"messages": [message]}, goto="x"), None), {}, "messages")
    assert (
        as_dict.update["messages"][0].content.startswith("Note: before this call ran") and as_dict.goto == "x"
    )
    untouched = (Command(update={"cart": 1}), None)
    assert with_edit_notice(untouched, {}, "messages") is untouched


async def test_a_result_function_outside_a_graph_leaves_the_plain_result() -> None:
    def to_state(message: ToolMessage, runtime: Any) -> Command[Any]:
        raise AssertionError("not called without a graph runtime")

    async with MCPToolNode(shop(), tool_options={"list_items": ToolOptions(result=to_state)}) as node:
        tool = {t.name: t for t in await node.get_tools()}["list_items"]
        message = await tool.ainvoke({"name": "list_items", "args": {}, "id": "c1", "type": "tool_call"})
    assert isinstance(message, ToolMessage) and "apple" in str(message.content)


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_headers_and_meta_reach_a_call_that_asks_a_person(protocol: str) -> None:
    # 2026-07-28: the answer goes in a second request (rounds); 2025-11-25: the request is held
    # open while the person answers. Both must carry the call's headers and _meta.
    options = ToolOptions(
        headers=lambda rt: {"Authorization": f"Bearer {rt.context.token}"},
        meta=lambda rt: {"example.com/user": rt.context.user_id},
    )
    async with (
        serve_in_loop(shopfront.build_server(), "http") as url,
        MCPToolNode({"shop": {"url": url, "protocol": protocol}}, server_options={"shop": options}) as node,
    ):
        graph = shop_graph(node)
        users = ("ann", "ben")

        async def ask(user: str) -> Any:
            return await graph.ainvoke(
                {"messages": [ai(("confirm_info", {"item": user}, f"c-{user}"))]},
                thread(user),
                context=Ctx(user_id=user, token=f"tok-{user}"),
            )

        asked = await asyncio.gather(*(ask(u) for u in users))

        async def answer(user: str, out: Any) -> Any:
            (pending,) = out["__interrupt__"]
            key = pending.value["requests"][0]["key"]
            resume = {"responses": {key: {"action": "accept", "content": {"ok": True}}}}
            return await graph.ainvoke(
                Command(resume=resume), thread(user), context=Ctx(user_id=user, token=f"tok-{user}")
            )

        done = await asyncio.gather(*(answer(u, o) for u, o in zip(users, asked, strict=True)))
    for user, out in zip(users, done, strict=True):
        assert json_content(out["messages"][-1]) == {
            "meta": {"example.com/user": user},
            "authorization": f"Bearer tok-{user}",
            "tenant": None,
            "ok": True,
        }


async def test_approval_then_a_question_in_one_call_each_get_their_own_answer() -> None:
    from tests.conftest_servers import stdio_params

    for protocol in ("auto", "legacy"):
        config = {"shop": {**stdio_params("shopfront"), "protocol": protocol}}
        async with MCPToolNode(config, approval=["confirm_info"]) as node:
            graph = tool_graph(node)
            cfg = thread(protocol)
            out = await graph.ainvoke({"messages": [ai(("confirm_info", {"item": "x"}, "c1"))]}, cfg)
            assert out["__interrupt__"][0].value["type"] == "tool_approval"
            edit = {"type": "edit", "edited_action": {"args": {"item": "y"}}}
            out = await graph.ainvoke(Command(resume=edit), cfg)
            (question,) = out["__interrupt__"]
            assert question.value["type"] == "mcp_elicitation"
            assert question.value["requests"][0]["message"] == "Confirm y?"
            key = question.value["requests"][0]["key"]
            out = await graph.ainvoke(
                Command(resume={"responses": {key: {"action": "accept", "content": {"ok": True}}}}), cfg
            )
        message = out["messages"][-1]
        assert json.loads(message.content.partition("\n\n")[2])["ok"] is True, protocol
