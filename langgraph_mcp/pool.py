"""Long-lived MCP sessions: one owner task per server, shared by every caller.

The SDK's ``Client`` must be entered and exited in the same task, while
LangGraph runs each node in its own task. Each :class:`ServerConnection`
therefore runs a dedicated *owner task* that enters the ``Client``, publishes
it, and waits for a stop signal; any task on the same event loop may then send
requests over it concurrently.

Owner tasks start with an empty ``contextvars`` context, so SDK callbacks that
run on the connection's own tasks never see (and never write into) the context
of whichever graph run happened to open the connection.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import json
import logging
import os
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TextIO, TypeAlias, cast

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from langgraph_mcp.config import (
    DEFAULT_CALL_TIMEOUT,
    HTTPServerConfig,
    InProcessServerConfig,
    ServerConfig,
    SSEServerConfig,
    StdioServerConfig,
    load_connections,
)
from langgraph_mcp.errors import MCPConnectionError

__all__ = [
    "CURRENT_CALL",
    "Driver",
    "InFlight",
    "LogSink",
    "MCPPool",
    "OnConnectionError",
    "RequestSink",
    "ServerConnection",
]

logger = logging.getLogger("langgraph_mcp.pool")

OnConnectionError: TypeAlias = Literal["raise", "warn"]
Driver: TypeAlias = Callable[[Client, dict[str, Any]], Awaitable[types.CallToolResult]]

CLIENT_NAME = "langgraph-mcp"
_STDERR_TAIL = 20
_MAX_PAGES = 1000
_RETRY_MIN, _RETRY_MAX = 1.0, 30.0
_CLOSE_TIMEOUT = 15.0
_HTTP_TIMEOUT = 30.0
_LOG_LEVEL_META = "io.modelcontextprotocol/logLevel"
_TRANSPORT_ERRORS = (anyio.ClosedResourceError, anyio.BrokenResourceError, httpx2.TransportError)
_HTTP_READ_TIMEOUT = 300.0


def _client_info() -> types.Implementation:
    from langgraph_mcp import __version__

    return types.Implementation(name=CLIENT_NAME, version=__version__)


def _leaves(exc: BaseException) -> list[BaseException]:
    """Flatten the ExceptionGroups anyio wraps connection failures in."""
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for inner in exc.exceptions:
            out.extend(_leaves(inner))
        return out
    return [exc]


def _describe(exc: BaseException) -> str:
    parts = []
    for leaf in _leaves(exc):
        text = str(leaf) or type(leaf).__name__
        if isinstance(leaf, MCPError):
            text = f"{leaf.error.message} (MCP error {leaf.code})"
        elif isinstance(leaf, httpx2.HTTPError):
            text = f"{type(leaf).__name__}: {leaf}"
        elif isinstance(leaf, FileNotFoundError):
            text = f"command not found: {leaf.filename or leaf}"
        if text not in parts:
            parts.append(text)
    return "; ".join(parts)


class LogSink(Protocol):
    """Receives the log notifications attributed to one in-flight call."""

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None: ...


class RequestSink(Protocol):
    """Answers the server-to-client requests (handshake era) attributed to one call."""

    @property
    def waiting(self) -> bool:
        """True while the call waits for an answer (and so cannot ask anything else)."""
        ...

    async def on_elicit(
        self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
    ) -> types.ElicitResult | types.ErrorData: ...

    async def on_sample(
        self, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData: ...


@dataclass(eq=False)
class InFlight:
    """One call in flight on a connection, and where its notifications and requests go."""

    log_sink: LogSink | None
    request_sink: RequestSink | None


CURRENT_CALL: contextvars.ContextVar[InFlight | None] = contextvars.ContextVar(
    "langgraph_mcp_current_call", default=None
)
"""Set around each ``tools/call``; seen by SDK callbacks that run in the caller's context."""

_PYTHON_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 5,
    "emergency": logging.CRITICAL + 10,
}


def _log_to_python(server_logger: logging.Logger, params: types.LoggingMessageNotificationParams) -> None:
    data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
    text = f"[{params.logger}] {data}" if params.logger else data
    server_logger.log(_PYTHON_LEVELS.get(params.level, logging.INFO), "%s", text)


class _StderrTap:
    """Forwards a stdio child's stderr to logging and keeps its last lines."""

    def __init__(self, server: str) -> None:
        self._log = logging.getLogger(f"langgraph_mcp.server.{server}.stderr")
        self.tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL)
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w")
        self._read_file = os.fdopen(read_fd, "rb", buffering=0)
        self._transport: asyncio.ReadTransport | None = None
        self._partial = b""

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        tap = self

        class _Proto(asyncio.Protocol):
            def data_received(self, data: bytes) -> None:
                tap._feed(data)

            def eof_received(self) -> bool | None:
                tap._feed(b"\n")
                return None

        self._transport, _ = await loop.connect_read_pipe(_Proto, self._read_file)

    def _feed(self, data: bytes) -> None:
        *lines, self._partial = (self._partial + data).split(b"\n")
        for raw in lines:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self.tail.append(line)
                self._log.info("%s", line)

    def spawned(self) -> None:
        """Close our copy of the write end once the child holds its own."""
        if not self.writer.closed:
            self.writer.close()

    async def settle(self) -> None:
        """Give output the child wrote just before exiting a moment to arrive."""
        for _ in range(5):
            await asyncio.sleep(0.02)

    def close(self) -> None:
        self.spawned()
        if self._transport is not None:
            self._transport.close()
        else:
            self._read_file.close()


class _WatchedReadStream:
    """Delegates to a transport's read stream and reports when it ends.

    A stdio server that exits does not end the ``Client`` context on its own;
    the end of its stdout is the earliest sign, so it ends the session here.
    """

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except StopAsyncIteration:
            self._on_end()
            raise

    async def __aenter__(self) -> _WatchedReadStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result


@asynccontextmanager
async def _watched(transport: Any, on_end: Callable[[], None]) -> AsyncIterator[tuple[Any, Any]]:
    async with transport as (read, write):
        yield _WatchedReadStream(read, on_end), write


class _Session:
    """One connection attempt: its owner task, its ``Client`` once ready, its stderr."""

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.ready: asyncio.Future[Client] = loop.create_future()
        self.stop = asyncio.Event()
        self.client: Client | None = None
        self.alive = False
        self.stderr: _StderrTap | None = None
        self.owner: asyncio.Task[None] | None = None
        self.retry_at = 0.0

    def end(self) -> None:
        """The transport ended or failed: stop using this session."""
        self.alive = False
        self.stop.set()

    def stderr_hint(self) -> str:
        if self.stderr is None or not self.stderr.tail:
            return ""
        return "\nlast lines of the server's stderr:\n  " + "\n  ".join(self.stderr.tail)


class ServerConnection:
    """One server's long-lived session, its owner task and its tool listing.

    Connects lazily on first use, reconnects on the next use after the session
    died (never re-sending the failed request), and remembers the protocol era
    it negotiated so reconnects skip the probe. After a failed connect, further
    attempts wait (1 s, doubling up to 30 s); meanwhile the last error is raised.
    """

    def __init__(
        self, name: str, config: ServerConfig, *, default_timeout: float | None = DEFAULT_CALL_TIMEOUT
    ) -> None:
        self.name = name
        self.config = config
        self.default_timeout = default_timeout
        """Call timeout when neither the tool nor the server configuration sets one."""
        self.protocol_version: str | None = None
        self.connects = 0
        """Successful connects so far (1 while the first session lives)."""
        self.tools_version = 0
        """Bumped on every ``list_changed`` notification."""
        self._mode: str = config.protocol
        self._prior_discover: types.DiscoverResult | None = None
        self._session: _Session | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing = False
        self._retry_delay = _RETRY_MIN
        self._tools: list[types.Tool] | None = None
        self._tools_lock = asyncio.Lock()
        self._in_flight: set[InFlight] = set()
        self.held: dict[tuple[str, ...], Any] = {}
        """Handshake-era calls held open while a person answers (see ``elicitation.py``)."""
        self.transport: str | None = None
        """The transport of the live session: ``stdio``, ``http``, ``sse`` or ``in_process``."""
        self._exclusive = asyncio.Lock()
        self.logger = logging.getLogger(f"langgraph_mcp.server.{name}")
        """Where the server's log notifications go (its stderr: ``<this>.stderr``)."""

    # -- lifecycle -------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._session is not None and self._session.alive

    async def client(self) -> Client:
        """Return the live ``Client``, connecting (or reconnecting) if needed.

        Raises:
            MCPConnectionError: the server could not be started or reached.
        """
        return (await self._live_session()).client  # type: ignore[return-value]

    async def _live_session(self) -> _Session:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._adopt_loop(loop)
        if self._closing:
            raise MCPConnectionError(self.name, "the connection pool is closed")
        session = self._session
        if session is None or (session.ready.done() and not session.alive):
            failed = session is not None and session.ready.done() and session.ready.exception() is not None
            if failed and session is not None and time.monotonic() < session.retry_at:
                raise session.ready.exception()  # type: ignore[misc]
            session = self._start()
        await asyncio.shield(session.ready)
        return session

    def _adopt_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        old = self._loop
        if old is not None and not old.is_closed() and old.is_running():
            raise MCPConnectionError(
                self.name,
                "this connection is bound to another running event loop; use one pool per event loop",
            )
        # The old loop is gone (e.g. a second ``asyncio.run``) and its owner task with it.
        self._loop = loop
        self._session = None
        self._tools = None
        self._tools_lock = asyncio.Lock()
        self._exclusive = asyncio.Lock()
        self.held.clear()

    def _start(self) -> _Session:
        loop = asyncio.get_running_loop()
        session = _Session()
        self._session = session
        self._tools = None
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

    def _after_connect(self, session: _Session, ready: asyncio.Future[Client]) -> None:
        if ready.cancelled() or ready.exception() is not None:
            session.retry_at = time.monotonic() + self._retry_delay
            self._retry_delay = min(self._retry_delay * 2, _RETRY_MAX)
        else:
            self._retry_delay = _RETRY_MIN

    async def _own(self, session: _Session) -> None:
        try:
            async with AsyncExitStack() as stack:
                client = await self._enter(stack, session)
                session.client = client
                self.connects += 1
                self.protocol_version = client.protocol_version
                self._remember_era(client)
                await self._set_legacy_log_level(client)
                logger.debug("connected to MCP server %r (protocol %s)", self.name, self.protocol_version)
                async with anyio.create_task_group() as tg:
                    if self._wants_listen(client):
                        tg.start_soon(self._listen, client)
                    session.alive = True
                    if not session.ready.done():
                        session.ready.set_result(client)
                    await session.stop.wait()
                    session.alive = False
                    tg.cancel_scope.cancel()
        except BaseException as exc:  # the owner must record every way it can end
            session.alive = False
            if session.stderr is not None:
                await session.stderr.settle()
            if not session.ready.done():
                if isinstance(exc, asyncio.CancelledError) and self._closing:
                    session.ready.set_exception(
                        MCPConnectionError(self.name, "the connection pool is closed")
                    )
                else:
                    session.ready.set_exception(self._connect_error(exc, session))
            elif not isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
                logger.warning("MCP server %r: connection ended: %s", self.name, _describe(exc))
            if not isinstance(exc, Exception):
                raise
        finally:
            session.alive = False
            if session.stderr is not None:
                session.stderr.close()

    async def _enter(self, stack: AsyncExitStack, session: _Session) -> Client:
        config = self.config
        if isinstance(config, InProcessServerConfig):
            self.transport = "in_process"
            return await stack.enter_async_context(self._new_client(config.server, session))
        if isinstance(config, StdioServerConfig):
            self.transport = "stdio"
            tap = _StderrTap(self.name)
            session.stderr = tap
            await tap.start()
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=dict(config.env) or None,
                cwd=config.cwd,
                encoding=config.encoding,
            )
            try:
                transport = stdio_client(params, errlog=tap.writer)
                return await stack.enter_async_context(self._new_client(transport, session))
            finally:
                tap.spawned()
        http = httpx2.AsyncClient(
            headers=dict(config.headers) or None,
            auth=config.auth,
            timeout=httpx2.Timeout(_HTTP_TIMEOUT, read=_HTTP_READ_TIMEOUT),
        )
        await stack.enter_async_context(http)
        if isinstance(config, SSEServerConfig):
            self.transport = "sse"
            return await stack.enter_async_context(self._new_client(self._sse(config), session))
        assert isinstance(config, HTTPServerConfig)
        self.transport = "http"
        try:
            async with AsyncExitStack() as attempt:
                transport = streamable_http_client(config.url, http_client=http)
                client = await attempt.enter_async_context(self._new_client(transport, session))
                stack.push_async_exit(attempt.pop_all())
                return client
        except Exception as exc:
            if not (config.sse_fallback and _maybe_sse_only(exc) and await _serves_sse(http, config.url)):
                raise
        logger.info("MCP server %r serves the old HTTP+SSE transport; using it", self.name)
        self.transport = "sse"
        return await stack.enter_async_context(self._new_client(self._sse(config), session))

    def _sse(self, config: HTTPServerConfig | SSEServerConfig) -> Any:
        read_timeout = config.sse_read_timeout if isinstance(config, SSEServerConfig) else _HTTP_READ_TIMEOUT
        return sse_client(
            config.url,
            headers=dict(config.headers) or None,
            timeout=_HTTP_TIMEOUT,
            sse_read_timeout=read_timeout,
            auth=config.auth,
        )

    def _new_client(self, target: Any, session: _Session) -> Client:
        if not isinstance(target, (MCPServer, Server)):
            target = _watched(target, session.end)
        return Client(
            target,
            mode=self._mode,
            prior_discover=self._prior_discover,
            client_info=_client_info(),
            message_handler=self._on_message,
            logging_callback=self._on_log,
            elicitation_callback=self._on_elicit,
            sampling_callback=self._on_sample,
            list_roots_callback=self._on_roots,
            cache=None,
        )

    def _remember_era(self, client: Client) -> None:
        if self._mode != "auto":
            return
        if client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            self._mode = "legacy"
        elif client.session.discover_result is not None:
            self._mode = client.protocol_version
            self._prior_discover = client.session.discover_result

    async def _set_legacy_log_level(self, client: Client) -> None:
        """Handshake-era servers take one level per session (2026-07-28: per request)."""
        level = self.config.log_level
        if level is None or client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                with anyio.fail_after(self.config.connect_timeout):
                    await client.set_logging_level(level)
        except (MCPError, TimeoutError) as exc:  # many servers do not implement logging/setLevel
            logger.debug("MCP server %r: logging/setLevel %s refused: %s", self.name, level, _describe(exc))

    def _connect_error(self, exc: BaseException, session: _Session) -> MCPConnectionError:
        reason = _describe(exc)
        config = self.config
        leaves = _leaves(exc)
        if isinstance(config, StdioServerConfig):
            if any(isinstance(leaf, FileNotFoundError) for leaf in leaves):
                reason = f"command {config.command!r} not found"
            elif any(isinstance(leaf, MCPError) and leaf.code == types.CONNECTION_CLOSED for leaf in leaves):
                reason = "the server process exited before completing the MCP handshake"
        elif isinstance(config, (HTTPServerConfig, SSEServerConfig)):
            reason = f"cannot connect to {config.url}: {reason}"
        return MCPConnectionError(self.name, reason + session.stderr_hint())

    async def aclose(self) -> None:
        """Stop the owner task and wait for the session (and any child process) to end."""
        self._closing = True
        session = self._session
        if session is None or session.owner is None or session.owner.done():
            return
        owner = session.owner
        if owner.get_loop() is not asyncio.get_running_loop():
            owner.get_loop().call_soon_threadsafe(owner.cancel)
            return
        session.stop.set()
        if not session.ready.done():
            owner.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(owner), _CLOSE_TIMEOUT)
        except (TimeoutError, asyncio.CancelledError):
            owner.cancel()
        except Exception:  # already logged by the owner
            pass

    # -- notifications ----------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._tools_changed()
        elif isinstance(message, Exception):
            logger.debug("MCP server %r: transport reported %r", self.name, message)

    def _attribute(self) -> InFlight | None:
        """The in-flight call a server notification or request belongs to, if that can be told:
        the SDK ran this callback in that call's context (in-process, streamable HTTP), or it is
        the only call in flight that is not itself waiting for an answer."""
        record = CURRENT_CALL.get()
        if record is not None and record in self._in_flight:
            return record
        active = [r for r in self._in_flight if r.request_sink is None or not r.request_sink.waiting]
        return active[0] if len(active) == 1 else None

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        _log_to_python(self.logger, params)
        record = self._attribute()
        if record is not None and record.log_sink is not None:
            await record.log_sink.on_log(params)

    def _unattributed(self, what: str) -> types.ErrorData:
        logger.warning(
            "MCP server %r sent %s that cannot be tied to one tool call (%d in flight); refusing it",
            self.name,
            what,
            len(self._in_flight),
        )
        return types.ErrorData(
            code=types.INVALID_REQUEST,
            message=f"{what} cannot be tied to one of this client's tool calls; refused",
        )

    async def _on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        record = self._attribute()
        if record is None or record.request_sink is None:
            if self.config.elicitation == "decline":
                return types.ElicitResult(action="decline")
            return self._unattributed("an elicitation request")
        return await record.request_sink.on_elicit(params)

    async def _on_sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        record = self._attribute()
        if record is None or record.request_sink is None:
            return self._unattributed("a sampling request")
        return await record.request_sink.on_sample(params)

    async def _on_roots(self, context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        return await self.list_roots()

    async def list_roots(self) -> types.ListRootsResult:
        """The roots configured for this server."""
        return types.ListRootsResult(roots=[types.Root.model_validate(r) for r in self.config.roots])

    def exclusive_lock(self) -> asyncio.Lock | None:
        """A lock that lets one handshake-era call at a time be active, where a request from the
        server could otherwise not be tied to its call (stdio and SSE carry no caller context)."""
        if self.transport in ("stdio", "sse") and self.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            return self._exclusive
        return None

    def _wants_listen(self, client: Client) -> bool:
        if client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            return False
        caps = client.server_capabilities.tools
        return caps is not None and bool(caps.list_changed)

    async def _listen(self, client: Client) -> None:
        try:
            async with client.listen(tools_list_changed=True) as sub:
                async for _event in sub:
                    self._tools_changed()
        except Exception as exc:  # a lost subscription must not end the session
            logger.debug("MCP server %r: tools/list_changed subscription ended: %s", self.name, exc)

    def _tools_changed(self) -> None:
        self._tools = None
        self.tools_version += 1

    # -- requests ---------------------------------------------------------

    async def refresh_tools(self) -> list[types.Tool]:
        """Drop the cached listing and list again."""
        self._tools_changed()
        return await self.list_tools()

    async def list_tools(self) -> list[types.Tool]:
        """The server's tools (every page), cached until ``list_changed`` or a reconnect.

        Raises:
            MCPConnectionError: the server could not be reached or did not answer.
        """
        session = await self._live_session()
        if self._tools is not None:
            return self._tools
        async with self._tools_lock:
            if self._tools is not None:
                return self._tools
            client = session.client
            assert client is not None
            version = self.tools_version
            tools: list[types.Tool] = []
            cursor: str | None = None
            try:
                for _ in range(_MAX_PAGES):
                    with anyio.fail_after(self.config.connect_timeout):
                        page = await client.list_tools(cursor=cursor)
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
            except (
                MCPError,
                TimeoutError,
                OSError,
                anyio.ClosedResourceError,
                anyio.BrokenResourceError,
            ) as exc:
                if isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED:
                    session.end()
                raise MCPConnectionError(
                    self.name, f"tools/list failed: {_describe(exc)}" + session.stderr_hint()
                ) from exc
            if version == self.tools_version and session is self._session:
                self._tools = tools
            return tools

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None,
        progress_callback: ProgressFnT | None = None,
        meta: types.RequestParamsMeta | None = None,
        log_sink: LogSink | None = None,
        request_sink: RequestSink | None = None,
        driver: Driver | None = None,
    ) -> types.CallToolResult:
        """Send ``tools/call`` over the shared session.

        ``log_sink`` receives the server's log notifications that can be tied to
        this call, ``request_sink`` its handshake-era server-to-client requests. With
        a ``log_level`` configured, 2026-07-28 servers are asked for logs at that
        level on this request. ``driver(client, send_kwargs)`` replaces the plain
        ``client.call_tool`` (for calls that answer ``InputRequiredResult`` rounds); a
        driver registers the call itself with :meth:`track`.

        Raises:
            MCPConnectionError: cannot connect, or the connection died mid-call
                (the next call reconnects).
            MCPError: the server answered with a JSON-RPC error (``REQUEST_TIMEOUT``
                when ``timeout`` elapsed; the server has been told to cancel).
            RuntimeError: the result broke the tool's declared output schema.
        """
        session = await self._live_session()
        client = session.client
        assert client is not None
        lost = f"the connection was lost during the call to {name!r}"
        level = self.config.log_level
        if level is not None and client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            meta = cast(types.RequestParamsMeta, {**(meta or {}), _LOG_LEVEL_META: level})
        send_kwargs: dict[str, Any] = {
            "read_timeout_seconds": timeout,
            "progress_callback": progress_callback,
            "meta": meta,
        }
        try:
            if driver is not None:
                return await driver(client, send_kwargs)
            with self.track(InFlight(log_sink, request_sink)):
                return await client.call_tool(name, dict(arguments), **send_kwargs)
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                session.end()
                if session.stderr is not None:
                    await session.stderr.settle()
                raise MCPConnectionError(self.name, lost + session.stderr_hint()) from exc
            raise
        except _TRANSPORT_ERRORS as exc:
            session.end()
            raise MCPConnectionError(self.name, f"{lost}: {_describe(exc)}") from exc
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # we were cancelled: let it propagate
            # The SDK cancelled the request because its transport failed under it.
            session.end()
            raise MCPConnectionError(self.name, lost) from None

    @contextlib.contextmanager
    def track(self, record: InFlight) -> Iterator[None]:
        """Count ``record`` as in flight (for attributing server messages) while the block runs."""
        token = CURRENT_CALL.set(record)
        self._in_flight.add(record)
        try:
            yield
        finally:
            CURRENT_CALL.reset(token)
            self._in_flight.discard(record)


def _maybe_sse_only(exc: BaseException) -> bool:
    """Did a streamable-HTTP handshake fail the way an old SSE-only server fails it?"""
    for leaf in _leaves(exc):
        if isinstance(leaf, MCPError) and leaf.code in (types.METHOD_NOT_FOUND, types.INTERNAL_ERROR):
            return True
        if isinstance(leaf, httpx2.HTTPStatusError) and leaf.response.status_code in (400, 404, 405):
            return True
    return False


async def _serves_sse(http: httpx2.AsyncClient, url: str) -> bool:
    """Does ``GET url`` open an SSE stream (the old transport's endpoint)?"""
    try:
        with anyio.fail_after(_HTTP_TIMEOUT):
            async with http.stream("GET", url, headers={"Accept": "text/event-stream"}) as response:
                kind = response.headers.get("content-type", "")
                return response.status_code == 200 and kind.startswith("text/event-stream")
    except (httpx2.HTTPError, TimeoutError):
        return False


class MCPPool:
    """Long-lived sessions to a set of MCP servers.

    ``connections`` takes every shape :func:`~langgraph_mcp.load_connections`
    accepts. Sessions open lazily on first use (or all at once, concurrently,
    with :meth:`start`) and stay open until :meth:`aclose` / ``async with`` exit.

    ``on_connection_error`` decides what happens when servers cannot be
    reached while tools are collected: a failed server never takes the others
    down; with ``"raise"`` (default) an error is raised only when *every*
    server failed, otherwise the failed servers' tools are left out with a
    warning; with ``"warn"`` nothing is raised.

    ``default_timeout`` bounds each tool call (seconds, ``None`` for no limit)
    unless the tool or its server's configuration sets a limit of its own.

    A pool is bound to the event loop it first connects on.
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
        self.connections: dict[str, ServerConnection] = {
            name: ServerConnection(name, cfg, default_timeout=default_timeout)
            for name, cfg in self.servers.items()
        }

    def __repr__(self) -> str:
        return f"MCPPool(servers={list(self.servers)})"

    def connection(self, server: str) -> ServerConnection:
        try:
            return self.connections[server]
        except KeyError:
            raise KeyError(f"no MCP server named {server!r}; configured: {list(self.connections)}") from None

    async def start(self) -> None:
        """Connect every server now, concurrently; apply ``on_connection_error``."""
        await self.list_all_tools()

    async def list_all_tools(self) -> dict[str, list[types.Tool]]:
        """Every reachable server's tool listing, in configuration order."""
        names = list(self.connections)
        results = await asyncio.gather(
            *(self.connections[n].list_tools() for n in names), return_exceptions=True
        )
        listings: dict[str, list[types.Tool]] = {}
        failures: list[BaseException] = []
        for name, result in zip(names, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                failures.append(result)
                continue
            listings[name] = result
        if failures:
            message = "\n".join(str(f) for f in failures)
            if self.on_connection_error == "raise" and not listings:
                raise (
                    failures[0]
                    if len(failures) == 1
                    else MCPConnectionError(
                        ", ".join(n for n in names if n not in listings),
                        "no server could be reached:\n" + message,
                    )
                )
            for failure in failures:
                logger.warning("%s\nIts tools are left out until it can be reached.", failure)
        return listings

    def tools_version(self) -> tuple[tuple[int, int], ...]:
        """Changes whenever any server's listing may have changed."""
        return tuple((c.tools_version, c.connects) for c in self.connections.values())

    async def aclose(self) -> None:
        """Close every session and wait for stdio children to exit."""
        await asyncio.gather(*(c.aclose() for c in self.connections.values()))

    async def __aenter__(self) -> MCPPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
