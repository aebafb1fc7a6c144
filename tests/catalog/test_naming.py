"""``build_catalog`` and ``safe_tool_name``: filters, prefixes, provider-safe unique names."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage

import langgraph_mcp
from langgraph_mcp import MCPPool, MCPToolNode, StdioServerConfig
from langgraph_mcp._catalog.naming import build_catalog, safe_tool_name
from tests.conftest_servers import stdio_params
from tests.helpers import ai, gated_demo, thread, tool_graph, tool_results
from tests.servers.demo import LONG_TOOL_NAME, WEIRD_TOOL_NAME

SAFE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
HASHED = re.compile(r"^.{55}_[0-9a-f]{8}$")


def tool(name: str) -> types.Tool:
    return types.Tool(name=name, input_schema={"type": "object", "properties": {}})


def cfg(**options: Any) -> StdioServerConfig:
    return StdioServerConfig(command="unused", **options)


def names(listings: dict[str, list[str]], configs: dict[str, StdioServerConfig] | None = None, **kw: Any):
    tools = {server: [tool(n) for n in ns] for server, ns in listings.items()}
    configs = configs if configs is not None else {server: cfg() for server in listings}
    return [(e.server, e.tool.name, e.name) for e in build_catalog(tools, configs, **kw)]


# --- safe_tool_name -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("echo", "echo"),
        ("get-item_2", "get-item_2"),
        ("weird.tool/v1:x", "weird_tool_v1_x"),
        ("has space", "has_space"),
        ("héllo", "h_llo"),
        ("", "tool"),
        ("x" * 64, "x" * 64),
    ],
)
def test_safe_tool_name(name: str, expected: str) -> None:
    assert safe_tool_name(name) == expected


@pytest.mark.parametrize("length", [65, 70, 200])
def test_long_names_shortened_with_hash(length: int) -> None:
    name = "t" * (length - 1) + "."
    out = safe_tool_name(name)
    assert len(out) == 64
    assert SAFE.match(out)
    assert HASHED.match(out)
    assert out.startswith("t" * 55 + "_")
    assert safe_tool_name(name) == out  # stable


def test_long_names_differing_at_end_stay_distinct() -> None:
    a, b = "p" * 69 + "a", "p" * 69 + "b"
    assert safe_tool_name(a) != safe_tool_name(b)
    assert safe_tool_name(a)[:55] == safe_tool_name(b)[:55]


def test_long_names_differing_only_in_unsafe_chars_stay_distinct() -> None:
    # Both sanitise to the same 70 characters; the hash is over the original name.
    assert safe_tool_name("q" * 69 + ".") != safe_tool_name("q" * 69 + "/")


@pytest.mark.parametrize(
    "name", ["", "a", "ü" * 80, "tool name with spaces", "::", LONG_TOOL_NAME, "-" * 64, "\n\t"]
)
def test_output_always_provider_safe(name: str) -> None:
    assert SAFE.match(safe_tool_name(name))


@settings(max_examples=300, deadline=None)
@given(name=st.text(st.characters(exclude_categories=()), max_size=120))
def test_any_name_becomes_provider_safe_and_stable(name: str) -> None:
    safe = safe_tool_name(name)
    assert SAFE.fullmatch(safe)
    assert safe_tool_name(name) == safe
    if SAFE.fullmatch(name):
        assert safe == name  # a safe name is kept as it is


# --- filters and prefix -------------------------------------------------------------------------


def test_allow_list() -> None:
    got = names({"s": ["a", "b", "c"]}, {"s": cfg(tools=["c", "a"])})
    assert got == [("s", "a", "a"), ("s", "c", "c")]  # listing order, not filter order


def test_exclude_list() -> None:
    assert names({"s": ["a", "b", "c"]}, {"s": cfg(exclude_tools=["b"])}) == [
        ("s", "a", "a"),
        ("s", "c", "c"),
    ]


def test_allow_and_exclude_combined() -> None:
    got = names({"s": ["a", "b", "c"]}, {"s": cfg(tools=["a", "b"], exclude_tools=["b"])})
    assert got == [("s", "a", "a")]


def test_filters_match_mcp_names_not_exposed_names() -> None:
    configs = {"s": cfg(tools=["weird.tool"], prefix="p_")}
    assert names({"s": ["weird.tool", "weird_tool"]}, configs) == [("s", "weird.tool", "p_weird_tool")]
    assert names({"s": ["weird.tool"]}, {"s": cfg(tools=["weird_tool"])}) == []


def test_empty_allow_list_exposes_nothing() -> None:
    assert names({"s": ["a"]}, {"s": cfg(tools=[])}) == []


def test_missing_allowed_tool_warns(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp.catalog"):
        got = names({"srv": ["a"]}, {"srv": cfg(tools=["a", "ghost"])})
    assert got == [("srv", "a", "a")]
    [record] = [r for r in caplog.records if r.name == "langgraph_mcp.catalog"]
    assert record.levelno == logging.WARNING
    assert "ghost" in record.getMessage()
    assert "'srv'" in record.getMessage()


def test_no_warning_when_all_allowed_tools_exist(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp.catalog"):
        names({"s": ["a", "b"]}, {"s": cfg(tools=["a"], exclude_tools=["ghost"])})
    assert not [r for r in caplog.records if r.name == "langgraph_mcp.catalog"]


@pytest.mark.parametrize(
    ("prefix", "mcp_name", "expected"),
    [
        ("gh_", "search", "gh_search"),
        ("gh.", "search/v1", "gh_search_v1"),
        ("", "x", "x"),
    ],
)
def test_prefix_prepended_before_sanitising(prefix: str, mcp_name: str, expected: str) -> None:
    assert names({"s": [mcp_name]}, {"s": cfg(prefix=prefix)}) == [("s", mcp_name, expected)]


def test_prefix_counts_towards_length_limit() -> None:
    [(_, _, name)] = names({"s": ["n" * 61]}, {"s": cfg(prefix="pre_")})
    assert len(name) == 64
    assert HASHED.match(name)
    assert name.startswith("pre_")


def test_prefix_avoids_collision() -> None:
    got = names({"a": ["echo"], "b": ["echo"]}, {"a": cfg(), "b": cfg(prefix="b_")})
    assert [n for _, _, n in got] == ["echo", "b_echo"]


# --- collisions ---------------------------------------------------------------------------------


def test_collision_across_servers(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp.catalog"):
        got = names({"first": ["echo", "add"], "second": ["echo"], "third": ["echo", "sub"]})
    assert got == [
        ("first", "echo", "echo"),
        ("first", "add", "add"),
        ("second", "echo", "second_echo"),
        ("third", "echo", "third_echo"),
        ("third", "sub", "sub"),
    ]
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(messages) == 2
    assert "second_echo" in messages[0]
    assert "third_echo" in messages[1]


def test_collision_numbered_suffixes() -> None:
    # "s_x" is taken by the MCP tool of that name, so the renamed "x" falls back to "_2", then "_3".
    got = names({"r": ["x"], "s": ["s_x", "x"]}, reserved=["s_x_2"])
    assert got == [("r", "x", "x"), ("s", "s_x", "s_x"), ("s", "x", "s_x_3")]


@pytest.mark.parametrize(
    ("reserved", "expected"),
    [
        ({"echo"}, ["demo_echo", "echo2"]),
        ({"echo", "demo_echo"}, ["demo_echo_2", "echo2"]),
        ({"echo", "demo_echo", "demo_echo_2", "echo2"}, ["demo_echo_3", "demo_echo2"]),
    ],
)
def test_reserved_names_never_reused(reserved: set[str], expected: list[str]) -> None:
    got = names({"demo": ["echo", "echo2"]}, reserved=reserved)
    assert [n for _, _, n in got] == expected
    assert not reserved & {n for _, _, n in got}


def test_renamed_name_sanitised_and_safe() -> None:
    got = names({"a": ["t"], "my.server": ["t"], "x" * 70: ["t"]})
    exposed = [n for _, _, n in got]
    assert exposed[:2] == ["t", "my_server_t"]
    assert all(SAFE.match(n) for n in exposed)
    assert len(set(exposed)) == 3


def test_sanitised_names_colliding_within_server() -> None:
    got = names({"s": ["a.b", "a/b", "a_b"]})
    assert [n for _, _, n in got] == ["a_b", "s_a_b", "s_a_b_2"]


def test_configuration_order_settles_collisions_not_listing_order() -> None:
    listings = {"a": ["echo", "x.y"], "b": ["echo", "x/y"], "c": ["echo"]}
    configs = {s: cfg() for s in listings}
    first = names(listings, configs)
    assert names(listings, configs) == first
    assert ("a", "echo", "echo") in first and ("b", "echo", "b_echo") in first
    # The servers answered in another order: same names.
    assert sorted(names(dict(reversed(listings.items())), configs)) == sorted(first)
    # Configured in another order: the first configured server keeps the name.
    swapped = names(listings, dict(reversed(configs.items())))
    assert ("c", "echo", "echo") in swapped
    assert ("a", "echo", "a_echo") in swapped


# --- names do not depend on which servers are reachable -------------------------------------------


def test_unreachable_unknown_server_makes_later_servers_qualify_their_names() -> None:
    configs = {"a": cfg(), "b": cfg()}
    got = names({"b": ["echo", "add"]}, configs)
    assert got == [("b", "echo", "b_echo"), ("b", "add", "b_add")]
    # a later server that is down does not matter to earlier ones
    assert names({"a": ["echo"]}, configs) == [("a", "echo", "echo")]


def test_unreachable_server_keeps_its_remembered_names() -> None:
    configs = {"a": cfg(), "b": cfg()}
    got = names({"b": ["echo", "add"]}, configs, remembered={"a": ["echo"]})
    assert got == [("b", "echo", "b_echo"), ("b", "add", "add")]


def test_allow_list_and_prefix_fix_names_without_a_listing() -> None:
    got = names({"b": ["echo", "add"]}, {"a": cfg(tools=("echo",)), "b": cfg()})
    assert got == [("b", "echo", "b_echo"), ("b", "add", "add")]
    got = names({"b": ["echo", "a_x"]}, {"a": cfg(prefix="a_"), "b": cfg()})
    assert got == [("b", "echo", "echo"), ("b", "a_x", "b_a_x")]


def test_a_server_coming_back_does_not_rename_the_others() -> None:
    configs = {"a": cfg(), "b": cfg()}
    down = build_catalog({"b": [tool("echo"), tool("add")]}, configs)
    previous = {(e.server, e.tool.name): e.name for e in down}
    back = names({"a": ["echo", "add"], "b": ["echo", "add"]}, configs, previous=previous)
    assert back == [
        ("a", "echo", "echo"),
        ("a", "add", "add"),
        ("b", "echo", "b_echo"),
        ("b", "add", "b_add"),
    ]
    # A name given before yields to nobody, but is never taken from a reserved (local) tool.
    assert names({"b": ["add"]}, configs, previous={("b", "add"): "add"}, reserved={"add"}) == [
        ("b", "add", "b_add")
    ]


def test_unique_names_across_many_servers() -> None:
    listings = {f"s{i}": ["echo", "echo.v2", "echo/v2", "s0_echo"] for i in range(5)}
    exposed = [n for _, _, n in names(listings)]
    assert len(exposed) == 20
    assert len(set(exposed)) == 20
    assert all(SAFE.match(n) for n in exposed)


def test_duplicate_within_server_first_wins(caplog: pytest.LogCaptureFixture) -> None:
    first, second = tool("dup"), types.Tool(name="dup", description="second", input_schema={"type": "object"})
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp.catalog"):
        entries = build_catalog({"s": [first, tool("other"), second]}, {"s": cfg()})
    assert [(e.name, e.tool) for e in entries] == [("dup", first), ("other", tool("other"))]
    assert entries[0].tool is first
    [record] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "'dup'" in record.getMessage()
    assert "twice" in record.getMessage()


def test_catalog_keeps_tool_objects_and_servers() -> None:
    t = tool("echo")
    [entry] = build_catalog({"s": [t]}, {"s": cfg(), "unused": cfg()})
    assert (entry.server, entry.tool, entry.name) == ("s", t, "echo")


# --- integration: real servers ------------------------------------------------------------------


async def test_load_mcp_tools_names_and_metadata() -> None:
    pool = MCPPool({"demo": stdio_params("demo"), "other": stdio_params("other")})
    try:
        tools = await langgraph_mcp.load_mcp_tools(pool)
    finally:
        await pool.aclose()
    by_name = {t.name: t for t in tools}
    assert len(by_name) == len(tools)
    assert all(SAFE.match(t.name) for t in tools)

    expected = {
        "echo": ("demo", "echo"),
        "other_echo": ("other", "echo"),
        "weird_tool_v1_x": ("demo", WEIRD_TOOL_NAME),
        safe_tool_name(LONG_TOOL_NAME): ("demo", LONG_TOOL_NAME),
        "add": ("demo", "add"),
        "add_tool": ("other", "add_tool"),
    }
    for name, (server, mcp_name) in expected.items():
        meta = by_name[name].metadata
        assert meta is not None
        assert (meta["mcp"]["server"], meta["mcp"]["tool"]) == (server, mcp_name)

    hashed = safe_tool_name(LONG_TOOL_NAME)
    assert len(hashed) == 64
    assert HASHED.match(hashed)
    assert hashed.startswith("a_very_long_tool_name_")
    # demo's tools come first (configuration order), other's after.
    servers = [t.metadata["mcp"]["server"] for t in tools if t.metadata]
    assert servers == sorted(servers)
    assert set(servers) == {"demo", "other"}


async def test_a_call_is_never_routed_to_another_server_while_its_own_is_down(tmp_path: Path) -> None:
    """``a`` and ``other`` both offer ``echo``; ``a`` is configured first. While ``a`` is down
    (never listed), ``other``'s echo is ``other_echo`` and a call to ``echo`` (as a checkpoint made
    while ``a`` was up would hold) fails saying ``a`` could not be reached; once ``a`` is back,
    ``echo`` reaches it and ``other_echo`` still reaches ``other``."""
    gated, _, ready = gated_demo(tmp_path, backoff=0)
    servers = {"a": gated, "other": stdio_params("other")}
    async with MCPToolNode(servers, on_connection_error="warn") as node:
        graph = tool_graph(node)
        assert {t.name for t in await node.get_tools()} >= {"other_echo"}
        assert "echo" not in {t.name for t in await node.get_tools()}
        out = await graph.ainvoke(
            {"messages": [ai(("echo", {"text": "hi"}, "c1"), ("other_echo", {"text": "yo"}, "c2"))]}, thread()
        )
        results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
        assert results["c1"].status == "error"
        assert "'a' could not be reached" in results["c1"].content
        assert (results["c2"].status, results["c2"].content) == ("success", "other:yo")
        ready.touch()
        node.pool.retry("a")
        names = {t.name for t in await node.get_tools()}
        assert {"echo", "other_echo"} <= names
        out = await graph.ainvoke(
            {"messages": [ai(("echo", {"text": "hi"}, "c3"), ("other_echo", {"text": "yo"}, "c4"))]},
            thread("t2"),
        )
        assert tool_results(out) == {"c3": "hi", "c4": "other:yo"}
        assert node.pool.connection("a").connects == 1


async def test_each_catalog_warning_is_logged_once_per_pool(caplog: pytest.LogCaptureFixture) -> None:
    from langgraph_mcp import MCPToolNode, ToolOptions
    from tests.servers import demo

    servers = {
        "demo": {"server": demo.build_server(counters=demo.Counters()), "tools": ["add", "echo", "absent"]},
        "twin": {"server": demo.build_server("twin", counters=demo.Counters()), "tools": ["echo"]},
    }
    async with MCPPool(servers) as pool:
        nodes = [MCPToolNode(pool, tool_options={"no_such_tool": ToolOptions(hidden={})}) for _ in range(2)]
        with caplog.at_level(logging.WARNING, logger="langgraph_mcp"):
            for _ in range(3):
                for node in nodes:
                    await node.toolset.tools()
                await pool.connection("demo").refresh_tools()  # a new listing: tools built again
                await pool.connection("twin").refresh_tools()
            other = MCPPool(servers)  # another pool warns for itself
            await langgraph_mcp.load_mcp_tools(other)
            await other.aclose()
    texts = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    missing = [t for t in texts if "has no tool(s) absent" in t]
    taken = [t for t in texts if "already taken" in t]
    options = [t for t in texts if "no_such_tool" in t]
    assert (len(missing), len(taken), len(options)) == (2, 2, 1), texts


def test_a_name_never_moves_to_another_server_when_one_goes_down_and_comes_back() -> None:
    configs = {"a": cfg(), "b": cfg()}
    memory: dict[tuple[str, str], str] = {}

    def build(
        listings: dict[str, list[str]], remembered: dict[str, list[str]] | None = None
    ) -> dict[str, str]:
        tools = {s: [tool(n) for n in ns] for s, ns in listings.items()}
        entries = build_catalog(tools, configs, remembered=remembered, previous=memory)
        memory.update({(e.server, e.tool.name): e.name for e in entries})
        return {e.name: e.server for e in entries}

    assert build({"a": ["search"], "b": ["search"]}) == {"search": "a", "b_search": "b"}
    assert build({"a": ["search"]}, remembered={"b": ["search"]}) == {"search": "a"}  # b down
    assert build({"a": ["search"], "b": ["search"]}) == {"search": "a", "b_search": "b"}  # b back
    assert build({"b": ["search"]}, remembered={"a": ["search"]}) == {"b_search": "b"}  # a down
