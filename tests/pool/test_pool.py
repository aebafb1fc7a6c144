"""The connection pool against real servers: sessions, eras, failures, shutdown."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from langgraph_mcp import MCPConfigError, MCPConnectionError, MCPPool, load_mcp_tools
from tests import forkserver
from tests.conftest_servers import http_server_process, serve_in_loop, spawn_http_server, stdio_params
from tests.helpers import call, gated_demo, pid_alive, server_stats, spawned_pids, tools_by_name
from tests.servers import broken, demo, other
from tests.tiers import STDIO_ERAS


async def test_one_session_for_many_calls(demo_config: dict[str, Any], pid_dir: Path) -> None:
    async with MCPPool({"demo": demo_config}) as pool:
        tools = await tools_by_name(pool)
        for i in range(10):
            assert (await call(tools["add"], {"a": i, "b": 1})).content == str(i + 1)
        results = await asyncio.gather(*(call(tools["echo"], {"text": f"t{i}"}, f"c{i}") for i in range(10)))
        assert [r.content for r in results] == [f"t{i}" for i in range(10)]
        stats = await server_stats(pool)
        assert stats["handshakes"] == 1
        assert stats["calls"] == 21  # 20 calls above, plus this stats call
        assert pool.connection("demo").connects == 1
        if demo_config.get("command"):
            assert spawned_pids(pid_dir) == [stats["pid"]]


async def test_protocol_era(demo_config: dict[str, Any]) -> None:
    async with MCPPool({"demo": demo_config}) as pool:
        await pool.start()
        expected = "2025-11-25" if demo_config["protocol"] == "legacy" else "2026-07-28"
        assert pool.connection("demo").protocol_version == expected


async def test_connects_lazily_then_all_servers_concurrently(pid_dir: Path) -> None:
    env = {"DEMO_PID_DIR": str(pid_dir)}
    pool = MCPPool({"a": stdio_params("demo", env=env), "b": stdio_params("demo", env=env)})
    try:
        await asyncio.sleep(0.2)
        assert spawned_pids(pid_dir) == []
        assert not pool.connection("a").connected
        await pool.start()
        assert pool.connection("a").connected and pool.connection("b").connected
        assert len(spawned_pids(pid_dir)) == 2
    finally:
        await pool.aclose()


async def test_concurrent_first_calls_share_one_connect(pid_dir: Path) -> None:
    async with MCPPool({"demo": stdio_params("demo", env={"DEMO_PID_DIR": str(pid_dir)})}) as pool:
        conn = pool.connection("demo")
        results = await asyncio.gather(*(conn.call_tool("add", {"a": i, "b": i}) for i in range(8)))
        assert [r.structured_content for r in results] == [{"result": 2 * i} for i in range(8)]
        assert len(spawned_pids(pid_dir)) == 1
        assert conn.connects == 1


async def test_era_is_negotiated_once_and_remembered() -> None:
    counters = demo.Counters()
    async with serve_in_loop(demo.build_server(counters=counters)) as url, MCPPool({"demo": url}) as pool:
        conn = pool.connection("demo")
        await conn.list_tools()
        assert counters.handshakes == 1
        conn.scope().owner.session.end()  # type: ignore[union-attr]  # drop the session as a dead transport would
        result = await conn.call_tool("add", {"a": 1, "b": 2})
        assert result.structured_content == {"result": 3}
        assert conn.connects == 2
        # The reconnect adopted the remembered 2026-07-28 discovery: no second probe.
        assert counters.handshakes == 1
        assert conn.protocol_version == "2026-07-28"


async def test_legacy_reconnect_repeats_only_the_handshake() -> None:
    counters = demo.Counters()
    async with (
        serve_in_loop(demo.build_server(counters=counters)) as url,
        MCPPool({"demo": {"url": url, "protocol": "legacy"}}) as pool,
    ):
        conn = pool.connection("demo")
        await conn.list_tools()
        conn.scope().owner.session.end()  # type: ignore[union-attr]
        await conn.call_tool("add", {"a": 1, "b": 2})
        assert counters.handshakes == 2  # one initialize per session
        assert conn.protocol_version == "2025-11-25"


async def test_aclose_leaves_no_stdio_processes(pid_dir: Path) -> None:
    env = {"DEMO_PID_DIR": str(pid_dir)}
    pool = MCPPool({"a": stdio_params("demo", env=env), "b": stdio_params("demo", env=env)})
    await pool.start()
    pids = spawned_pids(pid_dir)
    assert len(pids) == 2 and all(pid_alive(p) for p in pids)
    await pool.aclose()
    assert not any(pid_alive(p) for p in pids)
    with pytest.raises(MCPConnectionError, match="closed"):
        await pool.connection("a").call_tool("add", {"a": 1, "b": 1})


@pytest.mark.slow  # a server process per event loop
def test_pool_survives_a_second_event_loop(pid_dir: Path) -> None:
    pool = MCPPool({"demo": stdio_params("demo", env={"DEMO_PID_DIR": str(pid_dir)})})

    async def use() -> int:
        result = await pool.connection("demo").call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5}
        return int((await server_stats(pool))["pid"])

    first = asyncio.run(use())  # asyncio.run cancels the owner task on exit: the child stops
    assert not pid_alive(first)
    second = asyncio.run(use())
    assert second != first
    asyncio.run(pool.aclose())
    assert not pid_alive(second)


async def test_stdio_child_gets_only_safe_env_plus_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LGMCP_PARENT_SECRET", "parent-only")
    monkeypatch.setenv("LGMCP_FOR_CHILD", "child-value")
    config = stdio_params("demo", env={"CONFIGURED": "${LGMCP_FOR_CHILD}"})
    async with MCPPool({"demo": config}) as pool:
        tools = await tools_by_name(pool)
        assert (await call(tools["env"], {"name": "LGMCP_PARENT_SECRET"})).content == "<unset>"
        assert (await call(tools["env"], {"name": "CONFIGURED"})).content == "child-value"
        assert (await call(tools["env"], {"name": "PATH"})).content == os.environ["PATH"]


async def test_client_identifies_itself() -> None:
    async with MCPPool({"demo": stdio_params("demo")}) as pool:
        tools = await tools_by_name(pool)
        assert (await call(tools["client_name"])).content == "langgraph-mcp"


async def test_http_headers_reach_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LGMCP_TOKEN", "tok-123")
    async with serve_in_loop(demo.build_server(counters=demo.Counters())) as url:
        config = {"url": url, "headers": {"X-Api-Key": "${LGMCP_TOKEN}"}}
        async with MCPPool({"demo": config}) as pool:
            tools = await tools_by_name(pool)
            assert (await call(tools["header"], {"name": "x-api-key"})).content == "tok-123"


# -- failures ---------------------------------------------------------------


async def test_missing_command_fails_alone(caplog: pytest.LogCaptureFixture) -> None:
    servers = {"good": stdio_params("demo"), "bad": {"command": "/nonexistent/mcp-server-binary"}}
    async with MCPPool(servers) as pool:
        with caplog.at_level(logging.WARNING, logger="langgraph_mcp"):
            tools = await load_mcp_tools(pool)
        assert {t.server for t in tools} == {"good"}
        assert "MCP server 'bad'" in caplog.text
        assert "command '/nonexistent/mcp-server-binary' not found" in caplog.text
        assert (await call(next(t for t in tools if t.name == "add"), {"a": 1, "b": 1})).content == "2"


async def test_exit_at_start_reports_stderr() -> None:
    async with MCPPool({"broken": stdio_params("broken", "--mode", "exit-at-start")}) as pool:
        with pytest.raises(MCPConnectionError) as info:
            await pool.start()
    message = str(info.value)
    assert message.startswith("MCP server 'broken':")
    assert "exited before completing the MCP handshake" in message
    assert "fatal: demo failure at startup" in message


async def test_server_stderr_goes_to_logging(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="langgraph_mcp.server.broken.stderr"):
        async with MCPPool({"broken": stdio_params("broken", "--mode", "exit-at-start")}) as pool:
            with pytest.raises(MCPConnectionError):
                await pool.start()
    records = [r for r in caplog.records if r.name == "langgraph_mcp.server.broken.stderr"]
    assert any("fatal: demo failure at startup" in r.getMessage() for r in records)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_unreachable_http_server() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    async with MCPPool({"remote": url}) as pool:
        with pytest.raises(MCPConnectionError, match=rf"MCP server 'remote': cannot connect to {url}"):
            await pool.start()


async def test_every_server_failing_raises_unless_warn(caplog: pytest.LogCaptureFixture) -> None:
    servers = {"a": {"command": "/nonexistent/a"}, "b": {"command": "/nonexistent/b"}}
    async with MCPPool(servers) as pool:
        with pytest.raises(MCPConnectionError) as info:
            await load_mcp_tools(pool)
        assert "'/nonexistent/a'" in str(info.value) and "'/nonexistent/b'" in str(info.value)
    async with MCPPool(servers, on_connection_error="warn") as pool:
        with caplog.at_level(logging.WARNING, logger="langgraph_mcp"):
            assert await load_mcp_tools(pool) == []
        assert "'/nonexistent/a'" in caplog.text and "'/nonexistent/b'" in caplog.text


@pytest.mark.usefixtures("short_graces")  # its server sits out the grace periods
async def test_silent_server_hits_connect_timeout() -> None:
    config = {**stdio_params("broken", "--mode", "garbage"), "connect_timeout": 1.5}
    async with MCPPool({"mute": config}) as pool:
        with pytest.raises(MCPConnectionError, match=r"did not connect within 1.5s \(connect_timeout\)"):
            await pool.start()


async def test_failed_connect_is_not_retried_at_once() -> None:
    async with MCPPool({"bad": {"command": "/nonexistent/x"}}) as pool:
        conn = pool.connection("bad")
        with pytest.raises(MCPConnectionError) as first:
            await conn.list_tools()
        with pytest.raises(MCPConnectionError) as second:
            await conn.list_tools()
        assert second.value is first.value  # served from the back-off window, no new spawn


async def test_crash_mid_call_then_reconnect(pid_dir: Path) -> None:
    async with MCPPool({"demo": stdio_params("demo", env={"DEMO_PID_DIR": str(pid_dir)})}) as pool:
        tools = await tools_by_name(pool)
        first_pid = (await server_stats(pool))["pid"]
        crashed = await call(tools["exit_process"])
        assert crashed.status == "error"
        assert (
            "MCP server 'demo': the connection was lost during the call to 'exit_process'" in crashed.content
        )
        assert "outcome is unknown" in crashed.content
        assert (await call(tools["add"], {"a": 20, "b": 22})).content == "42"
        assert pool.connection("demo").connects == 2
        pids = spawned_pids(pid_dir)
        assert len(pids) == 2 and first_pid in pids and not pid_alive(first_pid)


async def test_idle_crash_is_noticed_before_the_next_call(pid_dir: Path) -> None:
    async with MCPPool({"demo": stdio_params("demo", env={"DEMO_PID_DIR": str(pid_dir)})}) as pool:
        tools = await tools_by_name(pool)
        pid = (await server_stats(pool))["pid"]
        os.kill(pid, 9)
        for _ in range(100):
            if not pool.connection("demo").connected:
                break
            await asyncio.sleep(0.05)
        assert not pool.connection("demo").connected
        # The dead session was noticed while idle: the next call just reconnects.
        assert (await call(tools["add"], {"a": 1, "b": 2})).content == "3"


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_http_server_killed_mid_call(protocol: str) -> None:
    async with spawn_http_server("demo") as url:
        pool = MCPPool({"demo": {"url": url, "protocol": protocol, "timeout": 30}})
        try:
            tools = await tools_by_name(pool)
            pid = (await server_stats(pool))["pid"]
            slow = asyncio.create_task(call(tools["sleep"], {"seconds": 20}))
            await asyncio.sleep(0.5)
            os.kill(pid, 9)
            message = await asyncio.wait_for(slow, 15)
            assert message.status == "error"
            assert "MCP server 'demo'" in message.content
        finally:
            await pool.aclose()


async def test_bad_arguments_to_the_pool_itself() -> None:
    with pytest.raises(ValueError, match="on_connection_error"):
        MCPPool({}, on_connection_error="ignore")  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="no MCP server named 'x'"):
        MCPPool({"demo": stdio_params("demo")}).connection("x")


# -- tool list: pagination and list_changed ----------------------------------


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_paginated_listing(protocol: str) -> None:
    async with MCPPool({"paged": {**stdio_params("paged"), "protocol": protocol}}) as pool:
        tools = await tools_by_name(pool)
        assert list(tools) == [f"t{i}" for i in range(7)]
        assert (await call(tools["t6"], {"x": 1})).content == "7"


@pytest.mark.parametrize("transport", ["stdio", "in_process", "http"])
@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_list_changed_refreshes_tools(transport: str, protocol: str) -> None:
    async def run(config: dict[str, Any]) -> None:
        async with MCPPool({"other": {**config, "protocol": protocol}}) as pool:
            before = await tools_by_name(pool)
            assert "fresh" not in before
            assert (await call(before["add_tool"], {"name": "fresh"})).content == "added"
            for _ in range(100):
                tools = await tools_by_name(pool)
                if "fresh" in tools:
                    break
                await asyncio.sleep(0.05)
            assert (await call(tools["fresh"], {"text": "hi"})).content == "fresh:hi"
            assert tools["echo"] is before["echo"]  # unchanged tools keep their objects

    if transport == "stdio":
        await run(stdio_params("other"))
    elif transport == "in_process":
        await run({"server": other.build_server()})
    else:
        async with serve_in_loop(other.build_server()) as url:
            await run({"url": url})


# -- HTTP transports ----------------------------------------------------------


async def test_explicit_sse_transport() -> None:
    async with (
        serve_in_loop(demo.build_server(counters=demo.Counters()), "sse") as url,
        MCPPool({"demo": {"url": url, "transport": "sse"}}) as pool,
    ):
        tools = await tools_by_name(pool)
        assert (await call(tools["add"], {"a": 4, "b": 5})).content == "9"


async def test_streamable_http_falls_back_to_sse(caplog: pytest.LogCaptureFixture) -> None:
    async with serve_in_loop(demo.build_server(counters=demo.Counters()), "sse") as url:
        with caplog.at_level(logging.INFO, logger="langgraph_mcp"):
            async with MCPPool({"old": url}) as pool:  # an http URL: streamable HTTP first
                tools = await tools_by_name(pool)
                assert (await call(tools["add"], {"a": 1, "b": 1})).content == "2"
        assert "serves the old HTTP+SSE transport" in caplog.text
        async with MCPPool({"old": {"url": url, "sse_fallback": False}}) as pool:
            with pytest.raises(MCPConnectionError, match="cannot connect"):
                await pool.start()


async def test_wrong_http_path_is_a_clear_error() -> None:
    async with serve_in_loop(demo.build_server(counters=demo.Counters())) as url:
        wrong = url.replace("/mcp", "/nope")
        async with MCPPool({"demo": wrong}) as pool:
            expected = (
                rf"cannot connect to {wrong}: the server answered HTTP 404 Not Found to the MCP handshake"
            )
            with pytest.raises(MCPConnectionError, match=expected):
                await pool.start()


async def test_in_process_server_object_directly() -> None:
    server = demo.build_server(counters=demo.Counters())
    async with MCPPool(server) as pool:
        assert list(pool.servers) == ["demo"]
        tools = await tools_by_name(pool)
        assert (await call(tools["add"], {"a": 1, "b": 2})).content == "3"


def test_no_stray_processes_after_tests() -> None:
    """Every stdio child started by this module has been reaped."""
    children = [
        p.name
        for p in Path("/proc").iterdir()
        if p.name.isdigit()
        and _ppid(p) == os.getpid()
        and pid_alive(int(p.name))
        and int(p.name) != forkserver.server_pid()
    ]
    assert children == [], f"live child processes: {children} ({sys.argv})"


def _ppid(proc: Path) -> int:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_http_auth_objects_are_used(transport: str) -> None:
    async with serve_in_loop(demo.build_server(counters=demo.Counters()), transport) as url:
        for auth in (httpx2.BasicAuth("user", "pw"), ("user", "pw")):
            config = {"url": url, "transport": transport, "auth": auth}
            async with MCPPool({"demo": config}) as pool:
                tools = await tools_by_name(pool)
                header = (await call(tools["header"], {"name": "authorization"})).content
                assert header == "Basic dXNlcjpwdw=="  # base64("user:pw")


# -- servers that come back, closing ------------------------------------------


async def test_a_server_down_at_first_load_appears_once_it_is_reachable() -> None:
    from langgraph_mcp import MCPToolNode
    from tests.helpers import ai, thread, tool_graph, tool_results

    port = free_port()
    servers = {
        "demo": {"server": demo.build_server(counters=demo.Counters()), "tools": ["add"]},
        # Failed connects are retried after a back-off: 0.1 s here (1 s by default), doubling.
        "late": {"url": f"http://127.0.0.1:{port}/mcp", "restart": {"backoff": 0.1}},
    }
    async with MCPToolNode(servers, on_connection_error="warn") as node:
        graph = tool_graph(node)
        assert [t.name for t in await node.get_tools()] == ["add"]
        out = await graph.ainvoke({"messages": [ai(("echo", {"text": "hi"}, "c1"))]}, thread("t1"))
        # Not "not a valid tool": the model is told that a server is down.
        assert (
            "echo cannot be called now: MCP server(s) 'late' could not be reached" in tool_results(out)["c1"]
        )
        async with serve_in_loop(other.build_server(), port=port):
            # Once the back-off has passed, a later run sees it. (Bounded by time, not by count:
            # on a busy machine a retry may fail too, and the next comes twice as late.)
            deadline = asyncio.get_running_loop().time() + 30
            attempt = 0
            while True:
                out = await graph.ainvoke(
                    {"messages": [ai(("echo", {"text": "hi"}, f"c{attempt}"))]}, thread(f"r{attempt}")
                )
                if (
                    tool_results(out)[f"c{attempt}"] == "other:hi"
                    or asyncio.get_running_loop().time() > deadline
                ):
                    break
                attempt += 1
                await asyncio.sleep(0.1)
            assert tool_results(out)[f"c{attempt}"] == "other:hi"
            assert {t.name for t in await node.get_tools()} >= {"add", "echo", "add_tool"}


@pytest.mark.parametrize("level", ["pool", "connection"])
async def test_cancelling_aclose_propagates(pid_dir: Path, level: str) -> None:
    # A plain interpreter: its shutdown takes longer than the 50 ms below.
    pool = MCPPool({"demo": stdio_params("demo", env={"DEMO_PID_DIR": str(pid_dir)}, fork=False)})
    await pool.start()
    (pid,) = spawned_pids(pid_dir)
    target = pool if level == "pool" else pool.connection("demo")
    closing = asyncio.ensure_future(target.aclose())
    await asyncio.sleep(0.05)  # stdio shutdown takes longer than this
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    await pool.aclose()  # a second close finishes the job
    assert not pid_alive(pid)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_closing_ends_calls_in_flight(transport: str) -> None:
    async def run(config: dict[str, Any]) -> None:
        pool = MCPPool({"demo": {**config, "timeout": None}})
        tools = await tools_by_name(pool)
        hung = asyncio.ensure_future(call(tools["hang"]))
        await asyncio.sleep(0.3)
        await pool.aclose()
        message = await asyncio.wait_for(hung, 10)
        assert message.status == "error"
        assert "MCP server 'demo'" in message.content

    if transport == "stdio":
        await run(stdio_params("demo"))
    else:
        async with serve_in_loop(demo.build_server(counters=demo.Counters())) as url:
            await run({"url": url})


async def test_aclose_with_a_question_pending_over_http_logs_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from langgraph_mcp import MCPToolNode
    from tests.helpers import ai, thread, tool_graph
    from tests.servers import asker

    async with serve_in_loop(asker.build_server(counters=asker.Counters())) as url:
        node = MCPToolNode({"asker": {"url": url, "protocol": "legacy"}})
        calls = (("delete_item", {"item": "a"}, "c1"), ("book", {"city": "Oslo"}, "c2"))
        out = await tool_graph(node).ainvoke({"messages": [ai(*calls)]}, thread())
        assert len(out["__interrupt__"]) == 2  # both calls are held open, waiting for a person
        with caplog.at_level(logging.DEBUG):
            await node.aclose()
            await asyncio.sleep(0.2)
    tracebacks = [r for r in caplog.records if r.exc_info and r.levelno >= logging.WARNING]
    assert tracebacks == [], [f"{r.name}: {r.getMessage()}" for r in tracebacks]


def wait_gone(pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        assert time.monotonic() < deadline, f"process {pid} is still running"
        time.sleep(0.05)


def stubborn_pool(pid_dir: Path, **env: str) -> MCPPool:
    """The stubborn server ignores the end of its stdin: only a real close or a stop ends it. (In
    a plain interpreter: these tests are about the very process the pool started.)"""
    config = stdio_params("stubborn", env={"DEMO_PID_DIR": str(pid_dir), **env}, fork=False)
    return MCPPool({"stubborn": config})


async def ping(pool: MCPPool) -> str:
    result = await pool.connection("stubborn").call_tool("ping", {})
    return str(result.content[0].text)  # type: ignore[union-attr]


def test_each_event_loop_gets_its_own_session_and_keeps_it_between_runs(pid_dir: Path) -> None:
    """LangGraph server's isolated run loops: several long-lived loops, each idle between runs,
    sometimes running at the same time in their own threads."""
    pool = stubborn_pool(pid_dir)
    loops = [asyncio.new_event_loop() for _ in range(2)]
    try:
        assert loops[0].run_until_complete(ping(pool)) == "pong"
        assert loops[1].run_until_complete(ping(pool)) == "pong"
        assert loops[0].run_until_complete(ping(pool)) == "pong"  # its session is still there
        assert len(spawned_pids(pid_dir)) == 2

        async def three() -> list[str]:
            return list(await asyncio.gather(*(ping(pool) for _ in range(3))))

        with concurrent.futures.ThreadPoolExecutor(2) as threads:  # both loops at once
            runs = [threads.submit(loop.run_until_complete, three()) for loop in loops]
            assert [r.result(timeout=60) for r in runs] == [["pong"] * 3] * 2
        assert len(spawned_pids(pid_dir)) == 2
        assert pool.connection("stubborn").connects == 2

        asyncio.run(pool.aclose())  # from a third loop: the idle loops' servers are stopped
        for pid in spawned_pids(pid_dir):
            wait_gone(pid)
    finally:
        for loop in loops:
            loop.close()


@pytest.mark.usefixtures("short_graces")  # its server sits out the grace periods
def test_closing_reaches_a_session_whose_loop_runs_in_another_thread(pid_dir: Path) -> None:
    pool = stubborn_pool(pid_dir)
    other = asyncio.new_event_loop()
    thread = threading.Thread(target=other.run_forever)
    thread.start()
    try:
        assert asyncio.run_coroutine_threadsafe(ping(pool), other).result(timeout=60) == "pong"
        [pid] = spawned_pids(pid_dir)
        asyncio.run(pool.aclose())
        assert not pid_alive(pid)  # closed on its own loop, and waited for
    finally:
        other.call_soon_threadsafe(other.stop)
        thread.join()
        other.close()


@pytest.mark.slow  # waits for a server process to exit
@pytest.mark.usefixtures("short_graces")  # its server sits out the grace periods
def test_the_server_of_a_closed_event_loop_is_stopped(
    pid_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pool = stubborn_pool(pid_dir)
    loop = asyncio.new_event_loop()
    assert loop.run_until_complete(ping(pool)) == "pong"
    loop.close()  # without closing the pool: its session's tasks can never run again
    [first] = spawned_pids(pid_dir)
    assert pid_alive(first)
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp.pool"):
        assert asyncio.run(ping(pool)) == "pong"  # a new loop: a new session; the old server stops
    wait_gone(first)
    assert f"stopping its server process (pid {first})" in caplog.text
    assert len(spawned_pids(pid_dir)) == 2


def test_closing_while_a_runner_loop_stops_between_jobs_does_not_hang(pid_dir: Path) -> None:
    """LangGraph server's runner loops run only while a job runs (``run_until_complete``): a
    close handed to such a loop just as its job ends is never finished there."""
    pool = stubborn_pool(pid_dir)
    loop = asyncio.new_event_loop()
    finish = asyncio.Event()  # (bound to ``loop`` when first waited on)
    pinged = threading.Event()
    handed_over = threading.Event()

    async def job() -> None:
        await ping(pool)
        pinged.set()
        await finish.wait()

    async def close_that_never_finishes() -> None:
        handed_over.set()
        finish.set()  # the job ends, so the loop stops with this close still pending
        await asyncio.Event().wait()

    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        running = thread.submit(loop.run_until_complete, job())
        assert pinged.wait(30)
        [pid] = spawned_pids(pid_dir)
        connection = pool.connection("stubborn")
        [scope] = connection._scopes.values()
        scope.aclose = close_that_never_finishes  # type: ignore[method-assign]

        started = time.monotonic()
        asyncio.run(pool.aclose())
        assert handed_over.is_set()  # it was sent to the running loop first
        assert time.monotonic() - started < 10
        running.result(timeout=10)
    assert not pid_alive(pid)
    loop.close()


@pytest.mark.usefixtures("short_graces")  # its server sits out the grace periods
@pytest.mark.parametrize("wrapped", [False, True], ids=["direct", "behind-a-shell"])
def test_a_server_that_ignores_sigterm_is_killed(
    pid_dir: Path, caplog: pytest.LogCaptureFixture, wrapped: bool
) -> None:
    """Behind a wrapper (``sh -c``, ``npx``), SIGTERM ends the wrapper and leaves the server: what
    is left of the process group gets SIGKILL."""
    config = stdio_params(
        "stubborn", env={"DEMO_PID_DIR": str(pid_dir), "STUBBORN_IGNORE_SIGTERM": "1"}, fork=False
    )
    if wrapped:
        config["args"] = ["-c", f"{config['command']} -m tests.servers.stubborn; exit 0"]
        config["command"] = "/bin/sh"
    pool = MCPPool({"stubborn": config})
    loop = asyncio.new_event_loop()
    assert loop.run_until_complete(ping(pool)) == "pong"
    [pid] = spawned_pids(pid_dir)
    asyncio.run(pool.aclose())  # the first loop is idle: its server is stopped from here
    wait_gone(pid, timeout=2)  # SIGKILL after the grace period
    assert "stopping its server process" not in caplog.text  # the pool was closed: nothing to warn
    loop.close()


def test_failed_connects_leave_no_file_descriptor_open() -> None:
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    async def fail_five_times() -> None:
        for _ in range(5):
            pool = MCPPool({"gone": {"command": sys.executable, "args": ["-c", "pass"]}})
            with pytest.raises(MCPConnectionError):
                await pool.start()
            await pool.aclose()

    asyncio.run(fail_five_times())  # (warm up: lazily opened files of the first run)
    before = open_fds()
    asyncio.run(fail_five_times())
    assert open_fds() - before < 5


@pytest.mark.slow  # waits for a server process to exit
@pytest.mark.usefixtures("short_graces")  # its server sits out the grace periods
def test_a_session_closed_with_its_loop_is_never_signalled_later(
    pid_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``asyncio.run`` closes the session at its end; its process number may be reused by then,
    so nothing may be sent to it later."""
    pool = stubborn_pool(pid_dir)
    assert asyncio.run(ping(pool)) == "pong"
    [first] = spawned_pids(pid_dir)
    assert not pid_alive(first)  # closed when asyncio.run cancelled the session's task
    with caplog.at_level(logging.WARNING, logger="langgraph_mcp.pool"):
        assert asyncio.run(ping(pool)) == "pong"
        asyncio.run(pool.aclose())
    assert "stopping its server process" not in caplog.text


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_loops_running_at_once_each_get_an_http_session(protocol: str) -> None:
    with http_server_process("demo") as url:
        pool = MCPPool({"demo": {"url": url, "protocol": protocol}})
        loops = [asyncio.new_event_loop() for _ in range(2)]

        async def adds(base: int) -> list[str]:
            calls = (pool.connection("demo").call_tool("add", {"a": base, "b": i}) for i in range(5))
            return [str(r.content[0].text) for r in await asyncio.gather(*calls)]  # type: ignore[union-attr]

        try:
            with concurrent.futures.ThreadPoolExecutor(2) as threads:
                runs = [
                    threads.submit(loop.run_until_complete, adds(100 * n)) for n, loop in enumerate(loops)
                ]
                assert [r.result(timeout=60) for r in runs] == [
                    [str(100 * n + i) for i in range(5)] for n in range(2)
                ]
            assert pool.connection("demo").connects == 2
            assert pool.connection("demo").era == ("legacy" if protocol == "legacy" else "2026-07-28")
            asyncio.run(pool.aclose())  # both loops idle: nothing to wait on, nothing left open
        finally:
            for loop in loops:
                loop.close()


@pytest.mark.slow  # three server processes
def test_a_server_that_dies_under_one_loop_comes_back_there_and_the_other_loop_keeps_its_own(
    pid_dir: Path,
) -> None:
    pool = MCPPool({"demo": stdio_params("demo", env={"DEMO_PID_DIR": str(pid_dir)})})
    loops = [asyncio.new_event_loop() for _ in range(2)]

    async def add() -> str:
        return str((await pool.connection("demo").call_tool("add", {"a": 1, "b": 2})).content[0].text)  # type: ignore[union-attr]

    async def crash() -> None:
        with pytest.raises(MCPConnectionError):
            await pool.connection("demo").call_tool("exit_process", {})

    try:
        assert loops[0].run_until_complete(add()) == "3"
        [first] = spawned_pids(pid_dir)
        assert loops[1].run_until_complete(add()) == "3"
        [second] = set(spawned_pids(pid_dir)) - {first}
        loops[0].run_until_complete(crash())
        wait_gone(first)
        assert loops[1].run_until_complete(add()) == "3"  # its own session: untouched
        assert loops[0].run_until_complete(add()) == "3"  # a new session for the first loop
        assert pid_alive(second) and len(spawned_pids(pid_dir)) == 3
        assert pool.connection("demo").connects == 3
        asyncio.run(pool.aclose())
        assert not any(pid_alive(pid) for pid in spawned_pids(pid_dir))
    finally:
        for loop in loops:
            loop.close()


async def _until_given_up(conn: Any) -> MCPConnectionError:
    for _ in range(200):
        try:
            await conn.list_tools()
        except MCPConnectionError as exc:
            if "gave up" in str(exc):
                return exc
        await asyncio.sleep(0.02)
    raise AssertionError("never gave up")


async def test_restart_policy_gives_up_after_max_attempts_and_retry_tries_again(tmp_path: Path) -> None:
    config, starts, ready = gated_demo(tmp_path, max_attempts=3, backoff=0.05, max_backoff=0.1)
    async with MCPPool({"flaky": config}, on_connection_error="warn") as pool:
        conn = pool.connection("flaky")
        given_up = await _until_given_up(conn)
        assert starts.read_text() == "xxx"
        message = str(given_up)
        assert message.startswith("MCP server 'flaky'")
        assert "gave up after 3 failed attempts to connect (restart.max_attempts)" in message
        assert "exited before completing the MCP handshake" in message  # the last failure
        assert "pool.retry('flaky')" in message
        for _ in range(3):  # given up: no new attempt, however often it is used
            with pytest.raises(MCPConnectionError, match="gave up"):
                await conn.list_tools()
            await asyncio.sleep(0.12)
        assert starts.read_text() == "xxx"
        ready.touch()
        pool.retry("flaky")
        assert "add" in {t.name for t in await conn.list_tools()}
        assert starts.read_text() == "xxxx"


async def test_restart_policy_backoff_spaces_the_attempts(tmp_path: Path) -> None:
    config, starts, ready = gated_demo(tmp_path, backoff=0.4, max_backoff=0.4)
    async with MCPPool({"flaky": config}) as pool:
        conn = pool.connection("flaky")
        with pytest.raises(MCPConnectionError):
            await conn.list_tools()
        ready.touch()
        with pytest.raises(MCPConnectionError, match="exited before completing"):
            await conn.list_tools()  # within the back-off: the last error again, no attempt
        assert starts.read_text() == "x"
        await asyncio.sleep(0.45)
        assert "add" in {t.name for t in await conn.list_tools()}
        assert starts.read_text() == "xx"


def test_restart_policy_is_validated() -> None:
    with pytest.raises(MCPConfigError, match=r"'flaky'.*restart\.max_attempts"):
        MCPPool({"flaky": {"command": "x", "restart": {"max_attempts": 0}}})
    with pytest.raises(MCPConfigError, match=r"'flaky'.*restart\.attempts"):
        MCPPool({"flaky": {"command": "x", "restart": {"attempts": 2}}})


@pytest.mark.parametrize("protocol", STDIO_ERAS)
async def test_unknown_outcome_is_said_apart_from_stderr_and_only_once_sent(
    tmp_path: Path, protocol: str
) -> None:
    marker = tmp_path / "crashed"
    config = {
        **stdio_params("broken", "--mode", "crash-on-call", env={"BROKEN_MARKER": str(marker)}),
        "protocol": protocol,
    }
    async with MCPPool({"broken": config}) as pool:
        crash = (await tools_by_name(pool))["crash"]
        lost = await call(crash, call_id="c1")
        assert lost.status == "error" and isinstance(lost.content, str)
        said, _, stderr = lost.content.partition("\nlast lines of the server's stderr:\n")
        assert said == (
            "MCP server 'broken': the connection was lost during the call to 'crash'. "
            "The call's outcome is unknown: the server may have run it."
        )
        assert stderr.splitlines() == [f"  {line}" for line in broken.CRASH_LINES]
        # The server now fails at startup. With the 2025-11-25 handshake, the next call fails to
        # connect: nothing is sent, so nothing is unknown. (A 2026-07-28 session has no
        # handshake: the request itself meets the dead server, and may have reached it.)
        refused = await call(crash, call_id="c2")
        assert refused.status == "error" and isinstance(refused.content, str)
        said, _, stderr = refused.content.partition("\nlast lines of the server's stderr:\n")
        assert stderr.splitlines() == [f"  {broken.STARTUP_ERROR}"]
        if protocol == "legacy":
            assert (
                said == "MCP server 'broken': the server process exited before completing the MCP handshake"
            )
        else:
            assert said.endswith("The call's outcome is unknown: the server may have run it.")


async def test_a_missing_working_directory_is_named_not_the_command(tmp_path: Path) -> None:
    missing = tmp_path / "gone"
    async with MCPPool({"s": {**stdio_params("demo"), "cwd": str(missing)}}) as pool:
        with pytest.raises(MCPConnectionError) as info:
            await pool.start()
    assert str(info.value) == f"MCP server 's': its working directory {str(missing)!r} (cwd) does not exist"


async def test_start_errors_show_expanded_values_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "s3cret-folder"
    folder.mkdir()
    (folder / "server").write_text("not a program")  # not executable
    monkeypatch.setenv("LGMCP_HIDDEN", str(folder))
    servers = {
        "missing": {"command": "${LGMCP_HIDDEN}/absent"},
        "not_executable": {"command": "${LGMCP_HIDDEN}/server"},
    }
    async with MCPPool(servers) as pool:
        errors = {}
        for name in servers:
            with pytest.raises(MCPConnectionError) as info:
                await pool.connection(name).connect()
            errors[name] = str(info.value)
    assert errors == {
        "missing": "MCP server 'missing': command '${LGMCP_HIDDEN}/absent' not found",
        "not_executable": (
            "MCP server 'not_executable': cannot run command '${LGMCP_HIDDEN}/server': Permission denied"
        ),
    }
