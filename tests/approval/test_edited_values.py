"""Edited values sent as text (as a review form sends them) are typed as the schema says before
they are checked: ``{"a": "5"}`` for an integer ``a`` runs the call with ``5``."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.types import Command

from langgraph_mcp import MCPToolNode
from langgraph_mcp._support.coerce import MAX_JSON_DEPTH, MAX_JSON_TEXT, coerce_edited
from tests.helpers import ai, thread, tool_graph, tool_results
from tests.servers import demo, knobs


def servers() -> dict[str, Any]:
    return {"demo": {"server": demo.build_server()}}


def edit(name: str, **args: Any) -> dict[str, Any]:
    """The decision Agent Chat UI sends for an edit: every value a string, in ``decisions``."""
    return {"decisions": [{"type": "edit", "edited_action": {"name": name, "args": args}}]}


async def test_an_edited_number_sent_as_text_runs_the_call_with_the_number() -> None:
    async with MCPToolNode(servers(), approval=["add"]) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("add", {"a": 1, "b": 2}, "c1"))]}, thread())
        assert out["__interrupt__"][0].value["args"] == {"a": 1, "b": 2}
        out = await graph.ainvoke(Command(resume=edit("add", a="5", b="2")), thread())
    assert tool_results(out)["c1"].endswith("\n\n7")
    assert 'changed its arguments to {"a": 5, "b": 2}' in tool_results(out)["c1"]


async def test_an_edited_value_that_is_not_the_type_is_refused_and_the_question_stays() -> None:
    async with MCPToolNode(servers(), approval=["add"]) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("add", {"a": 1, "b": 2}, "c1"))]}, thread())
        key = out["__interrupt__"][0].value["key"]
        with pytest.raises(Exception, match=r"do not fit tool 'add': a: 'five' is not a valid integer"):
            await graph.ainvoke(Command(resume=edit("add", a="five", b="2")), thread())
        with pytest.raises(Exception, match=r"a: '2.5' is not a valid integer"):
            await graph.ainvoke(Command(resume=edit("add", a="2.5", b="2")), thread())
        assert [i.value["key"] for i in (await graph.aget_state(thread())).interrupts] == [key]
        out = await graph.ainvoke(Command(resume=edit("add", a="-4", b="2")), thread())
    assert tool_results(out)["c1"].endswith("\n\n-2")


async def test_a_string_field_keeps_text_that_reads_as_a_number() -> None:
    async with MCPToolNode(servers(), approval=["echo"]) as node:
        graph = tool_graph(node)
        await graph.ainvoke({"messages": [ai(("echo", {"text": "hi"}, "c1"))]}, thread())
        out = await graph.ainvoke(Command(resume=edit("echo", text="5")), thread())
    assert tool_results(out)["c1"].endswith("\n\n5")
    assert 'changed its arguments to {"text": "5"}' in tool_results(out)["c1"]


SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "number"},
        "i": {"type": "integer"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "where": {"type": "object"},
        "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "listed": {"type": ["boolean", "string"]},
        "level": {"enum": [1, 2, 3]},
        "ref": {"$ref": "#/$defs/x"},
        "text": {"type": "string"},
    },
}


def test_each_type_is_read_from_its_text() -> None:
    edited = coerce_edited(
        {
            "n": " 2.5 ",
            "i": "7",
            "flag": "False",
            "tags": '["a", "b"]',
            "where": '{"x": 1}',
            "maybe": "null",
            "level": "2",
            "text": "true",
        },
        SCHEMA,
    )
    assert edited == {
        "n": 2.5,
        "i": 7,
        "flag": False,
        "tags": ["a", "b"],
        "where": {"x": 1},
        "maybe": None,
        "level": 2,
        "text": "true",
    }
    assert coerce_edited({"n": "3", "i": "4.0", "maybe": "9"}, SCHEMA) == {"n": 3, "i": 4, "maybe": 9}


def test_values_already_typed_and_fields_that_allow_text_are_left_alone() -> None:
    values = {"n": 1.5, "either": "12", "listed": "true", "ref": "1", "unknown": "1", "tags": ["a"]}
    assert coerce_edited(values, SCHEMA) == values
    assert coerce_edited({"a": "1"}, None) == {"a": "1"}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"n": "nan"}, "n: 'nan' is not a valid number"),
        ({"n": "inf"}, "n: 'inf' is not a valid number"),
        ({"i": "1" * 200}, "is not a valid integer"),
        ({"flag": "yes"}, "flag: 'yes' is not a valid boolean"),
        ({"tags": '{"a": 1}'}, "tags: .* is not a valid array \\(as JSON text\\)"),
        ({"where": "{not json"}, "where: .* is not a valid object"),
        ({"where": "[1]"}, "where: '\\[1\\]' is not a valid object"),
        ({"tags": "[" * 100_000}, "over 65,536 characters"),
        ({"tags": "[" + "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1) + "]"}, "nested over"),
        ({"i": "x", "flag": "y"}, "i: 'x' .*; flag: 'y'"),
    ],
)
def test_text_that_is_not_the_type_is_a_clear_error(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        coerce_edited(values, SCHEMA)


def test_json_text_is_bounded() -> None:
    big = "[" + ",".join(["1"] * (MAX_JSON_TEXT // 2)) + "]"
    with pytest.raises(ValueError, match="over 65,536 characters"):
        coerce_edited({"tags": big}, SCHEMA)


# -- non-finite numbers at any depth ----------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        {"where": '{"limit": NaN, "max": 1e999}'},
        {"where": '{"a": {"b": [1, -Infinity]}}'},
        {"tags": "[1, Infinity]"},
        {"where": {"limit": float("nan")}},
        {"where": {"deep": [{"max": float("inf")}]}},
        {"tags": [1.0, float("-inf")]},
        {"n": float("nan")},
    ],
)
def test_a_number_that_is_not_finite_is_refused_at_any_depth(values: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="not a finite number"):
        coerce_edited(values, SCHEMA)


def test_a_non_finite_number_is_refused_without_a_schema_too() -> None:
    with pytest.raises(ValueError, match="not a finite number"):
        coerce_edited({"x": {"y": float("nan")}}, None)
    assert coerce_edited({"x": {"y": 1e308}}, None) == {"x": {"y": 1e308}}


async def test_an_edit_with_nan_inside_an_object_field_is_refused_and_never_sent() -> None:
    async with MCPToolNode({"knobs": {"server": knobs.build_server()}}, approval=["tune"]) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("tune", {"options": {"limit": 1}}, "c1"))]}, thread())
        key = out["__interrupt__"][0].value["key"]
        with pytest.raises(Exception, match=r"do not fit tool 'tune': options\.limit: .*not a finite number"):
            await graph.ainvoke(
                Command(resume=edit("tune", options='{"limit": NaN, "max": 1e999}')), thread()
            )
        with pytest.raises(Exception, match=r"levels\[1\]: .*not a finite number"):
            decision = {
                "type": "edit",
                "edited_action": {
                    "name": "tune",
                    "args": {"options": {"limit": 2}, "levels": [1.0, float("inf")]},
                },
            }
            await graph.ainvoke(Command(resume={"decisions": [decision]}), thread())
        assert [i.value["key"] for i in (await graph.aget_state(thread())).interrupts] == [key]
        out = await graph.ainvoke(Command(resume=edit("tune", options='{"limit": 3}')), thread())
    result = tool_results(out)["c1"]
    assert result.endswith('{"levels": null, "options": {"limit": 3}}')
    assert "NaN" not in result and "Infinity" not in result
