"""Interoperability: MCP servers written by others, over real stdio and loopback streamable HTTP.

The servers are pinned in ``tests/interop`` (npm lock file, uv lock file) and installed on first
use by ``tests/interop/install.py``: the reference servers ``server-everything``,
``server-filesystem`` and ``server-memory`` (TypeScript SDK), ``mcp-server-time`` and
``mcp-server-git`` (PyPI), and a small FastMCP server (``tests/interop/python/fastmcp_server.py``).
Each test also asserts the protocol version the client negotiated with the server.
"""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.types import Command
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ListTasksRequest, ListTasksResult
from pydantic import BaseModel

from langgraph_mcp import MCPPool, MCPToolNode
from langgraph_mcp.elicitation import accept
from tests.helpers import ai, call, text_of, thread, tool_graph, tool_results, tools_by_name
from tests.interop.servers import (
    Servers,
    filesystem_stdio,
    git_stdio,
    memory_stdio,
    time_stdio,
)

# One worker runs the module (tests/conftest.py, ONE_WORKER): its HTTP servers start once.
# Some of these servers do not exit when their input closes (server-everything over stdio): they
# are stopped after a short grace instead of the default 2 s, which is not what is tested here.
pytestmark = [pytest.mark.interop, pytest.mark.usefixtures("short_graces")]

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TRANSPORTS = ["stdio", "http"]


async def _progress_events(node: MCPToolNode, tool: str, args: dict[str, Any]) -> tuple[list[Any], Any]:
    """Run one call of ``tool`` in a graph; its ``mcp_progress`` custom events and the graph output."""
    graph = tool_graph(node)
    request = {"messages": [ai((tool, args, "call_1"))]}
    events: list[Any] = []
    out: dict[str, Any] = {}
    async for mode, chunk in graph.astream(request, thread(), stream_mode=["custom", "values"]):
        if mode == "custom" and chunk.get("type") == "mcp_progress":
            events.append(chunk)
        elif mode == "values":
            out = chunk
    return events, out


# -- server-everything (TypeScript reference server) ---------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_tools_images_structured_content(servers: Servers, transport: str) -> None:
    async with MCPPool({"everything": servers.everything(transport)}) as pool:
        tools = await tools_by_name(pool)
        assert pool.connection("everything").protocol_version == LEGACY
        assert {"echo", "get-sum", "get-tiny-image", "get-structured-content"} <= set(tools)
        # Registered once the server knows the client can answer elicitations.
        assert "trigger-elicitation-request" in tools

        assert (await call(tools["echo"], {"message": "héllo"})).content == "Echo: héllo"
        assert (await call(tools["get-sum"], {"a": 2, "b": 40})).content == "The sum of 2 and 40 is 42."

        image = await call(tools["get-tiny-image"])
        assert image.status == "success"
        blocks = [b for b in image.content if isinstance(b, dict) and b["type"] == "image"]
        assert len(blocks) == 1 and blocks[0]["mime_type"] == "image/png"
        assert base64.b64decode(blocks[0]["base64"]).startswith(PNG_SIGNATURE)

        structured = tools["get-structured-content"]
        assert structured.metadata is not None
        schema = structured.metadata["mcp"]["output_schema"]
        assert set(schema["properties"]) >= {"temperature", "conditions", "humidity"}
        weather = await call(structured, {"location": "Chicago"})
        assert weather.status == "success"
        assert set(weather.artifact["structured_content"]) == {"temperature", "conditions", "humidity"}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_bad_arguments_become_error_tool_messages(servers: Servers, transport: str) -> None:
    async with MCPToolNode({"everything": servers.everything(transport)}) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke(
            {"messages": [ai(("get-sum", {"a": 1}, "missing"), ("get-sum", {"a": "x", "b": 2}, "wrong"))]},
            thread(),
        )
        errors = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
        assert errors["missing"].status == "error" and "b: Field required" in text_of(errors["missing"])
        assert errors["wrong"].status == "error" and "a:" in text_of(errors["wrong"])


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_progress_becomes_custom_stream_events(servers: Servers, transport: str) -> None:
    async with MCPToolNode({"everything": servers.everything(transport)}) as node:
        events, out = await _progress_events(
            node, "trigger-long-running-operation", {"duration": 0.3, "steps": 3}
        )
    assert [(e["progress"], e["total"]) for e in events] == [(1, 3), (2, 3), (3, 3)]
    assert {(e["server"], e["tool_name"], e["tool_call_id"]) for e in events} == {
        ("everything", "trigger-long-running-operation", "call_1")
    }
    assert tool_results(out)["call_1"].startswith("Long running operation completed.")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_elicitation_is_an_interrupt_resumed_with_command(
    servers: Servers, transport: str
) -> None:
    async with MCPToolNode({"everything": servers.everything(transport)}) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("trigger-elicitation-request", {}, "call_1"))]}, thread())
        assert node.pool.connection("everything").protocol_version == LEGACY
        (pending,) = out["__interrupt__"]
        payload = pending.value
        assert payload["type"] == "mcp_elicitation" and payload["server"] == "everything"
        (request,) = payload["requests"]
        assert request["requested_schema"]["required"] == ["name"]
        out = await graph.ainvoke(
            Command(resume={"responses": {request["key"]: accept({"name": "Ada Lovelace", "check": True})}}),
            thread(),
        )
    text = tool_results(out)["call_1"]
    assert "- Name: Ada Lovelace" in str(text) and "- Agreed to terms: true" in str(text)
    # Omitted fields took the schema's defaults before the answer reached the server.
    assert "- Favorite Integer: 42" in str(text)


# -- FastMCP (another Python implementation) ------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(("protocol", "negotiated"), [("auto", MODERN), ("legacy", LEGACY)])
async def test_fastmcp_structured_output_image_and_progress(
    servers: Servers, transport: str, protocol: str, negotiated: str
) -> None:
    async with MCPToolNode({"fast": servers.fastmcp(transport, protocol=protocol)}) as node:
        tools = await tools_by_name(node.pool)
        assert node.pool.connection("fast").protocol_version == negotiated
        add = tools["add"]
        assert add.metadata is not None
        assert set(add.metadata["mcp"]["output_schema"]["properties"]) == {"a", "b", "total"}
        added = await call(add, {"a": 2, "b": 3})
        assert added.artifact["structured_content"] == {"a": 2, "b": 3, "total": 5}
        assert json.loads(text_of(added)) == {"a": 2, "b": 3, "total": 5}

        pixel = await call(tools["pixel"])
        (block,) = pixel.content
        assert isinstance(block, dict) and block["type"] == "image" and block["mime_type"] == "image/png"
        assert base64.b64decode(block["base64"]).startswith(PNG_SIGNATURE)

        events, out = await _progress_events(node, "count", {"steps": 3})
    assert [(e["progress"], e["total"], e["message"]) for e in events] == [
        (1, 3, "step 1 of 3"),
        (2, 3, "step 2 of 3"),
        (3, 3, "step 3 of 3"),
    ]
    assert tool_results(out)["call_1"] == "counted to 3"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_fastmcp_ctx_elicit_is_an_interrupt_with_protocol_legacy(
    servers: Servers, transport: str
) -> None:
    async with MCPToolNode({"fast": servers.fastmcp(transport, protocol="legacy")}) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("ask_name", {}, "call_1"))]}, thread())
        assert node.pool.connection("fast").protocol_version == LEGACY
        (request,) = out["__interrupt__"][0].value["requests"]
        assert request["message"] == "What is your name?"
        out = await graph.ainvoke(
            Command(resume={"responses": {request["key"]: accept({"value": "Ada"})}}), thread()
        )
    assert tool_results(out)["call_1"] == "Hello, Ada!"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_fastmcp_asking_on_2026(servers: Servers, transport: str) -> None:
    """With the default ``protocol: "auto"`` FastMCP speaks 2026-07-28. Its ``ctx.elicit`` is a
    server-initiated request, which that protocol has no room for: the call fails, and the error
    says what to configure. A tool that asks the 2026-07-28 way (an input-required round) is an
    interrupt, resumed with ``Command``."""
    async with MCPToolNode({"fast": servers.fastmcp(transport)}) as node:
        graph = tool_graph(node)
        out = await graph.ainvoke({"messages": [ai(("ask_name", {}, "call_1"))]}, thread("elicit"))
        assert node.pool.connection("fast").protocol_version == MODERN
        (message,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        assert message.status == "error"
        text = text_of(message)
        assert "server-initiated requests is unavailable on 2026-07-28" in text  # the server's own words
        assert """set "protocol": "legacy" for MCP server 'fast'""" in text

        out = await graph.ainvoke(
            {"messages": [ai(("confirm", {"item": "a.txt"}, "call_2"))]}, thread("round")
        )
        (request,) = out["__interrupt__"][0].value["requests"]
        assert request["message"] == "Delete a.txt?"
        out = await graph.ainvoke(
            Command(resume={"responses": {request["key"]: accept({"ok": True})}}), thread("round")
        )
    assert tool_results(out)["call_2"] == "deleted a.txt"


async def test_sdk_server_asking_through_a_server_request_on_2026_says_to_set_protocol_legacy() -> None:
    """The MCP SDK's own servers refuse such a request with a JSON-RPC error (no back-channel)."""
    server = MCPServer("old-style")

    class Name(BaseModel):
        name: str

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", Name)
        return str(answer)

    async with MCPPool({"old": server}) as pool:
        tools = await tools_by_name(pool)
        assert pool.connection("old").protocol_version == MODERN
        message = await call(tools["ask"])
    assert message.status == "error"
    assert "no back-channel for server-initiated requests" in text_of(message)
    assert """set "protocol": "legacy" for MCP server 'old'""" in text_of(message)


async def test_a_tool_error_that_merely_mentions_server_requests_gets_no_hint() -> None:
    server = MCPServer("talker")

    @server.tool()
    def explain() -> str:
        raise ToolError("a back-channel is how server-initiated requests travel")

    async with MCPPool({"talker": server}) as pool:
        message = await call((await tools_by_name(pool))["explain"])
    assert message.status == "error"
    assert "back-channel" in text_of(message)
    assert '"protocol": "legacy"' not in text_of(message)


# -- server-filesystem, server-memory (TypeScript reference servers, stdio only) -------------------


async def test_filesystem_reads_and_writes_inside_its_allowed_folder_only(tmp_path: Path) -> None:
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("no")
    async with MCPPool({"fs": filesystem_stdio(allowed)}) as pool:
        tools = await tools_by_name(pool)
        assert pool.connection("fs").protocol_version == LEGACY
        listed = await call(tools["list_allowed_directories"])
        assert str(allowed.resolve()) in text_of(listed)

        target = allowed / "notes.txt"
        wrote = await call(tools["write_file"], {"path": str(target), "content": "line one\nline two\n"})
        assert wrote.status == "success"
        assert target.read_text() == "line one\nline two\n"
        read = await call(tools["read_text_file"], {"path": str(target), "head": 1})
        assert text_of(read) == "line one"

        denied = await call(tools["read_text_file"], {"path": str(outside / "secret.txt")})
        assert denied.status == "error" and "outside allowed directories" in text_of(denied)


async def test_filesystem_takes_its_allowed_folders_from_our_roots(tmp_path: Path) -> None:
    """Given roots by the client, the server uses them instead of its command-line folders."""
    from_args, from_roots = tmp_path / "args", tmp_path / "roots"
    from_args.mkdir()
    from_roots.mkdir()
    (from_roots / "hello.txt").write_text("from roots")
    async with MCPPool({"fs": filesystem_stdio(from_args, roots=[str(from_roots)])}) as pool:
        tools = await tools_by_name(pool)
        # The server asks for the roots once the session is initialized and applies the answer
        # on its own time: a call sent at once may still see the command-line folders. Wait
        # for the server to say it took them (on a busy machine this takes a moment).
        deadline = asyncio.get_running_loop().time() + 30
        listed = text_of(await call(tools["list_allowed_directories"]))
        while str(from_roots.resolve()) not in listed:
            assert asyncio.get_running_loop().time() < deadline, listed
            await asyncio.sleep(0.05)
            listed = text_of(await call(tools["list_allowed_directories"]))
        read = await call(tools["read_text_file"], {"path": str(from_roots / "hello.txt")})
        assert text_of(read) == "from roots"
    assert str(from_roots.resolve()) in listed and str(from_args.resolve()) not in listed


async def test_memory_knowledge_graph(tmp_path: Path) -> None:
    memory_file = tmp_path / "memory.jsonl"
    async with MCPPool({"memory": memory_stdio(memory_file)}) as pool:
        tools = await tools_by_name(pool)
        assert pool.connection("memory").protocol_version == LEGACY
        created = await call(
            tools["create_entities"],
            {
                "entities": [
                    {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]},
                    {"name": "Analytical Engine", "entityType": "machine", "observations": []},
                ]
            },
        )
        assert created.status == "success"
        related = await call(
            tools["create_relations"],
            {"relations": [{"from": "Ada", "to": "Analytical Engine", "relationType": "programmed"}]},
        )
        assert related.status == "success"
        found = json.loads(text_of(await call(tools["search_nodes"], {"query": "first program"})))
        assert [e["name"] for e in found["entities"]] == ["Ada"]
        graph = json.loads(text_of(await call(tools["read_graph"])))
        assert {e["name"] for e in graph["entities"]} == {"Ada", "Analytical Engine"}
        assert graph["relations"] == [
            {"from": "Ada", "to": "Analytical Engine", "relationType": "programmed"}
        ]
    assert "programmed" in memory_file.read_text()  # kept by the server in its own file


# -- mcp-server-time, mcp-server-git (PyPI, stdio only) -------------------------------------------


async def test_time_converts_between_time_zones() -> None:
    async with MCPPool({"time": time_stdio()}) as pool:
        tools = await tools_by_name(pool)
        assert pool.connection("time").protocol_version == MODERN
        converted = await call(
            tools["convert_time"],
            {"source_timezone": "Europe/London", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        )
        bad = await call(
            tools["convert_time"], {"source_timezone": "Mars/Base", "time": "12:00", "target_timezone": "UTC"}
        )
    result = json.loads(text_of(converted))
    assert result["source"]["timezone"] == "Europe/London"
    assert result["target"]["timezone"] == "Asia/Tokyo"
    assert result["target"]["datetime"].split("T")[1].startswith(("20:00", "21:00"))  # BST or GMT
    assert bad.status == "error" and "Mars/Base" in text_of(bad)


async def test_git_status_and_log_of_a_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=Ada", "-c", "user.email=ada@example.com", *args],
            cwd=repo,
            check=True,
            capture_output=True,
        )

    git("init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\n")
    git("add", "a.txt")
    git("commit", "-q", "-m", "First commit")
    (repo / "a.txt").write_text("two\n")
    (repo / "new.txt").write_text("new\n")
    async with MCPPool({"git": git_stdio(repo)}) as pool:
        tools = await tools_by_name(pool)
        assert pool.connection("git").protocol_version == MODERN
        status = text_of(await call(tools["git_status"], {"repo_path": str(repo)}))
        log = text_of(await call(tools["git_log"], {"repo_path": str(repo)}))
        diff = text_of(await call(tools["git_diff_unstaged"], {"repo_path": str(repo)}))
        elsewhere = await call(tools["git_status"], {"repo_path": str(tmp_path / "nope")})
    assert "a.txt" in status and "new.txt" in status
    assert "First commit" in log and "Ada" in log
    assert "-one" in diff and "+two" in diff
    assert elsewhere.status == "error"


# -- 2025-11-25 tasks (server-everything's simulate-research-query requires one) ------------------

RESEARCH_STAGES = (
    "Gathering sources...",
    "Analyzing content...",
    "Synthesizing findings...",
    "Generating report...",
)
"""The status messages of ``simulate-research-query``'s stages, in order (one second each)."""


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_research_runs_as_a_task_with_its_stages_as_progress(
    servers: Servers, transport: str
) -> None:
    async with MCPToolNode({"everything": servers.everything(transport)}) as node:
        assert "simulate-research-query" in {t.name for t in await node.get_tools()}
        events, out = await _progress_events(node, "simulate-research-query", {"topic": "bees"})
    (message,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert message.status == "success" and text_of(message).startswith("# Research Report: bees")
    # The server moves to its next stage every second and asks to be polled every second, so a
    # poll that comes late sees a stage later: each status seen is one event, in the server's
    # order, and a stage can be skipped. Four seconds of stages give at least two polls.
    stages = [e["message"] for e in events]
    server_stages = iter(RESEARCH_STAGES)
    assert len(stages) >= 2 and all(stage in server_stages for stage in stages), stages
    assert [e["progress"] for e in events] == list(range(1, len(events) + 1))


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_research_asks_through_its_task_and_the_answer_reaches_it(
    servers: Servers, transport: str
) -> None:
    async with MCPToolNode({"everything": servers.everything(transport)}) as node:
        graph = tool_graph(node)
        args = {"topic": "ai", "ambiguous": True}
        await graph.ainvoke({"messages": [ai(("simulate-research-query", args, "c1"))]}, thread())
        (pending,) = (await graph.aget_state(thread())).interrupts
        (question,) = pending.value["requests"]
        assert "multiple interpretations" in question["message"]
        answer = {"responses": {question["key"]: accept({"interpretation": "historical"})}}
        out = await graph.ainvoke(Command(resume=answer), thread())
    report = tool_results(out)["c1"]
    assert report.startswith("# Research Report: ai (historical)")


async def test_everything_research_past_its_timeout_is_cancelled_on_the_server(servers: Servers) -> None:
    config = {**servers.everything("stdio"), "tool_timeouts": {"simulate-research-query": 1.5}}
    async with MCPPool({"everything": config}) as pool:
        message = await call((await tools_by_name(pool))["simulate-research-query"], {"topic": "owls"})
        assert message.status == "error" and "timed out after 1.5s" in text_of(message)
        listed = await pool.connection("everything").request(
            "list tasks", lambda c: c.session.send_request(ListTasksRequest(), ListTasksResult)
        )
    (task,) = listed.tasks
    assert task.status == "cancelled"
