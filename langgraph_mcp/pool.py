"""``MCPPool``: long-lived sessions to a set of MCP servers.

The pool is the set of :class:`ServerConnection` objects (one per configured server, plus one
per LangGraph thread for servers configured with ``session_scope: thread``, kept by
``_session/threads.py``) and nothing else: each connection owns its session (``_session/``); the
pool connects them concurrently, collects their tool listings, and closes them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, Self, TypeAlias

import mcp_types as types

from langgraph_mcp._elicitation.policy import CodeSink
from langgraph_mcp._session import ServerConnection
from langgraph_mcp._session.threads import ThreadSessions
from langgraph_mcp._sync import close_pool
from langgraph_mcp.config import DEFAULT_CALL_TIMEOUT, ServerConfig, load_connections
from langgraph_mcp.errors import MCPConnectionError

__all__ = ["MCPPool", "OnConnectionError", "PoolHolder", "ServerConnection"]

logger = logging.getLogger("langgraph_mcp.pool")

OnConnectionError: TypeAlias = Literal["raise", "warn"]


class MCPPool:
    """Long-lived sessions to a set of MCP servers.

    ``connections`` takes every shape :func:`~langgraph_mcp.load_connections`
    accepts. Sessions open lazily on first use (or all at once, concurrently,
    with :meth:`start`) and stay open until :meth:`aclose` / ``async with`` exit.

    ``on_connection_error`` decides what happens when servers cannot be
    reached while tools are collected: a failed server never takes the others
    down; with ``"raise"`` (default) an error is raised only when *every*
    server failed, otherwise the failed servers' tools are left out with a
    warning (and they are tried again, after a back-off, the next time tools
    are collected); with ``"warn"`` nothing is raised.

    ``default_timeout`` bounds each tool call (seconds, ``None`` for no limit)
    unless the tool or its server's configuration sets a limit of its own.

    Sessions are bound to an event loop: a pool used from several loops (threads each running
    their own, LangGraph server's ``BG_JOB_ISOLATED_LOOPS``) keeps one session per server per
    loop, reuses it whenever that loop runs again, and stops it when the loop is closed or the
    pool is.

    A server configured with ``session_scope: "thread"`` (a stateful server) gets a connection
    per LangGraph thread besides its shared one: :meth:`connection_for` / :meth:`using` pick
    it, so two conversations never share the server's per-session state. The shared connection
    still lists the tools and serves calls made without a thread.
    """

    def __init__(
        self,
        connections: Any,
        *,
        on_connection_error: OnConnectionError = "raise",
        default_timeout: float | None = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        if on_connection_error not in ("raise", "warn"):
            raise ValueError(f"on_connection_error must be 'raise' or 'warn', got {on_connection_error!r}")
        if default_timeout is not None and default_timeout <= 0:
            raise ValueError(f"default_timeout must be positive or None, got {default_timeout!r}")
        self.servers: dict[str, ServerConfig] = load_connections(connections)
        self.on_connection_error: OnConnectionError = on_connection_error
        self.default_timeout = default_timeout
        self.connections: dict[str, ServerConnection] = {
            # Requests no call can be tied to are answered without a person, or refused.
            name: ServerConnection(name, cfg, fallback=CodeSink(name, cfg), default_timeout=default_timeout)
            for name, cfg in self.servers.items()
        }
        self._reported: dict[str, BaseException] = {}
        self.remembered: dict[str, tuple[str, ...]] = {}
        """The MCP tool names each server offered the last time it was listed (kept while it
        cannot be reached, so its names stay reserved)."""
        self._warned: set[str] = set()
        # load_mcp_tools' tools, by reserved names: (tools_version, tools). Kept here, not in a
        # weak map keyed by the pool: the tools refer to the pool, which would then never go.
        self._tool_cache: dict[frozenset[str], tuple[Any, list[Any]]] = {}
        # load_mcp_tools' names, by reserved names: {(server, MCP tool name): exposed name}.
        self._names: dict[frozenset[str], dict[tuple[str, str], str]] = {}
        self._threads = ThreadSessions(self.connections, CodeSink)

    def __repr__(self) -> str:
        return f"MCPPool(servers={list(self.servers)})"

    def warn_once(self, log: logging.Logger, msg: str, *args: Any, key: str | None = None) -> None:
        """Log a warning on ``log`` unless this pool has logged the same one already (the same
        text, or the same ``key`` if given): warnings about what a listing holds would otherwise
        repeat each time tools are listed again."""
        key = f"{log.name}\0{key if key is not None else (msg % args if args else msg)}"
        if key in self._warned:
            return
        self._warned.add(key)
        log.warning(msg, *args)

    def connection(self, server: str) -> ServerConnection:
        """The connection to ``server`` (its session, listing and calls)."""
        try:
            return self.connections[server]
        except KeyError:
            raise KeyError(f"no MCP server named {server!r}; configured: {list(self.connections)}") from None

    def connection_for(self, server: str, thread_id: str | None) -> ServerConnection:
        """The connection a call of ``server`` made in LangGraph thread ``thread_id`` uses: the
        shared one, or the thread's own for a ``session_scope: "thread"`` server (see
        :class:`~langgraph_mcp._session.threads.ThreadSessions`). A cheap synchronous lookup.

        Raises:
            KeyError: no server is called ``server``.
        """
        return self._threads.connection_for(self.connection(server), thread_id)

    def using(self, server: str, thread_id: str | None) -> AbstractAsyncContextManager[ServerConnection]:
        """:meth:`connection_for`, held in use for the whole ``async with`` block: a thread's
        connection is not evicted or expired while the block runs. Wrap a tool call in it, from
        before it connects until its result.

        Raises:
            KeyError: no server is called ``server``.
        """
        return self._threads.using(self.connection(server), thread_id)

    def thread_sessions(self, server: str) -> list[str]:
        """The threads that have a connection of their own to ``server``, least recently used
        first (empty for a ``session_scope: "shared"`` server).

        Raises:
            KeyError: no server is called ``server``.
        """
        return self._threads.thread_ids(self.connection(server).name)

    def retry(self, server: str | None = None) -> None:
        """Try ``server`` (every server when ``None``) again at its next use: forget its back-off,
        and its give-up after ``restart.max_attempts`` failed connects. Thread sessions included.

        Raises:
            KeyError: no server is called ``server``.
        """
        names = list(self.connections) if server is None else [self.connection(server).name]
        for connection in [*self.connections.values(), *self._threads.connections()]:
            if connection.name in names:
                connection.retry()
        for name in names:
            self._reported.pop(name, None)

    async def start(self) -> None:
        """Connect every server now, concurrently; apply ``on_connection_error``."""
        await self.list_all_tools()

    async def list_all_tools(self) -> dict[str, list[types.Tool]]:
        """Every reachable server's tool listing, in configuration order.

        A server that cannot be reached is left out (with one warning per failure); it is tried
        again on a later call once its back-off has passed.
        """
        names = list(self.connections)
        results = await asyncio.gather(
            *(self.connections[n].list_tools() for n in names), return_exceptions=True
        )
        listings: dict[str, list[types.Tool]] = {}
        failures: dict[str, Exception] = {}
        for name, result in zip(names, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                failures[name] = result
                continue
            listings[name] = result
            self.remembered[name] = tuple(t.name for t in result)
            self._reported.pop(name, None)
        if failures:
            if self.on_connection_error == "raise" and not listings:
                first = next(iter(failures.values()))
                raise (
                    first
                    if len(failures) == 1
                    else MCPConnectionError(
                        ", ".join(failures),
                        "no server could be reached:\n" + "\n".join(str(f) for f in failures.values()),
                    )
                )
            for name, failure in failures.items():
                if self._reported.get(name) is not failure:  # the same failure, again: said already
                    self._reported[name] = failure
                    logger.warning("%s\nIts tools are left out until it can be reached.", failure)
        return listings

    def unreachable(self) -> dict[str, BaseException]:
        """The servers whose tools could not be listed the last time tools were collected, with
        the error (empty when every server answered)."""
        return dict(self._reported)

    def tools_version(self) -> tuple[tuple[int, int], ...]:
        """Changes whenever any server's listing may have changed."""
        return tuple((c.tools_version, c.connects) for c in self.connections.values())

    async def drain(self, timeout: float) -> bool:
        """Wait until no call is working on any server, in any of its sessions (calls waiting
        for a person's answer do not count), at most ``timeout`` seconds; whether that happened.
        New calls may start meanwhile: this is for a server that is shutting down while its runs
        finish."""
        deadline = time.monotonic() + timeout
        # Polled: calls may run on other threads' event loops.
        while any(c.working() for c in [*self.connections.values(), *self._threads.connections()]):
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    async def aclose(self) -> None:
        """Close every session, thread sessions included (requests in flight end with
        :class:`MCPConnectionError`), and wait for stdio children to exit, those of evicted or
        expired thread sessions still closing included. Cancelling the caller still closes them
        all."""
        await asyncio.gather(*(c.aclose() for c in self.connections.values()), self._threads.aclose())

    def close(self, timeout: float | None = None) -> None:
        """:meth:`aclose` from synchronous code (e.g. after ``graph.invoke``): runs it on the
        package's own event loop and waits, at most ``timeout`` seconds.

        Raises:
            RuntimeError: called from a running event loop's thread (use ``await aclose()``).
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            close_pool(self, timeout)
            return
        raise RuntimeError("MCPPool.close() blocks: from async code use `await pool.aclose()`")

    async def __aenter__(self) -> MCPPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class PoolHolder:
    """What ``MCPToolNode`` and ``MCPMiddleware`` share: a pool, either their own (made from
    connections; they close it) or a shared :class:`MCPPool` (left to its owner)."""

    pool: MCPPool
    _owns_pool: bool

    def _hold_pool(
        self,
        connections: Any,
        *,
        on_connection_error: OnConnectionError = "raise",
        default_timeout: float | None = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        if isinstance(connections, MCPPool):
            self.pool, self._owns_pool = connections, False
        else:
            self.pool = MCPPool(
                connections, on_connection_error=on_connection_error, default_timeout=default_timeout
            )
            self._owns_pool = True

    async def drain(self, timeout: float) -> bool:
        """See :meth:`MCPPool.drain` (the pool, shared or not)."""
        return await self.pool.drain(timeout)

    async def aclose(self) -> None:
        """Close an own pool (a shared pool is left to its owner)."""
        if self._owns_pool:
            await self.pool.aclose()

    def close(self) -> None:
        """:meth:`aclose` from synchronous code."""
        if self._owns_pool:
            self.pool.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
