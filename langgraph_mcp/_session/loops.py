"""A connection's state, and its sessions: one per event loop that uses it.

Sessions are bound to an event loop, so a connection keeps one :class:`LoopScope` (its owner
task, router, listing lock, resource watch and call limiter) per event loop that uses it: one in
the usual single-loop process; one per run loop where runs get loops of their own (LangGraph
server's ``BG_JOB_ISOLATED_LOOPS``). A loop's session is stopped once that loop is closed.

:class:`ConnectionBase` holds what every part of a connection shares
(:class:`~langgraph_mcp._session.listings.Listings`, :class:`~langgraph_mcp._session.calls.Calls`,
:class:`~langgraph_mcp._session.listen.Listen`, :class:`~langgraph_mcp._session.callbacks.Callbacks`;
:class:`~langgraph_mcp._session.connection.ServerConnection` puts them together).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any, Literal

import anyio
import mcp_types as types
from jsonschema.protocols import Validator
from mcp import Client

from langgraph_mcp._session.era import Era, era_of
from langgraph_mcp._session.eventroutes import EventRoutes
from langgraph_mcp._session.freshness import ListingShare, ReadCache, Stamp
from langgraph_mcp._session.limits import FairLimiter, Slot, queue_key
from langgraph_mcp._session.owner import Session, SessionOwner
from langgraph_mcp._session.process import ServerProcess
from langgraph_mcp._session.routing import CallSink, Router
from langgraph_mcp._session.skillwire import SkillEntry
from langgraph_mcp._session.transports import HTTPPool, TransportKind
from langgraph_mcp._session.views import ViewCache
from langgraph_mcp._session.watch import ResourceWatch
from langgraph_mcp.config import DEFAULT_CALL_TIMEOUT, HTTPServerConfig, ServerConfig
from langgraph_mcp.errors import MCPConnectionError

__all__ = ["CLOSE_GRACE", "LISTINGS", "ConnectionBase", "Listing", "LoopScope"]

_NO_SLOT: AbstractAsyncContextManager[None] = nullcontext()
"""What a call holds without ``max_concurrent_calls``: nothing (one block for every call)."""

logger = logging.getLogger("langgraph_mcp.pool")

CLOSE_GRACE = 2.0
"""Seconds cancelled requests get to tell the server so before their session ends."""

Listing = Literal["resources", "resource_templates", "prompts", "skills"]
"""A listing other than tools."""

LISTINGS: dict[Listing, tuple[str, str, type[Any]]] = {
    "resources": ("resources/list", "resources", types.Resource),
    "resource_templates": ("resources/templates/list", "resourceTemplates", types.ResourceTemplate),
    "prompts": ("prompts/list", "prompts", types.Prompt),
    "skills": ("skills/list", "skills", SkillEntry),
}
"""What each listing is called on the wire: its method, its answer's key, one entry's model."""


class ConnectionBase:
    """One server's connection: its configuration, what it learned (era, listings), and its
    sessions, one per event loop.

    ``fallback`` answers the server's requests that belong to no call (see
    :class:`~langgraph_mcp._session.routing.Router`).
    ``default_timeout`` bounds a call when neither the tool nor the configuration sets a limit.
    ``share`` is what the server's connections in one pool share (see
    :class:`~langgraph_mcp._session.freshness.ListingShare`): the
    shared connection makes it, its thread connections are given it. So is ``http_pool``
    (:class:`~langgraph_mcp._session.transports.HTTPPool`, streamable HTTP): a connection made
    without one (the server's shared connection) makes it and closes it as it closes; the server's
    thread and per-user connections are given it, and leave it open when they close.
    """

    def __init__(
        self,
        name: str,
        config: ServerConfig,
        *,
        fallback: CallSink,
        default_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        share: ListingShare | None = None,
        http_pool: HTTPPool | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.default_timeout = default_timeout
        self.logger = logging.getLogger(f"langgraph_mcp.server.{name}")
        """Where the server's log notifications go (its stderr: ``<this>.stderr``)."""
        self._tools_version = 0
        self.listing_share = share if share is not None else ListingShare(config.listing_ttl)
        """Listing lifetimes, and the listings the server's sessions in this pool share."""
        self._owns_http_pool = http_pool is None and isinstance(config, HTTPServerConfig)
        self.http_pool = HTTPPool() if self._owns_http_pool else http_pool
        """The HTTP connections this connection's sessions borrow (``None``: not over HTTP)."""
        self.private = False
        """The session is one user's (per-user OAuth, or a run's credentials): what it lists is
        theirs, so its warnings never name a tool."""
        self.server_extensions: dict[str, Any] = {}
        """The extensions the server declared on its last session (identifier -> settings)."""
        self.instructions: str | None = None
        """What the server said, on its last session, about how to use it (``instructions``)."""
        self.event_routes = EventRoutes()
        """The pushed event streams open on the sessions, and the event types' list changes."""
        self.attached: dict[str, Any] = {}
        """What the layers above keep for this connection's lifetime, opaque to it (the catalog
        keeps a digest of the last listing here: it goes when a user's connection is closed)."""
        self.protocol_version: str | None = None
        self.redact = config.redactor()
        """Removes this server's secrets from a text (every message built here passes it)."""
        self._fallback = fallback
        self._scopes: dict[asyncio.AbstractEventLoop, LoopScope] = {}
        self._scopes_lock = threading.Lock()
        self._last: LoopScope | None = None
        self._retired_connects = 0
        self._closing = False
        self._tools: list[types.Tool] | None = None
        self._tools_stamp: Stamp | None = None
        self._stale_tools: tuple[list[types.Tool], Stamp, Session | None] | None = None
        """The listing whose lifetime just ended (nothing said it changed), its stamp, and the
        session then: offered if listing again fails on that session (``Listings.list_tools``)."""
        self._stale_told = False
        """A warning said the stale listing is offered (once until a listing succeeds)."""
        self._by_name: dict[str, types.Tool] = {}
        self._lists: dict[Listing, list[Any]] = {}
        self._list_versions: dict[Listing, int] = dict.fromkeys(LISTINGS, 0)
        self._list_stamps: dict[Listing, Stamp] = {}
        self.reads = ReadCache()
        """This connection's own (``private``) resource reads that may be reused."""
        self._validators: dict[str, tuple[types.Tool, Validator | None]] = {}
        self._plain_outputs: dict[str, tuple[types.Tool, Callable[[Any], bool] | None]] = {}
        self._warned_headers: set[str] = set()
        self._mode: str = config.protocol
        """``auto`` until the era is known; then what reconnects ask for (they skip the probe)."""
        self._prior_discover: types.DiscoverResult | None = None
        self.views = ViewCache()
        """The MCP Apps views read on this connection."""

    # -- what a session needs from the whole connection (see ServerConnection) -----------------

    def _new_client(self, target: Any) -> Client:
        raise NotImplementedError

    async def _connected(self, session: Session) -> None:
        raise NotImplementedError

    def _alongside(self, session: Session) -> Any:
        raise NotImplementedError

    # -- state ---------------------------------------------------------------------------------

    @property
    def era(self) -> Era | None:
        """``2026-07-28`` or ``legacy`` (2025-11-25 and older), once connected."""
        return era_of(self.protocol_version)

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

    def working(self) -> int:
        """Calls in flight on every event loop, not counting those waiting for an answer."""
        return sum(
            scope.router.working() for scope in list(self._scopes.values()) if not scope.loop.is_closed()
        )

    @property
    def tools_version(self) -> int:
        """Moves whenever the tools offered may have changed (``list_changed``, a reconnect, the
        end of the listing's lifetime: see :class:`~langgraph_mcp._session.freshness.ListingShare`).
        Looking at it is what notices that a lifetime ended: nothing runs on a timer."""
        share = self.listing_share
        if share.expired("tools", self._tools_stamp if self._tools is not None else None):
            self._tools_changed(expired=True)
        resources = self._list_stamps.get("resources") if "resources" in self._lists else None
        if self.config.resource_tool and share.expired("resources", resources):
            self._lists_changed("resources")
        return self._tools_version

    def _tools_changed(self, *, notice: bool = False, expired: bool = False) -> None:
        """Forget the tool listing; ``notice``: the server said it changed (or may have), so no
        session of the server may reuse a shared one either; ``expired``: its lifetime ended
        (nothing says it changed: it is kept aside in case listing again fails)."""
        tools, stamp = self._tools, self._tools_stamp
        self._stale_tools = None
        if expired and tools is not None and stamp is not None:
            # Kept aside, unless another session heard it changed: then never offered again.
            changed = self.listing_share.heard_changed("tools", stamp)
            self._stale_tools = None if changed else (tools, stamp, self._session_here())
        self._tools = None
        self._tools_stamp = None
        self._tools_version += 1
        if notice:
            self.listing_share.changed("tools")

    def _lists_changed(self, *kinds: Listing, notice: bool = False) -> None:
        if "resources" in kinds and "skills" not in kinds:
            kinds = (*kinds, "skills")  # a skill's files are resources: its entry may be stale too
        for kind in kinds:
            self._lists.pop(kind, None)
            self._list_stamps.pop(kind, None)
            self._list_versions[kind] += 1
        if notice:
            self.listing_share.changed(*kinds)
            if "resources" in kinds:  # reads of resources that may be gone, or missed updates
                self.reads.clear()
                self.listing_share.reads.clear()
        if self.config.resource_tool and "resources" in kinds:
            self._tools_version += 1  # the read tool's description lists the resources

    def _resource_updated(self, uri: str) -> None:
        """The server says ``uri`` changed: no session of the server reuses a read of it, and
        then its subscribers hear of it (so a read they make is a new one)."""
        self.reads.updated(uri)
        self.listing_share.reads.updated(uri)
        self.views.updated(uri)
        self.scope().watch.updated(uri)

    def _slot(self) -> AbstractAsyncContextManager[Slot | None]:
        """One of the session's ``max_concurrent_calls`` slots, queued fairly by whoever the
        calls are made for (``limits.queue_by``); nothing to hold without a limit."""
        limiter = self.scope().limiter
        if limiter is None:
            return _NO_SLOT
        return limiter.slot(queue_key())

    def request_timeout(self) -> float | None:
        """The limit for a request that is not a tool call: the server's ``timeout``, else the
        pool's ``default_timeout``."""
        if "timeout" in self.config.model_fields_set:
            return self.config.timeout
        return self.default_timeout

    # -- sessions --------------------------------------------------------------------------------

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

    async def server_capabilities(self) -> types.ServerCapabilities:
        """What the live session's server said it offers (connecting first if needed)."""
        return (await self._live())[1].server_capabilities

    async def _session(self) -> Session:
        return await self.scope().owner.live()

    async def _live(self) -> tuple[Session, Client]:
        """The live session and its ``Client`` (connecting first if needed)."""
        session = await self._session()
        assert session.client is not None
        return session, session.client

    def _session_here(self) -> Session | None:
        try:
            scope = self._scopes.get(asyncio.get_running_loop())
        except RuntimeError:
            scope = None
        scope = scope or self._last
        return scope.owner.session if scope is not None else None

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


class LoopScope:
    """A connection's session on one event loop: its owner task, its router, its listing lock."""

    def __init__(self, connection: ConnectionBase, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.owner = SessionOwner(
            connection.name,
            connection.config,
            connection._new_client,
            redact=connection.redact,
            on_connected=connection._connected,
            alongside=connection._alongside,
        )
        self.owner.http_pool = connection.http_pool
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
                with anyio.move_on_after(CLOSE_GRACE):
                    await self.router.drained()
        finally:
            await self.owner.aclose()
