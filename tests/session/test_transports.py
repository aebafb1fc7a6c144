"""HTTP transports have no hidden limit: only the configured limits end a request, a large
result arrives, and any number of calls may be in flight at once.

The time-limit tests run on an event loop whose clock is 200 times faster than the wall clock
(``tests/clock.py``), with the fixture server on that same loop, so a request can stay open for
longer than any default read timeout (the SDK's 300 s among them) in a few real seconds. The
server sends no SSE keep-alive pings, as many servers and proxies do not: only the client's own
limits can end a quiet request.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from langgraph.types import Command

from langgraph_mcp import MCPPool, MCPToolNode
from langgraph_mcp._session import grace
from langgraph_mcp.elicitation import accept
from tests.clock import run_dilated
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import (
    ai,
    call,
    free_port,
    spawned_pids,
    thread,
    tool_graph,
    tool_results,
    tools_by_name,
    until,
)
from tests.servers import asker, bulky, demo, overloaded
from tests.tiers import HTTP_ERAS, STDIO_ERAS

LONGER_THAN_ANY_DEFAULT = 700.0  # loop seconds: past the SDK's 300 s and httpx's 5 s defaults
# Connecting takes a few real milliseconds, many loop seconds: keep connect_timeout out of the way.
SLOW_CONNECT = {"connect_timeout": 3600.0}
CASES = [("http", "auto"), ("http", "legacy"), ("sse", "auto"), ("sse", "legacy")]
# Each case waits 3.5 real seconds: all but one (HTTP, current era, no limit) are slow; the
# limits are the client's own, the same over every transport and era.
QUIET_CASES = [
    pytest.param(t, p, id=f"{t}-{p}", marks=[] if (t, p) == ("http", "auto") else [pytest.mark.slow])
    for t, p in CASES
]
QUIET_LIMITS = [
    pytest.param(None, id="no-limit"),
    pytest.param(3600.0, id="long-limit", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("transport", "protocol"), QUIET_CASES)
@pytest.mark.parametrize("timeout", QUIET_LIMITS)
def test_a_long_quiet_call_holds_and_its_siblings_keep_working(
    transport: str, protocol: str, timeout: float | None
) -> None:
    async def main() -> None:
        server = demo.build_server(counters=demo.Counters())
        async with serve_in_loop(server, transport, keepalive=False) as url:  # type: ignore[arg-type]
            config = {
                "url": url,
                "transport": transport,
                "protocol": protocol,
                "timeout": timeout,
                **SLOW_CONNECT,
            }
            async with MCPPool({"demo": config}) as pool:
                tools = await tools_by_name(pool)
                long = asyncio.ensure_future(call(tools["quiet_sleep"], {"seconds": LONGER_THAN_ANY_DEFAULT}))
                await asyncio.sleep(LONGER_THAN_ANY_DEFAULT - 100)
                assert not long.done()
                sibling = await call(tools["add"], {"a": 2, "b": 3}, "c2")
                assert (sibling.status, sibling.content) == ("success", "5")
                message = await long
                assert (message.status, message.content) == (
                    "success",
                    f"slept quietly {LONGER_THAN_ANY_DEFAULT}",
                )
                assert pool.connection("demo").connects == 1

    run_dilated(main)


@pytest.mark.parametrize("transport", ["http", pytest.param("sse", marks=pytest.mark.slow)])
def test_a_person_may_answer_after_any_default_limit(transport: str) -> None:
    """A 2025-11-25 call held open while a person takes longer than any default read timeout
    (``elicitation_timeout`` is 1 hour) is answered once, and sent once."""

    async def main() -> None:
        calls: list[str] = []
        server = asker.build_server(counters=asker.Counters(), calls_log=calls)
        async with serve_in_loop(server, transport, keepalive=False) as url:  # type: ignore[arg-type]
            config = {"url": url, "transport": transport, "protocol": "legacy", **SLOW_CONNECT}
            async with MCPToolNode({"asker": config}) as node:
                graph = tool_graph(node)
                out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "a"}, "c1"))]}, thread())
                (pending,) = out["__interrupt__"]
                await asyncio.sleep(LONGER_THAN_ANY_DEFAULT)  # the person thinks it over
                yes = {r["key"]: accept({"ok": True}) for r in pending.value["requests"]}
                out = await graph.ainvoke(Command(resume={pending.id: {"responses": yes}}), thread())
                assert tool_results(out) == {"c1": "deleted a ()"}
                assert node.pool.connection("asker").connects == 1
        assert calls == ["delete_item rs=no ir=-"]

    run_dilated(main)


def test_the_configured_limit_still_fires() -> None:
    async def main() -> dict[str, Any]:
        server = demo.build_server(counters=demo.Counters())
        async with (
            serve_in_loop(server, keepalive=False) as url,
            MCPPool({"demo": {"url": url, "timeout": 400.0, **SLOW_CONNECT}}) as pool,
        ):
            tools = await tools_by_name(pool)
            message = await call(tools["quiet_sleep"], {"seconds": LONGER_THAN_ANY_DEFAULT})
            after = await call(tools["add"], {"a": 1, "b": 1}, "c2")
            return {"status": message.status, "content": message.content, "after": after.content}

    out = run_dilated(main)
    assert out["status"] == "error"
    assert "timed out after 400s (server 'demo' timeout)" in out["content"]
    assert out["after"] == "2"


@pytest.mark.parametrize("protocol", HTTP_ERAS)
async def test_a_restarted_http_server_gets_a_new_session(protocol: str) -> None:
    """A streamable-HTTP server that restarted no longer knows the session id (2025-11-25 answers
    404 "Session not found"): the next call opens a new session and succeeds, and so does every
    call after it. A call sent with the stale id never ran, so it is sent again on the new one."""
    port = free_port()
    config = {"url": f"http://127.0.0.1:{port}/mcp", "protocol": protocol}
    async with MCPPool({"demo": config}) as pool:
        async with serve_in_loop(demo.build_server(counters=demo.Counters()), port=port):
            tools = await tools_by_name(pool)
            first = await call(tools["add"], {"a": 1, "b": 2})
            assert (first.status, first.content) == ("success", "3")
        counters = demo.Counters()
        async with serve_in_loop(demo.build_server(counters=counters), port=port):
            after = [await call(tools["add"], {"a": i, "b": 1}, f"c{i}") for i in range(3)]
            assert [(m.status, m.content) for m in after] == [
                ("success", "1"),
                ("success", "2"),
                ("success", "3"),
            ]
            assert counters.calls == 3
            expected = 2 if protocol == "legacy" else 1
            assert pool.connection("demo").connects == expected


async def test_a_question_after_its_http_server_restarted_is_asked_and_answered() -> None:
    """2025-11-25 over HTTP: the server restarts between two calls; the next call, which asks a
    person, goes out on a new session, and its resume (sent on that session) finishes it."""
    port = free_port()
    config = {"url": f"http://127.0.0.1:{port}/mcp", "protocol": "legacy"}
    calls: list[str] = []
    async with MCPToolNode({"asker": config}) as node:
        graph = tool_graph(node)
        async with serve_in_loop(asker.build_server(counters=asker.Counters(), calls_log=calls), port=port):
            out = await graph.ainvoke({"messages": [ai(("stats", {}, "c0"))]}, thread("t0"))
            assert "__interrupt__" not in out
        async with serve_in_loop(asker.build_server(counters=asker.Counters(), calls_log=calls), port=port):
            out = await graph.ainvoke({"messages": [ai(("delete_item", {"item": "a"}, "c1"))]}, thread())
            (pending,) = out["__interrupt__"]
            yes = {r["key"]: accept({"ok": True}) for r in pending.value["requests"]}
            out = await graph.ainvoke(Command(resume={pending.id: {"responses": yes}}), thread())
            assert tool_results(out) == {"c1": "deleted a ()"}
        assert node.pool.connection("asker").connects == 2


@pytest.mark.parametrize("protocol", HTTP_ERAS)
async def test_a_call_running_when_its_http_server_goes_away_fails_and_the_next_one_works(
    protocol: str,
) -> None:
    """The server stops (and comes back on the same port) while a call runs: that call becomes an
    error result saying its outcome is unknown, never a hang; the next call succeeds."""
    port = free_port()
    config = {"url": f"http://127.0.0.1:{port}/mcp", "protocol": protocol, "timeout": 60.0}
    async with MCPPool({"demo": config}) as pool:
        async with serve_in_loop(demo.build_server(counters=demo.Counters()), port=port):
            tools = await tools_by_name(pool)
            running = asyncio.ensure_future(call(tools["quiet_sleep"], {"seconds": 30.0}))
            await until(lambda: pool.connection("demo").working() > 0)
        message = await asyncio.wait_for(running, 30)
        assert message.status == "error"
        assert message.content.startswith("MCP server 'demo': the ")
        assert "during the call to 'quiet_sleep'" in message.content
        assert message.content.endswith("The call's outcome is unknown: the server may have run it.")
        async with serve_in_loop(demo.build_server(counters=demo.Counters()), port=port):
            after = await call(tools["add"], {"a": 2, "b": 2}, "c2")
            assert (after.status, after.content) == ("success", "4")


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_a_stdio_server_that_crashes_mid_call_is_restarted(protocol: str, tmp_path: Path) -> None:
    config = {**stdio_params("demo", env={"DEMO_PID_DIR": str(tmp_path)}), "protocol": protocol}
    async with MCPPool({"demo": config}) as pool:
        tools = await tools_by_name(pool)
        crashed = await call(tools["exit_process"])
        assert crashed.status == "error"
        assert "the connection was lost during the call to 'exit_process'" in crashed.content
        after = await call(tools["add"], {"a": 2, "b": 2}, "c2")
        assert (after.status, after.content) == ("success", "4")
        assert pool.connection("demo").connects == 2
        assert len(spawned_pids(tmp_path)) == 2


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_result_past_the_sdks_default_sse_event_size_arrives(protocol: str) -> None:
    """The SDK caps an SSE event at 1 MiB by default; a call's result comes as one when the
    server answers on an event stream (as it does for a call that may get progress), and a
    larger one failed as a lost connection."""
    async with (
        serve_in_loop(bulky.build_server()) as url,
        MCPPool({"bulky": {"url": url, "protocol": protocol}}) as pool,
    ):
        tools = await tools_by_name(pool)
        length, digest = str((await call(tools["prepare"], {"mb": 5.0})).content).split()
        message = await call(tools["bulky"], {"mb": 5.0})
        assert message.status == "success", message.content
        assert isinstance(message.content, str) and len(message.content) == int(length)
        assert hashlib.sha256(message.content.encode()).hexdigest() == digest
        assert pool.connection("bulky").connects == 1


class Forgetful:
    """ASGI middleware that, once :meth:`forget` is called, answers the session ids it has seen so
    far with HTTP 404 and a JSON-RPC error of code -32001 (as the TypeScript SDK's servers do for
    an unknown session); new sessions pass."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: set[bytes] = set()
        self.stale: set[bytes] = set()

    def forget(self) -> None:
        self.stale |= self.seen

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            sid = dict(scope["headers"]).get(b"mcp-session-id")
            if sid is not None and sid in self.stale:
                error = {"code": -32001, "message": "Session not found"}
                body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 404,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
            if sid is not None:
                self.seen.add(sid)
        await self.app(scope, receive, send)


async def test_a_session_the_server_forgot_is_renewed_whatever_error_code_it_answers() -> None:
    gates: list[Forgetful] = []

    def wrap(app: Any) -> Any:
        gates.append(Forgetful(app))
        return gates[-1]

    async with (
        serve_in_loop(demo.build_server(counters=demo.Counters()), wrap=wrap) as url,
        MCPPool({"demo": {"url": url, "protocol": "legacy"}}) as pool,
    ):
        tools = await tools_by_name(pool)
        assert (await call(tools["add"], {"a": 1, "b": 1})).content == "2"
        gates[0].forget()
        after = await call(tools["add"], {"a": 2, "b": 2}, "c2")
        assert (after.status, after.content) == ("success", "4")
        assert pool.connection("demo").connects == 2


async def test_calls_made_at_once_after_a_restart_all_move_to_one_new_session() -> None:
    """2025-11-25 over HTTP: five calls at once after the server restarted all meet the stale
    session id; each is sent once more and answered, and each ran exactly once."""
    port = free_port()
    config = {"url": f"http://127.0.0.1:{port}/mcp", "protocol": "legacy"}
    async with MCPPool({"demo": config}) as pool:
        async with serve_in_loop(demo.build_server(counters=demo.Counters()), port=port):
            tools = await tools_by_name(pool)
            assert (await call(tools["add"], {"a": 0, "b": 0})).content == "0"
        counters = demo.Counters()
        async with serve_in_loop(demo.build_server(counters=counters), port=port):
            results = await asyncio.gather(
                *(call(tools["add"], {"a": i, "b": 10}, f"c{i}") for i in range(5))
            )
            assert [(m.status, m.content) for m in results] == [("success", str(i + 10)) for i in range(5)]
            assert counters.calls == 5


def _open_connections_to(port: int) -> int:
    """Established TCP connections from this host to ``127.0.0.1:port`` (``/proc/net/tcp``)."""
    with open("/proc/net/tcp", encoding="ascii") as table:
        rows = [line.split() for line in table.readlines()[1:]]
    return sum(1 for row in rows if row[2] == f"0100007F:{port:04X}" and row[3] == "01")


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_after_a_burst_of_calls_only_a_few_idle_connections_stay_open(protocol: str) -> None:
    """Twenty calls at once over streamable HTTP open a connection each; once they have ended
    the session keeps at most ``IDLE_CONNECTIONS`` of them open for its next requests (each
    request checks every idle one), not the twenty httpx would keep."""
    from langgraph_mcp._session.transports import IDLE_CONNECTIONS

    burst, key = 20, uuid.uuid4().hex
    async with (
        serve_in_loop(overloaded.build_server()) as url,
        MCPPool({"busy": {"url": url, "protocol": protocol}}) as pool,
    ):
        port = urlsplit(url).port
        assert port is not None
        connection = pool.connection("busy")
        held = [asyncio.create_task(connection.call_tool("hold", {"key": key})) for _ in range(burst)]
        running = await connection.call_tool("wait_held", {"key": key, "n": burst})
        assert running.structured_content == {"result": burst}
        assert _open_connections_to(port) > burst  # each held call has a connection of its own
        await connection.call_tool("release", {"key": key})
        results = await asyncio.gather(*held)
        assert [r.structured_content for r in results] == [{"result": f"released {key}"}] * burst
        visit = await connection.call_tool("visit", {"key": key})
        assert not visit.is_error
        # Closed as the calls ended, not when idle connections expire (5 s). (A stream the
        # session keeps open for server messages may hold one more.)
        await until(lambda: _open_connections_to(port) <= IDLE_CONNECTIONS + 1, timeout=3.0)


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_more_calls_at_once_than_httpx_allows_connections_all_complete(
    monkeypatch: pytest.MonkeyPatch, protocol: str
) -> None:
    """120 calls held open at once on one streamable-HTTP session, each on a connection of its
    own, all get their results. httpx's pool stops at 100 connections, and a request that waited
    for one past ``grace.HTTP`` ended the session and every call in flight on it."""
    # A request waits this long for a pooled connection (read when the HTTP client is made).
    monkeypatch.setattr(grace, "HTTP", 5.0)
    burst, key = 120, uuid.uuid4().hex
    async with (
        serve_in_loop(overloaded.build_server()) as url,
        MCPPool({"busy": {"url": url, "protocol": protocol}}) as pool,
    ):
        connection = pool.connection("busy")
        held = [asyncio.create_task(connection.call_tool("hold", {"key": key})) for _ in range(burst)]
        running = await connection.call_tool("wait_held", {"key": key, "n": burst})
        assert running.structured_content == {"result": burst}
        released = await connection.call_tool("release", {"key": key})
        assert released.structured_content == {"result": burst}
        results = await asyncio.gather(*held)
        assert [r.structured_content for r in results] == [{"result": f"released {key}"}] * burst
        assert connection.connects == 1
