"""Per-thread sessions (``session_scope: "thread"``) against a stateful server: separate state
per thread, the LRU bound, idle expiry, busy sessions kept, and closing."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from langgraph_mcp import MCPConfigError, MCPConnectionError, MCPPool, load_connections
from langgraph_mcp._session import CallClock
from tests.conftest_servers import serve_in_loop, stdio_params
from tests.helpers import pid_alive, spawned_pids
from tests.servers import stateful
from tests.tiers import STDIO_ERAS

ERAS = STDIO_ERAS  # every session here is a stdio server process
GONE_WITHIN = 10.0


def stateful_stdio(pid_dir: Path, protocol: str, **options: Any) -> dict[str, Any]:
    """The stateful server over stdio, one session (process) per thread."""
    env = {"DEMO_PID_DIR": str(pid_dir)}
    return {**stdio_params("stateful", env=env), "protocol": protocol, "session_scope": "thread", **options}


async def remember(pool: MCPPool, thread: str | None, item: str) -> list[str]:
    result = await pool.connection_for("s", thread).call_tool("remember", {"item": item})
    assert result.structured_content is not None, result
    return list(result.structured_content["result"])


async def server_pid(pool: MCPPool, thread: str | None) -> int:
    result = await pool.connection_for("s", thread).call_tool("pid", {})
    assert result.structured_content is not None, result
    return int(result.structured_content["result"])


def live_pids(pid_dir: Path) -> list[int]:
    return [pid for pid in spawned_pids(pid_dir) if pid_alive(pid)]


async def wait_gone(pid: int, within: float = GONE_WITHIN) -> None:
    """Wait (polling, at most ``within`` seconds) for the server process ``pid`` to exit."""
    deadline = time.monotonic() + within
    while pid_alive(pid):
        assert time.monotonic() < deadline, f"server process {pid} still runs after {within:g}s"
        await asyncio.sleep(0.05)


class Person:
    """A call's sink whose questions wait for :meth:`answer` (a person thinking)."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.answered = asyncio.Event()

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        pass

    async def on_elicit(
        self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
    ) -> types.ElicitResult | types.ErrorData:
        self.asked.set()
        await self.answered.wait()
        return types.ElicitResult(action="accept", content={"ok": True})

    async def on_sample(
        self, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        return types.ErrorData(code=types.INVALID_REQUEST, message="no sampling here")


# -- separate state ------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ERAS)
async def test_threads_get_separate_sessions_and_keep_them(pid_dir: Path, protocol: str) -> None:
    async with MCPPool({"s": stateful_stdio(pid_dir, protocol)}) as pool:
        assert await remember(pool, "t1", "a") == ["a"]
        assert await remember(pool, "t2", "b") == ["b"]
        assert await remember(pool, "t1", "c") == ["a", "c"]
        assert await remember(pool, "t2", "d") == ["b", "d"]
        assert await remember(pool, "t1", "e") == ["a", "c", "e"]
        # Calls without a thread use the shared session, apart from every thread.
        assert await remember(pool, None, "z") == ["z"]
        assert pool.connection_for("s", None) is pool.connection("s")

        conn = pool.connection_for("s", "t1")
        assert conn is pool.connection_for("s", "t1") and conn is not pool.connection("s")
        assert conn.connects == 1
        expected = "2025-11-25" if protocol == "legacy" else "2026-07-28"
        assert conn.protocol_version == expected
        pids = {await server_pid(pool, t) for t in ("t1", "t2", None)}
        assert len(pids) == 3
        assert sorted(pids) == live_pids(pid_dir)
        assert pool.thread_sessions("s") == ["t1", "t2"]  # least recently used first


async def test_shared_scope_ignores_the_thread(pid_dir: Path) -> None:
    config = {**stateful_stdio(pid_dir, "legacy"), "session_scope": "shared"}
    async with MCPPool({"s": config}) as pool:
        assert pool.connection_for("s", "t1") is pool.connection("s")
        async with pool.using("s", "t1") as conn:
            assert conn is pool.connection("s")
        assert await remember(pool, "t1", "a") == ["a"]
        assert await remember(pool, "t2", "b") == ["a", "b"]
        assert pool.thread_sessions("s") == []
        assert len(live_pids(pid_dir)) == 1
        with pytest.raises(KeyError, match="no MCP server named 'nope'"):
            pool.connection_for("nope", "t1")


async def test_legacy_http_threads_have_separate_state() -> None:
    async with serve_in_loop(stateful.build_server()) as url:
        config = {"url": url, "protocol": "legacy", "session_scope": "thread", "max_thread_sessions": 1}
        async with MCPPool({"s": config}) as pool:
            assert await remember(pool, "t1", "a") == ["a"]
            assert await remember(pool, "t1", "b") == ["a", "b"]
            assert await remember(pool, "t2", "c") == ["c"]  # t1's session is closed for room
            assert pool.thread_sessions("s") == ["t2"]
            assert await remember(pool, "t1", "d") == ["d"]  # a fresh session: fresh state


# -- the LRU bound -------------------------------------------------------------------------------


@pytest.mark.slow  # a server process per thread
@pytest.mark.parametrize("protocol", ERAS)
async def test_least_recently_used_session_is_closed_for_room(
    pid_dir: Path, protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    config = stateful_stdio(pid_dir, protocol, max_thread_sessions=2)
    async with MCPPool({"s": config}) as pool:
        with caplog.at_level(logging.DEBUG, logger="langgraph_mcp.pool"):
            assert await remember(pool, "t1", "a") == ["a"]
            assert await remember(pool, "t2", "b") == ["b"]
            pid1, pid2 = await server_pid(pool, "t1"), await server_pid(pool, "t2")
            assert await remember(pool, "t1", "c") == ["a", "c"]  # t1 is now the most recent
            assert await remember(pool, "t3", "d") == ["d"]
            await wait_gone(pid2)
            assert pid_alive(pid1)
            assert pool.thread_sessions("s") == ["t1", "t3"]
            # The closed thread comes back to a fresh session (and t1, now the least recently
            # used, makes room for it).
            assert await remember(pool, "t2", "e") == ["e"]
            assert await server_pid(pool, "t2") != pid2
            await wait_gone(pid1)
            assert pool.thread_sessions("s") == ["t3", "t2"]
            assert len(live_pids(pid_dir)) == 2
        assert "new session for thread 't3'" in caplog.text
        assert "closing the session of thread 't2': least recently used" in caplog.text


def blocked_call(pool: MCPPool, thread: str, gate: Path) -> asyncio.Future[types.CallToolResult]:
    """A call of ``thread`` in flight until the file ``gate`` exists."""
    return asyncio.ensure_future(pool.connection_for("s", thread).call_tool("block", {"path": str(gate)}))


@pytest.mark.slow  # a server process per thread
async def test_a_busy_session_is_not_closed_for_room(
    pid_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with MCPPool({"s": stateful_stdio(pid_dir, "legacy", max_thread_sessions=2)}) as pool:
        pid1 = await server_pid(pool, "t1")
        pid2 = await server_pid(pool, "t2")
        busy = blocked_call(pool, "t1", tmp_path / "gate-1")
        await asyncio.sleep(0.3)  # t1's call is in flight
        assert await remember(pool, "t3", "a") == ["a"]  # t2, idle, made room; not t1
        assert pool.thread_sessions("s") == ["t1", "t3"]
        await wait_gone(pid2)
        (tmp_path / "gate-1").touch()
        assert (await busy).structured_content == {"result": "released"}
        assert pid_alive(pid1)
        assert await remember(pool, "t1", "b") == ["b"]
        assert await server_pid(pool, "t1") == pid1

        # Every session busy: one more is opened anyway, with one warning.
        busy1 = blocked_call(pool, "t1", tmp_path / "gate-2")
        busy3 = blocked_call(pool, "t3", tmp_path / "gate-3")
        await asyncio.sleep(0.3)
        with caplog.at_level(logging.WARNING, logger="langgraph_mcp.pool"):
            assert await remember(pool, "t4", "c") == ["c"]
            assert await remember(pool, "t5", "d") == ["d"]  # t4, idle, made room for t5
        warnings = [r for r in caplog.records if "every thread session has a call in flight" in r.message]
        assert len(warnings) == 1
        assert pool.thread_sessions("s") == ["t1", "t3", "t5"]
        (tmp_path / "gate-2").touch()
        await busy1
        # Back within the bound once t1's call ended: t1, idle and least recently used, closed.
        assert pool.thread_sessions("s") == ["t3", "t5"]
        await wait_gone(pid1)
        (tmp_path / "gate-3").touch()
        await busy3
        assert pool.thread_sessions("s") == ["t3", "t5"]


@pytest.mark.slow  # two server processes and seconds of real time
async def test_a_call_waiting_for_a_person_keeps_its_session(pid_dir: Path) -> None:
    config = stateful_stdio(pid_dir, "legacy", max_thread_sessions=1, thread_session_ttl=0.3)
    async with MCPPool({"s": config}) as pool:
        conn = pool.connection_for("s", "t1")
        person = Person()
        clock = CallClock(None, server="s", what="tool 'confirm'")
        held = asyncio.ensure_future(
            conn.send_call("confirm", {"item": "x"}, clock=clock, sink=person, exclusive=True)
        )
        await asyncio.wait_for(person.asked.wait(), 30)
        pid1 = int(spawned_pids(pid_dir)[0])
        await asyncio.sleep(1.0)  # the person thinks for longer than the ttl
        assert await remember(pool, "t2", "a") == ["a"]  # no room made: t1 waits for its person
        assert pool.thread_sessions("s") == ["t1", "t2"]
        assert pid_alive(pid1)
        person.answered.set()
        result = await held
        assert isinstance(result, types.CallToolResult)
        assert result.structured_content == {"result": "confirmed x"}
        await wait_gone(pid1)  # idle now: expired (or closed for room)


# -- idle expiry ---------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ERAS)
async def test_an_idle_session_expires_without_further_calls(
    pid_dir: Path, protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with MCPPool({"s": stateful_stdio(pid_dir, protocol, thread_session_ttl=0.3)}) as pool:
        with caplog.at_level(logging.DEBUG, logger="langgraph_mcp.pool"):
            assert await remember(pool, "t1", "a") == ["a"]
            pid1 = await server_pid(pool, "t1")
            for item in "bcde":  # used more often than the ttl: kept
                await asyncio.sleep(0.1)
                await remember(pool, "t1", item)
            assert await server_pid(pool, "t1") == pid1
            await wait_gone(pid1)
        assert pool.thread_sessions("s") == []
        assert "closing the session of thread 't1': idle for" in caplog.text
        assert await remember(pool, "t1", "f") == ["f"]  # a fresh session
        assert await server_pid(pool, "t1") != pid1


async def test_a_call_longer_than_the_ttl_keeps_its_session(pid_dir: Path) -> None:
    async with MCPPool({"s": stateful_stdio(pid_dir, "auto", thread_session_ttl=0.3)}) as pool:
        result = await pool.connection_for("s", "t1").call_tool("slow", {"seconds": 1.0})
        assert result.structured_content == {"result": "slept 1.0"}
        pid1 = await server_pid(pool, "t1")
        assert pool.thread_sessions("s") == ["t1"]
        await wait_gone(pid1)


async def test_using_holds_the_session_for_the_whole_block(pid_dir: Path) -> None:
    config = stateful_stdio(pid_dir, "legacy", max_thread_sessions=1, thread_session_ttl=0.3)
    async with MCPPool({"s": config}) as pool:
        async with pool.using("s", "t1") as conn:
            assert conn is pool.connection_for("s", "t1")
            await conn.connect()
            await asyncio.sleep(0.6)  # idle on the wire, but in use: neither expired nor evicted
            assert await remember(pool, "t2", "a") == ["a"]
            assert pool.thread_sessions("s") == ["t1", "t2"]
            result = await conn.call_tool("remember", {"item": "b"})
            assert result.structured_content == {"result": ["b"]}
        pid1 = await server_pid(pool, "t1")
        await wait_gone(pid1)
        assert pool.thread_sessions("s") == []


# -- drain and close -----------------------------------------------------------------------------


async def test_drain_waits_for_thread_sessions(pid_dir: Path) -> None:
    async with MCPPool({"s": stateful_stdio(pid_dir, "legacy")}) as pool:
        await server_pid(pool, "t1")
        slow = asyncio.ensure_future(pool.connection_for("s", "t1").call_tool("slow", {"seconds": 1.0}))
        await asyncio.sleep(0.2)
        assert not await pool.drain(0.1)
        assert await pool.drain(10.0)
        await slow


@pytest.mark.slow  # a server process per thread
@pytest.mark.parametrize("protocol", ERAS)
async def test_aclose_leaves_no_thread_session_process(pid_dir: Path, protocol: str) -> None:
    pool = MCPPool({"s": stateful_stdio(pid_dir, protocol, max_thread_sessions=2)})
    for thread in ("t1", "t2", None):
        await remember(pool, thread, "a")
    await remember(pool, "t3", "a")  # t1 is being closed in the background
    pids = spawned_pids(pid_dir)
    assert len(pids) == 4
    await pool.aclose()
    assert not any(pid_alive(p) for p in pids)
    assert pool.thread_sessions("s") == []
    with pytest.raises(MCPConnectionError, match="closed"):
        await remember(pool, "t4", "a")
    assert spawned_pids(pid_dir) == pids


# -- configuration -------------------------------------------------------------------------------


def test_defaults_and_json_config(tmp_path: Path) -> None:
    cfg = load_connections({"s": {"command": "x"}})["s"]
    assert (cfg.session_scope, cfg.max_thread_sessions, cfg.thread_session_ttl) == ("shared", 32, 600.0)
    raw = {"command": "x", "session_scope": "thread", "max_thread_sessions": 4, "thread_session_ttl": None}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"s": raw}}), encoding="utf-8")
    cfg = load_connections(path)["s"]
    assert (cfg.session_scope, cfg.max_thread_sessions, cfg.thread_session_ttl) == ("thread", 4, None)


@pytest.mark.parametrize(
    ("options", "field", "fragment"),
    [
        ({"session_scope": "conversation"}, "session_scope", "'shared' or 'thread'"),
        ({"max_thread_sessions": 0}, "max_thread_sessions", "greater than or equal to 1"),
        ({"max_thread_sessions": "4"}, "max_thread_sessions", "valid integer"),
        ({"max_thread_sessions": 2.5}, "max_thread_sessions", "valid integer"),
        ({"max_thread_sessions": True}, "max_thread_sessions", "valid integer"),
        ({"thread_session_ttl": 0}, "thread_session_ttl", "greater than 0"),
        ({"thread_session_ttl": -1.5}, "thread_session_ttl", "greater than 0"),
        ({"thread_session_ttl": "soon"}, "thread_session_ttl", "valid number"),
    ],
)
def test_invalid_thread_session_options(options: dict[str, Any], field: str, fragment: str) -> None:
    with pytest.raises(MCPConfigError) as info:
        load_connections({"my-server": {"command": "x", **options}})
    err = info.value
    assert (err.server, err.field) == ("my-server", field)
    assert f"MCP server 'my-server', field '{field}'" in str(err)
    assert fragment in str(err)
