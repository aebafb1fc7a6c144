"""MCP results become LangChain content blocks and artifacts (real servers)."""

from __future__ import annotations

import base64
import json
from typing import Any

import mcp_types as types
import pytest
from langchain_core.messages import ToolMessage

from langgraph_mcp import MCPPool, OutputHandling
from langgraph_mcp.content import convert_result
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
        "extras": {"uri": "res://demo/readme"},
    }
    assert got["text_resource"].artifact["content"] == [text_file]
    assert got["text_resource"].content == "[resource res://demo/readme (text/plain) is in the artifact]"

    blob_file = {
        "type": "file",
        "base64": base64.b64encode(demo.BLOB_BYTES).decode(),
        "mime_type": "application/octet-stream",
        "extras": {"uri": "res://demo/blob"},
    }
    assert got["blob_resource"].artifact["content"] == [blob_file]

    assert got["link"].content == [
        {
            "type": "file",
            "url": "res://demo/linked",
            "mime_type": "text/plain",
            "extras": {"name": "linked", "title": "Linked file", "description": "a linked resource"},
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
