"""A tool listing is bounded: its first ``max_tools`` entries are read and the rest left out with
one warning naming the server, the count and the option; a server that pages forever is stopped;
a tool whose pattern RE2 cannot run is left out, and one whose pattern backtracks
catastrophically is checked at once, over a real stdio session."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import ValidationError

from langgraph_mcp import MCPToolNode
from langgraph_mcp._session import listings
from langgraph_mcp.config import StdioServerConfig
from tests.conftest_servers import stdio_params
from tests.helpers import ai, thread, tool_graph, tool_results
from tests.servers import costly


def warnings_about(caplog: pytest.LogCaptureFixture, server: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and f"MCP server {server!r}" in r.getMessage()
    ]


def in_process(tools: int, **options: Any) -> dict[str, Any]:
    server_options = {k: options.pop(k) for k in ("page_size", "endless") if k in options}
    return {"server": costly.build_server(tools, **server_options), **options}


def expected_names(first: int) -> list[str]:
    """The names among the first ``first`` entries of costly's listing that are offered."""
    listing = [*costly.OWN_NAMES, *costly.RAW_NAMES, *(f"gen_{i}" for i in range(1000))][:first]
    return [name for name in listing if name != "lookahead"]  # its pattern needs backtracking


@pytest.mark.parametrize("page_size", [0, 7], ids=["one page", "pages of 7"])
async def test_a_listing_past_max_tools_keeps_the_first_and_warns_once(
    page_size: int, caplog: pytest.LogCaptureFixture
) -> None:
    config = in_process(44, max_tools=20, page_size=page_size)
    async with MCPToolNode({"big": config}) as node:
        with caplog.at_level(logging.WARNING):
            tools = await node.get_tools()
    assert [t.name for t in tools] == expected_names(20)
    (warning,) = [w for w in warnings_about(caplog, "big") if "max_tools" in w]
    count = "50" if not page_size else "at least 21"  # paged: the pages past the cap are not read
    assert warning == (
        f"MCP server 'big' lists {count} tools, more than its max_tools (20): the first 20 are read "
        "and the rest left out (set 'max_tools' in its configuration to read more)"
    )


async def test_a_listing_within_max_tools_is_read_whole_without_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with MCPToolNode({"big": in_process(14, max_tools=20, page_size=5)}) as node:
        with caplog.at_level(logging.WARNING):
            tools = await node.get_tools()
    assert [t.name for t in tools] == expected_names(20)
    assert not [w for w in warnings_about(caplog, "big") if "max_tools" in w]


async def test_a_server_that_pages_forever_is_stopped(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with MCPToolNode({"endless": in_process(0, max_tools=5, endless=True)}) as node:
        with caplog.at_level(logging.WARNING):
            assert [t.name for t in await node.get_tools()] == [f"gen_{i}" for i in range(5)]
    assert any(
        "lists at least 6 tools, more than its max_tools (5)" in w for w in warnings_about(caplog, "endless")
    )
    caplog.clear()
    monkeypatch.setattr(listings, "_MAX_PAGES", 12)
    async with MCPToolNode({"endless": in_process(0, endless=True)}) as node:
        with caplog.at_level(logging.WARNING):
            assert len(await node.get_tools()) == 12
    assert (
        "MCP server 'endless': its tools/list answer still named a next page after 12 pages; the tools of "
        "those pages are offered and the rest left out"
    ) in warnings_about(caplog, "endless")


def test_max_tools_is_a_positive_whole_number_defaulting_to_a_thousand() -> None:
    assert StdioServerConfig(command="x").max_tools == 1000
    assert StdioServerConfig(command="x", max_tools=5).max_tools == 5
    for wrong in (0, -1, 2.5, "10"):
        with pytest.raises(ValidationError):
            StdioServerConfig(command="x", max_tools=wrong)


@pytest.mark.slow  # a stdio server process
async def test_over_stdio_a_catastrophic_pattern_is_checked_at_once_and_lookahead_is_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with MCPToolNode({"costly": stdio_params("costly")}) as node:
        with caplog.at_level(logging.WARNING):
            tools = {t.name: t for t in await node.get_tools()}
        assert "lookahead" not in tools and "ecma_escape" in tools
        (warning,) = [w for w in warnings_about(caplog, "costly") if "lookahead" in w]
        assert "cannot be checked in linear time: '^(?=.*[0-9])[a-z0-9]+$'" in warning
        evil = "a" * 5000 + "!"  # Python's re would backtrack for longer than the universe lasts
        graph = tool_graph(node)
        calls = ai(
            ("redos", {"text": evil}, "c1"),
            ("redos_keys", {"bag": {evil: "x"}}, "c2"),
            ("ecma_escape", {"word": "abc"}, "c3"),
            ("echo", {"text": "meanwhile"}, "c4"),
        )
        results = tool_results(await graph.ainvoke({"messages": [calls]}, thread()))
    assert "should match pattern '^(a+)+$'" in results["c1"] and "Please fix" in results["c1"]
    assert "does not match any of the regexes: '^(a+)+$'" in results["c2"]
    assert '"word": "abc"' in results["c3"]
    assert results["c4"] == "meanwhile"
