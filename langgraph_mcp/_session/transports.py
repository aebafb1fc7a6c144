"""Opening a server's transport and the SDK ``Client`` on top of it.

* stdio (:func:`~langgraph_mcp._session.stdio.stdio_transport`): the child gets the SDK's safe
  default environment plus its configured ``env``; its stderr is forwarded line by line, without the
  server's secrets, to the logger ``langgraph_mcp.server.<name>.stderr`` and its last lines are kept
  for error messages; the end of its stdout ends the session at once.
* streamable HTTP, falling back to the old HTTP+SSE transport when the server only speaks that.
* SSE.
* in-process (an ``MCPServer`` or low-level ``Server`` object).

HTTP transports get no read timeout: a request may run as long as its call's own limit allows
(see :class:`~langgraph_mcp._session.clock.CallClock`), and an idle notification stream may stay
open for hours. Connecting, writing and pool waits are bounded (30 s). An :class:`HTTPWatch` sees
every HTTP response: the SDK turns a 401 or 403 into a generic JSON-RPC error (or, over SSE, a dead
session), so the status is kept for the session layer to say that the server refused the
credentials. Streamable HTTP takes a message (one SSE event, or a JSON response body) of up to
``MAX_MESSAGE_BYTES`` (256 MiB), as stdio does; the SDK's default, 1 MiB, failed larger tool results
as a lost connection. It runs the SDK's transport with its own response reader
(:class:`~langgraph_mcp._compat.mcp_http.LeanStreamableHTTP`): a large result is read as bytes and
parsed once, at about twice its size in memory (the SDK's reader peaked at about 6x). (The SDK's old
SSE transport keeps its 1 MiB.)

A server's streamable-HTTP sessions (its shared one, and each thread's or user's) share one pool of
HTTP connections per event loop (:class:`HTTPPool`, made by the shared connection): each session
keeps an ``httpx2.AsyncClient`` of its own (its credentials, headers and response hooks), over a
transport it borrows and does not close. A thousand signed-in users then keep a few idle sockets to
the server, not a few each. The old HTTP+SSE transport (and the fallback to it) keeps a client and
connections of its own per session.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any, Literal, Self, TextIO, TypeAlias, cast

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import MCP_SESSION_ID
from mcp.shared.exceptions import MCPError

from langgraph_mcp._compat.mcp_http import cap_error_body, environment_proxies, streamable_http
from langgraph_mcp._oauth.deployauth import deployment_auth
from langgraph_mcp._session import grace
from langgraph_mcp._session.hints import HTTPAnswer
from langgraph_mcp._session.process import ServerProcess
from langgraph_mcp._session.stdio import MAX_MESSAGE_BYTES, StdioParams, stdio_transport
from langgraph_mcp._session.wire import WireTap
from langgraph_mcp._support.redact import Redactor
from langgraph_mcp.config import (
    HTTPServerConfig,
    InProcessServerConfig,
    ServerConfig,
    SSEServerConfig,
    StdioServerConfig,
)

__all__ = [
    "ClientFactory",
    "IDLE_CONNECTIONS",
    "HTTPPool",
    "HTTPWatch",
    "Opened",
    "StderrTap",
    "TransportKind",
    "describe",
    "http_statuses",
    "leaves",
    "open_client",
    "refusal",
    "start_http_statuses",
    "stop_http_statuses",
]

logger = logging.getLogger("langgraph_mcp.pool")

TransportKind: TypeAlias = Literal["stdio", "http", "sse", "in_process"]
ClientFactory: TypeAlias = Callable[[Any], Client]
"""Builds the SDK ``Client`` for a transport target (a transport context manager or a server)."""

_STDERR_TAIL = 20

IDLE_CONNECTIONS = 8
"""Idle HTTP connections a server's sessions on one event loop keep open for their next requests
(httpx keeps 20), each for at most 5 s (one pool for all of them: see :class:`HTTPPool`). Calls
made at once open a connection each; once they end, only this many wait (the pool checks every
idle connection's socket on each request)."""
_LIMITS = httpx2.Limits(max_connections=None, max_keepalive_connections=IDLE_CONNECTIONS)
"""No limit on connections in use: each call in flight holds one, and a request that waited for
one past ``grace.HTTP`` (httpx stops at 100) ended the session and every call on it."""
_REFUSALS = frozenset({401, 403})
_statuses: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "langgraph_mcp_http_statuses", default=None
)


@contextmanager
def http_statuses() -> Iterator[list[int]]:
    """The HTTP statuses answering the requests sent from this context, in order (the SDK sends
    each request from a task that copies the sender's context)."""
    seen, token = start_http_statuses()
    try:
        yield seen
    finally:
        stop_http_statuses(token)


def start_http_statuses() -> tuple[list[int], contextvars.Token[list[int] | None]]:
    """:func:`http_statuses` without a block: its list, and the token that
    :func:`stop_http_statuses` takes where the block would end."""
    seen: list[int] = []
    return seen, _statuses.set(seen)


def stop_http_statuses(token: contextvars.Token[list[int] | None]) -> None:
    _statuses.reset(token)


def refusal(statuses: list[int]) -> int | None:
    """401 or 403 when the last response was one (a refusal followed by a success, as after an
    OAuth refresh, is none)."""
    return statuses[-1] if statuses and statuses[-1] in _REFUSALS else None


def server_failure(statuses: list[int]) -> int | None:
    """The 5xx status of the last response, if it was one: the server failed the request at the
    HTTP level (it is shutting down, restarting, or overloaded), not with an answer of its own."""
    return statuses[-1] if statuses and statuses[-1] >= 500 else None


class HTTPWatch:
    """Sees every HTTP response of one session (an httpx2 response hook): records the statuses
    for :func:`http_statuses` and the last refusal (for a failed connect); over SSE, a message
    POST that fails ends the session (the SDK's SSE writer stops for good, so the requests
    waiting on it would otherwise wait for their timeout)."""

    def __init__(self, on_broken: Callable[[], None]) -> None:
        self.refused: int | None = None
        self.last: HTTPAnswer | None = None
        """The latest response, for what a failed connect says (:func:`not_mcp`)."""
        self._on_broken = on_broken

    async def on_response(self, response: httpx2.Response) -> None:
        status = response.status_code
        if response.request.method == "POST":  # (a GET stream the server does not offer is no failure)
            self._remember(response)
        seen = _statuses.get()
        if seen is not None:
            seen.append(status)
        if status in _REFUSALS:
            self.refused = status
        elif status < 400:
            self.refused = None

    def _remember(self, response: httpx2.Response) -> None:
        self.last = HTTPAnswer(
            response.request.method,
            response.status_code,
            response.reason_phrase,
            response.headers.get("content-type", ""),
        )

    async def on_sse_response(self, response: httpx2.Response) -> None:
        await self.on_response(response)
        if response.request.method != "POST":
            self._remember(response)
        if response.request.method == "POST" and response.status_code >= 400:
            self._on_broken()

    def client_factory(self) -> Any:
        """An SDK ``McpHttpClientFactory`` for ``sse_client`` whose clients report here."""

        def make(
            headers: dict[str, str] | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(
                headers=headers,
                timeout=timeout if timeout is not None else httpx2.Timeout(grace.HTTP, read=None),
                auth=auth,
                limits=_LIMITS,
                event_hooks={"response": [self.on_sse_response]},
            )

        return make


_CLOSE_POOL = 5.0
"""Seconds closing a pool's connections may take (each is closed at once; a safety bound)."""


class _Borrowed(httpx2.AsyncBaseTransport):
    """A session's view of a pooled transport: requests go to it, closing leaves it open (the
    server's other sessions use it; its :class:`HTTPPool` closes it)."""

    def __init__(self, pooled: httpx2.AsyncBaseTransport) -> None:
        self._pooled = pooled

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self._pooled.handle_async_request(request)

    async def aclose(self) -> None:
        pass


class _LoopTransports:
    """One event loop's pooled transports: the direct one, and one per proxy the environment
    names (``HTTP_PROXY``, ``NO_PROXY`` and the like, as an ``AsyncClient`` made without a
    transport would read them)."""

    def __init__(self) -> None:
        self.direct = httpx2.AsyncHTTPTransport(limits=_LIMITS)
        self.proxies: dict[str, httpx2.AsyncHTTPTransport | None] = {
            pattern: None if url is None else httpx2.AsyncHTTPTransport(limits=_LIMITS, proxy=url)
            for pattern, url in environment_proxies().items()
        }
        self.users = 0

    def client_options(self) -> dict[str, Any]:
        """What a session's ``AsyncClient`` is made with to send over these transports."""
        mounts = {key: None if proxy is None else _Borrowed(proxy) for key, proxy in self.proxies.items()}
        return {"transport": _Borrowed(self.direct), "mounts": mounts}

    async def aclose(self) -> None:
        # Shielded: a session ending because its task was cancelled still closes the sockets.
        with anyio.move_on_after(_CLOSE_POOL, shield=True):
            for transport in [self.direct, *self.proxies.values()]:
                if transport is not None:
                    await transport.aclose()


class HTTPPool:
    """The HTTP connections of one server's streamable-HTTP sessions: one pool per event loop
    (httpx transports are bound to the loop they were used on), made on that loop's first use.

    Each session borrows it for its whole life (:meth:`borrow`); a session that ends or
    reconnects leaves it open for the others. :meth:`aclose` (the server's shared connection
    closing for good) closes the pools no session borrows; the others close when their last
    session ends. A loop's pool is closed on that loop (from another thread, on it while it
    runs); the pool of a loop that was closed is dropped with it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loops: dict[asyncio.AbstractEventLoop, _LoopTransports] = {}
        self._closed = False

    def pools(self) -> int:
        """Event loops with a pool open."""
        with self._lock:
            return len(self._loops)

    @asynccontextmanager
    async def borrow(self) -> AsyncIterator[dict[str, Any]]:
        """The running loop's pool, held for the block: the options a session's
        ``httpx2.AsyncClient`` is made with (its ``transport`` and ``mounts``)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            for gone in [other for other in self._loops if other.is_closed()]:
                del self._loops[gone]  # its tasks can never run: nothing can close it now
            pooled = self._loops.get(loop)
        if pooled is None:
            made = _LoopTransports()  # (reads certificates: made outside the lock)
            with self._lock:
                pooled = self._loops.setdefault(loop, made)
        with self._lock:
            pooled.users += 1
        try:
            yield pooled.client_options()
        finally:
            with self._lock:
                pooled.users -= 1
                last = self._closed and not pooled.users and self._loops.get(loop) is pooled
                if last:
                    del self._loops[loop]
            if last:
                await pooled.aclose()

    async def aclose(self) -> None:
        """Close the pools no session borrows now; the others close when their last session
        ends. Later sessions get a pool of their own, closed when they end."""
        here = asyncio.get_running_loop()
        with self._lock:
            self._closed = True
            idle = [(loop, pooled) for loop, pooled in self._loops.items() if not pooled.users]
            for loop, _ in idle:
                del self._loops[loop]
        for loop, pooled in idle:
            if loop is here:
                await pooled.aclose()
            elif loop.is_running():
                try:
                    future = asyncio.run_coroutine_threadsafe(pooled.aclose(), loop)
                except RuntimeError:  # closed meanwhile
                    continue
                await asyncio.wait({asyncio.wrap_future(future)}, timeout=_CLOSE_POOL)
            # An idle or closed loop cannot run its pool's close: its sockets end with the loop.


def leaves(exc: BaseException) -> list[BaseException]:
    """Flatten the ExceptionGroups anyio wraps connection failures in."""
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for inner in exc.exceptions:
            out.extend(leaves(inner))
        return out
    return [exc]


def describe(exc: BaseException) -> str:
    """A one-line description of a failure, without tracebacks."""
    parts = []
    for leaf in leaves(exc):
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


class StderrTap:
    """Forwards a stdio child's stderr to logging and keeps its last lines, each without the
    server's secrets (``redact``): a server may print its own ``env``."""

    def __init__(self, server: str, redact: Redactor) -> None:
        self.redact = redact
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
            line = self.redact(raw.decode("utf-8", "replace").rstrip())
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

    def hint(self) -> str:
        """The last lines of the child's stderr, for an error message ("" if none)."""
        if not self.tail:
            return ""
        return "\nlast lines of the server's stderr:\n  " + "\n  ".join(self.tail)

    def close(self) -> None:
        self.spawned()
        if self._transport is not None:
            self._transport.close()
        else:
            self._read_file.close()


class _Delegating:
    """A stream that delegates to a transport's own (closing, entering, anything else)."""

    def __init__(self, inner: Any, tap: WireTap) -> None:
        self._inner = inner
        self._tap = tap

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result


class _WatchedReadStream(_Delegating):
    """A transport's read stream: each message is shown to the session's
    :class:`~langgraph_mcp._session.wire.WireTap`, and its end is reported.

    A stdio server that exits does not end the ``Client`` context on its own; the end of its
    stdout is the earliest sign, so it ends the session here.
    """

    def __init__(self, inner: Any, on_end: Callable[[], None], tap: WireTap) -> None:
        super().__init__(inner, tap)
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            message = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise
        self._tap.received(message)
        return message

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            message = await self._inner.__anext__()
        except StopAsyncIteration:
            self._on_end()
            raise
        self._tap.received(message)
        return message


class _WatchedWriteStream(_Delegating):
    """A transport's write stream: each message is shown to the session's
    :class:`~langgraph_mcp._session.wire.WireTap`, in the task that sends it."""

    async def send(self, message: Any) -> None:
        self._tap.written(message)
        await self._inner.send(message)


@asynccontextmanager
async def _watched(
    transport: Any, on_end: Callable[[], None], tap: WireTap
) -> AsyncIterator[tuple[Any, Any]]:
    async with transport as (read, write):
        yield _WatchedReadStream(read, on_end, tap), _WatchedWriteStream(write, tap)


class Opened:
    """A client entered on an exit stack, what it runs over, and its server process (stdio)."""

    def __init__(
        self,
        client: Client,
        transport: TransportKind,
        process: ServerProcess | None = None,
        wire: WireTap | None = None,
    ) -> None:
        self.client = client
        self.transport = transport
        self.process = process
        self.wire = wire
        """What crossed the transport (``None`` in process: nothing crosses a wire)."""


async def open_client(
    stack: AsyncExitStack,
    name: str,
    config: ServerConfig,
    make_client: ClientFactory,
    *,
    on_end: Callable[[], None],
    stderr: StderrTap | None,
    on_expired: Callable[[], None] | None = None,
    watch: HTTPWatch | None = None,
    http_pool: HTTPPool | None = None,
) -> Opened:
    """Open ``config``'s transport and enter a ``Client`` on it (both closed by ``stack``).

    ``on_end`` is called when the transport's read stream ends; ``stderr`` (stdio only) receives
    the child's stderr; ``watch`` (HTTP and SSE) sees every HTTP response. ``on_expired``
    (streamable HTTP) is called when the server answers a request that carries a session id with
    HTTP 404: the server no longer knows the session (it restarted, or expired it), and the spec
    says to open a new one. ``http_pool`` (streamable HTTP): the server's connections, borrowed for
    the session's life; without it, the session keeps connections of its own.
    """

    def client_for(target: Any, wire: WireTap) -> Client:
        return make_client(_watched(target, on_end, wire))

    if isinstance(config, InProcessServerConfig):
        return Opened(await stack.enter_async_context(make_client(config.server)), "in_process")
    if isinstance(config, StdioServerConfig):
        assert stderr is not None
        params = StdioParams(
            command=config.command,
            args=config.args,
            env=config.env,
            cwd=config.cwd,
            encoding=config.encoding,
        )
        spawned: list[ServerProcess] = []
        try:
            child = stdio_transport(
                params,
                server=name,
                redact=stderr.redact,
                errlog=stderr.writer,
                on_spawn=lambda pid: spawned.append(ServerProcess(pid)),
            )
            try:
                wire = WireTap()
                client = await stack.enter_async_context(client_for(child, wire))
            except BaseException:
                for process in spawned:  # the transport has ended it; only the handle is left
                    process.close()
                raise
            return Opened(client, "stdio", spawned[0], wire)
        finally:
            stderr.spawned()
    if watch is None:
        watch = HTTPWatch(on_end)
    if isinstance(config, SSEServerConfig):
        wire = WireTap()
        return Opened(
            await stack.enter_async_context(client_for(_sse(config, watch), wire)), "sse", wire=wire
        )
    assert isinstance(config, HTTPServerConfig)
    auth = deployment_auth(config) or config.auth

    async def session_gone(response: httpx2.Response) -> None:
        if (
            response.status_code == 404
            and on_expired is not None
            and response.request.method == "POST"
            and MCP_SESSION_ID in response.request.headers
        ):
            on_expired()

    # Borrowed before the client is entered: the client is closed first, then the loan ends.
    pooled = {} if http_pool is None else await stack.enter_async_context(http_pool.borrow())
    http = httpx2.AsyncClient(
        headers=dict(config.headers) or None,
        auth=auth,
        timeout=httpx2.Timeout(grace.HTTP, read=None),
        limits=_LIMITS,
        event_hooks={"response": [watch.on_response, session_gone, cap_error_body]},
        **pooled,
    )
    await stack.enter_async_context(http)
    try:
        async with AsyncExitStack() as attempt:
            transport = streamable_http(config.url, http_client=http, max_message_bytes=MAX_MESSAGE_BYTES)
            wire = WireTap(http=True)
            client = await attempt.enter_async_context(client_for(transport, wire))
            stack.push_async_exit(attempt.pop_all())
            return Opened(client, "http", wire=wire)
    except Exception as exc:
        if watch.refused is not None:  # refused, not SSE-only: asking again would not help
            raise
        if not (config.sse_fallback and _maybe_sse_only(exc) and await _serves_sse(http, config.url)):
            raise
    logger.info("MCP server %r serves the old HTTP+SSE transport; using it", name)
    wire = WireTap()
    return Opened(
        await stack.enter_async_context(client_for(_sse(config, watch, auth), wire)), "sse", wire=wire
    )


def _sse(config: HTTPServerConfig | SSEServerConfig, watch: HTTPWatch, auth: Any = None) -> Any:
    read_timeout = config.sse_read_timeout if isinstance(config, SSEServerConfig) else None
    return sse_client(
        config.url,
        headers=dict(config.headers) or None,
        timeout=grace.HTTP,
        # None: an idle event stream is never cut (the SDK's default cuts it after 300 s).
        sse_read_timeout=cast(float, read_timeout),
        httpx_client_factory=watch.client_factory(),
        auth=auth if auth is not None else config.auth,
    )


def _maybe_sse_only(exc: BaseException) -> bool:
    """Did a streamable-HTTP handshake fail the way an old SSE-only server fails it?"""
    for leaf in leaves(exc):
        if isinstance(leaf, MCPError) and leaf.code in (types.METHOD_NOT_FOUND, types.INTERNAL_ERROR):
            return True
        if isinstance(leaf, httpx2.HTTPStatusError) and leaf.response.status_code in (400, 404, 405):
            return True
    return False


async def _serves_sse(http: httpx2.AsyncClient, url: str) -> bool:
    """Does ``GET url`` open an SSE stream (the old transport's endpoint)?"""
    try:
        with anyio.fail_after(grace.HTTP):
            async with http.stream("GET", url, headers={"Accept": "text/event-stream"}) as response:
                kind = response.headers.get("content-type", "")
                return response.status_code == 200 and kind.startswith("text/event-stream")
    except (httpx2.HTTPError, TimeoutError):
        return False
