"""What depends only on the catalog and a node's options is worked out once per catalog version:
runs of one catalog bind no tool and build no model schema again (a server being down
included), while a ``list_changed`` or other options take effect."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from langgraph_mcp import MCPPool, MCPToolNode, ToolOptions
from langgraph_mcp._call import adapter as _tools
from langgraph_mcp._support import schema as _schema
from tests.conftest_servers import serve_in_loop
from tests.helpers import ai, free_port, thread, tool_graph, tool_results
from tests.servers import other


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts of the per-catalog work: binding a tool to options, building a model schema."""
    counts: Counter[str] = Counter()
    with_options = _tools.MCPTool.with_options
    model_schema = _schema.model_schema

    def counted_with_options(self: Any, *args: Any, **kwargs: Any) -> Any:
        counts["bind"] += 1
        return with_options(self, *args, **kwargs)

    def counted_model_schema(*args: Any, **kwargs: Any) -> Any:
        counts["schema"] += 1
        return model_schema(*args, **kwargs)

    monkeypatch.setattr(_tools.MCPTool, "with_options", counted_with_options)
    monkeypatch.setattr(_tools, "model_schema", counted_model_schema)
    return counts


def _options() -> dict[str, ToolOptions]:
    return {"other/echo": ToolOptions(meta=lambda runtime: {"k": "v"})}


async def test_runs_of_one_catalog_bind_nothing_again_while_a_server_is_down(counted: Counter[str]) -> None:
    servers = {"other": {"server": other.build_server()}, "late": f"http://127.0.0.1:{free_port()}/mcp"}
    async with MCPToolNode(servers, on_connection_error="warn", tool_options=_options()) as node:
        graph = tool_graph(node)
        first = await node.get_tools()
        assert counted["bind"] == len(first) > 0
        counted.clear()
        for i in range(5):
            out = await graph.ainvoke(
                {"messages": [ai(("echo", {"text": f"x{i}"}, f"c{i}"))]}, thread(f"t{i}")
            )
            assert tool_results(out)[f"c{i}"] == f"other:x{i}"
        assert counted == Counter()
        assert await node.get_tools() == first
        assert all(a is b for a, b in zip(await node.get_tools(), first, strict=True))


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_list_change_reaches_the_model_schema_and_the_calls(
    counted: Counter[str], protocol: str
) -> None:
    options = {"fresh": ToolOptions(hidden={"text": lambda runtime: "from-options"})}
    async with (
        serve_in_loop(other.build_server()) as url,
        MCPToolNode({"other": {"url": url, "protocol": protocol}}, tool_options=options) as node,
    ):
        graph = tool_graph(node)
        before = {t.name: t for t in await node.get_tools()}
        assert "fresh" not in before
        out = await graph.ainvoke({"messages": [ai(("add_tool", {"name": "fresh"}, "c0"))]}, thread("t0"))
        assert tool_results(out)["c0"] == "added"
        for _ in range(200):
            tools = {t.name: t for t in await node.get_tools()}
            if "fresh" in tools:
                break
            await asyncio.sleep(0.05)
        # The new tool is bound to its options: the hidden argument left the model's schema.
        assert "text" not in tools["fresh"].args
        assert tools["echo"] is before["echo"]  # an unchanged tool is not bound again
        out = await graph.ainvoke({"messages": [ai(("fresh", {"text": "model"}, "c1"))]}, thread("t1"))
        assert tool_results(out)["c1"] == "fresh:from-options"
        counted.clear()
        out = await graph.ainvoke({"messages": [ai(("fresh", {}, "c2"))]}, thread("t2"))
        assert tool_results(out)["c2"] == "fresh:from-options"
        assert counted == Counter()


async def test_nodes_with_other_options_on_one_pool_each_get_their_own_binding() -> None:
    async with MCPPool({"other": {"server": other.build_server()}}) as pool:
        plain = MCPToolNode(pool)
        hiding = MCPToolNode(pool, tool_options={"echo": ToolOptions(hidden={"text": lambda runtime: "h"})})
        for _ in range(2):
            assert "text" in {t.name: t for t in await plain.get_tools()}["echo"].args
            assert "text" not in {t.name: t for t in await hiding.get_tools()}["echo"].args
        out = await tool_graph(hiding).ainvoke({"messages": [ai(("echo", {}, "c1"))]}, thread())
        assert tool_results(out)["c1"] == "other:h"
        out = await tool_graph(plain).ainvoke({"messages": [ai(("echo", {"text": "p"}, "c1"))]}, thread())
        assert tool_results(out)["c1"] == "other:p"
