"""MCP results become LangChain content blocks and artifacts (real servers)."""

from __future__ import annotations

import base64
import json
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage

from langgraph_mcp import MCPPool, OutputHandling
from langgraph_mcp._call.output import cut_text
from langgraph_mcp._pool.content import convert_result
from tests.helpers import call, tools_by_name
from tests.servers import demo

PNG_B64 = base64.b64encode(demo.PNG_1X1).decode()
IMAGE_BLOCK = {"type": "image", "base64": PNG_B64, "mime_type": "image/png"}


async def _results(config: dict[str, Any], *names: str) -> dict[str, ToolMessage]:
    async with MCPPool({"demo": config}) as pool:
        tools = await tools_by_name(pool)
        return {name: await call(tools[name]) for name in names}


async def test_every_content_kind_with_default_routing(demo_config: dict[str, Any]) -> None:
    got = await _results(demo_config, "image", "audio", "text_resource", "blob_resource", "link", "mixed")

    assert got["image"].content == [IMAGE_BLOCK]

    audio = {"type": "audio", "base64": demo.WAV_B64, "mime_type": "audio/wav"}
    assert got["audio"].content == "[audio (audio/wav) is in the artifact]"
    assert got["audio"].artifact["content"] == [audio]

    text_file = {
        "type": "file",
        "base64": base64.b64encode(b"hello resource").decode(),
        "mime_type": "text/plain",
        "extras": {"uri": "res://demo/readme", "server": "demo"},
    }
    assert got["text_resource"].artifact["content"] == [text_file]
    assert got["text_resource"].content == "[resource res://demo/readme (text/plain) is in the artifact]"

    blob_file = {
        "type": "file",
        "base64": base64.b64encode(demo.BLOB_BYTES).decode(),
        "mime_type": "application/octet-stream",
        "extras": {"uri": "res://demo/blob", "server": "demo"},
    }
    assert got["blob_resource"].artifact["content"] == [blob_file]

    assert got["link"].content == [
        {
            "type": "file",
            "url": "res://demo/linked",
            "mime_type": "text/plain",
            "extras": {
                "name": "linked",
                "title": "Linked file",
                "description": "a linked resource",
                "server": "demo",
            },
        }
    ]

    assert got["mixed"].content == [
        {"type": "text", "text": "first"},
        IMAGE_BLOCK,
        {"type": "text", "text": "second"},
    ]
    assert all(m.status == "success" for m in got.values())


async def test_structured_content_goes_to_the_artifact(demo_config: dict[str, Any]) -> None:
    expected = {"city": "Paris", "temperature_c": 21.5, "conditions": "sunny"}
    async with MCPPool({"demo": demo_config}) as pool:
        tools = await tools_by_name(pool)
        message = await call(tools["weather"], {"city": "Paris"})
    assert message.artifact["structured_content"] == expected
    assert json.loads(message.content) == expected  # the server's text rendering, for the model
    assert "meta" not in message.artifact  # protocol-internal _meta keys are not user meta


async def test_output_handling_overrides_routing() -> None:
    routing = {"image": "artifact", "audio": "content", "resource": "content", "resource_link": "artifact"}
    config = {"server": demo.build_server(counters=demo.Counters()), "output_handling": routing}
    got = await _results(config, "image", "audio", "text_resource", "link", "mixed")
    assert got["image"].artifact["content"] == [IMAGE_BLOCK]
    assert got["image"].content == "[image (image/png) is in the artifact]"
    # LangChain accepts no audio blocks in tool message content: audio shown to the model is a file.
    assert got["audio"].content == [{"type": "file", "base64": demo.WAV_B64, "mime_type": "audio/wav"}]
    assert got["text_resource"].content[0]["type"] == "file"
    assert got["link"].content == "[resource link res://demo/linked is in the artifact]"
    assert got["mixed"].content == [
        {"type": "text", "text": "first"},
        {"type": "text", "text": "second"},
        {"type": "text", "text": "[image (image/png) is in the artifact]"},
    ]


def test_text_only_to_artifact_leaves_empty_content() -> None:
    result = types.CallToolResult(content=[types.TextContent(type="text", text="hidden")])
    content, artifact = convert_result(result, OutputHandling(text="artifact"))
    assert content == ""
    assert artifact["content"] == [{"type": "text", "text": "hidden"}]


def test_structured_only_result_is_shown_as_json() -> None:
    result = types.CallToolResult(content=[], structured_content={"n": 1, "label": "é"})
    content, artifact = convert_result(result, OutputHandling())
    assert content == '{"n": 1, "label": "é"}'
    assert artifact == {"structured_content": {"n": 1, "label": "é"}, "content": []}


def test_user_meta_is_kept_in_the_artifact() -> None:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="ok")],
        _meta={"example.com/trace": "abc", "io.modelcontextprotocol/serverInfo": {"name": "x"}},
    )
    _, artifact = convert_result(result, OutputHandling())
    assert artifact["meta"] == {"example.com/trace": "abc"}


def test_output_handling_rejects_unknown_kinds() -> None:
    with pytest.raises(ValueError):
        OutputHandling(video="content")  # type: ignore[call-arg]


# --- properties ---------------------------------------------------------------------------------

_b64 = st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode("ascii"))
_text = st.text(max_size=200)
_uri = st.sampled_from(["file:///a.txt", "https://example.com/x", "mem://thing/1", "data:,x"])
_blocks = st.one_of(
    st.builds(lambda t: types.TextContent(type="text", text=t), _text),
    st.builds(lambda d: types.ImageContent(type="image", data=d, mime_type="image/png"), _b64),
    st.builds(lambda d: types.AudioContent(type="audio", data=d, mime_type="audio/wav"), _b64),
    st.builds(
        lambda u, t: types.EmbeddedResource(
            type="resource", resource=types.TextResourceContents(uri=u, text=t, mime_type="text/plain")
        ),
        _uri,
        _text,
    ),
    st.builds(
        lambda u, d: types.EmbeddedResource(
            type="resource", resource=types.BlobResourceContents(uri=u, blob=d)
        ),
        _uri,
        _b64,
    ),
    st.builds(lambda u, n: types.ResourceLink(type="resource_link", uri=u, name=n or "x"), _uri, _text),
)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)
_routing = st.builds(
    OutputHandling,
    text=st.sampled_from(["content", "artifact"]),
    image=st.sampled_from(["content", "artifact"]),
    audio=st.sampled_from(["content", "artifact"]),
    resource=st.sampled_from(["content", "artifact"]),
    resource_link=st.sampled_from(["content", "artifact"]),
)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@settings(max_examples=300, deadline=None)
@given(
    blocks=st.lists(_blocks, max_size=6),
    structured=st.none() | st.dictionaries(_text, _json, max_size=4),
    routing=_routing,
    max_chars=st.none() | st.integers(min_value=100, max_value=400),
)
def test_any_result_converts_to_json_safe_content_without_routed_binary(
    blocks: list[types.ContentBlock],
    structured: dict[str, Any] | None,
    routing: OutputHandling,
    max_chars: int | None,
) -> None:
    """Any mix of content blocks and structured content, under any routing: conversion never
    raises, content and artifact survive a JSON round trip, the model's text never holds the data
    of a binary block routed to the artifact, and a limit caps the text."""
    if structured is not None:
        blocks = [*blocks]
        # Repeat a routed blob inside the structured content, as servers sometimes do.
        blobs = [b.data for b in blocks if isinstance(b, (types.ImageContent, types.AudioContent))]
        if blobs:
            structured = {**structured, "copy": blobs[0], "uri": f"data:image/png;base64,{blobs[0]}"}
    result = types.CallToolResult(content=blocks, structured_content=structured)
    content, artifact = convert_result(result, routing)
    assert json.loads(json.dumps(content)) == content
    assert json.loads(json.dumps(artifact)) == artifact
    routed = {b["base64"] for b in artifact["content"] if b.get("base64")}
    own_texts = {b.text for b in blocks if isinstance(b, types.TextContent)}
    texts = [content] if isinstance(content, str) else [b["text"] for b in content if b["type"] == "text"]
    for text in texts:
        if text in own_texts or not text.startswith("{"):
            continue  # the server's own text, or a note
        for value in _strings(json.loads(text)):  # the structured-content fallback
            assert value not in routed and value.partition(",")[2] not in routed
    if max_chars is not None:
        cut, full, shown = cut_text(content, max_chars)
        cut_texts = [cut] if isinstance(cut, str) else [b["text"] for b in cut if b["type"] == "text"]
        assert sum(map(len, cut_texts)) <= max_chars
        if full is not None:  # the model's text is the start of the full text
            assert full[:shown] == "\n".join(cut_texts)
