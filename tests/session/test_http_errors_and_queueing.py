"""A ``-32000`` that comes with an HTTP error status, and fair queueing of direct calls.

1. ``-32000`` in the body of an HTTP 5xx (a gateway that gave up on the server after it received
   the call): the call may have run, so its outcome is unknown; it is not the server rejecting
   the call.
2. A server that forgot the session (restarted) and answers ``400`` with ``-32000`` ("Bad
   Request: No valid session ID provided", the TypeScript SDK examples' answer): the session
   ends and the next call reconnects.
3. ``max_concurrent_calls`` queues by LangGraph thread also for calls made through
   ``pool.connection(name).call_tool`` inside a graph node, so one thread cannot starve another.

Real servers (``tests/servers``) over real HTTP / stdio; the ASGI fronts only stand in for a
gateway and for a restarted server, as ``LoseAnswers`` does in ``test_server_errors.py``.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from langgraph_mcp import MCPPool
from langgraph_mcp.errors import OUTCOME_UNKNOWN
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import call, json_content, thread, tools_by_name, until
from tests.servers import overloaded

SERVER = "busy"
LIMIT = 60.0


async def _body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if message["type"] != "http.request" or not message.get("more_body"):
            return b"".join(chunks)


def _replaying(body: bytes, receive: Any) -> Any:
    replayed = False

    async def replay() -> Any:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _json_error(send: Any, status: int, request_id: Any, message: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": message}})
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
    )
    await send({"type": "http.response.body", "body": body.encode(), "more_body": False})


class GatewayTimeout:
    """ASGI front for an MCP server app, as a gateway that gives up waiting: a ``tools/call`` of
    one of ``tools`` reaches the server and runs, but the client gets ``504`` with a JSON-RPC
    ``-32000`` body (as many gateways answer). Other requests pass through."""

    def __init__(self, app: Any, tools: set[str]) -> None:
        self.app = app
        self.tools = tools

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await _body(receive)
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
            await self.app(scope, _replaying(body, receive), send)
            return

        async def dropped(message: Any) -> None:
            pass

        await self.app(scope, _replaying(body, receive), dropped)  # the tool runs; the answer is lost
        await _json_error(
            send, 504, request["id"], "Gateway Timeout: the upstream server did not answer in time"
        )


async def test_minus_32000_in_an_http_5xx_leaves_the_outcome_unknown() -> None:
    """The call ran on the server (tallied once), but the gateway in front answered 504 with a
    -32000 body. Before: 'the connection was lost ... outcome is unknown'. Now: 'rejected the
    call', which tells the model and the user the call did not run."""
    key = uuid.uuid4().hex
    async with (
        asyncio.timeout(LIMIT),
        serve_in_loop(overloaded.build_server(), wrap=lambda app: GatewayTimeout(app, {"tally"})) as url,
    ):
        for protocol in ("legacy", "auto"):
            async with MCPPool({SERVER: {"url": url, "protocol": protocol}}) as pool:
                message = await call((await tools_by_name(pool))["tally"], {"key": key + protocol})
                ran = (
                    await pool.connection(SERVER).call_tool("tallied", {"key": key + protocol})
                ).structured_content
            assert ran == {"result": 1}, ran  # the call did run
            assert message.status == "error"
            assert "rejected" not in message.content, (protocol, message.content)
            assert OUTCOME_UNKNOWN in message.content, (protocol, message.content)


class ForgetsSessions:
    """ASGI front for an MCP server app that can 'restart': afterwards, every request carrying a
    session id seen before is answered ``400`` with ``-32000`` "Bad Request: No valid session ID
    provided" and ``id: null``, as servers built on the TypeScript SDK's examples answer an
    unknown session. Requests without a session id (a new ``initialize``) pass through."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: set[str] = set()
        self.forgotten: set[str] = set()

    def restart(self) -> None:
        self.forgotten |= self.seen

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        session = headers.get(b"mcp-session-id", b"").decode()
        if session and session in self.forgotten:
            await _body(receive)
            await _json_error(send, 400, None, "Bad Request: No valid session ID provided")
            return

        async def noting(message: Any) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", []):
                    if name.lower() == b"mcp-session-id":
                        self.seen.add(value.decode())
            await send(message)

        await self.app(scope, receive, noting)


async def test_a_restarted_server_that_forgot_the_session_is_reconnected_to() -> None:
    """2025-11-25 over streamable HTTP. After the server 'restarts' (forgets the session and
    answers 400/-32000 to it), the next calls must end up on a new session. Before: the first
    call failed as a lost connection, the session ended, the second call reconnected. Now: every
    call fails with the server's error and the session is never replaced."""
    front: list[ForgetsSessions] = []

    def wrap(app: Any) -> Any:
        front.append(ForgetsSessions(app))
        return front[0]

    async with (
        asyncio.timeout(LIMIT),
        serve_in_loop(overloaded.build_server(), wrap=wrap) as url,
        MCPPool({SERVER: {"url": url, "protocol": "legacy"}}) as pool,
    ):
        connection = pool.connection(SERVER)
        await connection.call_tool("pid")
        front[0].restart()
        outcomes = []
        for _ in range(3):
            try:
                outcomes.append(("ok", (await connection.call_tool("pid")).structured_content is not None))
            except Exception as exc:
                outcomes.append((type(exc).__name__, str(exc)))
        assert ("ok", True) in outcomes, outcomes
        assert connection.connects == 2, (connection.connects, outcomes)


class _State(TypedDict, total=False):
    tags: list[str]


async def test_direct_calls_in_a_graph_node_are_queued_by_thread() -> None:
    """Limit 1: a graph node of thread 'greedy' makes six calls through
    ``pool.connection(...).call_tool``; a node of thread 'polite' makes one while the first runs.
    Queued by thread, 'polite' is the next to start (as ``test_one_graph_cannot_starve_another``
    shows for MCPToolNode); queued under one key, it waits for all six."""
    config = {**stdio_params("demo"), "max_concurrent_calls": 1}
    async with asyncio.timeout(LIMIT), MCPPool({"demo": config}) as pool:
        connection = pool.connection("demo")
        await connection.connect()

        async def node(state: _State) -> _State:
            results = await asyncio.gather(
                *(connection.call_tool("gauge", {"tag": tag, "seconds": 0.2}) for tag in state["tags"])
            )
            return {"tags": [r.content[0].text for r in results]}  # type: ignore[union-attr]

        builder = StateGraph(_State)
        builder.add_node("calls", node)
        builder.add_edge(START, "calls")
        builder.add_edge("calls", END)
        graph = builder.compile()
        limiter = connection.scope().limiter
        assert limiter is not None
        greedy = asyncio.ensure_future(graph.ainvoke({"tags": [f"g{i}" for i in range(6)]}, thread("greedy")))
        await until(lambda: limiter.waiting == 5)
        await graph.ainvoke({"tags": ["p"]}, thread("polite"))
        await greedy
        tools = await tools_by_name(pool)
        started = json_content(await call(tools["gauge_report"], {}, "r"))["started"]
    assert started[:2] == ["g0", "p"], started
