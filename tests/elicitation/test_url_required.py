"""``-32042`` URL elicitation required: the URLs are asked for, then the call is sent again."""

from __future__ import annotations

from typing import Any

from langgraph.types import Command

from langgraph_mcp import MCPToolNode
from langgraph_mcp.elicitation import accept
from tests.helpers import ai, thread, tool_graph, tool_results
from tests.servers import fickle


async def test_a_resent_call_that_needs_another_url_asks_again(fickle_config: dict[str, Any]) -> None:
    async with MCPToolNode({"fickle": fickle_config}) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("url_twice", {}, "c1"))]}, thread())
        seen = []
        for _ in range(3):
            pending = out.get("__interrupt__")
            if not pending:
                break
            (item,) = pending
            (request,) = item.value["requests"]
            assert request["mode"] == "url"
            seen.append(request["url"])
            out = await graph.ainvoke(
                Command(resume={item.id: {"responses": {request["key"]: accept()}}}), thread()
            )
        assert seen == [fickle.URLS["a"], fickle.URLS["b"]]
        assert tool_results(out) == {"c1": "authorized twice"}


async def test_a_url_requirement_without_a_url_is_a_protocol_error() -> None:
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.exceptions import MCPError

    server = MCPServer("broken_auth")

    @server.tool()
    def gated() -> str:
        raise MCPError(-32042, "URL elicitation required", {"elicitations": []})

    async with MCPToolNode({"auth": {"server": server, "protocol": "legacy"}}) as node:
        out = await tool_graph(node).ainvoke({"messages": [ai(("gated", {}, "c1"))]}, thread())
    message = out["messages"][-1]
    assert message.status == "error"
    assert message.content == (
        "MCP server 'auth' returned an invalid result for 'gated': "
        "URL elicitation required (-32042) without a valid URL: URL elicitation required"
    )
