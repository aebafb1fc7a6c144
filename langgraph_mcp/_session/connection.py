"""One server's connection: its session, tool listing, and the requests sent over it.

A :class:`ServerConnection` connects lazily, reconnects after its session died (see
``owner.py``), remembers the protocol era it negotiated so reconnects skip the probe, caches the
server's tool listing until ``list_changed`` or a reconnect, and sends ``tools/call`` requests.
:meth:`ServerConnection.send_call` is the one place where what the SDK and the transport raise
becomes this package's errors (``errors.py``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any, Literal, TypeVar, cast

import anyio
import httpx2
import mcp_types as types
from jsonschema.exceptions import SchemaError, best_match
from jsonschema.protocols import Validator
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import TypeAdapter, ValidationError
from referencing.exceptions import Unresolvable

from langgraph_mcp._compat.langgraph import graph_run_key
from langgraph_mcp._compat.mcp import absorb_tool_listing, call_headers, send_unchecked
from langgraph_mcp._schema import schema_validator, vet_tool
from langgraph_mcp._session.clock import CallClock
from langgraph_mcp._session.limits import FairLimiter, Slot
from langgraph_mcp._session.owner import CLOSE_TIMEOUT, Session, SessionOwner
from langgraph_mcp._session.process import ServerProcess
from langgraph_mcp._session.routing import CallSink, Router
from langgraph_mcp._session.transports import (
    TransportKind,
    describe,
    http_statuses,
    refusal,
    server_failure,
)
from langgraph_mcp._session.watch import ResourceWatch
from langgraph_mcp.config import DEFAULT_CALL_TIMEOUT, ServerConfig
from langgraph_mcp.errors import (
    OUTCOME_UNKNOWN,
    MCPAuthenticationError,
    MCPConnectionError,
    MCPProtocolError,
    MCPServerError,
    MCPTimeoutError,
)

__all__ = ["CLIENT_NAME", "LISTINGS", "Era", "Listing", "LoopScope", "Round", "ServerConnection"]

logger = logging.getLogger("langgraph_mcp.pool")

CLIENT_NAME = "langgraph-mcp"
Era = Literal["2026-07-28", "legacy"]
MODERN: Era = "2026-07-28"
Round = types.CallToolResult | types.InputRequiredResult
"""What one ``tools/call`` request returns: the result, or a request for input (2026-07-28)."""

_ROUND: TypeAdapter[Round] = TypeAdapter(types.CallToolResult | types.InputRequiredResult)
_T = TypeVar("_T")

Listing = Literal["resources", "resource_templates", "prompts"]
LISTINGS: dict[Listing, tuple[str, str, type[Any]]] = {
    "resources": ("resources/list", "resources", types.Resource),
    "resource_templates": ("resources/templates/list", "resourceTemplates", types.ResourceTemplate),
    "prompts": ("prompts/list", "prompts", types.Prompt),
}
"""What each listing is called on the wire: its method, its answer's key, one entry's model."""
_MAX_PAGES = 1000
_LOG_LEVEL_META = "io.modelcontextprotocol/logLevel"
_TRANSPORT_ERRORS = (anyio.ClosedResourceError, anyio.BrokenResourceError, httpx2.TransportError)
# MCP's (syslog's) eight levels on Python's standard five: handlers, filters and formatters
# know only those. The three without a Python name keep theirs in the text.
_PYTHON_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
_UNNAMED_LEVELS = frozenset({"notice", "alert", "emergency"})
_CLOSE_GRACE = 2.0
_TRANSPORT_HEADERS = frozenset(
    {"accept", "connection", "content-length", "content-type", "host", "last-event-id", "transfer-encoding"}
)


def _client_info() -> types.Implementation:
    from langgraph_mcp import __version__

    return types.Implementation(name=CLIENT_NAME, version=__version__)


_SDK_HTTP_FAILURE = "Server returned an error response"
"""What the SDK's streamable-HTTP client answers a request with when the server replied with an
HTTP error status and no JSON-RPC error."""


_MAX_UNSENT = 3
_LISTEN_TRIES = 3
_LISTEN_RETRY = 0.5
_LISTEN_PAUSE = 30.0
_LISTEN_STABLE = 5.0


class _NotSent(Exception):
    """The session ended while a call waited for its turn to be sent: it may go on a new one."""


class _SessionExpired(Exception):
    """A request was rejected because the server no longer knows the session: it never ran."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ServerConnection:
    """One server's long-lived session, its tool listing, and the calls sent over it.

    ``fallback`` answers the server's requests that belong to no call (see ``routing.py``).
    ``default_timeout`` bounds a call when neither the tool nor the configuration sets a limit.
    Sessions are bound to an event loop, so a connection keeps one session per event loop that
    uses it (see :class:`LoopScope`): one in the usual single-loop process; one per run loop where
    runs get loops of their own (LangGraph server's ``BG_JOB_ISOLATED_LOOPS``). A loop's session
    is stopped once that loop is closed, and :meth:`aclose` stops them all.
    """

    def __init__(
        self,
        name: str,
        config: ServerConfig,
        *,
        fallback: CallSink,
        default_timeout: float | None = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        self.name = name
        self.config = config
        self.default_timeout = default_timeout
        self.logger = logging.getLogger(f"langgraph_mcp.server.{name}")
        """Where the server's log notifications go (its stderr: ``<this>.stderr``)."""
        self.tools_version = 0
        """Bumped whenever the listing may have changed (``list_changed``, reconnect)."""
        self.protocol_version: str | None = None
        self._fallback = fallback
        self._mode: str = config.protocol
        self._prior_discover: types.DiscoverResult | None = None
        self._scopes: dict[asyncio.AbstractEventLoop, LoopScope] = {}
        self._scopes_lock = threading.Lock()
        self._last: LoopScope | None = None
        self._retired_connects = 0
        self._closing = False
        self._tools: list[types.Tool] | None = None
        self._by_name: dict[str, types.Tool] = {}
        self._validators: dict[str, tuple[types.Tool, Validator | None]] = {}
        self._lists: dict[Listing, list[Any]] = {}
        self._list_versions: dict[Listing, int] = dict.fromkeys(LISTINGS, 0)
        self._warned_headers: set[str] = set()
        self.redact = config.redactor()
        """Removes this server's secrets from a text (every message built here passes it)."""

    def __repr__(self) -> str:
        where = f"transport={self.transport!r}, protocol={self.protocol_version!r}"
        return f"ServerConnection({self.name!r}, {where})"

    # -- state ---------------------------------------------------------------------------------

    @property
    def era(self) -> Era | None:
        """``2026-07-28`` or ``legacy`` (2025-11-25 and older), once connected."""
        if self.protocol_version is None:
            return None
        return "legacy" if self.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS else MODERN

    @property
    def transport(self) -> TransportKind | None:
        session = self._session_here()
        return session.transport if session is not None else None

    @property
    def connected(self) -> bool:
        """A session is live (on the running event loop, or the one used last)."""
        session = self._session_here()
        return session is not None and session.alive

    @property
    def connects(self) -> int:
        """Successful connects so far, on every event loop (1 while the first session lives)."""
        return self._retired_connects + sum(scope.owner.connects for scope in list(self._scopes.values()))

    @property
    def router(self) -> Router:
        """The router of the running event loop's session."""
        return self.scope().router

    def _session_here(self) -> Session | None:
        try:
            scope = self._scopes.get(asyncio.get_running_loop())
        except RuntimeError:
            scope = None
        scope = scope or self._last
        return scope.owner.session if scope is not None else None

    def working(self) -> int:
        """Calls in flight on every event loop, not counting those waiting for an answer."""
        return sum(
            scope.router.working() for scope in list(self._scopes.values()) if not scope.loop.is_closed()
        )

    async def connect(self) -> None:
        """Make sure a session is live (connecting or reconnecting if needed).

        Raises:
            MCPConnectionError: the server could not be started or reached.
        """
        await self._session()

    def retry(self) -> None:
        """Forget the back-off and a give-up (see ``restart``) on every event loop: the next use
        tries to connect at once."""
        for scope in list(self._scopes.values()):
            scope.owner.retry()

    async def client(self) -> Client:
        """The live SDK ``Client``, for anything this package does not wrap."""
        return (await self._live())[1]

    async def live_session(self) -> Session:
        """The running loop's live session (connecting first if needed); ``stop`` is set when it
        ends."""
        return await self._session()

    async def _session(self) -> Session:
        return await self.scope().owner.live()

    async def _live(self) -> tuple[Session, Client]:
        """The live session and its ``Client`` (connecting first if needed)."""
        session = await self._session()
        assert session.client is not None
        return session, session.client

    def scope(self) -> LoopScope:
        """What this connection keeps for the running event loop (its session, router), made on
        first use from that loop."""
        loop = asyncio.get_running_loop()
        scope = self._scopes.get(loop)
        if scope is None:
            with self._scopes_lock:  # loops in other threads may be here at the same moment
                if self._closing:
                    raise MCPConnectionError(self.name, "the connection pool is closed")
                abandoned = self._drop_closed_loops()
                scope = self._scopes[loop] = LoopScope(self, loop)
            for process in abandoned:
                logger.warning(
                    "MCP server %r: the event loop of one of its sessions was closed without "
                    "closing the pool; stopping its server process (pid %d). Close pools before "
                    "their event loop ends (`async with` or `aclose()`).",
                    self.name,
                    process.pid,
                )
                process.stop_soon()
        self._last = scope
        return scope

    def _drop_closed_loops(self) -> list[ServerProcess]:
        """Forget the sessions of closed loops (their tasks can never run); their processes."""
        processes = []
        for loop in [loop for loop in self._scopes if loop.is_closed()]:
            scope = self._scopes.pop(loop)
            self._retired_connects += scope.owner.connects
            process = scope.owner.abandon()
            if process is not None:
                processes.append(process)
        return processes

    # -- session lifecycle hooks (run in the owner task) ------------------------------------------

    def _new_client(self, target: Any) -> Client:
        return Client(
            target,
            mode=cast(Any, self._mode),
            prior_discover=self._prior_discover,
            client_info=_client_info(),
            message_handler=self._on_message,
            logging_callback=self._on_log,
            elicitation_callback=self._on_elicit,
            sampling_callback=self._on_sample,
            list_roots_callback=self._on_roots,
            cache=None,
        )

    async def _connected(self, session: Session) -> None:
        client = session.client
        assert client is not None
        self.protocol_version = client.protocol_version
        self._tools_changed()
        self._lists_changed(*LISTINGS)
        if self._mode == "auto":  # remember the era: reconnects skip the probe
            if client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
                self._mode = "legacy"
            elif client.session.discover_result is not None:
                self._mode = client.protocol_version
                self._prior_discover = client.session.discover_result
        self.router.untied = session.transport in ("stdio", "sse") and self.era == "legacy"
        await self._set_legacy_log_level(client)

    def _alongside(self, session: Session) -> Any:
        client = session.client
        assert client is not None
        caps = client.server_capabilities
        watch = self.scope().watch
        if self.era == MODERN:
            flags = {
                "tools_list_changed": bool(caps.tools and caps.tools.list_changed),
                "resources_list_changed": bool(caps.resources and caps.resources.list_changed),
                "prompts_list_changed": bool(caps.prompts and caps.prompts.list_changed),
            }
            subscribable = bool(caps.resources and caps.resources.subscribe)
            if any(flags.values()) or subscribable:
                return self._listen(client, session, flags, watch if subscribable else None)
            return None
        if caps.resources is not None and caps.resources.subscribe:
            return self._keep_subscribed(client, session, watch)
        return None

    async def _set_legacy_log_level(self, client: Client) -> None:
        """Handshake-era servers take one level per session (2026-07-28: per request)."""
        level = self.config.log_level
        if level is None or self.era != "legacy":
            return
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                with anyio.fail_after(self.config.connect_timeout):
                    await client.set_logging_level(level)
        except (MCPError, TimeoutError) as exc:  # many servers do not implement logging/setLevel
            logger.debug(
                "MCP server %r: logging/setLevel %s refused: %s", self.name, level, self.redact(describe(exc))
            )

    async def _listen(
        self, client: Client, session: Session, flags: dict[str, bool], watch: ResourceWatch | None
    ) -> None:
        """2026-07-28: one ``subscriptions/listen`` stream for the list changes the server offers
        and the resources subscribed to.

        When the set of resources changes, the next stream is opened before the current one is
        closed, so no update falls between them (one may come twice). If the server refuses
        that stream while the current one runs, the current one goes on and only the resources
        it does not cover are refused (their subscribers get the error). A stream that drops is
        opened again after ``_LISTEN_RETRY`` s (longer each time); when it opens, the cached
        listings are dropped and the subscribers hear of each of their resources once (what
        was sent meanwhile is lost). After ``_LISTEN_TRIES`` failures in a row (a stream that
        lasted under ``_LISTEN_STABLE`` s counts) the subscribers are told, and it is tried
        again after ``_LISTEN_PAUSE`` s, or as soon as a subscription comes or goes."""
        failures = 0
        missed = False
        async with anyio.create_task_group() as tg:
            current: _Stream | None = None
            while True:
                version, uris = watch.snapshot() if watch is not None else (0, frozenset[str]())
                if not any(flags.values()) and not uris:
                    assert watch is not None
                    if current is not None:
                        current.scope.cancel()
                        current = None
                    watch.listening(session, uris)
                    await watch.changed_since(version)
                    continue
                if current is not None and current.uris == uris and not current.ended.is_set():
                    await _first(_changed(watch, version), current.ended.wait())  # nothing to reopen
                    if not current.ended.is_set():
                        continue
                    stream = current
                else:
                    stream = _Stream(uris)
                    tg.start_soon(self._stream, client, flags, stream)
                    with anyio.move_on_after(self.config.connect_timeout):
                        await _first(stream.opened.wait(), stream.ended.wait())
                    if not stream.opened.is_set():
                        stream.scope.cancel()
                        reason = stream.reason if stream.ended.is_set() else "not answered (connect_timeout)"
                        if current is not None and not current.ended.is_set():
                            # The running stream goes on; what the new one would add is refused.
                            if watch is not None:
                                for uri in sorted(uris - current.honored):
                                    watch.refused(session, uri, reason)
                            await _first(_changed(watch, version), current.ended.wait())
                            continue
                    else:
                        if current is not None:
                            current.scope.cancel()  # the new stream is up: the old one may go
                        current = stream
                        if missed:  # list changes sent while no stream was open were lost
                            self._tools_changed()
                            self._lists_changed(*LISTINGS)
                        if watch is not None:
                            for uri in sorted(uris - stream.honored):
                                watch.refused(session, uri, "the server did not accept a subscription to it")
                            watch.listening(session, stream.honored, missed=missed)
                        missed = False
                        await _first(_changed(watch, version), stream.ended.wait())
                        if not stream.ended.is_set():
                            continue  # other resources are wanted: open the next stream
                # The stream could not open, or it dropped.
                current = None
                if stream.lasted() >= _LISTEN_STABLE:
                    failures = 0
                failures += 1
                missed = True
                logger.debug("MCP server %r: subscriptions/listen ended: %s", self.name, stream.reason)
                if watch is not None:
                    watch.dropped(session)
                if failures >= _LISTEN_TRIES:
                    if watch is not None:
                        watch.failed(session, f"subscriptions/listen kept failing: {stream.reason}")
                    with anyio.move_on_after(_LISTEN_PAUSE):
                        await _changed(watch, version)
                else:
                    await anyio.sleep(_LISTEN_RETRY * failures)

    async def _stream(self, client: Client, flags: dict[str, bool], stream: _Stream) -> None:
        """Run one ``subscriptions/listen`` stream until it ends or ``stream.scope`` is cancelled."""
        with stream.scope:
            try:
                async with client.listen(**flags, resource_subscriptions=sorted(stream.uris)) as sub:
                    honored = sub.honored.resource_subscriptions if sub.honored is not None else None
                    stream.honored = frozenset(honored or ())
                    stream.opened_at = time.monotonic()
                    stream.opened.set()
                    async for event in sub:
                        self._on_event(event)
                stream.reason = "the server closed the stream"
            except Exception as exc:  # a lost stream must not end the session
                stream.reason = self.redact(describe(exc))
        stream.ended_at = time.monotonic()
        stream.ended.set()

    def _on_event(self, event: Any) -> None:
        if isinstance(event, ToolsListChanged):
            self._tools_changed()
        elif isinstance(event, ResourcesListChanged):
            self._lists_changed("resources", "resource_templates")
        elif isinstance(event, PromptsListChanged):
            self._lists_changed("prompts")
        elif isinstance(event, ResourceUpdated):
            self.scope().watch.updated(event.uri)

    async def _keep_subscribed(self, client: Client, session: Session, watch: ResourceWatch) -> None:
        """Handshake era: keep ``resources/subscribe`` in step with what is watched, on this
        session (a new session subscribes again to everything still watched)."""
        subscribed: set[str] = set()
        while True:
            version, wanted = watch.snapshot()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                for uri in sorted(wanted - subscribed):
                    try:
                        with anyio.fail_after(self.config.connect_timeout):
                            await client.subscribe_resource(uri)
                        subscribed.add(uri)
                    except (MCPError, TimeoutError, *_TRANSPORT_ERRORS) as exc:
                        watch.refused(session, uri, self.redact(describe(exc)))
                for uri in sorted(subscribed - wanted):
                    subscribed.discard(uri)
                    try:
                        with anyio.fail_after(self.config.connect_timeout):
                            await client.unsubscribe_resource(uri)
                    except (MCPError, TimeoutError, *_TRANSPORT_ERRORS) as exc:
                        logger.debug(
                            "MCP server %r: resources/unsubscribe %s failed: %s",
                            self.name,
                            uri,
                            self.redact(describe(exc)),
                        )
            watch.listening(session, frozenset(subscribed))
            await watch.changed_since(version)

    # -- SDK callbacks (may run on the session's own tasks) ----------------------------------

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._tools_changed()
        elif isinstance(message, types.ResourceListChangedNotification):
            self._lists_changed("resources", "resource_templates")
        elif isinstance(message, types.PromptListChangedNotification):
            self._lists_changed("prompts")
        elif isinstance(message, types.ResourceUpdatedNotification):
            self.scope().watch.updated(message.params.uri)
        elif isinstance(message, Exception):
            logger.debug("MCP server %r: transport reported %s", self.name, self.redact(repr(message)))

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """Log a server's log message (the record's ``mcp_level`` attribute keeps its MCP level)."""
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
        text = f"[{params.logger}] {data}" if params.logger else data
        if params.level in _UNNAMED_LEVELS:
            text = f"{params.level}: {text}"
        level = _PYTHON_LEVELS.get(params.level, logging.INFO)
        self.logger.log(level, "%s", text, extra={"mcp_level": params.level})
        await self.router.log(params)

    async def _on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        return await self.router.elicit(params)

    async def _on_sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        return await self.router.sample(params)

    async def _on_roots(self, context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        return self.list_roots()

    def list_roots(self) -> types.ListRootsResult:
        """The roots configured for this server (the same for every call)."""
        return types.ListRootsResult(roots=[types.Root.model_validate(r) for r in self.config.roots])

    # -- tools ---------------------------------------------------------------------------------

    def _tools_changed(self) -> None:
        self._tools = None
        self.tools_version += 1

    async def refresh_tools(self) -> list[types.Tool]:
        """Drop the cached listing and list again."""
        self._tools_changed()
        return await self.list_tools()

    async def list_tools(self) -> list[types.Tool]:
        """The server's tools (every page), cached until ``list_changed`` or a reconnect.

        Each tool is checked on its own (``_schema.vet_tool``): one that cannot be offered to a
        model or called is left out with a warning, and the others stay.

        Raises:
            MCPConnectionError: the server could not be reached or did not answer.
            MCPProtocolError: an answer was not a ``tools/list`` result at all.
        """
        try:
            return await self._list_tools()
        except _SessionExpired:
            # The server rejected the listing unread (it no longer knows the session): once more,
            # on a new session.
            try:
                return await self._list_tools()
            except _SessionExpired as exc:
                raise MCPConnectionError(self.name, f"tools/list failed: {exc.message}") from None

    async def _list_tools(self) -> list[types.Tool]:
        session = await self._session()
        # Read once: a session on another loop's thread may drop the cache at any moment.
        if (cached := self._tools) is not None:
            return cached
        async with self.scope().tools_lock:
            if (cached := self._tools) is not None:
                return cached
            client = session.client
            assert client is not None
            version = self.tools_version
            tools: list[types.Tool] = []
            cursor: str | None = None
            entries = 0
            try:
                with http_statuses() as statuses, session.request():
                    for _ in range(_MAX_PAGES):
                        with anyio.fail_after(self.config.connect_timeout):
                            # Read as sent, so that one malformed tool costs only itself.
                            answer = await send_unchecked(
                                client.session, "tools/list", {"cursor": cursor} if cursor else None
                            )
                        listed, next_cursor = self._tools_page(answer)
                        page = [
                            tool
                            for i, raw in enumerate(listed)
                            if (
                                tool := vet_tool(
                                    self.name, raw, position=entries + i, modern=self.era == MODERN
                                )
                            )
                            is not None
                        ]
                        entries += len(listed)
                        absorb_tool_listing(
                            client.session,
                            types.ListToolsResult(tools=page, next_cursor=next_cursor),
                            complete=cursor is None and next_cursor is None,
                        )
                        tools.extend(page)
                        cursor = next_cursor
                        if not cursor:
                            break
            except (MCPError, TimeoutError, OSError, *_TRANSPORT_ERRORS) as exc:
                if isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED:
                    session.end()
                if isinstance(exc, MCPError) and session.expired and statuses[-1:] == [404]:
                    raise _SessionExpired(exc.code, exc.error.message) from exc
                if (status := refusal(statuses)) is not None:
                    raise MCPAuthenticationError(self.name, status) from exc
                raise MCPConnectionError(
                    self.name, self.redact(f"tools/list failed: {describe(exc)}") + session.stderr_hint()
                ) from exc
            if version == self.tools_version and session is self.scope().owner.session:
                self._tools = tools
                self._by_name = {t.name: t for t in reversed(tools)}
            return tools

    def _tools_page(self, answer: Any) -> tuple[list[Any], str | None]:
        """A ``tools/list`` answer's tools (unchecked) and next cursor."""
        tools = answer.get("tools") if isinstance(answer, dict) else None
        cursor = answer.get("nextCursor") if isinstance(answer, dict) else None
        if not isinstance(tools, list):
            raise MCPProtocolError(self.name, "its tools/list answer has no list of tools")
        if cursor is not None and not isinstance(cursor, str):
            raise MCPProtocolError(self.name, "its tools/list answer has a nextCursor that is not a string")
        return tools, cursor

    def listed(self, name: str) -> types.Tool | None:
        """The tool called ``name`` in the last listing, if any."""
        return self._by_name.get(name)

    # -- resources, prompts and other requests ------------------------------------------------

    def _lists_changed(self, *kinds: Listing) -> None:
        for kind in kinds:
            self._lists.pop(kind, None)
            self._list_versions[kind] += 1
        if self.config.resource_tool and "resources" in kinds:
            self.tools_version += 1  # the read tool's description lists the resources

    async def server_capabilities(self) -> types.ServerCapabilities:
        """What the live session's server said it offers (connecting first if needed)."""
        return (await self._live())[1].server_capabilities

    def request_timeout(self) -> float | None:
        """The limit for a request that is not a tool call: the server's ``timeout``, else the
        pool's ``default_timeout``."""
        if "timeout" in self.config.model_fields_set:
            return self.config.timeout
        return self.default_timeout

    async def listing(self, kind: Listing) -> list[Any]:
        """The server's resources, resource templates or prompts (every page), cached until the
        server says that list changed, or a reconnect. An entry that is not valid is left out
        with a warning; the others stay.

        Raises:
            MCPConnectionError, MCPTimeoutError, MCPServerError (e.g. the server has no such
            list), MCPProtocolError (an answer is not a listing at all).
        """
        await self._live()  # a new session forgets the listings: connect before reading one
        if (cached := self._lists.get(kind)) is not None:
            return cached
        version = self._list_versions[kind]
        method, key, model = LISTINGS[kind]

        async def pages(client: Client) -> list[Any]:
            items: list[Any] = []
            cursor: str | None = None
            for _ in range(_MAX_PAGES):
                with anyio.fail_after(self.config.connect_timeout):
                    answer = await send_unchecked(
                        client.session, method, {"cursor": cursor} if cursor else None
                    )
                entries = answer.get(key) if isinstance(answer, dict) else None
                cursor = answer.get("nextCursor") if isinstance(answer, dict) else None
                if not isinstance(entries, list) or (cursor is not None and not isinstance(cursor, str)):
                    raise MCPProtocolError(self.name, f"its {method} answer is not a valid listing")
                for raw in entries:
                    try:
                        items.append(model.model_validate(raw))
                    except ValidationError as exc:
                        logger.warning(
                            "MCP server %r: an entry of its %s answer is not valid and is left out: %s",
                            self.name,
                            method,
                            self.redact(str(exc).splitlines()[0] + " " + _brief(raw)),
                        )
                if not cursor:
                    break
            return items

        items = await self.request(method, pages, timeout=None)
        if version == self._list_versions[kind]:
            self._lists[kind] = items
        return items

    async def request(
        self,
        what: str,
        send: Callable[[Client], Awaitable[_T]],
        *,
        timeout: float | Literal["default"] | None = "default",
        limited: bool = False,
    ) -> _T:
        """Send one request that is not a tool call (``send`` sends it with the live ``Client``)
        and translate what goes wrong into this package's errors, as for a call. A request the
        server rejected unread because it no longer knows the session is sent once more, on a new
        session. ``timeout`` bounds it (default: :meth:`request_timeout`). ``limited``: it takes one
        of the session's ``max_concurrent_calls`` slots, as a call does (the wait counts).

        Raises:
            MCPConnectionError: cannot connect, or the session died during the request.
            MCPAuthenticationError: the server refused the credentials (HTTP 401/403).
            MCPTimeoutError: no answer in time (the request is cancelled on the server).
            MCPServerError: the server answered with a JSON-RPC error.
            MCPProtocolError: the answer is not what the protocol says.
        """
        limit = self.request_timeout() if timeout == "default" else timeout
        renewed = False
        while True:
            session, client = await self._live()
            try:
                return await self._request_once(session, client, what, send, limit, limited)
            except _SessionExpired as exc:
                if renewed:
                    raise MCPServerError(self.name, exc.code, exc.message) from None
                renewed = True

    async def _request_once(
        self,
        session: Session,
        client: Client,
        what: str,
        send: Callable[[Client], Awaitable[_T]],
        limit: float | None,
        limited: bool,
    ) -> _T:
        what = self.redact(what)
        lost = f"the connection was lost during {what}. {OUTCOME_UNKNOWN}"
        statuses: list[int] = []
        try:
            with http_statuses() as statuses, session.request(), anyio.fail_after(limit):
                async with self._slot() if limited else nullcontext():
                    if not session.alive:
                        raise MCPConnectionError(self.name, f"the session ended before {what} was sent")
                    return await send(client)
        except (MCPTimeoutError, MCPProtocolError, MCPConnectionError, MCPServerError):
            raise
        except MCPError as exc:
            raise await self._translate(exc, session, statuses, lost, f"to {what}") from exc
        except TimeoutError as exc:  # the limit, or (without one) a page of a listing
            seconds = limit if limit is not None else self.config.connect_timeout
            raise MCPTimeoutError(self.name, what, seconds) from exc
        except _TRANSPORT_ERRORS as exc:
            session.end()
            raise MCPConnectionError(self.name, self.redact(f"{lost} ({describe(exc)})")) from exc
        except ValidationError as exc:
            raise MCPProtocolError(
                self.name, self.redact(f"the answer to {what} is not valid: {exc}")
            ) from exc
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            session.end()
            if session.expired and statuses[-1:] == [404]:
                raise _SessionExpired(types.INVALID_REQUEST, "session not found") from None
            raise MCPConnectionError(self.name, lost) from None

    # -- calls ---------------------------------------------------------------------------------

    def timeout_for(self, tool: str) -> tuple[float | None, str]:
        """The limit for one call of ``tool`` (seconds, ``None``: none) and how to name it: the
        server's ``tool_timeouts``, then its ``timeout``, then the pool's ``default_timeout``."""
        config = self.config
        if tool in config.tool_timeouts:
            return config.tool_timeouts[tool], f"server {self.name!r} tool_timeouts[{tool!r}]"
        if "timeout" in config.model_fields_set:
            return config.timeout, f"server {self.name!r} timeout"
        return self.default_timeout, "the default timeout"

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> types.CallToolResult:
        """Call ``name`` directly, outside any graph, within its configured limit: questions from
        the server get only the answers code can give (see ``elicitation``), and a 2026-07-28
        round that asks is an error.

        Raises:
            MCPConnectionError, MCPTimeoutError, MCPServerError, MCPProtocolError.
        """
        clock = CallClock(self.timeout_for(name)[0], server=self.name, what=f"tool {name!r}")
        result = await self.send_call(name, arguments or {}, clock=clock, sink=self._fallback)
        if not isinstance(result, types.CallToolResult):
            raise MCPProtocolError(self.name, f"{name!r} asked for input; call it through a tool in a graph")
        return result

    async def send_call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        clock: CallClock,
        sink: CallSink,
        exclusive: bool = False,
        progress: ProgressFnT | None = None,
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        input_responses: types.InputResponses | None = None,
        request_state: str | None = None,
    ) -> Round:
        """Send one ``tools/call`` request over the shared session and return what it returned.

        ``sink`` receives the server's requests and logs that belong to this call; ``exclusive``
        says they may need a person (see ``routing.py``). ``clock`` bounds the request, the
        time it waits for its turn included. On 2026-07-28 a ``HEADER_MISMATCH`` (the tool's
        schema changed since it was listed) re-lists the tools and sends the request once more.
        A successful result is checked against the tool's ``outputSchema``. ``meta`` is sent as
        the request's ``_meta``; ``headers`` are HTTP headers for this request only (they never
        replace the protocol's own).

        Raises:
            MCPConnectionError: cannot connect, or the session died or closed during the call
                (its outcome is unknown; the next call reconnects).
            MCPTimeoutError: ``clock`` ran out; the server was asked to cancel the request.
            MCPServerError: the server answered with a JSON-RPC error.
            MCPProtocolError: the answer broke the protocol or the tool's ``outputSchema``.
        """
        if headers:
            headers = self._own_headers(headers)
        session, client = await self._live()
        if self.config.log_level is not None and self.era == MODERN:
            meta = {**(meta or {}), _LOG_LEVEL_META: self.config.log_level}
        request = types.CallToolRequest(
            params=types.CallToolRequestParams(
                name=name,
                arguments=dict(arguments),
                input_responses=input_responses,
                request_state=request_state,
                _meta=cast(types.RequestParamsMeta, dict(meta)) if meta else None,
            )
        )
        resent = renewed = False
        unsent = 0
        while True:
            try:
                result = await self._send(session, client, request, clock, sink, exclusive, progress, headers)
            except _NotSent:
                unsent += 1
                if unsent > _MAX_UNSENT:
                    raise MCPConnectionError(
                        self.name, "the session kept ending before the call could be sent"
                    ) from None
                session, client = await self._live()
                continue
            except _SessionExpired as exc:
                if renewed:
                    raise MCPServerError(self.name, exc.code, exc.message) from None
                # The server rejected the request unread: send it once more, on a new session.
                renewed = True
                session, client = await self._live()
                continue
            except MCPServerError as exc:
                if exc.code != types.HEADER_MISMATCH or self.era != MODERN or resent:
                    raise
                resent = True
                await self.refresh_tools()
                continue
            if isinstance(result, types.CallToolResult) and not result.is_error:
                self._check_output(name, result)
            return result

    def _own_headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """Per-call headers without the ones the protocol and the transport set themselves
        (dropped, with one warning per name)."""
        if self.config.transport not in ("http", "sse"):
            if "<stdio>" not in self._warned_headers:
                self._warned_headers.add("<stdio>")
                logger.warning(
                    "MCP server %r speaks %s: per-call headers are sent over HTTP only; ignored",
                    self.name,
                    self.config.transport,
                )
            return {}
        kept: dict[str, str] = {}
        for name, value in headers.items():
            lowered = name.lower()
            if lowered.startswith("mcp-") or lowered in _TRANSPORT_HEADERS:
                if lowered not in self._warned_headers:
                    self._warned_headers.add(lowered)
                    logger.warning(
                        "MCP server %r: the per-call header %r is set by the protocol or the transport; "
                        "it is not sent",
                        self.name,
                        name,
                    )
                continue
            kept[name] = value
        return kept

    async def _send(
        self,
        session: Session,
        client: Client,
        request: types.CallToolRequest,
        clock: CallClock,
        sink: CallSink,
        exclusive: bool,
        progress: ProgressFnT | None,
        headers: Mapping[str, str] | None = None,
    ) -> Round:
        name = request.params.name
        # Sent, then lost: the outcome is unknown (said before any stderr lines).
        lost = f"the connection was lost during the call to {name!r}. {OUTCOME_UNKNOWN}"
        statuses: list[int] = []
        try:
            with http_statuses() as statuses, session.request():
                return await self._request(
                    session, client, request, clock, sink, exclusive, progress, headers
                )
        except MCPError as exc:
            during = f"during the call to {name!r}. {OUTCOME_UNKNOWN}"
            raise await self._translate(exc, session, statuses, lost, during) from exc
        except _TRANSPORT_ERRORS as exc:
            session.end()
            raise MCPConnectionError(self.name, self.redact(f"{lost} ({describe(exc)})")) from exc
        except ValidationError as exc:
            raise MCPProtocolError(
                self.name, f"the answer to {name!r} is not a valid MCP result: {exc}"
            ) from exc
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # we were cancelled: let it propagate
            # The SDK cancelled the request because its transport failed under it.
            session.end()
            if session.expired and statuses[-1:] == [404]:
                raise _SessionExpired(types.INVALID_REQUEST, "session not found") from None
            if (status := refusal(statuses)) is not None:
                raise MCPAuthenticationError(self.name, status) from None
            raise MCPConnectionError(self.name, lost) from None

    async def _translate(
        self, exc: MCPError, session: Session, statuses: list[int], lost: str, http_failure: str
    ) -> Exception:
        """What an ``MCPError`` from a request sent on ``session`` means in this package's terms
        (``statuses``: the HTTP statuses seen meanwhile; ``lost``: what to say if the connection
        closed; ``http_failure``: what follows "the server answered HTTP <status>")."""
        if session.expired and statuses[-1:] == [404]:  # unknown session: it did not run
            return _SessionExpired(exc.code, exc.error.message)
        if (status := refusal(statuses)) is not None:  # refused: the request did not run
            return MCPAuthenticationError(self.name, status)
        if exc.code == types.CONNECTION_CLOSED:
            session.end()
            await session.settle_stderr()
            return MCPConnectionError(self.name, lost + session.stderr_hint())
        if (
            exc.code == types.INTERNAL_ERROR
            and exc.error.message == _SDK_HTTP_FAILURE
            and (status := server_failure(statuses)) is not None
        ):
            # No answer from the server, only an HTTP error status standing in for one.
            return MCPConnectionError(self.name, f"the server answered HTTP {status} {http_failure}")
        return MCPServerError(self.name, exc.code, self.redact(exc.error.message), exc.error.data)

    def _slot(self) -> AbstractAsyncContextManager[Slot | None]:
        """One of the session's ``max_concurrent_calls`` slots, queued fairly by LangGraph thread
        (see ``limits.py``); nothing to hold without a limit."""
        limiter = self.scope().limiter
        if limiter is None:
            return nullcontext()
        return limiter.slot(graph_run_key())

    async def _request(
        self,
        session: Session,
        client: Client,
        request: types.CallToolRequest,
        clock: CallClock,
        sink: CallSink,
        exclusive: bool,
        progress: ProgressFnT | None,
        headers: Mapping[str, str] | None,
    ) -> Round:
        name = request.params.name
        async with clock.running(), self._slot() as slot:
            if not session.alive:  # it ended while the call waited for a slot: nothing was sent
                raise _NotSent
            lend = slot.release if slot is not None else None
            while True:
                async with self.router.track(
                    sink, tool=name, exclusive=exclusive, clock=clock, lend=lend
                ) as call:
                    with call_headers(client.session, headers):
                        result = await client.session.send_request(
                            request, _ROUND, progress_callback=progress
                        )
                if not call.scope.cancelled_caught:
                    return result
                if not call.resend:
                    closed = f"the connection was closed during the call to {name!r}. {OUTCOME_UNKNOWN}"
                    raise MCPConnectionError(self.name, closed)
                # Cancelled so that its question can be tied to it: send it again, in turn.

    def _check_output(self, name: str, result: types.CallToolResult) -> None:
        tool = self.listed(name)
        if tool is None or tool.output_schema is None:
            return
        if result.structured_content is None:
            raise MCPProtocolError(
                self.name, f"tool {name!r} declares an outputSchema but returned no structured content"
            )
        cached = self._validators.get(name)
        if cached is None or cached[0] is not tool:
            try:
                cached = (tool, schema_validator(tool.output_schema))  # never fetches a $ref
            except SchemaError as exc:
                logger.warning(
                    "MCP tool %r of server %r has an invalid outputSchema: %s", name, self.name, exc.message
                )
                cached = (tool, None)
            self._validators[name] = cached
        validator = cached[1]
        if validator is None:
            return
        try:
            error = best_match(validator.iter_errors(result.structured_content))
        except Unresolvable as exc:
            raise MCPProtocolError(
                self.name, f"the outputSchema of {name!r} has a $ref that does not resolve: {exc}"
            ) from None
        except RecursionError:
            raise MCPProtocolError(
                self.name, f"the outputSchema of {name!r} cannot be checked: its $refs loop"
            ) from None
        if error is not None:
            where = ".".join(map(str, error.absolute_path)) or "<structured content>"
            raise MCPProtocolError(
                self.name,
                f"the structured content of {name!r} breaks its outputSchema at {where}: {error.message}",
            )

    # -- closing -------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Cancel the requests in flight (the server is told), then end the sessions and wait for
        any child process to exit. Calls in flight end with :class:`MCPConnectionError`.

        A session on another event loop is closed on that loop while it runs; if that loop is
        closed or idle, its tasks cannot run, and its server process is stopped instead.
        Cancelling the caller still ends the sessions, and the cancellation propagates.
        """
        here = asyncio.get_running_loop()
        with self._scopes_lock:
            self._closing = True
            scopes = list(self._scopes.items())
        closing: list[Awaitable[None]] = []
        for loop, scope in scopes:
            scope.owner.refuse_new()
            if loop is here:
                closing.append(scope.aclose())
            elif loop.is_running():
                closing.append(self._close_elsewhere(scope))
            else:  # idle or closed: its tasks cannot run, so its server is stopped from here
                closing.append(_stop(scope.owner.abandon()))
        results = await asyncio.gather(*closing, return_exceptions=True)
        for result in results:
            # A CancelledError here came from the other loop (its runner cancelled its tasks);
            # the caller's own cancellation is raised by ``gather`` itself.
            if isinstance(result, BaseException) and not isinstance(
                result, (Exception, asyncio.CancelledError)
            ):
                raise result

    async def _close_elsewhere(self, scope: LoopScope) -> None:
        """Close a session on the loop it belongs to, which runs in another thread. That loop
        may stop before it is done (a runner loop between two jobs): then its server is
        stopped from here."""
        try:
            future = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(scope.aclose(), scope.loop))
        except RuntimeError:  # that loop was closed meanwhile
            await _stop(scope.owner.abandon())
            return
        deadline = time.monotonic() + CLOSE_TIMEOUT + _CLOSE_GRACE
        while not future.done() and scope.loop.is_running() and time.monotonic() < deadline:
            await asyncio.wait({future}, timeout=0.05)
        if future.done() and not future.cancelled() and future.exception() is None:
            return
        if not future.done():
            future.cancel()
        await _stop(scope.owner.abandon())  # (nothing left to stop if it did close)


class _Stream:
    """One ``subscriptions/listen`` stream's state, as its task reports it."""

    def __init__(self, uris: frozenset[str]) -> None:
        self.uris = uris
        self.honored: frozenset[str] = frozenset()
        """The resources the server agreed to send updates of."""
        self.scope = anyio.CancelScope()
        self.opened = anyio.Event()
        self.ended = anyio.Event()
        self.opened_at: float | None = None
        self.ended_at: float | None = None
        self.reason = "cancelled"

    def lasted(self) -> float:
        """Seconds it was open (0 if it never opened)."""
        if self.opened_at is None:
            return 0.0
        return (self.ended_at or time.monotonic()) - self.opened_at


async def _changed(watch: ResourceWatch | None, version: int) -> None:
    """Wait until a subscription came or went since ``version`` (for ever without a watch)."""
    if watch is None:
        await anyio.sleep_forever()
    else:
        await watch.changed_since(version)


async def _first(*waits: Awaitable[Any]) -> None:
    """Wait until the first of ``waits`` is done; cancel the others."""
    async with anyio.create_task_group() as tg:

        async def run(wait: Awaitable[Any]) -> None:
            await wait
            tg.cancel_scope.cancel()

        for wait in waits:
            tg.start_soon(run, wait)


def _brief(raw: Any, limit: int = 200) -> str:
    text = json.dumps(raw, default=str) if not isinstance(raw, str) else raw
    return text if len(text) <= limit else text[:limit] + "..."


async def _stop(process: ServerProcess | None) -> None:
    if process is not None:
        await process.stop()


class LoopScope:
    """A connection's session on one event loop: its owner task, its router, its listing lock."""

    def __init__(self, connection: ServerConnection, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.owner = SessionOwner(
            connection.name,
            connection.config,
            connection._new_client,
            on_connected=connection._connected,
            alongside=connection._alongside,
        )
        self.router = Router(connection.name, connection._fallback)
        self.tools_lock = asyncio.Lock()
        self.watch = ResourceWatch()
        limit = connection.config.max_concurrent_calls
        self.limiter = FairLimiter(limit) if limit is not None else None

    async def aclose(self) -> None:
        """On this scope's loop: cancel its calls, let them say so, end the session."""
        self.owner.refuse_new()
        try:
            if self.router.cancel_all():
                # Let cancelled requests send their notifications/cancelled before the session
                # ends, so the server does not answer into a closed stream.
                with anyio.move_on_after(_CLOSE_GRACE):
                    await self.router.drained()
        finally:
            await self.owner.aclose()
