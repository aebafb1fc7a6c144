"""A server's HTTP sessions share one connection pool: thread sessions (and per-user sessions)
borrow the shared connection's HTTP transport instead of each keeping a pool and idle sockets of
its own. Counted on a real server on 127.0.0.1: the TCP connections it accepted (one client
port each) and those still open."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import pytest

from langgraph_mcp import MCPPool
from langgraph_mcp._session.transports import IDLE_CONNECTIONS
from tests.servers import stateful
from tests.servers._runner import URL_PATHS, bind_socket, make_uvicorn_server

THREADS = 50
AT_ONCE = 5
"""Calls made at the same moment (the threads' calls go in batches of this many)."""
SETTLE = 5.0


@dataclass
class Served:
    """A server, and what its side of the TCP connections shows."""

    url: str
    peers: set[tuple[str, int]] = field(default_factory=set)
    """Every client (host, port) that sent a request: one per TCP connection accepted."""
    server: Any = None

    def open(self) -> int:
        """TCP connections the server holds open now."""
        return len(self.server.server_state.connections)

    async def closed_down_to(self, count: int, within: float = SETTLE) -> int:
        """Wait (at most ``within`` seconds) until at most ``count`` connections are open; how
        many are."""
        deadline = time.monotonic() + within
        while self.open() > count and time.monotonic() < deadline:  # noqa: ASYNC110 - uvicorn's state
            await asyncio.sleep(0.02)
        return self.open()


@asynccontextmanager
async def serving(*, json_response: bool = False) -> AsyncIterator[Served]:
    """The stateful server over streamable HTTP, on this loop, counting client ports; its
    answers to POSTs are SSE streams, or JSON bodies (``json_response``)."""
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    served = Served(f"http://127.0.0.1:{port}{URL_PATHS['http']}")
    app = stateful.build_server().streamable_http_app(host="127.0.0.1", json_response=json_response)

    async def counting(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("client"):
            served.peers.add(tuple(scope["client"]))
        await app(scope, receive, send)

    # Idle connections stay open on the server's side for longer than the test runs: what
    # is left open is what the client kept.
    served.server = uv = make_uvicorn_server(counting, timeout_keep_alive=60.0)  # type: ignore[arg-type]
    task = asyncio.ensure_future(uv.serve([sock]))
    try:
        ready = asyncio.ensure_future(uv.ready.wait())
        await asyncio.wait({ready, task}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        assert uv.started, "uvicorn failed to start"
        yield served
    finally:
        uv.should_exit = True
        try:
            await asyncio.wait_for(task, 5)
        except TimeoutError:
            uv.force_exit = True
            task.cancel()
            with suppress(asyncio.CancelledError, Exception):
                await task
        sock.close()


async def remember(pool: MCPPool, thread: str | None, item: str) -> list[str]:
    result = await pool.connection_for("s", thread).call_tool("remember", {"item": item})
    assert result.structured_content is not None, result
    return list(result.structured_content["result"])


def config(url: str, protocol: str, **options: Any) -> dict[str, Any]:
    return {
        "url": url,
        "protocol": protocol,
        "session_scope": "thread",
        "max_thread_sessions": 2 * THREADS,
        **options,
    }


def streams(pool: MCPPool) -> int:
    """Live sessions: each holds its notification stream open (2025-11-25: a GET; 2026-07-28:
    a listen request, the server's lists may change), one connection each, for as long as it
    lives, however its requests are pooled."""
    connections = [pool.connection("s"), *pool._threads.connections()]
    return sum(1 for c in connections if c.connected)


@pytest.mark.parametrize(("protocol", "answers"), [("auto", "sse"), ("legacy", "json"), ("legacy", "sse")])
async def test_thread_sessions_share_one_connection_pool(protocol: str, answers: str) -> None:
    async with serving(json_response=answers == "json") as served:
        pool = MCPPool({"s": config(served.url, protocol)})
        try:
            threads = [f"t{i}" for i in range(THREADS)]
            for start in range(0, THREADS, AT_ONCE):
                batch = threads[start : start + AT_ONCE]
                lists = await asyncio.gather(*(remember(pool, t, t) for t in batch))
                if protocol == "legacy":  # each thread its own session (2026-07-28 keeps none)
                    assert lists == [[t] for t in batch]
            assert len(pool.thread_sessions("s")) == THREADS
            standing = streams(pool)
            # Each call in flight holds a connection; once they end, the pool keeps a few idle.
            bound = standing + IDLE_CONNECTIONS + 2 * AT_ONCE
            if protocol == "legacy":  # (each session also opens one connection it does not reuse)
                bound += standing
            print(f"{protocol}/{answers}: {len(served.peers)} opened, {served.open()} open when idle")
            if (protocol, answers) != ("legacy", "sse"):
                # (A 2025-11-25 request answered with an SSE stream is never reused: the client
                # stops reading at the answer, before the stream's end, so httpx drops it.)
                assert len(served.peers) <= bound, (len(served.peers), bound)
            assert pool.connection("s").http_pool.pools() == 1  # type: ignore[union-attr]
            assert served.open() <= standing + IDLE_CONNECTIONS, served.open()

            # Closing one thread's session leaves the others (and their connections) working.
            assert pool._threads.evict_user("s", "nobody") == 0
            victim = pool.connection_for("s", "t0")
            sessions = pool._threads._servers["s"]
            sessions.evict(lambda key: key == ("thread", "t0"))
            await pool._threads.settled()
            assert not victim.connected
            before = len(served.peers)
            again = await asyncio.gather(*(remember(pool, t, "again") for t in threads[1:6]))
            fresh = await remember(pool, "t0", "fresh")  # a new session of its own
            if protocol == "legacy":
                assert again == [[t, "again"] for t in threads[1:6]]
                assert fresh == ["fresh"]
            if (protocol, answers) != ("legacy", "sse"):
                assert len(served.peers) <= before + AT_ONCE + 2
        finally:
            await pool.aclose()
        # The pool's close closes the shared transport: no connection is left open.
        assert await served.closed_down_to(0) == 0


async def test_an_expired_thread_session_leaves_the_pool_to_the_others() -> None:
    async with serving(json_response=True) as served:
        async with MCPPool({"s": config(served.url, "legacy", thread_session_ttl=0.3)}) as pool:
            assert await remember(pool, None, "z") == ["z"]
            assert await remember(pool, "t1", "a") == ["a"]
            old = pool.connection_for("s", "t1")
            deadline = time.monotonic() + SETTLE
            while "t1" in pool.thread_sessions("s"):
                assert time.monotonic() < deadline, "the idle thread session was not closed"
                await asyncio.sleep(0.05)
            await pool._threads.settled()
            assert not old.connected
            # The shared session and a new thread session still reach the server, over the
            # connections the closed session used.
            assert await remember(pool, None, "y") == ["z", "y"]
            assert await remember(pool, "t1", "b") == ["b"]
            before = len(served.peers)
            assert await remember(pool, "t2", "c") == ["c"]
            print(f"expired: {before} then {len(served.peers)}")
            assert len(served.peers) <= before + 2  # its notification stream, and one more
        assert await served.closed_down_to(0) == 0


async def test_a_reconnect_keeps_the_pool() -> None:
    """A session that ends (here: the server forgot it) is replaced; the pool stays open."""
    async with serving(json_response=True) as served:
        async with MCPPool({"s": {"url": served.url, "protocol": "legacy"}}) as pool:
            assert await remember(pool, None, "a") == ["a"]
            before = len(served.peers)
            connection = pool.connection("s")
            session = await connection.live_session()
            session.end()
            await asyncio.sleep(0.1)
            assert await remember(pool, None, "b") == ["b"]  # a new session, fresh state
            assert connection.connects == 2
            print(f"reconnect: {before} then {len(served.peers)}")
            assert len(served.peers) <= before + 2  # its notification stream, and one more
        assert await served.closed_down_to(0) == 0
