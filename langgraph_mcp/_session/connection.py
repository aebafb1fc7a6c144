"""One server's connection: its sessions, listings, and the requests sent over them.

A :class:`ServerConnection` connects lazily, reconnects after its session died (see
:class:`~langgraph_mcp._session.owner.SessionOwner`), remembers the protocol era it negotiated so
reconnects skip the probe, caches the server's listings until they change or it reconnects, and
sends requests. It is put together from one part per concern:

* :class:`~langgraph_mcp._session.loops.ConnectionBase`: its state, and one session
  (:class:`~langgraph_mcp._session.loops.LoopScope`) per event loop that uses it;
* :class:`~langgraph_mcp._session.requests.Requests`,
  :class:`~langgraph_mcp._session.listings.Listings`,
  :class:`~langgraph_mcp._session.calls.Calls`: requests, listings, ``tools/call``;
* :class:`~langgraph_mcp._session.tasks.TaskRequests` (on the wire:
  :class:`~langgraph_mcp._session.taskwire.TaskHandle`,
  :class:`~langgraph_mcp._session.taskwire.TaskState`): calls answered with a task, followed to
  their result;
* :func:`~langgraph_mcp._session.failures.guarded`: the one translation of what the SDK and the
  transport raise (:mod:`langgraph_mcp.errors`);
* :class:`~langgraph_mcp._session.listen.Listen`: list changes and resource subscriptions;
  :class:`~langgraph_mcp._session.callbacks.Callbacks`: what the SDK calls.
* :class:`~langgraph_mcp._session.views.ViewCache`: the MCP Apps views its tools name, read once per
  session (:meth:`read_view`).

This module connects them to the session's life: how a session's ``Client`` is made, what is
learned when it connects, what runs beside it, and closing.
"""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from collections.abc import Awaitable
from typing import Any, cast

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.extension import advertise
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.exceptions import MCPError as SDKError

from langgraph_mcp._compat.mcp import complete_by_default, hook_notifications
from langgraph_mcp._session.callbacks import Callbacks
from langgraph_mcp._session.era import MODERN, client_info, is_handshake_version
from langgraph_mcp._session.eventwire import EVENTS_EXTENSION
from langgraph_mcp._session.listen import Listen
from langgraph_mcp._session.loops import CLOSE_GRACE, LISTINGS, LoopScope
from langgraph_mcp._session.owner import CLOSE_TIMEOUT, Session
from langgraph_mcp._session.process import ServerProcess
from langgraph_mcp._session.skillwire import SKILLS_EXTENSION
from langgraph_mcp._session.tasks import TaskRequests
from langgraph_mcp._session.taskwire import TASKS_EXTENSION
from langgraph_mcp._session.transports import describe
from langgraph_mcp._session.views import APP_MIME_TYPE, APPS_EXTENSION, View, parse_view
from langgraph_mcp.errors import MCPProtocolError

__all__ = ["ServerConnection"]

logger = logging.getLogger("langgraph_mcp.pool")

_APPS = advertise(APPS_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})
"""What a client hosting MCP Apps views advertises (servers with ``apps: true``)."""
_TASKS = advertise(TASKS_EXTENSION)
"""The tasks extension (servers with ``tasks: true``, the default): calls may come back as tasks."""
_SKILLS = advertise(SKILLS_EXTENSION)
"""The skills extension (servers with ``skills: true``, the default): the extension defines no
client settings, but servers may refuse ``skills/list`` to a client that does not declare it."""
_EVENTS = advertise(EVENTS_EXTENSION)
"""The client reads events (it MAY say so: the extension's requests are all the client's)."""
_SAMPLING_TOOLS = types.SamplingCapability(tools=types.SamplingToolsCapability())
"""``sampling.tools``: declared when the server's ``sampling_model`` can be given tools."""


class ServerConnection(TaskRequests, Listen, Callbacks):
    """One server's long-lived session, its listings, and the requests sent over it.

    ``fallback`` answers the server's requests that belong to no call (see
    :class:`~langgraph_mcp._session.routing.Router`).
    ``default_timeout`` bounds a call when neither the tool nor the configuration sets a limit.
    Sessions are bound to an event loop, so a connection keeps one session per event loop that
    uses it (see :class:`~langgraph_mcp._session.loops.LoopScope`). A loop's session is stopped
    once that loop is closed, and :meth:`aclose` stops them all.
    """

    def __repr__(self) -> str:
        where = f"transport={self.transport!r}, protocol={self.protocol_version!r}"
        return f"ServerConnection({self.name!r}, {where})"

    # -- a session's life (run in its owner task) ------------------------------------------------

    def _new_client(self, target: Any) -> Client:
        return Client(
            target,
            mode=cast(Any, self._mode),
            prior_discover=self._prior_discover,
            client_info=client_info(),
            message_handler=self._on_message,
            logging_callback=self._on_log,
            elicitation_callback=self._on_elicit,
            sampling_callback=self._on_sample,
            sampling_capabilities=_SAMPLING_TOOLS if self.config.samples_with_tools else None,
            list_roots_callback=self._on_roots,
            cache=None,
            extensions=[
                *([_APPS] if self.config.apps else []),
                *([_TASKS] if self.config.tasks else []),
                *([_SKILLS] if self.config.skills else []),
                _EVENTS,
            ],
        )

    async def _connected(self, session: Session) -> None:
        client = session.client
        assert client is not None
        self.protocol_version = client.protocol_version
        extensions = client.server_capabilities.extensions
        self.server_extensions = dict(extensions) if isinstance(extensions, dict) else {}
        self.instructions = client.instructions if isinstance(client.instructions, str) else None
        self.offers_tasks = TASKS_EXTENSION in self.server_extensions
        legacy = client.server_capabilities.tasks
        self.legacy_tasks = bool(
            legacy is not None
            and legacy.requests is not None
            and legacy.requests.tools is not None
            and legacy.requests.tools.call is not None
        )
        if not is_handshake_version(client.protocol_version):
            complete_by_default(client.session)
        hook_notifications(client.session, self.event_routes.take)  # pushed events, in order
        self._tools_changed()
        self._lists_changed(*LISTINGS)
        self.reads.clear()  # updates sent while no session was open were lost
        if self._mode == "auto":  # remember the era: reconnects skip the probe
            if is_handshake_version(client.protocol_version):
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
        except (SDKError, TimeoutError) as exc:  # many servers do not implement logging/setLevel
            logger.debug(
                "MCP server %r: logging/setLevel %s refused: %s", self.name, level, self.redact(describe(exc))
            )

    # -- MCP Apps ------------------------------------------------------------------------------

    async def read_view(self, uri: str) -> View:
        """The ``ui://`` view at ``uri``, read with ``resources/read`` once per session and kept
        until the server says it (or its resource list) changed (see
        :class:`~langgraph_mcp._session.views.ViewCache`).

        Raises:
            MCPConnectionError, MCPTimeoutError, MCPServerError, MCPProtocolError: as for any
            request; MCPProtocolError also when the answer holds no view for ``uri``.
        """
        session = await self._session()
        version, epoch = self._list_versions["resources"], self.views.epoch
        cached = self.views.get(uri, session, version)
        if cached is not None:
            return cached
        result = await self.request(f"resources/read {uri}", lambda client: client.read_resource(uri))
        try:
            view = parse_view(uri, result)
        except ValueError as exc:
            raise MCPProtocolError(self.name, self.redact(f"the view {uri} cannot be shown: {exc}")) from None
        if (
            version == self._list_versions["resources"]
            and epoch == self.views.epoch
            and session is self.scope().owner.session
        ):
            self.views.put(view, session, version)
        return view

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
        try:
            results = await asyncio.gather(*closing, return_exceptions=True)
        finally:
            if self._owns_http_pool and self.http_pool is not None:
                await self.http_pool.aclose()  # (pools still borrowed close with their last session)
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
        deadline = time.monotonic() + CLOSE_TIMEOUT + CLOSE_GRACE
        while not future.done() and scope.loop.is_running() and time.monotonic() < deadline:
            await asyncio.wait({future}, timeout=0.05)
        if future.done() and not future.cancelled() and future.exception() is None:
            return
        if not future.done():
            future.cancel()
        await _stop(scope.owner.abandon())  # (nothing left to stop if it did close)


async def _stop(process: ServerProcess | None) -> None:
    if process is not None:
        await process.stop()
