"""The task that owns one server's session: connect, back off, close.

The SDK's ``Client`` must be entered and exited in the same task, while LangGraph runs each node
in its own task. A :class:`SessionOwner` therefore runs a dedicated *owner task* per session
that enters the ``Client``, publishes it, and waits for a stop signal; any task on the same
event loop may then send requests over it concurrently.

Owner tasks start with an empty ``contextvars`` context, so SDK callbacks that run on the
session's own tasks never see (and never write into) the context of whichever graph run
happened to open the session.

Connecting is bounded by ``connect_timeout``. After a failed connect, further attempts wait as
the server's ``restart`` policy says (by default 1 s, doubling up to 30 s); meanwhile the last
error is raised again at once. After ``restart.max_attempts`` failed connects in a row the server
is given up until :meth:`SessionOwner.retry`. A session that died is replaced on the next use,
never re-sending the request that failed.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, contextmanager

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError

from langgraph_mcp._compat.mcp import CLOSED_MESSAGE
from langgraph_mcp._oauth.deployauth import noting_auth_problems
from langgraph_mcp._session.hints import network_hint, not_mcp
from langgraph_mcp._session.process import ServerProcess
from langgraph_mcp._session.transports import (
    ClientFactory,
    HTTPPool,
    HTTPWatch,
    StderrTap,
    TransportKind,
    describe,
    leaves,
    open_client,
)
from langgraph_mcp._session.wire import WireTap
from langgraph_mcp._support.redact import Redactor, redact_url
from langgraph_mcp.config import HTTPServerConfig, ServerConfig, SSEServerConfig, StdioServerConfig
from langgraph_mcp.errors import MCPAuthenticationError, MCPConnectionError

__all__ = ["Session", "SessionOwner"]

logger = logging.getLogger("langgraph_mcp.pool")

CLOSE_TIMEOUT = 15.0
EXPIRED_GRACE = 5.0


class Session:
    """One connection attempt: its owner task, its ``Client`` once ready, its stderr."""

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.ready: asyncio.Future[Client] = loop.create_future()
        self.stop = asyncio.Event()
        self.client: Client | None = None
        self.transport: TransportKind | None = None
        self.alive = False
        self.stderr: StderrTap | None = None
        self.http: HTTPWatch | None = None
        self.wire: WireTap | None = None
        self.owner: asyncio.Task[None] | None = None
        self.retry_at = 0.0
        self.in_flight = 0
        self.auth_problems: list[str] = []
        """Why the deployment's OAuth token could not be obtained while connecting (see
        :func:`~langgraph_mcp._oauth.deployauth.noting_auth_problems`)."""
        self.expired = False
        """The server said it no longer knows this session (HTTP 404 to a request carrying its
        id): requests it rejected for that reason never ran, and may be sent on a new session."""
        self._process: ServerProcess | None = None
        self._process_lock = threading.Lock()

    def hold_process(self, process: ServerProcess | None) -> None:
        with self._process_lock:
            self._process = process

    def take_process(self) -> ServerProcess | None:
        """The stdio server's process, handed over once (the owner task closing the session and
        a pool closing it from another thread may both ask)."""
        with self._process_lock:
            process, self._process = self._process, None
        return process

    def end(self) -> None:
        """The transport ended or failed: stop using this session."""
        self.alive = False
        self.stop.set()

    def expire(self) -> None:
        """The server no longer knows this session: stop using it (the next use opens another).
        Requests still in flight on it are let finish first (each gets its own 404 and is sent
        again): ending it at once would cut them off as lost, their outcome unknown. It ends when
        the last one does, or after ``EXPIRED_GRACE`` seconds."""
        if self.expired:
            return
        self.expired = True
        self.alive = False
        if self.in_flight == 0:
            self.end()
        else:
            asyncio.get_running_loop().call_later(EXPIRED_GRACE, self.end)

    @contextmanager
    def request(self) -> Iterator[None]:
        """Count a request in flight on this session for the block (see :meth:`expire`)."""
        self.begin_request()
        try:
            yield
        finally:
            self.end_request()

    def begin_request(self) -> None:
        """:meth:`request` without a block: a request starts (:meth:`end_request` when it ends)."""
        self.in_flight += 1

    def end_request(self) -> None:
        self.in_flight -= 1
        if self.expired and self.in_flight == 0:
            self.end()

    def stderr_hint(self) -> str:
        return self.stderr.hint() if self.stderr is not None else ""

    async def settle_stderr(self) -> None:
        if self.stderr is not None:
            await self.stderr.settle()


class SessionOwner:
    """Owns the sessions of one server, one at a time.

    ``make_client`` builds the ``Client`` for a transport target; ``redact`` keeps the server's
    secrets out of what is said and logged (its stdio server's stderr included);
    ``on_connected(session)`` runs in the owner task once the handshake is done (before the
    session is published), and ``alongside(session)``, if it returns a coroutine, runs for as
    long as the session lives.
    """

    def __init__(
        self,
        name: str,
        config: ServerConfig,
        make_client: ClientFactory,
        *,
        redact: Redactor,
        on_connected: Callable[[Session], Awaitable[None]],
        alongside: Callable[[Session], Awaitable[None] | None],
    ) -> None:
        self.name = name
        self.config = config
        self.connects = 0
        """Successful connects so far (1 while the first session lives)."""
        self._make_client = make_client
        self._on_connected = on_connected
        self._alongside = alongside
        self._session: Session | None = None
        self._closing = False
        self._retry_delay = config.restart.backoff
        self._failures = 0
        self._given_up: MCPConnectionError | None = None
        self._redact = redact
        self._redact.watch_library_logs()
        self.http_pool: HTTPPool | None = None
        """The server's HTTP connections, which its sessions borrow (streamable HTTP; set by its
        connection); ``None``: each session keeps its own."""

    @property
    def session(self) -> Session | None:
        """The current session (live, connecting, or the last one that failed)."""
        return self._session

    @property
    def closing(self) -> bool:
        """The owner takes no new sessions (its pool is closing or closed)."""
        return self._closing

    @property
    def given_up(self) -> bool:
        """The server was given up on (``restart.max_attempts``) until :meth:`retry`."""
        return self._given_up is not None

    def refuse_new(self) -> None:
        """From now on, :meth:`live` raises: the session is closing."""
        self._closing = True

    def abandon(self) -> ServerProcess | None:
        """Drop the session without closing it: its event loop is closed or will not run again
        before the pool closes, so its owner task cannot end it. Returns its stdio server's
        process, for the caller to stop."""
        session, self._session = self._session, None
        if session is None:
            return None
        return session.take_process()

    async def live(self) -> Session:
        """The live session, connecting (or reconnecting) first if needed.

        Raises:
            MCPConnectionError: the server could not be started or reached (within the back-off
                window after a failure, the last error is raised again without a new attempt).
        """
        if self._closing:
            raise MCPConnectionError(self.name, "the connection pool is closed")
        session = self._session
        if session is not None and session.alive:
            return session
        if self._given_up is not None:
            # Raised again and again: without its old traceback, which would grow each time.
            raise self._given_up.with_traceback(None)
        if session is None or (session.ready.done() and not session.alive):
            failed = session is not None and session.ready.done() and session.ready.exception() is not None
            if failed and session is not None and time.monotonic() < session.retry_at:
                last = session.ready.exception()
                assert last is not None
                raise last.with_traceback(None)
            session = self._start()
        await asyncio.shield(session.ready)
        return session

    def _start(self) -> Session:
        loop = asyncio.get_running_loop()
        session = Session()
        self._session = session
        session.owner = loop.create_task(
            self._own(session), name=f"mcp-connection:{self.name}", context=contextvars.Context()
        )

        def on_timeout() -> None:
            if not session.ready.done():
                session.ready.set_exception(
                    MCPConnectionError(
                        self.name,
                        f"did not connect within {self.config.connect_timeout:g}s (connect_timeout)"
                        + session.stderr_hint(),
                    )
                )
                assert session.owner is not None
                session.owner.cancel()

        handle = loop.call_later(self.config.connect_timeout, on_timeout)
        session.ready.add_done_callback(lambda _: handle.cancel())
        session.ready.add_done_callback(lambda ready: self._after_connect(session, ready))
        return session

    def retry(self) -> None:
        """Forget the back-off and a give-up: the next use tries to connect at once."""
        self._given_up = None
        self._failures = 0
        self._retry_delay = self.config.restart.backoff
        if self._session is not None:
            self._session.retry_at = 0.0

    def _after_connect(self, session: Session, ready: asyncio.Future[Client]) -> None:
        policy = self.config.restart
        if not (ready.cancelled() or ready.exception() is not None):
            self._retry_delay, self._failures = policy.backoff, 0
            return
        if self._closing:
            return
        self._failures += 1
        session.retry_at = time.monotonic() + self._retry_delay
        self._retry_delay = min(self._retry_delay * policy.multiplier, policy.max_backoff)
        if policy.max_attempts is not None and self._failures >= policy.max_attempts:
            failure = None if ready.cancelled() else ready.exception()
            last = (
                failure.reason
                if isinstance(failure, MCPConnectionError)
                else describe(failure or Exception())
            )
            self._given_up = MCPConnectionError(
                self.name,
                f"gave up after {self._failures} failed attempts to connect (restart.max_attempts); "
                f"the last one: {last}\nFix the server, then call pool.retry({self.name!r}) (or restart "
                "the process) to try again.",
            )
            logger.error("%s", self._given_up)

    async def _own(self, session: Session) -> None:
        session.auth_problems = noting_auth_problems()  # (this task's context: its own)
        try:
            async with AsyncExitStack() as stack:
                if isinstance(self.config, StdioServerConfig):
                    session.stderr = StderrTap(self.name, self._redact)
                    await session.stderr.start()
                elif isinstance(self.config, (HTTPServerConfig, SSEServerConfig)):
                    session.http = HTTPWatch(session.end)
                opened = await open_client(
                    stack,
                    self.name,
                    self.config,
                    self._make_client,
                    on_end=session.end,
                    stderr=session.stderr,
                    on_expired=lambda: self._expired(session),
                    watch=session.http,
                    http_pool=self.http_pool,
                )
                session.client, session.transport, session.wire = opened.client, opened.transport, opened.wire
                session.hold_process(opened.process)
                self.connects += 1
                await self._on_connected(session)
                logger.debug(
                    "connected to MCP server %r (protocol %s)", self.name, opened.client.protocol_version
                )
                async with anyio.create_task_group() as tg:
                    work = self._alongside(session)
                    if work is not None:
                        tg.start_soon(_run, work)
                    session.alive = True
                    if not session.ready.done():
                        session.ready.set_result(opened.client)
                    await session.stop.wait()
                    session.alive = False
                    tg.cancel_scope.cancel()
        except BaseException as exc:  # the owner must record every way it can end
            session.alive = False
            await session.settle_stderr()
            if not session.ready.done():
                if isinstance(exc, asyncio.CancelledError) and self._closing:
                    session.ready.set_exception(
                        MCPConnectionError(self.name, "the connection pool is closed")
                    )
                else:
                    session.ready.set_exception(self._connect_error(exc, session))
            elif not isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
                logger.warning("MCP server %r: connection ended: %s", self.name, self._redact(describe(exc)))
            if not isinstance(exc, Exception):
                raise
        finally:
            session.alive = False
            process = session.take_process()
            if process is not None:  # the exit stack has ended it
                process.close()
            if session.stderr is not None:
                session.stderr.close()

    def _expired(self, session: Session) -> None:
        if not session.expired:
            logger.info(
                "MCP server %r no longer knows its session (HTTP 404; it restarted or expired it); "
                "opening a new one",
                self.name,
            )
        session.expire()

    def _connect_error(self, exc: BaseException, session: Session) -> MCPConnectionError:
        """What a failed connect raises: the reason in the user's terms (a refused credential, a
        missing command), never a secret; the stdio server's last stderr lines after it."""
        config = self.config
        found = leaves(exc)
        reason = describe(exc)
        if isinstance(config, StdioServerConfig):
            missing = [leaf for leaf in found if isinstance(leaf, FileNotFoundError)]
            if missing and config.cwd is not None and not os.path.isdir(config.cwd):
                reason = f"its working directory {config.shown('cwd')!r} (cwd) does not exist"
            elif missing:
                reason = f"command {config.shown('command')!r} not found"
            elif any(_closed(leaf) for leaf in found):
                reason = "the server process exited before completing the MCP handshake"
            elif oserror := next(
                (leaf for leaf in found if isinstance(leaf, OSError) and leaf.strerror), None
            ):
                reason = f"cannot run command {config.shown('command')!r}: {oserror.strerror}"
        elif isinstance(config, (HTTPServerConfig, SSEServerConfig)):
            status = next(
                (
                    leaf.response.status_code
                    for leaf in found
                    if isinstance(leaf, httpx2.HTTPStatusError) and leaf.response.status_code in (401, 403)
                ),
                session.http.refused if session.http is not None else None,
            )
            if session.auth_problems:
                return MCPAuthenticationError(
                    self.name, status or 401, oauth=self._redact(session.auth_problems[-1])
                )
            if status is not None:
                return MCPAuthenticationError(self.name, status)
            answered = not_mcp(session.http.last if session.http is not None else None, config.transport)
            reason = f"cannot connect to {redact_url(config.url)}: {answered or reason}"
        hint = session.stderr_hint()
        if isinstance(config, StdioServerConfig) and session.stderr is not None:
            hint += network_hint(session.stderr.tail, config.env or {})
        return MCPConnectionError(self.name, self._redact(reason) + hint)

    async def aclose(self) -> None:
        """Stop the owner task and wait for the session (and any child process) to end. Runs on
        the session's own event loop (``ServerConnection.aclose`` deals with the others).

        Cancelling the caller still stops the owner task, and the cancellation propagates.
        """
        self._closing = True
        session = self._session
        if session is None or session.owner is None or session.owner.done():
            return
        owner = session.owner
        session.stop.set()
        if not session.ready.done():
            owner.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(owner), CLOSE_TIMEOUT)
        except TimeoutError:
            owner.cancel()
        except asyncio.CancelledError:
            owner.cancel()
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the caller was cancelled, not just the owner
        except Exception:  # already logged by the owner
            pass


async def _run(work: Awaitable[None]) -> None:
    await work


def _closed(exc: BaseException) -> bool:
    """Is ``exc`` the SDK's own "connection closed" (not a server's answer with the same code)?"""
    return (
        isinstance(exc, MCPError)
        and exc.code == types.CONNECTION_CLOSED
        and exc.error.message == CLOSED_MESSAGE
    )
