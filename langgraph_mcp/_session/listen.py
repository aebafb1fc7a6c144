"""Keeping up with what changes on the server: list changes and updates of the resources
subscribed to.

2026-07-28: one ``subscriptions/listen`` stream (:meth:`Listen._listen`). 2025-11-25 and older:
list changes are pushed to the client (:class:`~langgraph_mcp._session.callbacks.Callbacks`) and
resources are watched with ``resources/subscribe`` (:meth:`Listen._keep_subscribed`). Which
resources are wanted, and who hears of their updates, is the session's
:class:`~langgraph_mcp._session.watch.ResourceWatch`.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Awaitable
from typing import Any

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.exceptions import MCPError as SDKError
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)

from langgraph_mcp._session import grace
from langgraph_mcp._session.failures import TRANSPORT_ERRORS
from langgraph_mcp._session.loops import LISTINGS, ConnectionBase
from langgraph_mcp._session.owner import Session
from langgraph_mcp._session.transports import describe
from langgraph_mcp._session.watch import ResourceWatch

__all__ = ["Listen"]

logger = logging.getLogger("langgraph_mcp.pool")

_LISTEN_TRIES = 3


class Listen(ConnectionBase):
    """The session's background work that keeps its listings and subscriptions current."""

    async def _listen(
        self, client: Client, session: Session, flags: dict[str, bool], watch: ResourceWatch | None
    ) -> None:
        """2026-07-28: one ``subscriptions/listen`` stream for the list changes the server offers
        and the resources subscribed to.

        When the set of resources changes, the next stream is opened before the current one is
        closed, so no update falls between them (one may come twice). If the server refuses
        that stream while the current one runs, the current one goes on and only the resources
        it does not cover are refused (their subscribers get the error). A stream that drops is
        opened again after ``grace.LISTEN_RETRY`` s (longer each time); when it opens, the cached
        listings are dropped and the subscribers hear of each of their resources once (what
        was sent meanwhile is lost). After ``_LISTEN_TRIES`` failures in a row (a stream that
        lasted under ``grace.LISTEN_STABLE`` s counts) the subscribers are told, and it is tried
        again after ``grace.LISTEN_PAUSE`` s, or as soon as a subscription comes or goes."""
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
                            self._tools_changed(notice=True)
                            self._lists_changed(*LISTINGS, notice=True)
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
                if stream.lasted() >= grace.LISTEN_STABLE:
                    failures = 0
                failures += 1
                missed = True
                logger.debug("MCP server %r: subscriptions/listen ended: %s", self.name, stream.reason)
                if watch is not None:
                    watch.dropped(session)
                if failures >= _LISTEN_TRIES:
                    if watch is not None:
                        watch.failed(session, f"subscriptions/listen kept failing: {stream.reason}")
                    with anyio.move_on_after(grace.LISTEN_PAUSE):
                        await _changed(watch, version)
                else:
                    await anyio.sleep(grace.LISTEN_RETRY * failures)

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
            self._tools_changed(notice=True)
        elif isinstance(event, ResourcesListChanged):
            self._lists_changed("resources", "resource_templates", notice=True)
        elif isinstance(event, PromptsListChanged):
            self._lists_changed("prompts", notice=True)
        elif isinstance(event, ResourceUpdated):
            self._resource_updated(event.uri)

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
                    except (SDKError, TimeoutError, *TRANSPORT_ERRORS) as exc:
                        watch.refused(session, uri, self.redact(describe(exc)))
                for uri in sorted(subscribed - wanted):
                    subscribed.discard(uri)
                    try:
                        with anyio.fail_after(self.config.connect_timeout):
                            await client.unsubscribe_resource(uri)
                    except (SDKError, TimeoutError, *TRANSPORT_ERRORS) as exc:
                        logger.debug(
                            "MCP server %r: resources/unsubscribe %s failed: %s",
                            self.name,
                            uri,
                            self.redact(describe(exc)),
                        )
            watch.listening(session, frozenset(subscribed))
            await watch.changed_since(version)


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
