"""``MCPPool``: long-lived sessions to a set of MCP servers.

The pool is the set of :class:`ServerConnection` objects (one per configured server, plus one
per LangGraph thread for servers configured with ``session_scope: thread``, kept by
:class:`~langgraph_mcp._pool.threads.ThreadSessions`) and nothing else: each connection owns its
session (:class:`~langgraph_mcp._session.owner.SessionOwner`); the
pool connects them concurrently, collects their tool listings, and closes them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, Unpack

import mcp_types as types

from langgraph_mcp._compat.langgraph import graph_run_key
from langgraph_mcp._elicitation.policy import CodeSink
from langgraph_mcp._events.subscription import EventSubscription, SubscriptionOptions
from langgraph_mcp._oauth.calls import stored_user_session
from langgraph_mcp._oauth.options import per_user_oauth
from langgraph_mcp._pool import prompts as prompts
from langgraph_mcp._pool import resources as resources
from langgraph_mcp._pool.credentials import credential_session
from langgraph_mcp._pool.threads import ThreadSessions
from langgraph_mcp._pool.toolstore import ToolCatalog, open_catalog
from langgraph_mcp._session import ServerConnection
from langgraph_mcp._session.events import declares_events, list_event_types
from langgraph_mcp._session.eventwire import EventType
from langgraph_mcp._session.limits import queue_by
from langgraph_mcp._support.sync import close_pool
from langgraph_mcp.config import DEFAULT_CALL_TIMEOUT, ServerConfig, load_connections
from langgraph_mcp.errors import (
    MCPArgumentError,
    MCPAuthenticationError,
    MCPConfigError,
    MCPConnectionError,
    MCPUnknownServerError,
)

if TYPE_CHECKING:
    from langchain_core.documents.base import Blob
    from langchain_core.messages import BaseMessage
    from langgraph.store.base import BaseStore
    from mcp import Client

    from langgraph_mcp.types import MCPResourceUpdatedEvent

__all__ = ["MCPPool", "OnConnectionError"]

logger = logging.getLogger("langgraph_mcp.pool")

OnConnectionError: TypeAlias = Literal["raise", "warn"]

# Calls waiting for a turn on a busy session (max_concurrent_calls) queue by conversation: the
# LangGraph thread of the graph that makes them, else its run.
queue_by(graph_run_key)


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

    ``tool_catalog`` keeps each server's tools between runs: a path to a JSON file (format:
    :class:`~langgraph_mcp.types.MCPToolCatalog`), or a LangGraph ``BaseStore``. It is written
    whenever a server lists tools that differ from what it holds. A server configured with ``lazy: true``
    whose tools it holds is not started until one of its tools is called (a tool search reveals
    them from the catalog): its tools are offered from the catalog meanwhile.

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
        tool_catalog: Any = None,
    ) -> None:
        if on_connection_error not in ("raise", "warn"):
            raise MCPConfigError(
                None, None, f"on_connection_error must be 'raise' or 'warn', got {on_connection_error!r}"
            )
        if default_timeout is not None and default_timeout <= 0:
            raise MCPConfigError(
                None, None, f"default_timeout must be positive or None, got {default_timeout!r}"
            )
        self.servers: dict[str, ServerConfig] = load_connections(connections)
        self.on_connection_error: OnConnectionError = on_connection_error
        self.default_timeout = default_timeout
        self.catalog: ToolCatalog | None = open_catalog(tool_catalog)
        """The persisted tool catalog (``None``: none; ``lazy`` servers then start as usual)."""
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
        self._attached: dict[str, object] = {}
        """What the layers above keep for this pool's lifetime, opaque to it (the catalog keeps the
        LangChain tools built for it here). Kept on the pool, not in a weak map keyed by the pool:
        those tools refer to the pool, which would then never go."""
        self._threads = ThreadSessions(self.connections, CodeSink)
        self.per_user_servers: frozenset[str] = frozenset(
            name for name, config in self.servers.items() if per_user_oauth(config) is not None
        )
        """The servers that act for each user (:meth:`per_user`), as a set to test membership in
        without a call."""
        self.signin_only: set[str] = set()
        """Per-user servers that refused to list their tools without a user's token: they offer
        no shared tools, only each user's own."""

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
            raise MCPUnknownServerError(server, list(self.connections)) from None

    def connection_for(self, server: str, thread_id: str | None) -> ServerConnection:
        """The connection a call of ``server`` made in LangGraph thread ``thread_id`` uses: the
        shared one, or the thread's own for a ``session_scope: "thread"`` server (see
        :class:`~langgraph_mcp._pool.threads.ThreadSessions`). A cheap synchronous lookup.

        Raises:
            KeyError: no server is called ``server``.
        """
        return self._threads.connection_for(self.connection(server), thread_id)

    def using(
        self,
        server: str,
        thread_id: str | None,
        *,
        user: str | None = None,
        auth: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> AbstractAsyncContextManager[ServerConnection]:
        """:meth:`connection_for`, held in use for the whole ``async with`` block: a thread's
        connection is not evicted or expired while the block runs. Wrap a tool call in it, from
        before it connects until its result. For a per-user OAuth server, ``user`` names the
        user whose own connection it is, made with ``auth`` (see ``_oauth``). With ``headers``
        (a run's credentials, see :mod:`~langgraph_mcp._pool.credentials`), ``user`` names them:
        the connection is theirs, and every request of it carries them.

        Raises:
            KeyError: no server is called ``server``.
        """
        return self._threads.using(self.connection(server), thread_id, user=user, auth=auth, headers=headers)

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

    # -- resources, prompts, the SDK session (_pool.resources.read_resource, _pool.prompts.get_prompt)

    def _for_anyone(self, server: str) -> ServerConnection:
        """The shared connection, for a request made for nobody in particular; refused for a
        per-user OAuth server, whose answers may be any user's: there, everything but its tool
        listing is done on a user's own session (a tool call in a run), never without a user.

        Raises:
            MCPConnectionError: ``server`` has per-user OAuth.
        """
        connection = self.connection(server)
        if self.per_user(server):
            raise MCPConnectionError(
                connection.name,
                "the server acts for each user (per-user OAuth or credentials): its resources, "
                "prompts and completions are not read without a user; use them through a tool call "
                "in a run",
            )
        return connection

    async def client(self, server: str) -> Client:
        """The live SDK ``mcp.Client`` of ``server``'s shared session (connecting first if needed),
        for anything this package does not wrap. It is valid until that session ends (a crash, a
        restart, :meth:`aclose`); ask again after a reconnect. Do not close it or enter it: the
        pool owns it. Requests sent through it bypass this package's timeouts, error translation
        and ``max_concurrent_calls``.
        """
        return await self._for_anyone(server).client()

    async def list_resources(self, server: str) -> list[types.Resource]:
        """``server``'s resources, every page; cached until the server says its resources changed
        (``notifications/resources/list_changed``), the session is replaced, or the listing's
        lifetime ends (the server's ``ttlMs`` hint or its ``listing_ttl`` option)."""
        return await resources.list_resources(self._for_anyone(server))

    async def list_resource_templates(self, server: str) -> list[types.ResourceTemplate]:
        """``server``'s resource templates, every page; cached like :meth:`list_resources`."""
        return await resources.list_resource_templates(self._for_anyone(server))

    async def read_resource(self, server: str, uri: str) -> list[Blob]:
        """Read ``uri`` from ``server``: one LangChain ``Blob`` per entry of its contents (text as
        ``str``, binary decoded to bytes), with ``mimetype`` and ``metadata`` ``{"uri", "server"}``
        (and ``"meta"``: the entry's ``_meta``, when sent).

        Raises:
            MCPServerError: the server refused (e.g. -32002, no such resource).
            MCPConnectionError: the server could not be reached.
            MCPTimeoutError: the server did not answer within its ``timeout``.
            MCPProtocolError: the server's answer broke the protocol.
        """
        return await resources.read_resource(self._for_anyone(server), uri)

    async def read_resource_template(
        self, server: str, template: str, arguments: Mapping[str, Any]
    ) -> list[Blob]:
        """Expand one of ``server``'s resource templates (by ``uriTemplate`` or ``name``) with
        ``arguments`` (RFC 6570) and read the resource it names, as :meth:`read_resource`.

        Raises:
            MCPArgumentError: no such template, an argument missing or not in the template.
        """
        return await resources.read_resource_template(self._for_anyone(server), template, arguments)

    async def resolve_link(self, link: Any, *, index: int = 0, server: str | None = None) -> list[Blob]:
        """Read the resource a resource link in a tool result points at, from the server that
        returned it. ``link`` is a resource-link (or embedded-resource) block from a
        ``ToolMessage``'s content or artifact, or the ``ToolMessage`` itself (then its
        ``index``-th link). ``server`` is needed only for a link that does not name one.

        Raises:
            ValueError: ``link`` is not a resource link, or names no server and none is given.
            and what :meth:`read_resource` raises.
        """
        named, uri = resources.link_target(link, index)
        target = named or server
        if target is None:
            raise MCPArgumentError(
                None, None, f"the resource link {uri!r} does not say which server it came from: pass server="
            )
        return await resources.read_resource(self._for_anyone(target), uri)

    def subscribe(
        self, server: str, *uris: str
    ) -> AbstractAsyncContextManager[AsyncIterator[MCPResourceUpdatedEvent]]:
        """Watch resources of ``server`` for updates::

            async with pool.subscribe("docs", "file:///notes.md") as updates:
                async for update in updates:  # {"type": "mcp_resource_updated", "server", "uri"}
                    blobs = await pool.read_resource(update["server"], update["uri"])

        Entering returns once the server confirmed it (``resources/subscribe`` on 2025-11-25 and
        older, ``subscriptions/listen`` on 2026-07-28). An update may name a sub-resource of a
        watched URI. Opened in a LangGraph node, each update is also written to the run's custom
        stream (``stream_mode="custom"``). The subscription outlives reconnects: after a new
        session (or a lost update stream) each watched URI is reported once, since updates made
        meanwhile were not sent.

        Raises (on entry):
            MCPServerError: the server offers no subscriptions, or refused one of the URIs.
            MCPConnectionError: it cannot be reached. Iterating raises ``MCPConnectionError`` when
            the server is given up on (``restart.max_attempts``) or its update stream keeps failing.
        """
        return resources.subscribe(self._for_anyone(server), uris)

    async def event_types(self, server: str) -> list[EventType]:
        """The event types ``server`` offers (the events extension, ``events/list``): each one's
        name, description, delivery modes and the JSON Schemas of its ``arguments`` and ``data``.
        A server that does not declare the extension offers none (it is not asked).

        Raises:
            MCPConnectionError, MCPServerError, MCPTimeoutError: as for any request.
        """
        connection = self._for_anyone(server)
        await connection.connect()
        if not declares_events(connection):
            return []
        return await list_event_types(connection)

    def events(
        self,
        server: str,
        name: str,
        *,
        user: str | None = None,
        store: BaseStore | None = None,
        credentials: Mapping[str, str] | None = None,
        **options: Unpack[SubscriptionOptions],
    ) -> EventSubscription:
        """The events of type ``name`` (with its ``arguments``) of ``server``, as they happen (the
        events extension)::

            async with pool.events("tickets", "ticket.created", arguments={"queue": "urgent"}) as sub:
                async for event in sub:  # MCPEvent: server, name, event_id, timestamp, data, cursor
                    await handle(event)
                    save(sub.cursor)  # resume later with cursor=

        The options (:class:`~langgraph_mcp._events.subscription.SubscriptionOptions`):
        ``arguments``: the type's arguments (its ``inputSchema``). ``mode``: ``"push"``
        (``events/stream``), ``"poll"`` (``events/poll``) or ``"webhook"`` (``events/subscribe``:
        the server POSTs each event to ``receiver``, a :class:`~langgraph_mcp.events.WebhookReceiver`
        it can reach); by default push when the type offers it, else poll, else webhook when a
        receiver is given. ``cursor``: resume after what a subscription handled (``None``: from
        now). ``poll_floor``: the least seconds between two polls (default 1; the server's
        ``nextPollMs`` can only lengthen it). ``max_events``: the most events one poll asks for.
        ``ttl_ms``: the webhook subscription's lifetime asked for (it is renewed at half the time
        the server grants). ``max_age_ms``: resuming from a cursor, events made more than this
        before the subscription started are not wanted (sent as ``maxAgeMs`` until the server
        answered from that cursor; one it gives all the same is left out by its timestamp, when
        the timestamp has a zone, and counted in ``too_old``). An event made since is never left
        out, however late it is read.

        A server that acts for each user is subscribed to as one of them, on that user's own
        session: with per-user OAuth, ``user`` names them and ``store`` holds their tokens (the
        graph's store, where they connected; nobody can be asked to connect here, so a user
        without tokens is refused when the subscription starts); with per-user credentials
        (``per_user`` headers), ``credentials`` are their headers.

        Nothing is sent until the first ``anext``; a subscription that cannot start raises there:
        :class:`~langgraph_mcp.MCPConfigError` (no events extension, no such type, not in that
        mode), :class:`~langgraph_mcp.MCPConnectionError` (a user without tokens), or as for any
        request. See :class:`~langgraph_mcp.events.EventSubscription`.

        Raises:
            MCPConfigError: a per-user server without the user (or credentials) to subscribe
                as, or a user or credentials given for a server shared by everyone.
        """
        shared = self.connection(server)
        oauth = per_user_oauth(shared.config)
        if oauth is not None:
            if user is None or store is None:
                why = (
                    "the server has per-user OAuth: subscribe as a user (user=, and store= with their tokens)"
                )
                raise MCPConfigError(server, "user", why)
            return EventSubscription(
                shared, name, session=lambda: stored_user_session(self, shared, user, store), **options
            )
        if self.per_user(server):
            if not credentials:
                raise MCPConfigError(
                    server, "credentials", "the server acts for each user: give their credentials"
                )
            return EventSubscription(
                shared, name, session=lambda: credential_session(self, server, None, credentials), **options
            )
        if user is not None or credentials is not None:
            why = "the server is shared by everyone: its events are subscribed to without a user"
            raise MCPConfigError(server, "user" if user is not None else "credentials", why)
        return EventSubscription(shared, name, **options)

    async def list_prompts(self, server: str) -> list[types.Prompt]:
        """``server``'s prompts, every page; cached like :meth:`list_resources` (until
        ``notifications/prompts/list_changed``, a new session, or the end of its lifetime)."""
        return await prompts.list_prompts(self._for_anyone(server))

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, Any] | None = None
    ) -> list[BaseMessage]:
        """Prompt ``name`` of ``server`` filled with ``arguments``, as LangChain messages
        (``user`` -> ``HumanMessage``, ``assistant`` -> ``AIMessage``; text, images, audio,
        embedded resources and links as content blocks). The arguments are checked against the
        prompt's declared ones before anything is sent.

        Raises:
            MCPArgumentError: no such prompt; an unknown, missing or non-string argument.
            MCPServerError: the server refused.
            MCPConnectionError: the server could not be reached.
            MCPTimeoutError: the server did not answer within its ``timeout``.
            MCPProtocolError: the server's answer broke the protocol.
        """
        return await prompts.get_prompt(self._for_anyone(server), name, arguments)

    async def complete(
        self,
        server: str,
        *,
        argument: str,
        value: str,
        prompt: str | None = None,
        template: str | None = None,
        context: Mapping[str, str] | None = None,
    ) -> types.Completion:
        """Completions for ``argument`` of a prompt (``prompt=`` its name) or a resource template
        (``template=`` its ``uriTemplate`` or its ``name``), given the text typed so far (``value``) and the
        arguments already chosen (``context``): ``.values``, ``.total``, ``.has_more``. A server
        without the ``completions`` capability gives no values.

        Raises:
            MCPArgumentError: neither or both of ``prompt`` / ``template``.
            MCPServerError: the server refused.
            MCPConnectionError: the server could not be reached.
            MCPTimeoutError: the server did not answer within its ``timeout``.
        """
        return await prompts.complete(
            self._for_anyone(server),
            argument=argument,
            value=value,
            prompt=prompt,
            template=template,
            context=context,
        )

    async def start(self) -> None:
        """Connect every server now, concurrently; apply ``on_connection_error``. A ``lazy``
        server whose tools the catalog holds is not started (its tools are read from it)."""
        await self.list_all_tools()

    async def list_all_tools(self) -> dict[str, list[types.Tool]]:
        """Every reachable server's tool listing, in configuration order.

        A server that cannot be reached is left out (with one warning per failure); it is tried
        again on a later call once its back-off has passed.
        """
        names = list(self.connections)
        results = await asyncio.gather(
            *(self._listing(self.connections[n]) for n in names), return_exceptions=True
        )
        listings: dict[str, list[types.Tool]] = {}
        failures: dict[str, Exception] = {}
        for name, result in zip(names, results, strict=True):
            if isinstance(result, MCPAuthenticationError) and self.per_user(name):
                # It lists only for a signed-in user: each user's tools are listed with their own
                # token (the per-user catalog); no shared tool is offered, and nothing failed.
                if name not in self.signin_only:
                    self.signin_only.add(name)
                    logger.info(
                        "MCP server %r lists its tools only for a signed-in user: each user's tools "
                        "are listed with their own token",
                        name,
                    )
                listings[name] = []
                self._reported.pop(name, None)
                continue
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                failures[name] = result
                continue
            self.signin_only.discard(name)
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

    def per_user(self, server: str) -> bool:
        """Does ``server`` act for each user (per-user OAuth, or credentials its runs carry in
        headers: :meth:`acts_per_user`): its sessions, listings and calls are each user's own?"""
        self.connection(server)
        return server in self.per_user_servers

    def acts_per_user(self, server: str) -> None:
        """Mark ``server`` as acting for each user by the credentials its runs carry in headers
        (a face's ``ToolOptions(per_user=True)``): it is never spoken to without them."""
        self.connection(server)
        self.per_user_servers = self.per_user_servers | {server}

    async def _listing(self, connection: ServerConnection) -> list[types.Tool]:
        """A server's tools as offered: its listing, plus the read tool if configured; for a
        ``lazy`` server not started yet, what the catalog holds, if anything."""
        if self.waiting(connection.name) and self.catalog is not None:
            kept = await self.catalog.tools_for(connection.name, connection.config)
            if kept is not None and self.waiting(connection.name):
                return kept
        return await self.live_tools(connection.name)

    def waiting(self, server: str) -> bool:
        """Is ``server`` a ``lazy`` one that has not been started yet (with a catalog)? Never a
        per-user server: its tools are each user's own, listed on the user's session when a run
        of theirs needs them."""
        connection = self.connection(server)
        return (
            self.catalog is not None
            and connection.config.lazy
            and connection.connects == 0
            and not self.per_user(server)
        )

    async def live_tools(self, server: str) -> list[types.Tool]:
        """``server``'s tools as it lists them now, starting it if needed (bounded by its
        ``connect_timeout``); written to the catalog if they changed.

        Raises:
            MCPConnectionError: it could not be started or reached.
        """
        connection = self.connection(server)
        tools = await resources.with_read_tool(connection, await connection.list_tools())
        if self.catalog is not None and await self.catalog.record(
            server, connection.config, tools, connection.era
        ):
            logger.info("MCP server %r: its tools changed since the catalog kept them", server)
        return tools

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
