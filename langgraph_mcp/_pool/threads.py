"""Sessions per LangGraph thread, for servers configured with ``session_scope: "thread"``.

A stateful server keeps state per MCP session, so two conversations must not share one. Each
thread (``thread_id``) then gets a :class:`ServerConnection` of its own besides the server's
shared one (which still lists the tools and serves calls made without a thread). Per server,
they are kept least recently used first: at most ``max_thread_sessions`` (an idle one is closed
to make room; one with a call in flight never is), each closed once it has been idle for
``thread_session_ttl`` seconds (a timer on the event loop that used it last). Closing runs in
the background; :meth:`ThreadSessions.aclose` waits for it.

A per-user OAuth server's sessions are each user's own (per user, or per user and thread). Their
keys cannot be named by a thread id: a thread's key is ``("thread", thread_id)`` and a user's
``("user", user, thread_id or "")``, so no thread id, however chosen, reaches a user's session;
and a lookup without a user (:meth:`ThreadSessions.connection_for`) never gets one. Each user's
session keeps its listings to itself (a listing of its own, shared with no other session).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import mcp_types as types

from langgraph_mcp._oauth.options import per_user_oauth
from langgraph_mcp._session.calls import Round
from langgraph_mcp._session.connection import ServerConnection
from langgraph_mcp._session.freshness import ListingShare
from langgraph_mcp._session.routing import CallSink
from langgraph_mcp.config import ServerConfig
from langgraph_mcp.errors import MCPConnectionError

__all__ = ["ThreadSessions"]

_Key = tuple[str, ...]
"""A session's key: ``("thread", thread_id)``, ``("user", user, thread_id or "")``, or
``("key", credentials key, thread_id or "")``."""

logger = logging.getLogger("langgraph_mcp.pool")


class ThreadSessions:
    """The thread connections of every ``session_scope: "thread"`` server of one pool.

    ``fallback`` makes the sink for requests no call can be tied to (as for the shared
    connection). Loops in other threads may open, use and close thread sessions at the same
    moment: state changes under one lock.
    """

    def __init__(
        self,
        shared: Mapping[str, ServerConnection],
        fallback: Callable[[str, ServerConfig], CallSink],
    ) -> None:
        self.fallback = fallback
        self._lock = threading.Lock()
        self._closed = False
        self._servers: dict[str, _ServerThreads] = {
            name: _ServerThreads(self, connection)
            for name, connection in shared.items()
            if connection.config.session_scope == "thread" or _per_user(connection.config)
        }
        self._retiring: dict[asyncio.Task[None], ServerConnection] = {}
        """Evicted or expired thread sessions being closed in the background."""

    def connection_for(self, shared: ServerConnection, thread_id: str | None) -> ServerConnection:
        """The connection a call made in thread ``thread_id`` uses: ``shared`` for a shared
        server or without a thread, else the thread's own, made on first use and reused by the
        thread's later calls until it is evicted or expires (the thread's next call then gets a
        fresh one). A thread connection is busy (never closed) while it connects or a request is
        in flight on it, a call held open waiting for a person's answer included; between
        requests only :meth:`using` holds it. Marks the thread as just used. Once closed,
        ``shared`` (closed too) is returned."""
        sessions = self._servers.get(shared.name)
        if (
            sessions is None
            or thread_id is None
            or _per_user(shared.config)
            or shared.config.session_scope != "thread"  # a server per user by its runs' credentials
        ):
            return shared
        return sessions.get(("thread", thread_id), hold=False) or shared

    @asynccontextmanager
    async def using(
        self,
        shared: ServerConnection,
        thread_id: str | None,
        *,
        user: str | None = None,
        auth: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[ServerConnection]:
        """:meth:`connection_for`, held in use for the whole block.

        For a per-user OAuth server (``oauth`` set) ``user`` is required: the connection is that
        user's own (per user and thread with ``session_scope: thread``), made with ``auth`` (the
        user's ``httpx2.Auth``) in place of the configured one. With ``headers`` (a run's
        credentials, see :mod:`~langgraph_mcp._pool.credentials`), ``user`` names those
        credentials: the connection is theirs, and every request of it carries them."""
        if headers is not None:
            if user is None:
                raise ValueError(f"MCP server {shared.name!r}: credentials need a key")
            own = self._sessions_of(shared)
            scoped = thread_id if shared.config.session_scope == "thread" else None
            keyed = own.get(("key", user, scoped or ""), hold=True, headers=headers)
            if keyed is None:  # closed: never the shared session, which lacks the credentials
                raise MCPConnectionError(shared.name, "the pool is closed")
            try:
                yield keyed
            finally:
                own.release(keyed)
            return
        sessions = self._servers.get(shared.name)
        if sessions is not None and _per_user(shared.config):
            if user is None:
                raise ValueError(f"MCP server {shared.name!r} has per-user OAuth: a call needs a user")
            scoped = thread_id if shared.config.session_scope == "thread" else None
            connection = sessions.get(("user", user, scoped or ""), hold=True, auth=auth)
            if connection is None:  # closed: never the shared session, which lacks the token
                raise MCPConnectionError(shared.name, "the pool is closed")
        elif sessions is None or thread_id is None or shared.config.session_scope != "thread":
            yield shared
            return
        else:
            connection = sessions.get(("thread", thread_id), hold=True)
        if connection is None:  # closed
            yield shared
            return
        try:
            yield connection
        finally:
            sessions.release(connection)

    def _sessions_of(self, shared: ServerConnection) -> _ServerThreads:
        """The sessions of ``shared``'s server (made on first use: a server becomes per user by a
        face's options, after the pool was made)."""
        with self._lock:
            sessions = self._servers.get(shared.name)
            if sessions is None:
                sessions = self._servers[shared.name] = _ServerThreads(self, shared)
            return sessions

    def thread_ids(self, server: str) -> list[str]:
        """The threads with a connection of their own to ``server``, least recently used first."""
        sessions = self._servers.get(server)
        if sessions is None:
            return []
        with self._lock:
            return [c.thread_id for key, c in sessions.open.items() if key[0] == "thread" or key[2]]

    def evict_user(self, server: str, user: str) -> int:
        """Close ``user``'s sessions to per-user OAuth server ``server`` now, calls in flight
        included (their tokens are no longer to be used); the user's next call makes a new one.
        How many were closed."""
        sessions = self._servers.get(server)
        if sessions is None:
            return 0
        return sessions.evict(lambda key: key[0] == "user" and key[1] == user)

    async def settled(self) -> None:
        """Wait until the sessions being closed in the background on this loop are closed."""
        here = asyncio.get_running_loop()
        with self._lock:
            tasks = [task for task in self._retiring if task.get_loop() is here]
        await asyncio.gather(*(_settled(task) for task in tasks))

    def connections(self) -> list[ServerConnection]:
        """Every open thread connection."""
        with self._lock:
            return [c for sessions in self._servers.values() for c in sessions.open.values()]

    def _retire(self, connection: ServerConnection, loop: asyncio.AbstractEventLoop) -> None:
        """Close an evicted or expired thread connection in the background, on ``loop`` (the
        running one); :meth:`aclose` waits for it."""
        task = loop.create_task(connection.aclose(), name=f"mcp-close:{connection.name}")
        with self._lock:
            self._retiring[task] = connection
        task.add_done_callback(self._retired)

    def _retired(self, task: asyncio.Task[None]) -> None:
        with self._lock:
            connection = self._retiring.pop(task, None)
        if not task.cancelled() and (exc := task.exception()) is not None and connection is not None:
            logger.warning("MCP server %r: closing a thread session failed: %r", connection.name, exc)

    async def aclose(self) -> None:
        """Close every thread connection, and wait for those still closing in the background;
        later lookups get the shared connection."""
        with self._lock:
            self._closed = True
            retiring = list(self._retiring.items())
        threads = [c for sessions in self._servers.values() for c in sessions.take_all()]
        here = asyncio.get_running_loop()
        await asyncio.gather(
            *(c.aclose() for c in threads),
            # A close running on another thread's loop is finished (or, that loop gone, its
            # server stopped) from here.
            *(_settled(task) if task.get_loop() is here else c.aclose() for task, c in retiring),
        )


def _per_user(config: ServerConfig) -> bool:
    return per_user_oauth(config) is not None


async def _settled(task: asyncio.Task[None]) -> None:
    """Wait for ``task`` to end, whatever its outcome (``_retired`` reports failures)."""
    await asyncio.wait({task})


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _ServerThreads:
    """The thread connections of one ``session_scope: "thread"`` server, least recently used
    first. Their state changes under the owner's lock."""

    def __init__(self, owner: ThreadSessions, shared: ServerConnection) -> None:
        self.owner = owner
        self.shared = shared
        self.name = shared.name
        self.config = shared.config
        self.open: OrderedDict[_Key, _ThreadConnection] = OrderedDict()
        self._over = False
        """Every session was busy when one more was needed: said once, until back in bounds."""

    def get(
        self, key: _Key, *, hold: bool, auth: Any = None, headers: Mapping[str, str] | None = None
    ) -> _ThreadConnection | None:
        """The connection of ``key`` (made if needed), marked as just used (and, with ``hold``,
        in use until :meth:`release`); ``None`` once the pool is closed."""
        loop = _running_loop()
        evicted: list[_ThreadConnection] = []
        with self.owner._lock:
            if self.owner._closed:
                return None
            connection = self.open.get(key)
            created = connection is None
            if connection is None:
                cfg = self.config if auth is None else self.config.model_copy(update={"auth": auth})
                if headers is not None:
                    merged = {**getattr(cfg, "headers", {}), **headers}
                    cfg = cfg.model_copy(update={"headers": merged})
                connection = self.open[key] = _ThreadConnection(
                    self.name,
                    cfg,
                    fallback=self.owner.fallback(self.name, cfg),
                    default_timeout=self.shared.default_timeout,
                    sessions=self,
                    key=key,
                )
            self.open.move_to_end(key)
            connection.last_used = time.monotonic()
            connection.uses += int(hold)
            self._arm(connection, loop)
            if created and loop is not None:
                evicted = self._trim()
            count = len(self.open)
        if created:
            logger.debug(
                "MCP server %r: new session for thread %r (%d open)", self.name, connection.thread_id, count
            )
        self._close(evicted, loop, "least recently used, to stay within max_thread_sessions")
        return connection

    def acquire(self, connection: _ThreadConnection) -> None:
        with self.owner._lock:
            connection.uses += 1
            connection.last_used = time.monotonic()
            if self.open.get(connection.key) is connection:
                self.open.move_to_end(connection.key)

    def release(self, connection: _ThreadConnection) -> None:
        """One use of ``connection`` ended: once idle, its idle time starts, and sessions over
        the bound may be closed now."""
        loop = _running_loop()
        with self.owner._lock:
            connection.uses -= 1
            connection.last_used = time.monotonic()
            if connection.uses or self.open.get(connection.key) is not connection:
                return
            self._arm(connection, loop)
            evicted = (
                self._trim() if loop is not None and len(self.open) > self.config.max_thread_sessions else []
            )
        self._close(evicted, loop, "least recently used, to stay within max_thread_sessions")

    def evict(self, which: Callable[[_Key], bool]) -> int:
        """Close the connections whose keys ``which`` picks, busy or not; how many."""
        loop = _running_loop()
        with self.owner._lock:
            picked = [key for key in self.open if which(key)]
            evicted = [self.open.pop(key) for key in picked]
            for connection in evicted:
                connection.disarm()
        if evicted:
            assert loop is not None, "sessions are evicted from a running event loop"
            self._close(evicted, loop, "its user's authorization was revoked")
        return len(evicted)

    def take_all(self) -> list[_ThreadConnection]:
        """Forget every thread connection (the pool is closing): the caller closes them."""
        with self.owner._lock:
            connections = list(self.open.values())
            self.open.clear()
            for connection in connections:
                connection.disarm()
        return connections

    def _trim(self) -> list[_ThreadConnection]:
        """Under the lock: drop idle connections, least recently used first, until within
        ``max_thread_sessions``, never the most recently used one; the dropped ones."""
        limit = self.config.max_thread_sessions
        evicted = []
        for key, connection in list(self.open.items())[:-1]:
            if len(self.open) <= limit:
                break
            if not connection.uses:
                del self.open[key]
                connection.disarm()
                evicted.append(connection)
        if len(self.open) <= limit:
            self._over = False
        elif not self._over:
            self._over = True
            logger.warning(
                "MCP server %r: every thread session has a call in flight; %d are open, more than "
                "max_thread_sessions=%d, until some are idle",
                self.name,
                len(self.open),
                limit,
            )
        return evicted

    def _arm(self, connection: _ThreadConnection, loop: asyncio.AbstractEventLoop | None) -> None:
        """Under the lock: make sure an idle-time check is due on ``loop`` (the running one)."""
        ttl = self.config.thread_session_ttl
        if ttl is None or loop is None or (connection.timer is not None and connection.timer_loop is loop):
            return
        connection.disarm()
        connection.timer = loop.call_later(ttl, self._check, connection, loop)
        connection.timer_loop = loop

    def _check(self, connection: _ThreadConnection, loop: asyncio.AbstractEventLoop) -> None:
        """On ``loop``, the timer's: close ``connection`` if it has been idle long enough; else
        check again when it could be (a busy one is checked again once its last use ends)."""
        ttl = self.config.thread_session_ttl
        assert ttl is not None
        with self.owner._lock:
            if connection.timer_loop is not loop:
                return  # re-armed on another loop meanwhile: that timer decides
            connection.timer = None
            if connection.uses or self.open.get(connection.key) is not connection:
                return
            idle = time.monotonic() - connection.last_used
            if idle < ttl:
                connection.timer = loop.call_later(ttl - idle, self._check, connection, loop)
                return
            del self.open[connection.key]
        self._close([connection], loop, f"idle for {idle:.3g}s (thread_session_ttl={ttl:g})")

    def _close(
        self, connections: list[_ThreadConnection], loop: asyncio.AbstractEventLoop | None, why: str
    ) -> None:
        for connection in connections:
            logger.debug(
                "MCP server %r: closing the session of thread %r: %s", self.name, connection.thread_id, why
            )
            assert loop is not None
            self.owner._retire(connection, loop)


class _ThreadConnection(ServerConnection):
    """A ``session_scope: "thread"`` server's connection for one LangGraph thread.

    A :class:`ServerConnection` of its own that counts its uses: connecting, listing and every
    request (until its answer, a call held open waiting for a person included) hold one, and
    the pool closes only connections that hold none. Tools it has not listed itself are looked
    up in the shared connection's listing (the one the tools were made from).
    """

    def __init__(
        self,
        name: str,
        config: ServerConfig,
        *,
        fallback: CallSink,
        default_timeout: float | None,
        sessions: _ServerThreads,
        key: _Key,
    ) -> None:
        # Public listings, and change notices, are shared with the server's other sessions; a
        # user's session (per-user OAuth) shares none: what it lists may be that user's alone.
        own = key[0] in ("user", "key")
        super().__init__(
            name,
            config,
            fallback=fallback,
            default_timeout=default_timeout,
            share=ListingShare(config.listing_ttl) if own else sessions.shared.listing_share,
            http_pool=sessions.shared.http_pool,  # the server's connections, not a pool of its own
        )
        self.private = own
        self.key = key
        self.thread_id = key[-1]
        """The thread (``""`` for a user's session shared by their threads)."""
        self.uses = 0
        """Uses in progress (see :meth:`_in_use` and ``MCPPool.using``)."""
        self.last_used = time.monotonic()
        self.timer: asyncio.TimerHandle | None = None
        """The pending idle-time check, on ``timer_loop``."""
        self.timer_loop: asyncio.AbstractEventLoop | None = None
        self._sessions = sessions
        self._shared = sessions.shared

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, thread_id={self.thread_id!r})"

    def disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    @contextmanager
    def _in_use(self) -> Iterator[None]:
        self._sessions.acquire(self)
        try:
            yield
        finally:
            self._sessions.release(self)

    async def connect(self) -> None:
        with self._in_use():
            await super().connect()

    async def list_tools(self) -> list[types.Tool]:
        with self._in_use():
            return await super().list_tools()

    async def send_call(self, *args: Any, **kwargs: Any) -> Round:
        # Passed through as given: the arguments are those of ``ServerConnection.send_call``.
        with self._in_use():
            return await super().send_call(*args, **kwargs)

    def listed(self, name: str) -> types.Tool | None:
        return super().listed(name) or self._shared.listed(name)
