"""Schemas told valid without the metaschema (``_support.plainschema.surely_valid``) are valid by the
metaschema too, and the schemas servers commonly send are told so (a listing of many tools is
then checked in a fraction of the time)."""

from __future__ import annotations

import asyncio
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_mcp._support.plainschema import surely_valid
from tests.servers import many

META = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
TYPES = ["array", "boolean", "integer", "null", "number", "object", "string", "date", "", 3]

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.text(max_size=3),
    st.lists(st.sampled_from(TYPES), max_size=3),
    st.lists(st.text(max_size=2), max_size=3),
)
keys = st.sampled_from(
    [
        "type", "title", "description", "$comment", "format", "default", "const", "readOnly",
        "writeOnly", "deprecated", "uniqueItems", "minLength", "maxLength", "minItems", "maxItems",
        "minProperties", "maxProperties", "minContains", "minimum", "maximum", "exclusiveMinimum",
        "exclusiveMaximum", "multipleOf", "enum", "examples", "required", "pattern", "$ref",
        "$schema", "if", "dependentRequired",
    ]
)  # fmt: skip
schemas = st.recursive(
    st.one_of(st.booleans(), st.dictionaries(keys, values, max_size=4)),
    lambda inner: st.one_of(
        st.dictionaries(keys, values, max_size=3).flatmap(
            lambda base: st.fixed_dictionaries(
                {},
                optional={
                    "properties": st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    "items": st.one_of(inner, st.lists(inner, max_size=2)),
                    "additionalProperties": inner,
                    "anyOf": st.lists(inner, max_size=2),
                    "not": inner,
                },
            ).map(lambda extra: {**base, **extra})
        ),
        st.lists(inner, max_size=2),
    ),
    max_leaves=12,
)


@settings(max_examples=600, deadline=None)
@given(schema=schemas)
def test_what_is_told_valid_the_metaschema_finds_valid(schema: Any) -> None:
    if surely_valid(schema):
        assert list(META.iter_errors(schema)) == []


def test_the_schemas_servers_commonly_send_are_told_valid() -> None:
    tools = asyncio.run(many.build_server(50).list_tools())
    assert all(surely_valid(t.model_dump(mode="json", by_alias=True)["inputSchema"]) for t in tools)


def test_what_is_left_to_the_metaschema() -> None:
    for schema in (
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "^a"}}},  # RE2 decides
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},  # another dialect
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {}}},
        {"type": "strnig"},
        {"type": []},
        {"required": ["a", "a"]},
        {"items": [{"type": "string"}]},  # a tuple: not 2020-12
        {"minLength": -1},
        {"minimum": True},
        {"multipleOf": 0},
        {"anyOf": []},
    ):
        assert not surely_valid(schema), schema
    deep: Any = {"type": "string"}
    for _ in range(40):
        deep = {"type": "object", "properties": {"x": deep}}
    assert not surely_valid(deep)
