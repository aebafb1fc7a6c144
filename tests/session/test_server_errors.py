"""A server's own JSON-RPC error ``-32000`` is that request's error, not a lost connection.

``-32000`` is JSON-RPC's generic "server error" code: servers answer with it when they are
busy or a backend refused. The MCP SDK uses the same code for the errors it makes up itself
when a connection closes (``"Connection closed"``) or a streamable HTTP response ends without
an answer (``"SSE stream ended without a response"``). A server's answer must be told apart
from those: it fails only the request it answers, as any other JSON-RPC error does, while the
session and the other requests in flight on it carry on. A real loss still says that the
call's outcome is unknown.

The fixture server is ``tests/servers/overloaded.py``, over stdio and streamable HTTP
(loopback) in both protocol eras: ``auto`` negotiates 2026-07-28 with it, ``legacy`` speaks
2025-11-25. Calls that must be in flight together wait on each other on the server
(``hold`` / ``wait_held`` / ``release``), never on the clock.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from mcp import Client
from mcp.shared.exceptions import MCPError

from langgraph_mcp import MCPPool, MCPToolNode
from langgraph_mcp.errors import OUTCOME_UNKNOWN, MCPConnectionError, MCPServerError
from tests.conftest_servers import http_server_process, serve_in_loop, stdio_params
from tests.helpers import ai, call, free_port, thread, tool_graph, tool_results, tools_by_name
from tests.servers import overloaded
from tests.servers.overloaded import BUSY_MESSAGE, SERVER_ERROR
from tests.tiers import HTTP_ERAS

SERVER = "busy"
CASES = [("stdio", "auto"), ("stdio", "legacy"), ("http", "auto"), ("http", "legacy")]
# Also in process and over the old HTTP+SSE transport, for the direct calls.
MORE_CASES = [("in_process", "auto"), ("in_process", "legacy"), ("sse", "auto"), ("sse", "legacy")]
PROTOCOLS = ["auto", "legacy"]
SDK_LOST_ANSWER = "SSE stream ended without a response"
LIMIT = 60.0  # bounds each scenario, so a regression fails instead of hanging


def refused(tool: str, message: str = BUSY_MESSAGE) -> str:
    """What a ``ToolMessage`` says when the server answered ``tool`` with ``-32000``."""
    return f"MCP server {SERVER!r} rejected the call to {tool!r}: {message} (MCP error {SERVER_ERROR})"


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """One streamable HTTP server process for the module (the tests use keys of their own)."""
    with http_server_process("overloaded") as url:
        yield url


@pytest.fixture
def key() -> str:
    return uuid.uuid4().hex


@asynccontextmanager
async def server_config(
    transport: str, protocol: str, http_url: str, pid_dir: Path
) -> AsyncIterator[dict[str, Any]]:
    """A connection config for the overloaded server over ``transport`` in ``protocol``."""
    if transport == "stdio":
        yield {**stdio_params("overloaded", env={"DEMO_PID_DIR": str(pid_dir)}), "protocol": protocol}
    elif transport == "http":
        yield {"url": http_url, "protocol": protocol}
    elif transport == "in_process":
        yield {"server": overloaded.build_server(), "protocol": protocol}
    else:
        async with serve_in_loop(overloaded.build_server(), "sse") as url:
            yield {"url": url, "transport": "sse", "protocol": protocol}


@pytest.fixture(params=CASES, ids=[f"{t}-{p}" for t, p in CASES])
async def config(
    request: pytest.FixtureRequest, http_url: str, pid_dir: Path
) -> AsyncIterator[dict[str, Any]]:
    transport, protocol = request.param
    async with server_config(transport, protocol, http_url, pid_dir) as found:
        yield found


@pytest.fixture(params=CASES + MORE_CASES, ids=[f"{t}-{p}" for t, p in CASES + MORE_CASES])
async def any_config(
    request: pytest.FixtureRequest, http_url: str, pid_dir: Path
) -> AsyncIterator[dict[str, Any]]:
    transport, protocol = request.param
    async with server_config(transport, protocol, http_url, pid_dir) as found:
        yield found


def value(result: Any) -> Any:
    """The ``result`` a fixture tool returned."""
    assert result.structured_content is not None, result
    return result.structured_content["result"]


async def caught(awaitable: Awaitable[Any]) -> Any:
    """What ``awaitable`` returned, or the exception it raised."""
    try:
        return await awaitable
    except Exception as exc:
        return exc


def seen(outcome: Any) -> Any:
    """An outcome in comparable terms: a server error's code and reason, another error's type
    and text, a tool result's value."""
    if isinstance(outcome, MCPServerError):
        return ("MCPServerError", outcome.code, outcome.reason)
    if isinstance(outcome, BaseException):
        return (type(outcome).__name__, str(outcome))
    return value(outcome)


async def session_marks(pool: MCPPool, key: str) -> tuple[int, int]:
    """The server's PID and this session's ``visit`` count (this visit included)."""
    connection = pool.connection(SERVER)
    pid = value(await connection.call_tool("pid"))
    return pid, value(await connection.call_tool("visit", {"key": key}))


# -- a server's own -32000 ----------------------------------------------------------------


async def test_a_servers_minus_32000_fails_only_that_call(any_config: dict[str, Any], key: str) -> None:
    """Two calls are in flight on the session when the server answers a third with -32000: the
    third raises MCPServerError(-32000) with the server's message, the other two finish, and
    the session (the same server process, the same connect) carries on."""
    async with asyncio.timeout(LIMIT), MCPPool({SERVER: any_config}) as pool:
        connection = pool.connection(SERVER)
        pid, first_visit = await session_marks(pool, key)
        holds = [asyncio.ensure_future(connection.call_tool("hold", {"key": key})) for _ in range(2)]
        await connection.call_tool("wait_held", {"key": key, "n": 2})
        refusal = await caught(connection.call_tool("refuse"))
        released = await caught(connection.call_tool("release", {"key": key}))
        held = [seen(outcome) for outcome in await asyncio.gather(*holds, return_exceptions=True)]
        pid_after, second_visit = await session_marks(pool, key)
        observed = {
            "refusal": seen(refusal),
            "released": seen(released),
            "holds": held,
            "same process": pid_after == pid,
            "visits": [first_visit, second_visit],
            "connects": connection.connects,
        }
    assert observed == {
        "refusal": ("MCPServerError", SERVER_ERROR, BUSY_MESSAGE),
        "released": 2,
        "holds": [f"released {key}"] * 2,
        "same process": True,
        "visits": [1, 2],
        "connects": 1,
    }
    assert OUTCOME_UNKNOWN not in str(refusal)


async def test_a_tool_answered_with_minus_32000_in_a_graph(config: dict[str, Any], key: str) -> None:
    """One AIMessage asks for three calls, run concurrently by MCPToolNode; the server answers
    one with -32000 while the other two run. Its ToolMessage says the server rejected the call,
    as for any other JSON-RPC error; the other two finish; the session is the same."""
    connections: list[Any] = []

    async def release_after_refusal(request: Any, execute: Any) -> Any:
        message = await execute(request)
        if request.tool_call["name"] == "refuse_when_held":
            # Only once the refusal came back, so the holds are still running when it does.
            connection = connections[0]
            await connection.call_tool("release", {"key": key})
        return message

    async with (
        asyncio.timeout(LIMIT),
        MCPToolNode({SERVER: config}, awrap_tool_call=release_after_refusal) as node,
    ):
        connections.append(node.pool.connection(SERVER))
        pid, first_visit = await session_marks(node.pool, key)
        calls = ai(
            ("refuse_when_held", {"key": key, "n": 2}, "refusal"),
            ("hold", {"key": key}, "hold_1"),
            ("hold", {"key": key}, "hold_2"),
        )
        out = await tool_graph(node).ainvoke({"messages": [calls]}, thread())
        pid_after, second_visit = await session_marks(node.pool, key)
        observed = {
            "messages": tool_results(out),
            "statuses": {m.tool_call_id: m.status for m in out["messages"] if isinstance(m, ToolMessage)},
            "same process": pid_after == pid,
            "visits": [first_visit, second_visit],
            "connects": connections[0].connects,
        }
    assert observed == {
        "messages": {
            "refusal": refused("refuse_when_held"),
            "hold_1": f"released {key}",
            "hold_2": f"released {key}",
        },
        "statuses": {"refusal": "error", "hold_1": "success", "hold_2": "success"},
        "same process": True,
        "visits": [1, 2],
        "connects": 1,
    }


async def test_a_tool_answered_with_minus_32000_as_a_tool_message(config: dict[str, Any]) -> None:
    """Called as a LangChain tool (outside a graph), the refusal is the same ToolMessage, with a
    custom message kept word for word, and the next call runs on the same session."""
    async with asyncio.timeout(LIMIT), MCPPool({SERVER: config}) as pool:
        tools = await tools_by_name(pool)
        message = await call(tools["refuse"], {"message": "quota exceeded for this hour"})
        after = await call(tools["pid"])
        connects = pool.connection(SERVER).connects
    assert (message.status, message.content) == ("error", refused("refuse", "quota exceeded for this hour"))
    assert OUTCOME_UNKNOWN not in message.content
    assert (after.status, connects) == ("success", 1)


async def test_a_server_saying_connection_closed_leaves_the_outcome_unknown(config: dict[str, Any]) -> None:
    """A server's -32000 in the SDK's own words ("Connection closed": what an SDK server answers
    the requests it cancels as it shuts down) is not a refusal: the call may have run in part, so
    the message says its outcome is unknown, and the next call finds a working session."""
    async with asyncio.timeout(LIMIT), MCPPool({SERVER: config}) as pool:
        tools = await tools_by_name(pool)
        message = await call(tools["refuse"], {"message": "Connection closed"})
        after = await call(tools["pid"])
    assert message.status == "error"
    assert OUTCOME_UNKNOWN in message.content
    assert "rejected" not in message.content
    assert after.status == "success"


async def test_a_resource_or_prompt_answered_with_minus_32000(config: dict[str, Any], key: str) -> None:
    """A -32000 answer to resources/read or prompts/get is an MCPServerError; a call in flight
    meanwhile finishes and the session carries on."""
    async with asyncio.timeout(LIMIT), MCPPool({SERVER: config}) as pool:
        connection = pool.connection(SERVER)
        pid, first_visit = await session_marks(pool, key)
        hold = asyncio.ensure_future(connection.call_tool("hold", {"key": key}))
        await connection.call_tool("wait_held", {"key": key, "n": 1})
        resource = await caught(pool.read_resource(SERVER, "overloaded://busy"))
        prompt = await caught(pool.get_prompt(SERVER, "busy"))
        calm = await caught(pool.read_resource(SERVER, "overloaded://calm"))
        released = await caught(connection.call_tool("release", {"key": key}))
        held = seen((await asyncio.gather(hold, return_exceptions=True))[0])
        pid_after, second_visit = await session_marks(pool, key)
        observed = {
            "resource": seen(resource),
            "prompt": seen(prompt),
            "calm": calm if isinstance(calm, Exception) else [blob.as_string() for blob in calm],
            "released": seen(released),
            "hold": held,
            "same process": pid_after == pid,
            "visits": [first_visit, second_visit],
            "connects": connection.connects,
        }
    assert observed == {
        "resource": ("MCPServerError", SERVER_ERROR, BUSY_MESSAGE),
        "prompt": ("MCPServerError", SERVER_ERROR, BUSY_MESSAGE),
        "calm": ["calm"],
        "released": 1,
        "hold": f"released {key}",
        "same process": True,
        "visits": [1, 2],
        "connects": 1,
    }


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_tool_listing_answered_with_minus_32000_keeps_the_session(
    transport: str, protocol: str, pid_dir: Path, key: str
) -> None:
    """tools/list answered with -32000 fails that listing (saying what the server said), and
    nothing else: a call in flight finishes, the next listing works on the same session."""
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(asyncio.timeout(LIMIT))
        if transport == "http":  # its own server: refusing listings must not reach other tests
            url = await stack.enter_async_context(serve_in_loop(overloaded.build_server()))
            entry: dict[str, Any] = {"url": url, "protocol": protocol}
        else:
            entry = {**stdio_params("overloaded", env={"DEMO_PID_DIR": str(pid_dir)}), "protocol": protocol}
        pool = await stack.enter_async_context(MCPPool({SERVER: entry}))
        connection = pool.connection(SERVER)
        pid, first_visit = await session_marks(pool, key)
        hold = asyncio.ensure_future(connection.call_tool("hold", {"key": key}))
        await connection.call_tool("wait_held", {"key": key, "n": 1})
        await connection.call_tool("refuse_listings", {"on": True})
        listing = await caught(connection.refresh_tools())
        await connection.call_tool("refuse_listings", {"on": False})
        relisted = await caught(connection.refresh_tools())
        # Whether the next listing works (else what it raised).
        relisted_ok = "hold" in [t.name for t in relisted] if isinstance(relisted, list) else seen(relisted)
        released = await caught(connection.call_tool("release", {"key": key}))
        held = seen((await asyncio.gather(hold, return_exceptions=True))[0])
        pid_after, second_visit = await session_marks(pool, key)
        observed = {
            "listing failed": isinstance(listing, (MCPServerError, MCPConnectionError)),
            "says why": BUSY_MESSAGE in str(listing) and str(SERVER_ERROR) in str(listing),
            "outcome unknown": OUTCOME_UNKNOWN in str(listing),
            "relisted": relisted_ok,
            "released": seen(released),
            "hold": held,
            "same process": pid_after == pid,
            "visits": [first_visit, second_visit],
            "connects": connection.connects,
        }
    assert observed == {
        "listing failed": True,
        "says why": True,
        "outcome unknown": False,
        "relisted": True,
        "released": 1,
        "hold": f"released {key}",
        "same process": True,
        "visits": [1, 2],
        "connects": 1,
    }


# -- real losses: the outcome stays unknown ------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_stdio_server_killed_mid_call_leaves_the_outcome_unknown(
    protocol: str, pid_dir: Path, key: str
) -> None:
    """Control: the server process dies while a call runs. The call's outcome is unknown, and
    the next call starts a new server process."""
    entry = {**stdio_params("overloaded", env={"DEMO_PID_DIR": str(pid_dir)}), "protocol": protocol}
    async with asyncio.timeout(LIMIT), MCPPool({SERVER: entry}) as pool:
        connection = pool.connection(SERVER)
        tools = await tools_by_name(pool)
        pid = value(await connection.call_tool("pid"))
        holding = asyncio.ensure_future(call(tools["hold"], {"key": key}))
        await connection.call_tool("wait_held", {"key": key, "n": 1})
        os.kill(pid, signal.SIGKILL)
        message = await holding
        assert message.status == "error"
        assert OUTCOME_UNKNOWN in message.content
        assert "rejected" not in message.content
        assert value(await connection.call_tool("pid")) != pid
        assert connection.connects == 2


@pytest.mark.parametrize("protocol", HTTP_ERAS)
async def test_an_http_server_stopped_mid_call_leaves_the_outcome_unknown(protocol: str, key: str) -> None:
    """Control: the HTTP server shuts down while a call runs (2025-11-25: its event stream ends
    without an answer, which the SDK reports as -32000; 2026-07-28: an HTTP 5xx). The call's
    outcome is unknown; once the server is back, the next call works."""
    port = free_port()
    async with asyncio.timeout(LIMIT), AsyncExitStack() as stack:
        first = AsyncExitStack()
        url = await first.enter_async_context(serve_in_loop(overloaded.build_server(), port=port))
        pool = await stack.enter_async_context(MCPPool({SERVER: {"url": url, "protocol": protocol}}))
        connection = pool.connection(SERVER)
        tools = await tools_by_name(pool)
        holding = asyncio.ensure_future(call(tools["hold"], {"key": key}))
        await connection.call_tool("wait_held", {"key": key, "n": 1})
        await first.aclose()  # the server stops with the call still running
        message = await holding
        assert message.status == "error"
        assert OUTCOME_UNKNOWN in message.content
        assert "rejected" not in message.content
        await stack.enter_async_context(serve_in_loop(overloaded.build_server(), port=port))
        assert value(await connection.call_tool("tally", {"key": key})) == 1


class LoseAnswers:
    """ASGI front for an MCP server app: a ``tools/call`` of one of ``tools`` reaches the server
    and runs, but the client gets an event stream that ends without the answer (as from a proxy
    that cut the response short). Other requests pass through untouched."""

    def __init__(self, app: Any, tools: set[str]) -> None:
        self.app = app
        self.tools = tools

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        try:
            request = json.loads(body)
        except ValueError:
            request = None
        params = request.get("params") if isinstance(request, dict) else None
        if not (
            isinstance(params, dict)
            and request.get("method") == "tools/call"
            and params.get("name") in self.tools
        ):
            await self.app(scope, replay, send)
            return

        async def dropped(message: Any) -> None:
            pass

        await self.app(scope, replay, dropped)  # the tool runs; its answer goes nowhere
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_an_answer_lost_on_its_event_stream_leaves_the_outcome_unknown(protocol: str, key: str) -> None:
    """Control: the server ran the call, but its HTTP response ended without the answer. The
    SDK makes up a -32000 error for it ("SSE stream ended without a response"); that is a lost
    answer, not the server's: the call's outcome is unknown (the server did run it), and the
    next call works."""
    async with (
        asyncio.timeout(LIMIT),
        serve_in_loop(overloaded.build_server(), wrap=lambda app: LoseAnswers(app, {"tally"})) as url,
    ):
        async with Client(url, mode=protocol) as client:  # the SDK's own view of it
            with pytest.raises(MCPError) as sdk:
                await client.call_tool("tally", {"key": key})
        assert (sdk.value.code, sdk.value.error.message) == (SERVER_ERROR, SDK_LOST_ANSWER)
        async with MCPPool({SERVER: {"url": url, "protocol": protocol}}) as pool:
            message = await call((await tools_by_name(pool))["tally"], {"key": key})
            assert message.status == "error"
            assert OUTCOME_UNKNOWN in message.content
            assert "rejected" not in message.content
            assert value(await pool.connection(SERVER).call_tool("tallied", {"key": key})) == 2


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_sdk_gives_a_servers_minus_32000_as_it_came(protocol: str, http_url: str) -> None:
    """What the fix builds on: over the wire, the SDK raises a server's -32000 answer as a plain
    MCPError with the server's code, message and data, in both eras."""
    async with asyncio.timeout(LIMIT), Client(http_url, mode=protocol) as client:
        with pytest.raises(MCPError) as answer:
            await client.call_tool("refuse", {"message": "quota exceeded"})
    assert (answer.value.code, answer.value.error.message, answer.value.error.data) == (
        SERVER_ERROR,
        "quota exceeded",
        None,
    )
