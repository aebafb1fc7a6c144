"""Argument checks against untrusted ``inputSchema``s (``_call.arguments``), and tool vetting
(``_support.schema``)."""

from __future__ import annotations

import json
import logging
import time
import unicodedata
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest.mock import patch

import mcp_types as types
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolInvocationError
from mcp.server.mcpserver import MCPServer
from mcp_types import ListToolsResult, PaginatedRequestParams

from langgraph_mcp import MCPPool
from langgraph_mcp._call.adapter import build_tool
from langgraph_mcp._call.arguments import ArgumentChecker, UnusableSchema
from langgraph_mcp._call.entry import CatalogEntry
from langgraph_mcp._support.schema import model_schema, vet_tool
from tests.chat import ScriptModel
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import ai, call, tool_graph, tools_by_name
from tests.hostile import FILE_SENTINEL, REMOTE_SENTINEL, ref_server, sentinel_file


def with_ref(ref: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": {"$ref": ref}}, "required": ["x"]}


def checker(schema: dict[str, Any]) -> ArgumentChecker:
    return ArgumentChecker("srv", "tool", "tool", schema)


# -- the argument checker -----------------------------------------------------------------------


def test_a_url_ref_is_never_fetched(caplog: pytest.LogCaptureFixture) -> None:
    with ref_server() as server, pytest.raises(UnusableSchema) as info:
        checker(with_ref(server.url)).check({"x": "anything"})
    assert server.hits == []
    assert REMOTE_SENTINEL not in str(info.value) and REMOTE_SENTINEL not in caplog.text
    assert info.value.reason == (
        "MCP tool 'tool' of server 'srv' cannot be called: its inputSchema has a $ref that does not "
        f"resolve within the schema ({server.url!r}); references are never fetched"
    )


def test_a_file_ref_is_never_read(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    secret = sentinel_file(tmp_path)
    with pytest.raises(UnusableSchema) as info:
        checker(with_ref(secret.as_uri())).check({"x": "anything"})
    assert FILE_SENTINEL not in str(info.value) and FILE_SENTINEL not in caplog.text


def test_a_dangling_local_ref_is_a_tool_invocation_error() -> None:
    with pytest.raises(ToolInvocationError) as info:
        checker(with_ref("#/$defs/nope")).check({"x": "anything"})
    assert "#/$defs/nope" in str(info.value)


def test_patterns_are_shown_as_written() -> None:
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": r"^\d{5}$"}}}
    with pytest.raises(ToolInvocationError) as info:
        checker(schema).check({"code": "1234"})
    assert info.value.message == (
        "Error invoking tool 'tool' with kwargs {'code': '1234'} with error:\n"
        " code: String should match pattern '^\\d{5}$'\n"
        " Please fix the error and try again."
    )


def test_braces_in_messages_are_shown_once() -> None:
    schema = {"type": "object", "properties": {"x": {"const": {"a": 1}}}}
    with pytest.raises(ToolInvocationError) as info:
        checker(schema).check({"x": {"a": 2}})
    assert "x: {'a': 1} was expected" in info.value.message


def test_unmatched_extra_properties_show_the_regexes_as_written() -> None:
    schema = {
        "type": "object",
        "patternProperties": {r"^x_\d+$": {"type": "string"}},
        "additionalProperties": False,
    }
    with pytest.raises(ToolInvocationError) as info:
        checker(schema).check({"x_1": "ok", "y": "no"})
    assert info.value.filtered_errors is not None
    assert [e["msg"] for e in info.value.filtered_errors] == [
        "'y' does not match any of the regexes: '^x_\\d+$'"
    ]


async def test_a_tool_whose_schema_cannot_be_used_answers_with_an_error_message(tmp_path: Path) -> None:
    # Listed tools never have such a schema (they are left out); one built by hand may.
    calls = tmp_path / "calls"
    env = {"UNTRUSTED_CALLS_FILE": str(calls)}
    async with MCPPool({"u": stdio_params("untrusted", env=env)}) as pool:
        await pool.start()
        dangling = types.Tool(name="echo", input_schema=with_ref("#/$defs/nope"))
        tool = build_tool(CatalogEntry(server="u", tool=dangling, name="echo"), pool.connection("u"), pool)
        graph = tool_graph(ToolNode([tool]))
        out = await graph.ainvoke(
            {"messages": [ai(("echo", {"x": "a"}, "c1"))]}, {"configurable": {"thread_id": "t"}}
        )
        (message,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        assert message.status == "error"
        assert message.content == (
            "MCP tool 'echo' of server 'u' cannot be called: its inputSchema has a $ref that does not "
            "resolve within the schema ('#/$defs/nope'); references are never fetched"
        )
        assert (await call(tool, {"x": "a"})).status == "error"
    assert not calls.exists()  # the server never saw a call


async def test_a_ref_in_an_output_schema_is_never_fetched() -> None:
    server = MCPServer("outward")

    @server.tool()
    def shape() -> dict[str, str]:
        return {"result": "value"}

    with ref_server() as refs:

        async def list_with_a_remote_ref(ctx: Any, params: PaginatedRequestParams) -> ListToolsResult:
            (tool,) = await server.list_tools()
            remote = {"type": "object", "properties": {"result": {"$ref": refs.url}}}
            return ListToolsResult(tools=[tool.model_copy(update={"output_schema": remote})])

        server._lowlevel_server.add_request_handler(
            "tools/list", PaginatedRequestParams, list_with_a_remote_ref
        )
        async with serve_in_loop(server) as url, MCPPool({"outward": {"url": url}}) as pool:
            message = await call((await tools_by_name(pool))["shape"])
        assert refs.hits == []
    assert message.status == "error"
    assert "has a $ref that does not resolve" in str(message.content)
    assert REMOTE_SENTINEL not in str(message.content)


# -- what a model is given -----------------------------------------------------------------------


def test_model_schema_sanitises_every_description_and_title() -> None:
    raw = {
        "type": "object",
        "title": "Args\u202e",
        "properties": {
            "description": {"type": "string", "description": "a\u200bb", "enum": ["x\u200by"]},
            "nested": {"anyOf": [{"$ref": "#/$defs/Inner"}, {"type": "null", "description": "\x1b[8mnone"}]},
        },
        "$defs": {"Inner": {"type": "object", "description": "in\u2066ner", "properties": {}}},
    }
    before = repr(raw)
    schema = model_schema(raw)
    assert repr(raw) == before  # not changed in place
    assert schema["title"] == "Args"
    assert schema["properties"]["description"] == {
        "type": "string",
        "description": "ab",
        "enum": ["x\u200by"],
    }
    assert schema["properties"]["nested"]["anyOf"][1]["description"] == "none"
    assert schema["$defs"]["Inner"]["description"] == "inner"


def test_model_schema_adds_what_a_model_needs() -> None:
    assert model_schema({"type": "object"}) == {"type": "object", "properties": {}}


# -- vetting a listed tool -----------------------------------------------------------------------


def vet(raw: Any, caplog: pytest.LogCaptureFixture, *, modern: bool = False) -> tuple[Any, list[str]]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, "langgraph_mcp"):
        tool = vet_tool("srv", raw, position=4, modern=modern)
    return tool, [r.getMessage() for r in caplog.records]


def exponential(levels: int) -> dict[str, Any]:
    """A few hundred bytes whose $refs inline to 2**levels copies."""
    defs: dict[str, Any] = {
        f"d{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}, "b": {"$ref": f"#/$defs/d{i + 1}"}},
        }
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def test_a_well_formed_tool_is_kept_as_listed(caplog: pytest.LogCaptureFixture) -> None:
    raw = {
        "name": "find",
        "title": "Find",
        "description": "Find things.",
        "inputSchema": {
            "type": "object",
            "properties": {"q": {"type": "string"}, "node": {"$ref": "#/$defs/Node"}},
            "required": ["q"],
            "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
        },
        "annotations": {"readOnlyHint": True},
        "_meta": {"example.com/x": 1},
        "execution": {"taskSupport": "optional"},
    }
    tool, warned = vet(raw, caplog)
    assert warned == []
    assert tool == types.Tool.model_validate(raw)


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("find", "tool #5 of its listing is left out: it is not a JSON object"),
        (
            {"name": "", "inputSchema": {"type": "object"}},
            "tool #5 of its listing is left out: it has no name",
        ),
        (
            {"name": 7, "inputSchema": {"type": "object"}},
            "tool #5 of its listing is left out: it has no name",
        ),
        ({"name": "t"}, "tool 't' is left out: it has no inputSchema"),
        (
            {"name": "t", "inputSchema": "x"},
            "tool 't' is left out: its inputSchema is not a JSON object: 'x'",
        ),
        (
            {"name": "t", "inputSchema": {}},
            'tool \'t\' is left out: its inputSchema has no "type": "object" at its root',
        ),
        (
            {"name": "t", "inputSchema": {"type": ["object", "null"]}},
            "tool 't' is left out: its inputSchema has \"type\": ['object', 'null'] at its root,"
            ' not "object"',
        ),
        (
            {"name": "t", "inputSchema": {"type": "object"}, "description": 5},
            "tool 't' is left out: its description is not valid: Input should be a valid string",
        ),
        (
            {"name": "t", "inputSchema": {"type": "object", "$schema": ["x"]}},
            "tool 't' is left out: its inputSchema has a \"$schema\" that is not a string",
        ),
        (
            {"name": "t", "inputSchema": {"type": "object", "properties": {"x": {"minLength": -1}}}},
            "tool 't' is left out: its inputSchema is not a valid JSON schema:"
            " -1 is less than the minimum of 0 (at properties.x.minLength)",
        ),
        (
            {"name": "t", "inputSchema": {"type": "object", "properties": {"x": {"pattern": "("}}}},
            "tool 't' is left out: its inputSchema has a pattern that is not a valid regular expression:"
            " '(' (missing ): () (at properties.x.pattern)",
        ),
        (
            {"name": "t", "inputSchema": with_ref("https://json-schema.org/draft/2020-12/schema")},
            "tool 't' is left out: its inputSchema cannot be turned into a tool definition for a model:"
            " ValueError: ref paths are expected to be URI fragments, meaning they should start with #.",
        ),
        (
            {
                "name": "t",
                "inputSchema": {"type": "object", "$id": "urn:x", "properties": {"x": {"$ref": "#/no"}}},
            },
            "tool 't' is left out: its inputSchema has a $ref that does not resolve within the schema: '#/no'"
            " (references are never fetched)",
        ),
        (
            {"name": "t", "inputSchema": {"type": "object", "$ref": "#"}},
            "tool 't' is left out: its inputSchema has $refs that lead back to where they start without"
            " going into the arguments: '#' (checking them would never end)",
        ),
        (
            {
                "name": "t",
                "inputSchema": {
                    "type": "object",
                    "properties": {"x": {"$ref": "#/$defs/a"}},
                    "$defs": {
                        "a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/b"}]},
                        "b": {"$ref": "#/$defs/a"},
                    },
                },
            },
            "tool 't' is left out: its inputSchema has $refs that lead back to where they start without"
            " going into the arguments: '#/$defs/a', '#/$defs/b' (checking them would never end)",
        ),
        (
            {"name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
            "tool 't' is left out: it requires task-augmented execution"
            ' (execution.taskSupport: "required"), which this client does not offer',
        ),
        (
            {"name": "t", "inputSchema": exponential(20)},
            "tool 't' is left out: its inputSchema holds more than 50000 values once its $refs are inlined",
        ),
        (
            {"name": "t", "inputSchema": nested(60)},
            "tool 't' is left out: its inputSchema nests more than 100 levels deep"
            " once its $refs are inlined",
        ),
    ],
)
def test_a_tool_that_cannot_be_offered_is_left_out_saying_why(
    raw: Any, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    started = time.perf_counter()
    tool, warned = vet(raw, caplog)
    assert time.perf_counter() - started < 2.0
    assert tool is None
    assert warned == [f"MCP server 'srv': {why}"]


def test_an_invalid_header_annotation_counts_on_2026_sessions_only(caplog: pytest.LogCaptureFixture) -> None:
    raw = {
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"x": {"type": "object", "x-mcp-header": "X"}}},
    }
    assert vet(raw, caplog)[0] is not None
    tool, warned = vet(raw, caplog, modern=True)
    assert tool is None
    assert warned == [
        "MCP server 'srv': tool 't' is left out: its inputSchema has an invalid x-mcp-header annotation:"
        " property 'x': x-mcp-header is only permitted on integer/string/boolean properties (got 'object')"
    ]


def test_what_is_kept_converts_for_a_model(caplog: pytest.LogCaptureFixture) -> None:
    raw = {"name": "t", "inputSchema": exponential(8)}
    tool, _ = vet(raw, caplog)
    assert tool is not None
    built = build_tool(CatalogEntry(server="srv", tool=tool, name="t"), connection=None)
    assert convert_to_openai_tool(built)["function"]["name"] == "t"


# -- properties over arbitrary schemas -----------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "x", "node", "$ref", "description", ""])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=8,
)
REFS = [
    "#",
    "#/$defs/a",
    "#/$defs/missing",
    "#/properties/x",
    "#/properties/x/items/0",
    "#node",
    "node.json",
    "urn:example:node",
    "http://127.0.0.1:9/schema.json",
    "file:///etc/hostname",
    "https://json-schema.org/draft/2020-12/schema",
]
leaf_schemas = st.booleans() | st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(
            ["string", "integer", "number", "object", "array", "boolean", "null", "banana"]
        )
        | st.lists(st.sampled_from(["string", "null", "integer"]), max_size=2),
        "pattern": st.sampled_from([r"^\d{5}$", "(", "a{2,}", r"\p{L}", ".*"]),
        "minimum": st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False),
        "maxLength": st.integers(-1, 4),
        "multipleOf": st.sampled_from([0, 0.1, 3, 1e-300, 1e308]),
        "enum": st.lists(json_values, max_size=3),
        "const": json_values,
        "format": st.sampled_from(["email", "date", "regex", "uri"]),
        "$ref": st.sampled_from(REFS),
        "$dynamicRef": st.sampled_from(["#meta", "#nope"]),
        "$anchor": st.sampled_from(["node", "meta"]),
        "$id": st.sampled_from(["node.json", "urn:example:node", "http://127.0.0.1:9/base/"]),
        "description": st.text(max_size=20),
        "default": json_values,
    },
)


def _composite(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["object", "array"]),
            "properties": st.dictionaries(NAMES, children, max_size=3),
            "required": st.lists(NAMES, max_size=3) | st.text(max_size=3),
            "additionalProperties": children,
            "patternProperties": st.dictionaries(st.sampled_from(["^x", "(", r"\d+"]), children, max_size=2),
            "items": children | st.lists(children, max_size=2),
            "prefixItems": st.lists(children, max_size=2),
            "anyOf": st.lists(children, max_size=3),
            "allOf": st.lists(children, max_size=2),
            "not": children,
            "if": children,
            "then": children,
            "$defs": st.dictionaries(st.sampled_from(["a", "b"]), children, max_size=2),
            "$ref": st.sampled_from(REFS),
            "$schema": st.sampled_from(
                [
                    "https://json-schema.org/draft/2020-12/schema",
                    "http://json-schema.org/draft-07/schema#",
                    "x",
                ]
            )
            | st.integers(),
        },
    )


schemas = st.recursive(leaf_schemas, _composite, max_leaves=12)
input_schemas = st.one_of(
    schemas.filter(lambda s: isinstance(s, dict)).map(lambda s: {**s, "type": "object"}),
    schemas.filter(lambda s: isinstance(s, dict)),
)

# Mostly valid schemas (with local references, cycles among them), so that many are kept.
LOCAL_REFS = ["#", "#/$defs/a", "#/$defs/b", "#/properties/x", "#/$defs/a/properties/x"]
TYPES = ["string", "integer", "number", "object", "array", "boolean", "null"]
plausible_leaves = st.booleans() | st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(TYPES)
        | st.lists(st.sampled_from(TYPES), min_size=1, max_size=2, unique=True),
        "pattern": st.sampled_from([r"^\d{5}$", "a{2,}", ".*", "^[a-z]+$"]),
        "minimum": st.integers(-5, 5),
        "maxLength": st.integers(0, 4),
        "multipleOf": st.sampled_from([0.1, 3, 1e-300, 1e308]),
        "enum": st.lists(json_values, min_size=1, max_size=3),
        "const": json_values,
        "format": st.sampled_from(["email", "date", "uri"]),
        "$ref": st.sampled_from(LOCAL_REFS),
        "description": st.text(st.characters(exclude_categories=()), max_size=20),
        "title": st.text(max_size=8),
        "default": json_values,
    },
)


def _plausible_composite(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["object", "array"]),
            "properties": st.dictionaries(NAMES, children, max_size=3),
            "required": st.lists(NAMES, max_size=3, unique=True),
            "additionalProperties": children,
            "items": children,
            "prefixItems": st.lists(children, min_size=1, max_size=2),
            "anyOf": st.lists(children, min_size=1, max_size=3),
            "allOf": st.lists(children, min_size=1, max_size=2),
            "not": children,
            "$defs": st.dictionaries(st.sampled_from(["a", "b"]), children, max_size=2),
        },
    )


plausible_input_schemas = (
    st.recursive(plausible_leaves, _plausible_composite, max_leaves=12)
    .filter(lambda s: isinstance(s, dict))
    .map(lambda s: {**s, "type": "object"})
)
arguments = st.dictionaries(NAMES, json_values, max_size=4)


@contextmanager
def _no_fetching() -> Iterator[None]:
    """Fail if anything tried to open a URL meanwhile (recorded, not raised: a raise inside a
    reference lookup would be swallowed and reported as an unresolvable reference)."""
    opened: list[Any] = []
    with patch("urllib.request.urlopen", lambda *args, **kwargs: opened.append(args) or _refused()):
        yield
    assert opened == []


def _refused() -> Any:
    raise OSError("no fetching in tests")


@pytest.mark.slow  # hypothesis: 150 generated schemas and arguments
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=input_schemas, args=arguments)
def test_the_checker_raises_nothing_but_tool_invocation_errors(
    schema: dict[str, Any], args: dict[str, Any]
) -> None:
    with _no_fetching(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            ArgumentChecker("srv", "t", "t", schema).check(args)
        except ToolInvocationError as exc:
            assert exc.message  # it can be shown


@pytest.mark.slow  # hypothesis: 150 generated schemas
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    schema=st.one_of(plausible_input_schemas, input_schemas),
    description=st.text(st.characters(exclude_categories=()), max_size=50),
    args=arguments,
)
def test_every_tool_that_is_kept_can_be_bound_to_a_model_and_checked(
    schema: dict[str, Any], description: str, args: dict[str, Any]
) -> None:
    raw = {"name": "t", "description": description, "inputSchema": schema}
    with _no_fetching(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tool = vet_tool("srv", raw, position=0)
        event("kept" if tool is not None else "left out")
        if tool is None:
            return
        built = build_tool(CatalogEntry(server="srv", tool=tool, name="t"), connection=None)
        spec = convert_to_openai_tool(built)
        json.dumps(spec, allow_nan=False)
        shown = spec["function"]["description"]
        assert not any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in shown if c not in "\t\n")
        ScriptModel().bind_tools([built])
        try:
            built._checker.check(args)
        except UnusableSchema as exc:  # a kept tool's schema is always usable
            raise AssertionError(exc.reason) from None
        except ToolInvocationError:
            pass
