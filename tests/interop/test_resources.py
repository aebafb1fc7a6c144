"""Interoperability of the resources and prompts API with MCP servers written by others.

Servers: ``server-everything`` (static documents, two resource templates with completion,
prompts with and without arguments, completable prompts, resource links from a tool),
``server-memory`` (its knowledge graph as a subscribable resource) and the FastMCP server in
``tests/interop/python`` (a resource, a template, a prompt with arguments), over stdio and
loopback streamable HTTP where the server offers it. See ``tests/interop/test_servers.py`` for tools.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langgraph_mcp import MCPArgumentError, MCPPool, MCPServerError
from tests.helpers import call, tools_by_name
from tests.interop.servers import Servers, everything_stdio, memory_stdio

# One worker runs the module (tests/conftest.py, ONE_WORKER): its HTTP servers start once.
# Some of these servers do not exit when their input closes (server-everything over stdio): they
# are stopped after a short grace instead of the default 2 s, which is not what is tested here.
pytestmark = [pytest.mark.interop, pytest.mark.usefixtures("short_graces")]

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
TRANSPORTS = ["stdio", "http"]
FEATURES_DOC = "demo://resource/static/document/features.md"
TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"
BLOB_TEMPLATE = "demo://resource/dynamic/blob/{resourceId}"


def _texts(message: BaseMessage) -> list[str]:
    """The text of a message: its plain-string content, or its text blocks."""
    if isinstance(message.content, str):
        return [message.content]
    return [b["text"] for b in message.content if isinstance(b, dict) and b.get("type") == "text"]


def _blocks(message: BaseMessage, kind: str) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return []
    return [b for b in message.content if isinstance(b, dict) and b.get("type") == kind]


# -- server-everything ---------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_resources_and_templates(servers: Servers, transport: str) -> None:
    async with MCPPool({"everything": servers.everything(transport)}) as pool:
        resources = {str(r.uri): r for r in await pool.list_resources("everything")}
        assert pool.connection("everything").protocol_version == LEGACY
        assert resources[FEATURES_DOC].mime_type == "text/markdown"

        (doc,) = await pool.read_resource("everything", FEATURES_DOC)
        assert doc.as_string().startswith("# Everything Server - Features")
        assert doc.mimetype == "text/markdown"
        assert doc.metadata == {"uri": FEATURES_DOC, "server": "everything"}

        templates = {t.uri_template: t for t in await pool.list_resource_templates("everything")}
        assert set(templates) >= {TEXT_TEMPLATE, BLOB_TEMPLATE}
        assert templates[BLOB_TEMPLATE].name == "Dynamic Blob Resource"

        (text,) = await pool.read_resource_template("everything", TEXT_TEMPLATE, {"resourceId": "3"})
        assert text.as_string().startswith("Resource 3: This is a plaintext resource")
        assert text.metadata["uri"] == "demo://resource/dynamic/text/3"

        # By the template's name; a blob entry is decoded to bytes.
        (blob,) = await pool.read_resource_template(
            "everything", "Dynamic Blob Resource", {"resourceId": "2"}
        )
        assert blob.as_bytes().startswith(b"Resource 2: This is a base64 blob")
        assert blob.mimetype == "text/plain"
        assert blob.metadata == {"uri": "demo://resource/dynamic/blob/2", "server": "everything"}

        with pytest.raises(MCPServerError) as caught:
            await pool.read_resource("everything", "demo://resource/dynamic/text/0")
        assert "everything" in str(caught.value)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_prompts_with_arguments(servers: Servers, transport: str) -> None:
    assert issubclass(MCPArgumentError, ValueError)
    async with MCPPool({"everything": servers.everything(transport)}) as pool:
        prompts = {p.name: p for p in await pool.list_prompts("everything")}
        assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= set(prompts)
        arguments = {a.name: bool(a.required) for a in prompts["args-prompt"].arguments or []}
        assert arguments == {"city": True, "state": False}

        assert [(type(m), m.content) for m in await pool.get_prompt("everything", "simple-prompt")] == [
            (HumanMessage, "This is a simple prompt without arguments.")
        ]
        (asked,) = await pool.get_prompt("everything", "args-prompt", {"city": "Paris", "state": "TX"})
        assert isinstance(asked, HumanMessage) and asked.content == "What's weather in Paris, TX?"
        (asked,) = await pool.get_prompt("everything", "args-prompt", {"city": "Oslo"})
        assert asked.content == "What's weather in Oslo?"

        bad_calls: list[tuple[str, dict[str, Any], str]] = [
            ("args-prompt", {}, "city"),  # a required argument is missing
            ("args-prompt", {"city": "Oslo", "country": "NO"}, "country"),  # unknown argument
            ("args-prompt", {"city": 3}, "city"),  # not a string
            ("no-such-prompt", {}, "no-such-prompt"),
        ]
        for name, args, named in bad_calls:
            with pytest.raises(MCPArgumentError) as caught:
                await pool.get_prompt("everything", name, args)
            assert "everything" in str(caught.value) and named in str(caught.value), (name, args)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_prompt_with_embedded_resources(servers: Servers, transport: str) -> None:
    async with MCPPool({"everything": servers.everything(transport)}) as pool:
        intro, embedded = await pool.get_prompt(
            "everything", "resource-prompt", {"resourceType": "Text", "resourceId": "4"}
        )
        assert isinstance(intro, HumanMessage) and isinstance(embedded, HumanMessage)
        assert "Text resource with id: 4" in " ".join(_texts(intro))
        assert any(t.startswith("Resource 4: This is a plaintext resource") for t in _texts(embedded))

        _intro, embedded_blob = await pool.get_prompt(
            "everything", "resource-prompt", {"resourceType": "Blob", "resourceId": "5"}
        )
        (file_block,) = _blocks(embedded_blob, "file")
        assert file_block.get("mime_type") == "text/plain"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_completion_of_prompt_and_template_arguments(
    servers: Servers, transport: str
) -> None:
    async with MCPPool({"everything": servers.everything(transport)}) as pool:
        departments = await pool.complete(
            "everything", prompt="completable-prompt", argument="department", value="S"
        )
        assert departments.values == ["Sales", "Support"]
        people = await pool.complete(
            "everything",
            prompt="completable-prompt",
            argument="name",
            value="",
            context={"department": "Engineering"},
        )
        assert people.values == ["Alice", "Bob", "Charlie"]
        kinds = await pool.complete(
            "everything", prompt="resource-prompt", argument="resourceType", value="B"
        )
        assert kinds.values == ["Blob"]
        ids = await pool.complete("everything", template=TEXT_TEMPLATE, argument="resourceId", value="7")
        assert ids.values == ["7"]
        assert (
            await pool.complete("everything", template=TEXT_TEMPLATE, argument="resourceId", value="x")
        ).values == []


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_resource_links_from_a_tool_resolve_on_their_server(
    servers: Servers, transport: str
) -> None:
    async with MCPPool({"everything": servers.everything(transport)}) as pool:
        tools = await tools_by_name(pool)
        message = await call(tools["get-resource-links"], {"count": 2})
        assert message.artifact["server"] == "everything"
        links = _blocks(message, "file")
        assert [b["url"] for b in links] == [
            "demo://resource/dynamic/blob/1",
            "demo://resource/dynamic/text/2",
        ]
        assert all(b["extras"]["server"] == "everything" for b in links)

        (first,) = await pool.resolve_link(message)  # index 0 by default
        assert first.as_bytes().startswith(b"Resource 1: This is a base64 blob")
        (second,) = await pool.resolve_link(links[1])
        assert second.as_string().startswith("Resource 2: This is a plaintext resource")
        (also_second,) = await pool.resolve_link(message, index=1)
        assert also_second.metadata["uri"] == "demo://resource/dynamic/text/2"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_resource_tool_for_the_model(servers: Servers, transport: str) -> None:
    async with MCPPool({"everything": servers.everything(transport, resource_tool=True)}) as pool:
        tools = await tools_by_name(pool)
        reader = tools["read_resource"]
        assert FEATURES_DOC in (reader.description or "")
        read = await call(reader, {"uri": FEATURES_DOC})
        assert read.status == "success"
        assert "# Everything Server - Features" in str(read.content)


async def test_everything_raw_client_is_the_live_sdk_client() -> None:
    async with MCPPool({"everything": everything_stdio()}) as pool:
        client = await pool.client("everything")
        listed = await client.list_prompts()
        assert "simple-prompt" in {p.name for p in listed.prompts}


# -- server-memory -------------------------------------------------------------------------------


async def test_memory_knowledge_graph_resource_and_its_updates(tmp_path: Path) -> None:
    uri = "memory://knowledge-graph"
    async with MCPPool({"memory": memory_stdio(tmp_path / "memory.jsonl")}) as pool:
        (resource,) = await pool.list_resources("memory")
        assert str(resource.uri) == uri and resource.mime_type == "application/json"
        (before,) = await pool.read_resource("memory", uri)
        assert json.loads(before.as_string()) == {"entities": [], "relations": []}

        tools = await tools_by_name(pool)
        async with pool.subscribe("memory", uri) as updates:
            created = await call(
                tools["create_entities"],
                {"entities": [{"name": "Ada", "entityType": "person", "observations": ["programmer"]}]},
            )
            assert created.status == "success"
            event = await asyncio.wait_for(anext(aiter(updates)), 10)
        assert event == {"type": "mcp_resource_updated", "server": "memory", "uri": uri}
        (after,) = await pool.read_resource("memory", uri)
        assert [e["name"] for e in json.loads(after.as_string())["entities"]] == ["Ada"]


# -- FastMCP -------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(("protocol", "negotiated"), [("auto", MODERN), ("legacy", LEGACY)])
async def test_fastmcp_resource_template_and_prompt(
    servers: Servers, transport: str, protocol: str, negotiated: str
) -> None:
    async with MCPPool({"fast": servers.fastmcp(transport, protocol=protocol)}) as pool:
        resources = {str(r.uri): r for r in await pool.list_resources("fast")}
        assert pool.connection("fast").protocol_version == negotiated
        assert resources["interop://readme"].mime_type == "text/plain"
        (readme,) = await pool.read_resource("fast", "interop://readme")
        assert readme.as_string() == "FastMCP interop server"
        assert readme.metadata["server"] == "fast"

        (template,) = await pool.list_resource_templates("fast")
        assert template.uri_template == "interop://greeting/{name}"
        (hello,) = await pool.read_resource_template("fast", "interop://greeting/{name}", {"name": "Ada"})
        assert hello.as_string() == "Hello, Ada!"
        assert hello.metadata["uri"] == "interop://greeting/Ada"
        (by_name,) = await pool.read_resource_template("fast", template.name, {"name": "Bob"})
        assert by_name.as_string() == "Hello, Bob!"

        (prompt,) = await pool.list_prompts("fast")
        assert prompt.name == "review"
        assert {a.name: bool(a.required) for a in prompt.arguments or []} == {"code": True, "language": False}
        (message,) = await pool.get_prompt("fast", "review", {"code": "print(1)"})
        assert isinstance(message, HumanMessage) and not isinstance(message, AIMessage)
        assert message.content == "Please review this python code:\nprint(1)"
        (message,) = await pool.get_prompt("fast", "review", {"code": "fn main() {}", "language": "rust"})
        assert message.content == "Please review this rust code:\nfn main() {}"
