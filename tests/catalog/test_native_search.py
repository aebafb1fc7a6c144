"""Provider-native tool search (``ToolSearch(native=...)``): a model whose provider searches tools
on its side is sent every MCP tool with ``defer_loading`` and the provider's tool-search tool,
instead of the package's search tool. Checked on the wire: ``ChatAnthropic`` talks to a loopback
stand-in for the Messages API that records each request and answers from a script; the OpenAI
request is built by ``ChatOpenAI`` itself from what the middleware hands the model."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from langgraph_mcp import MCPConfigError, MCPToolNode, create_mcp_agent
from langgraph_mcp.options import ToolSearch
from tests.chat import ScriptModel
from tests.helpers import thread
from tests.pool.test_lazy import keep, lazy_servers, started
from tests.servers._runner import bind_socket, make_uvicorn_server

ANTHROPIC_SEARCH = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


def message(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


@asynccontextmanager
async def messages_api(replies: list[dict[str, Any]], pids: Path) -> AsyncIterator[tuple[str, list[Any]]]:
    """A loopback stand-in for the Messages API: ``(base URL, [(headers, body, shop servers
    started)] per request)``; answers with ``replies`` in order."""
    seen: list[Any] = []

    async def create(request: Request) -> JSONResponse:
        seen.append((dict(request.headers), await request.json(), started(pids)))
        return JSONResponse(replies[len(seen) - 1])

    sock = bind_socket()
    server = make_uvicorn_server(Starlette(routes=[Route("/v1/messages", create, methods=["POST"])]))
    serving = asyncio.ensure_future(server.serve([sock]))
    try:
        await server.ready.wait()
        assert server.started
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", seen
    finally:
        server.should_exit = True
        await serving
        sock.close()


@pytest.fixture
def pids(tmp_path: Path) -> Path:
    path = tmp_path / "pids"
    path.mkdir()
    return path


async def test_an_anthropic_model_gets_deferred_tools_and_calls_a_lazy_one(
    tmp_path: Path, pids: Path
) -> None:
    catalog = tmp_path / "catalog.json"
    servers = lazy_servers(pids)
    await keep(servers, catalog)
    for pid in pids.iterdir():
        pid.unlink()
    replies = [
        message(
            [{"type": "tool_use", "id": "toolu_1", "name": "delete_item", "input": {"item": "pear"}}],
            "tool_use",
        ),
        message([{"type": "text", "text": "Deleted."}], "end_turn"),
    ]
    async with messages_api(replies, pids) as (url, seen):
        from langchain_anthropic import ChatAnthropic  # (here: the provider SDKs take seconds to import)

        model = ChatAnthropic(model="claude-sonnet-4-5", api_key="test-key", base_url=url, max_retries=0)
        agent = create_mcp_agent(
            model, servers, tool_search=ToolSearch(native=True, catalog=catalog), checkpointer=InMemorySaver()
        )
        try:
            out = await agent.ainvoke({"messages": [HumanMessage("remove the pear")]}, thread())
        finally:
            await agent.mcp.aclose()
    (headers, first, before), (_, second, after) = seen
    tools = first["tools"]
    assert ANTHROPIC_SEARCH in tools and "search_tools" not in [t.get("name") for t in tools]
    mcp = [t for t in tools if t != ANTHROPIC_SEARCH]
    assert len(mcp) == 70 and all(t["defer_loading"] is True for t in mcp)
    delete = next(t for t in mcp if t["name"] == "delete_item")
    assert delete == {
        "name": "delete_item",
        "description": "Delete an item.",
        "input_schema": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]},
        "defer_loading": True,
    }
    assert "advanced-tool-use-2025-11-20" in headers.get("anthropic-beta", "")
    # The lazy shop server started for the call, not for the model's first request.
    assert (before, after) == (0, 1)
    [result] = [
        b
        for m in second["messages"]
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    assert result["tool_use_id"] == "toolu_1" and "deleted pear" in str(result["content"])
    assert [m.text for m in out["messages"] if isinstance(m, ToolMessage)] == ["deleted pear"]
    assert out["messages"][-1].text == "Deleted."


class Sent(Exception):
    """Stops a model request once the model built what it would send (no network)."""


@pytest.mark.parametrize("mode", ["async", "sync"])
async def test_an_openai_request_carries_deferred_tools_and_the_tool_search_tool(
    tmp_path: Path, mode: str
) -> None:
    from langchain.agents.middleware import ModelRequest
    from langchain_openai import ChatOpenAI  # (here: the provider SDKs take seconds to import)
    from langgraph.runtime import Runtime

    model = ChatOpenAI(model="gpt-5", api_key="test-key")  # the Responses API: chosen for tool_search
    agent = create_mcp_agent(model, lazy_servers(tmp_path), tool_search=ToolSearch(native="auto"))
    middleware = agent.mcp
    payloads: list[dict[str, Any]] = []

    def send(request: ModelRequest) -> Any:
        # What create_agent does with the request: bind its tools, then the model builds the body.
        bound = request.model.bind_tools(request.tools)
        payloads.append(request.model._get_request_payload(request.messages, **bound.kwargs))  # type: ignore[attr-defined]
        raise Sent

    async def asend(request: ModelRequest) -> Any:
        return send(request)

    request = ModelRequest(
        model=model,
        messages=[HumanMessage("remove the pear")],
        tools=[middleware.search.tool],
        state={"messages": []},
        runtime=Runtime(context=None),
    )
    try:
        with pytest.raises(Sent):
            if mode == "async":
                await middleware.awrap_model_call(request, asend)
            else:  # a synchronous agent: the tools are listed on the package's own loop
                await asyncio.to_thread(middleware.wrap_model_call, request, send)
    finally:
        await middleware.aclose()
    [payload] = payloads
    assert {"type": "tool_search"} in payload["tools"]
    functions = [t for t in payload["tools"] if t.get("type") == "function"]
    assert len(functions) == 70 and all(t["defer_loading"] is True for t in functions)
    delete = next(t for t in functions if t["name"] == "delete_item")
    assert delete["parameters"] == {
        "type": "object",
        "properties": {"item": {"type": "string"}},
        "required": ["item"],
    }
    assert "search_tools" not in [t.get("name") for t in payload["tools"]]


async def test_auto_keeps_the_search_tool_for_other_models(tmp_path: Path) -> None:
    model = ScriptModel(turns=[[("search_tools", {"query": "delete an item", "limit": 1}, "s1")], "done"])
    agent = create_mcp_agent(model, lazy_servers(tmp_path), tool_search=ToolSearch(native="auto"))
    try:
        await agent.ainvoke({"messages": [HumanMessage("go")]})
    finally:
        await agent.mcp.aclose()
    assert [sorted(s) for s in model.seen] == [["search_tools"], ["delete_item", "search_tools"]]


def test_native_search_is_for_agents_only() -> None:
    with pytest.raises(MCPConfigError):
        MCPToolNode({"shop": {"command": "never-started"}}, tool_search=ToolSearch(native=True))
    with pytest.raises(MCPConfigError):
        ToolSearch(native="sometimes")  # type: ignore[arg-type]


async def test_native_true_with_a_model_of_another_provider_fails_the_model_call(tmp_path: Path) -> None:
    model = ScriptModel(turns=["done"])
    agent = create_mcp_agent(model, lazy_servers(tmp_path), tool_search=ToolSearch(native=True))
    try:
        with pytest.raises(ValueError, match="requires a provider with server-side tool search"):
            await agent.ainvoke({"messages": [HumanMessage("go")]})
    finally:
        await agent.mcp.aclose()
    assert model.seen == []  # never sent
