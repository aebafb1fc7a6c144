"""The per-run tool view answers, once, which MCP tools a run sees and may call: what exists, what
the model is offered, how each call is routed or refused (byte for byte ``ToolNode``'s messages),
which calls ask no approval; and the node and the middleware give the answers it gives."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import INVALID_TOOL_NAME_ERROR_TEMPLATE

from langgraph_mcp import MCPMiddleware, MCPPool, MCPTool, MCPToolNode, ToolOptions, create_mcp_agent
from langgraph_mcp._catalog.view import ToolView, tool_ref
from tests.chat import ScriptModel
from tests.conftest_servers import stdio_params
from tests.helpers import ai, thread, tool_graph
from tests.servers import apps, demo

SERVED = ["add", "echo", "fail"]


def served(**extra: Any) -> dict[str, Any]:
    return {"demo": {"server": demo.build_server(), "tools": SERVED, **extra}}


def invalid(name: str, available: list[str]) -> str:
    return INVALID_TOOL_NAME_ERROR_TEMPLATE.format(requested_tool=name, available_tools=", ".join(available))


def names(tools: list[MCPTool]) -> list[str]:
    return [t.name for t in tools]


class CountingFilter:
    """A ``tool_filter`` that lets every tool but ``fail`` through and counts what it is asked."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()

    def __call__(self, tool: MCPTool, context: Any) -> bool:
        self.asked[tool.name] += 1
        return tool.name != "fail"


async def test_the_filter_is_asked_once_per_tool_per_view() -> None:
    counting = CountingFilter()
    async with MCPToolNode(served(), tool_filter=counting, approval=True, approval_mode="batched") as node:
        await node.start()
        view = ToolView(node.toolset, context={"user": "alice"})
        assert names(view.offered) == ["add", "echo"]
        assert names(view.allowed) == ["add", "echo"]
        assert view.hides_any
        assert isinstance(view.route("add", "c1"), MCPTool)
        refused = view.route("fail", "c2")
        assert isinstance(refused, ToolMessage) and refused.content == invalid("fail", ["add", "echo"])
        calls = [{"name": n, "args": {"a": 1, "b": 2}, "id": f"c{i}"} for i, n in enumerate(["add", "fail"])]
        assert [r.name for r in await view.approvals(calls)] == ["add"]
        assert counting.asked == {"add": 1, "echo": 1, "fail": 1}
        # Another view (another run) asks again, once.
        assert names(ToolView(node.toolset, context=None).offered) == ["add", "echo"]
        assert counting.asked == {"add": 2, "echo": 2, "fail": 2}


async def test_a_tool_meant_only_for_views_is_kept_from_the_model_and_given_to_views() -> None:
    async with MCPPool({"apps": {"server": apps.build_server()}}) as pool:
        node = MCPToolNode(pool)
        await node.start()
        model, app = ToolView(node.toolset), ToolView(node.toolset, audience="app")
        assert "refresh_chart" in names(model.tools)
        assert "refresh_chart" not in names(model.offered) and "plain_echo" in names(model.offered)
        assert "refresh_chart" in names(app.offered) and "plain_echo" not in names(app.offered)
        assert model.hides_any and app.hides_any
        refused = model.route("refresh_chart", "c1")
        assert isinstance(refused, ToolMessage)
        assert refused.content == invalid("refresh_chart", names(model.offered))
        assert app.route("refresh_chart", "c1") is app.find("apps", "refresh_chart")
        assert not app.visible(app.bound.by_name["plain_echo"])


async def test_a_revealed_tool_is_offered_only_once_revealed() -> None:
    async with MCPToolNode(served(), tool_search=True) as node:
        await node.start()
        add = node.toolset.get("add")
        assert add is not None
        local = tuple(node._local_tools)
        assert local == ("search_tools",)
        before = ToolView(node.toolset, revealed=frozenset(), local=local)
        assert before.offered == [] and names(before.allowed) == SERVED
        refused = before.route("add", "c1")
        assert isinstance(refused, ToolMessage) and refused.content == invalid("add", ["search_tools"])
        assert before.not_asked() == {"search_tools", *SERVED}
        after = ToolView(node.toolset, revealed=frozenset({tool_ref(add)}), local=local)
        assert after.offered == [add]
        assert after.route("add", "c1") is add
        refused = after.route("echo", "c2")
        assert isinstance(refused, ToolMessage)
        assert refused.content == invalid("echo", ["search_tools", "add"])
        assert after.not_asked() == {"search_tools", "echo", "fail"}
        # The agent's message lists its own tools first, sorted, as the middleware gives them.
        agent = ToolView(
            node.toolset, revealed=frozenset({tool_ref(add)}), local=["other", "search_tools"], lists="agent"
        )
        refused = agent.route("echo", "c2")
        assert isinstance(refused, ToolMessage)
        assert refused.content == invalid("echo", ["other", "search_tools", "add"])
        # Without tool search every allowed tool is offered.
        assert names(ToolView(node.toolset).offered) == SERVED


async def test_each_refusal_says_why() -> None:
    counting = CountingFilter()
    async with MCPToolNode(served(), tool_filter=counting, tools=[]) as node:
        await node.start()
        view = ToolView(node.toolset, local=["local_tool"])
        # Filtered: the node lists its own tools and the offered ones; the agent only the allowed.
        refused = view.route("fail", "c1")
        assert isinstance(refused, ToolMessage)
        assert refused.content == invalid("fail", ["local_tool", "add", "echo"])
        assert refused.status == "error" and refused.tool_call_id == "c1" and refused.name == "fail"
        agent = ToolView(node.toolset, local=["local_tool"], lists="agent")
        refused = agent.route("fail", "c1")
        assert isinstance(refused, ToolMessage) and refused.content == invalid("fail", ["add", "echo"])
        # Unknown while tools are hidden: the node refuses it, the agent leaves it to its tool node.
        refused = view.route("nope", "c2")
        assert isinstance(refused, ToolMessage) and refused.content == invalid(
            "nope", ["local_tool", "add", "echo"]
        )
        assert agent.route("nope", "c2") is None
        assert view.route("local_tool", "c3") is None  # the face's own
    async with MCPToolNode(served()) as node:
        await node.start()
        view = ToolView(node.toolset)
        assert not view.hides_any
        assert view.route("nope", "c1") is None  # ToolNode's own message, listing every tool


async def test_a_withheld_tool_and_a_server_down_are_refused_as_such(tmp_path: Path) -> None:
    config = {
        "a": {"server": demo.build_server("a"), "tools": ["echo"]},
        "b": {"server": demo.build_server("b"), "tools": ["echo", "add"]},
    }
    async with MCPToolNode(config, tool_options={"echo": ToolOptions(meta={"x": "y"})}) as node:
        await node.start()
        view = ToolView(node.toolset)
        withheld = sorted(view.bound.withheld)
        assert len(withheld) == 2 and names(view.tools) == ["add"]
        refused = view.route(withheld[0], "c1")
        assert isinstance(refused, ToolMessage)
        assert refused.content == (
            f"Error: {withheld[0]} cannot be called: its configured options could not be bound to one "
            "MCP server's tool, so it is not offered. Try another tool."
        )
    gone = {**stdio_params("demo"), "command": str(tmp_path / "no-such-server"), "connect_timeout": 5}
    async with MCPToolNode(
        {"gone": gone, **served()}, on_connection_error="warn", tool_options={"demo/add": ToolOptions()}
    ) as node:
        await node.start()
        view = ToolView(node.toolset)
        refused = view.route("absent", "c1")
        assert isinstance(refused, ToolMessage)
        assert refused.content == (
            "Error: absent cannot be called now: MCP server(s) 'gone' could not be reached, and no "
            "reachable server offers it. Try again later."
        )
        # While it is down, the names it might take are not given to another server's tools.
        assert view.route("demo_add", "c2") is view.bound.by_name["demo_add"]
        assert isinstance(view.route("add", "c3"), ToolMessage)


async def test_the_node_and_the_middleware_give_the_views_answers() -> None:
    def no_fail(tool: MCPTool, context: Any) -> bool:
        return tool.name != "fail"

    async with MCPPool(served()) as pool:
        node = MCPToolNode(pool, tool_filter=no_fail)
        middleware = MCPMiddleware(pool, tool_filter=no_fail)
        await node.start()
        offered = names(ToolView(node.toolset).offered)
        assert offered == ["add", "echo"]
        assert names(await node.get_tools()) == offered
        assert names(await middleware.get_tools()) == offered

        call = ai(("fail", {"message": "x"}, "c1"))
        out = await tool_graph(node).ainvoke({"messages": [call]}, thread())
        [by_node] = [m for m in out["messages"] if isinstance(m, ToolMessage)]

        model = ScriptModel(turns=[[("fail", {"message": "x"}, "c1")], "done"], unbound="call")
        agent = create_mcp_agent(model, pool, tool_filter=no_fail)
        out = await agent.ainvoke({"messages": [("user", "go")]})
        [by_agent] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        assert set(model.seen[0]) == {"add", "echo"}

        expected = ToolView(node.toolset).route("fail", "c1")
        assert isinstance(expected, ToolMessage)
        assert by_node.content == by_agent.content == expected.content == invalid("fail", offered)
        assert by_node.status == by_agent.status == "error"
