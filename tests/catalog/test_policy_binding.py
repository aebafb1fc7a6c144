"""Approval and ``tool_options`` follow the tool (server and MCP name), whatever name it is exposed
under: while another server is down (its tools unknown, so names become ``<server>_<name>``),
with a server ``prefix``, after the other server comes back, and when two servers offer the same
name. Options that cannot be bound to one tool withhold it; nothing fails open."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AnyMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command
from typing_extensions import TypedDict

from langgraph_mcp import MCPConfigError, MCPMiddleware, MCPToolNode, ToolOptions
from langgraph_mcp._catalog.view import ToolView
from langgraph_mcp.options import FromContext
from tests.helpers import ai, gated_demo, json_content, thread, tool_graph, tool_results
from tests.servers import shopfront


@dataclass
class Ctx:
    user_id: str


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


def ctx_graph(node: MCPToolNode) -> Any:
    builder = StateGraph(State, context_schema=Ctx)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    return builder.compile(checkpointer=InMemorySaver())


def shop(**extra: Any) -> dict[str, Any]:
    return {"server": shopfront.build_server(), **extra}


def messages(out: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}


HIDDEN = ToolOptions(hidden={"user_id": FromContext("user_id")})


async def test_approval_by_name_asks_while_another_server_is_down_and_after_it_is_back(
    tmp_path: Path,
) -> None:
    """The first server is down, so the shop's tools are exposed as ``shop_<name>``; the
    destructive tool named in ``approval`` still asks, and still does once the first is back
    (names are kept)."""
    gated, _, ready = gated_demo(tmp_path, backoff=0)
    servers = {"a": gated, "shop": shop()}
    async with MCPToolNode(servers, on_connection_error="warn", approval=["delete_item"]) as node:
        names = {t.name for t in await node.get_tools()}
        assert "shop_delete_item" in names and "delete_item" not in names
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("shop_delete_item", {"item": "x"}, "c1"))]}, thread())
        asked = [i.value for i in out["__interrupt__"]]
        assert [(a["name"], a["server"], a["mcp_tool"]) for a in asked] == [
            ("shop_delete_item", "shop", "delete_item")
        ]
        out = await graph.ainvoke(Command(resume={"type": "reject", "message": "no"}), thread())
        assert messages(out)["c1"].status == "error"

        ready.touch()
        node.pool.retry("a")
        names = {t.name for t in await node.get_tools()}
        assert {"echo", "shop_delete_item"} <= names  # the server is back; names are kept
        out = await graph.ainvoke({"messages": [ai(("shop_delete_item", {"item": "y"}, "c2"))]}, thread("t2"))
        assert [i.value["mcp_tool"] for i in out["__interrupt__"]] == ["delete_item"]


async def test_approval_by_mcp_name_covers_a_prefixed_tool() -> None:
    async with MCPToolNode({"shop": shop(prefix="fs_")}, approval=["delete_item"]) as node:
        asking = {t.name for t in await node.get_tools() if getattr(t, "needs_approval", False)}
        assert asking == {"fs_delete_item"}
    async with MCPToolNode({"shop": shop(prefix="fs_")}, approval=["fs_delete_item"]) as node:
        asking = {t.name for t in await node.get_tools() if getattr(t, "needs_approval", False)}
        assert asking == {"fs_delete_item"}
    async with MCPToolNode({"shop": shop(prefix="fs_")}, approval=["shop/delete_item"]) as node:
        asking = {t.name for t in await node.get_tools() if getattr(t, "needs_approval", False)}
        assert asking == {"fs_delete_item"}


async def test_hidden_options_by_prefixed_or_mcp_name_hide_the_argument() -> None:
    for key in ("whoami", "fs_whoami", "shop/whoami"):
        async with MCPToolNode({"shop": shop(prefix="fs_")}, tool_options={key: HIDDEN}) as node:
            tool = {t.name: t for t in await node.get_tools()}["fs_whoami"]
            assert "user_id" not in tool.args, key
            out = await ctx_graph(node).ainvoke(
                {"messages": [ai(("fs_whoami", {"user_id": "forged"}, "c1"))]},
                thread(),
                context=Ctx(user_id="real"),
            )
            assert json_content(messages(out)["c1"])["user_id"] == "real", key


async def test_options_by_a_name_a_down_server_may_offer_withhold_the_tool(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``a`` is down and was never listed, so ``whoami`` may be its tool too: the shop's whoami is
    not offered (the hidden argument never reappears in a schema), a call to it is refused without
    reaching the server, and a warning says why and how to fix it. Once ``a`` has listed its tools
    (it has no ``whoami``), the options are the shop's and the tool is offered, argument hidden."""
    gated, _, ready = gated_demo(tmp_path, backoff=0)
    servers = {"a": gated, "shop": shop()}
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp"):
        async with MCPToolNode(servers, on_connection_error="warn", tool_options={"whoami": HIDDEN}) as node:
            tools = {t.name: t for t in await node.get_tools()}
            assert "shop_whoami" not in tools and "whoami" not in tools
            assert "shop_list_items" in tools
            graph = ctx_graph(node)
            out = await graph.ainvoke(
                {"messages": [ai(("shop_whoami", {"user_id": "forged"}, "c1"))]},
                thread(),
                context=Ctx(user_id="real"),
            )
            refused = messages(out)["c1"]
            assert refused.status == "error" and "cannot be called" in refused.content
            assert "forged" not in refused.content
            warned = [r.getMessage() for r in caplog.records if "withheld" in r.getMessage()]
            assert len(warned) == 1, warned
            assert "'a' have not listed their tools yet" in warned[0] and "'shop/whoami'" in warned[0]

            ready.touch()
            node.pool.retry("a")
            tools = {t.name: t for t in await node.get_tools()}
            assert "shop_whoami" in tools and "user_id" not in tools["shop_whoami"].args
            out = await graph.ainvoke(
                {"messages": [ai(("shop_whoami", {"user_id": "forged"}, "c2"))]},
                thread("t2"),
                context=Ctx(user_id="real"),
            )
            assert json_content(messages(out)["c2"])["user_id"] == "real"


async def test_qualified_options_bind_while_another_server_is_down(tmp_path: Path) -> None:
    gated, _, _ = gated_demo(tmp_path, backoff=0)
    servers = {"a": gated, "shop": shop()}
    options = {"shop/whoami": HIDDEN}
    async with MCPToolNode(servers, on_connection_error="warn", tool_options=options) as node:
        tool = {t.name: t for t in await node.get_tools()}["shop_whoami"]
        assert "user_id" not in tool.args
        out = await ctx_graph(node).ainvoke(
            {"messages": [ai(("shop_whoami", {"user_id": "forged"}, "c1"))]},
            thread(),
            context=Ctx(user_id="real"),
        )
        assert json_content(messages(out)["c1"])["user_id"] == "real"


async def test_a_name_two_servers_offer_binds_options_to_neither_but_approval_to_both(
    caplog: pytest.LogCaptureFixture,
) -> None:
    servers = {"one": shop(), "two": shop()}
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp"):
        async with MCPToolNode(servers, tool_options={"whoami": HIDDEN}, approval=["delete_item"]) as node:
            tools = {t.name: t for t in await node.get_tools()}
            assert "whoami" not in tools and "two_whoami" not in tools
            asking = {n for n, t in tools.items() if getattr(t, "needs_approval", False)}
            assert asking == {"delete_item", "two_delete_item"}
    warned = [r.getMessage() for r in caplog.records if "withheld" in r.getMessage()]
    assert len(warned) == 2 and all("offer it too" in w for w in warned), warned

    options = {"two/whoami": HIDDEN}
    async with MCPToolNode(servers, tool_options=options, approval=["two/delete_item"]) as node:
        tools = {t.name: t for t in await node.get_tools()}
        assert "user_id" in tools["whoami"].args and "user_id" not in tools["two_whoami"].args
        asking = {n for n, t in tools.items() if getattr(t, "needs_approval", False)}
        assert asking == {"two_delete_item"}


async def test_a_later_listing_that_adds_the_name_on_another_server_withholds_it() -> None:
    """A server that starts offering a tool of the same name later (as a hostile server might,
    to receive another tool's hidden values) makes the unqualified options unresolvable: the tool
    is withheld from then on; a qualified key keeps working."""
    from tests.servers import other

    servers = {"shop": shop(), "other": {"server": other.build_server()}}
    for key, kept in (("whoami", False), ("shop/whoami", True)):
        async with MCPToolNode(servers, tool_options={key: HIDDEN}) as node:
            tools = {t.name: t for t in await node.get_tools()}
            assert "user_id" not in tools["whoami"].args
            out = await tool_graph(node).ainvoke(
                {"messages": [ai(("add_tool", {"name": "whoami"}, "c1"))]}, thread()
            )
            assert tool_results(out) == {"c1": "added"}
            tools = {t.name: t for t in await node.get_tools()}
            if kept:
                assert "user_id" not in tools["whoami"].args and "other_whoami" in tools
            else:
                assert "whoami" not in tools and "other_whoami" not in tools


async def test_policy_names_are_checked_at_build_time_and_unmatched_ones_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with pytest.raises(MCPConfigError, match="names no configured MCP server"):
        MCPToolNode({"shop": shop()}, approval=["nosuch/delete_item"])
    with pytest.raises(MCPConfigError, match="names no configured MCP server"):
        MCPToolNode({"shop": shop()}, tool_options={"nosuch/whoami": HIDDEN})
    with pytest.raises(MCPConfigError, match="never expose"):
        MCPToolNode({"shop": shop(tools=["list_items"])}, approval=["shop/delete_item"])
    with pytest.raises(MCPConfigError, match="never expose"):
        MCPMiddleware({"shop": shop(exclude_tools=["whoami"])}, tool_options={"shop/whoami": HIDDEN})
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp"):
        async with MCPToolNode(
            {"shop": shop()}, approval=["delete_itm"], tool_options={"shop/whoamii": HIDDEN}
        ) as node:
            await node.get_tools()
            await node.get_tools()
    texts = [r.getMessage() for r in caplog.records]
    assert len([t for t in texts if "approval names 'delete_itm'" in t]) == 1, texts
    assert len([t for t in texts if "tool_options names 'shop/whoamii'" in t]) == 1, texts


async def test_the_middleware_refuses_a_withheld_tool(tmp_path: Path) -> None:
    """Through ``MCPMiddleware`` too: the withheld tool is not given to the model, and a call to
    it (as a checkpoint might hold) is an error message, not a call."""
    gated, _, _ = gated_demo(tmp_path, backoff=0)
    middleware = MCPMiddleware(
        {"a": gated, "shop": shop()}, on_connection_error="warn", tool_options={"whoami": HIDDEN}
    )
    try:
        names = {t.name for t in await middleware.get_tools()}
        assert "shop_whoami" not in names and "shop_list_items" in names
        refused = ToolView(middleware.toolset).unavailable("shop_whoami", "c1")
        assert refused is not None and refused.status == "error"
        assert ToolView(middleware.toolset).unavailable("shop_list_items", "c1") is not None  # `a` is down
    finally:
        await middleware.aclose()


def test_results_of_a_plain_graph_are_unchanged_for_a_single_server() -> None:
    """One server: an unqualified key can only mean its tool (no other server exists)."""
    node = MCPToolNode({"shop": shop()}, tool_options={"whoami": HIDDEN}, approval=["delete_item"])
    graph = ctx_graph(node)
    out = graph.invoke(
        {"messages": [ai(("whoami", {"user_id": "forged"}, "c1"))]}, thread(), context=Ctx(user_id="real")
    )
    assert json_content(messages(out)["c1"])["user_id"] == "real"
    assert tool_results(out).keys() == {"c1"}
    node.close()


def fs_server() -> Any:
    """Two tools of one server whose names meet under a prefix: ``delete`` is exposed as
    ``fs_delete`` with ``prefix="fs_"``, and ``fs_delete`` as ``fs_fs_delete``."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("fs")

    @server.tool()
    def delete(path: str) -> str:
        """Delete a file."""
        return "deleted " + path

    @server.tool()
    def fs_delete(path: str) -> str:
        """Delete the whole file system."""
        return "wiped " + path

    return server


async def test_a_key_that_is_a_form_of_two_tools_of_one_server_binds_to_neither(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``"fs_delete"`` is ``delete`` with the prefix and also the MCP name ``fs_delete``: an
    approval exemption under that key would land on both, so both are withheld; qualified keys
    bind to one."""
    config = {"fs": {"server": fs_server(), "prefix": "fs_"}}
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp"):
        async with MCPToolNode(
            config, approval=True, tool_options={"fs_delete": ToolOptions(approval=False)}
        ) as node:
            offered = {t.name for t in await node.get_tools()}
    assert offered.isdisjoint({"fs_delete", "fs_fs_delete"})
    assert any("another tool of MCP server 'fs' has that name too" in r.getMessage() for r in caplog.records)
    async with MCPToolNode(
        config, approval=True, tool_options={"fs/delete": ToolOptions(approval=False)}
    ) as node:
        asks = {t.name: t.needs_approval for t in await node.get_tools()}
    assert asks == {"fs_delete": False, "fs_fs_delete": True}


async def test_approval_by_the_name_a_collision_gave_asks(tmp_path: Path) -> None:
    """While the first server is down the shop's tool is exposed as ``shop_delete_item``: the
    name a person reads in a trace. Approval by that name asks (asking more is safe); options
    by it withhold the tool (the name changes with reachability)."""
    gated, _, _ready = gated_demo(tmp_path, backoff=0)
    config = {"a": gated, "shop": shop()}
    async with MCPToolNode(config, on_connection_error="warn", approval=["shop_delete_item"]) as node:
        tools = {t.name: t for t in await node.get_tools()}
    assert tools["shop_delete_item"].needs_approval
    assert not tools["shop_whoami"].needs_approval
    async with MCPToolNode(config, on_connection_error="warn", tool_options={"shop_whoami": HIDDEN}) as node:
        offered = {t.name for t in await node.get_tools()}
    assert "shop_whoami" not in offered and "shop_delete_item" in offered
