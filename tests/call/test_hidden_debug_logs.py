"""Hidden argument values (``ToolOptions.hidden``) stay out of every client log record, the HTTP
and MCP client libraries' own at DEBUG included (``httpx2``, ``httpcore2``, ``mcp``: they log
each message they send), over real loopback HTTP, in both protocol eras."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from langgraph_mcp import MCPPool, MCPToolNode, ToolOptions
from langgraph_mcp.options import FromConfig
from tests.conftest_servers import serve_in_loop
from tests.helpers import SERVER_SIDE_LOGGERS, ai, record_texts, tool_graph, tool_results
from tests.servers import demo

HIDDEN = "SNTL-hidden-arg-5d2"


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_hidden_value_is_in_no_client_log_record_at_debug(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    options = {"header": ToolOptions(hidden={"name": FromConfig("probe")})}
    async with (
        serve_in_loop(demo.build_server(), "http") as url,
        MCPPool({"demo": {"url": url, "protocol": protocol}}) as pool,
    ):
        graph = tool_graph(MCPToolNode(pool, tool_options=options))
        config: Any = {"configurable": {"thread_id": "t1", "probe": HIDDEN}}
        out = await graph.ainvoke({"messages": [ai(("header", {}, "c1"))]}, config)
    assert tool_results(out)["c1"] == "<none>"  # sent: the server looked the header up
    texts = record_texts(caplog.records, skip=SERVER_SIDE_LOGGERS)
    assert any("tools/call" in t for t in texts)  # the libraries did log the request at DEBUG
    leaked = [t for t in texts if HIDDEN in t]
    assert not leaked, leaked[:3]
