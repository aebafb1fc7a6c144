"""Which resources are watched on one event loop's session, and who hears of their updates.

A :class:`ResourceWatch` belongs to a connection's
:class:`~langgraph_mcp._session.loops.LoopScope`. Subscribers (see
:func:`~langgraph_mcp._pool.resources.subscribe`) add their
URIs; the session's background work (``listen.Listen._listen`` on 2026-07-28,
``Listen._keep_subscribed`` before) asks the server for exactly the URIs wanted, reports what
it got with :meth:`ResourceWatch.listening`, and passes each ``resources/updated`` to
:meth:`ResourceWatch.updated`. Nothing here sends a request.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["ResourceWatch", "Subscriber"]


def covers(watched: str, uri: str) -> bool:
    """An update of ``uri`` concerns a subscription to ``watched``: the same resource, or one of
    its sub-resources (the protocol allows a server to name those)."""
    if uri == watched:
        return True
    base = watched if watched.endswith("/") else watched + "/"
    return uri.startswith(base)


class Subscriber:
    """One open subscription: its URIs and the updates not yet taken (each URI once)."""

    def __init__(self, uris: frozenset[str]) -> None:
        self.uris = uris
        self.session: Any = None
        """The session it was first confirmed on; a later session means updates may be missed."""
        self._pending: dict[str, None] = {}
        self._error: BaseException | None = None
        self._wake = asyncio.Event()

    def matches(self, uri: str) -> bool:
        return any(covers(watched, uri) for watched in self.uris)

    def push(self, uri: str) -> None:
        self._pending[uri] = None
        self._wake.set()

    def fail(self, error: BaseException) -> None:
        self._error = error
        self._wake.set()

    async def next(self) -> str:
        """The next updated URI (waits for one). Raises the error the subscription ended with."""
        while True:
            if self._pending:
                uri = next(iter(self._pending))
                del self._pending[uri]
                return uri
            if self._error is not None:
                raise self._error
            self._wake.clear()
            await self._wake.wait()


class ResourceWatch:
    """The URIs subscribers want on one loop's session, and the confirmations from the server."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._changed = asyncio.Event()
        self.version = 0
        """Bumped whenever a subscription comes or goes."""
        self._confirmed = asyncio.Event()
        self._live: tuple[Any, frozenset[str]] | None = None
        self._refused: dict[tuple[Any, str], str] = {}
        self._failed: dict[Any, str] = {}

    def wanted(self) -> frozenset[str]:
        """Every URI some open subscription watches."""
        return frozenset(uri for sub in self._subscribers for uri in sub.uris)

    def add(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)
        self._failed.clear()  # a new subscription tries again, whatever failed before
        self._bump_changed()

    def remove(self, subscriber: Subscriber) -> None:
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)
            self._bump_changed()
        # Forget refusals of URIs nobody waits for any more, and what dead sessions said.
        wanted = self.wanted()
        for key in [k for k in self._refused if k[1] not in wanted or k[0].stop.is_set()]:
            del self._refused[key]
        for session in [s for s in self._failed if s.stop.is_set()]:
            del self._failed[session]

    def snapshot(self) -> tuple[int, frozenset[str]]:
        """The :attr:`version` and the URIs wanted at it."""
        return self.version, self.wanted()

    async def changed_since(self, version: int) -> None:
        """Wait until a subscription came or went after :attr:`version` was ``version`` (a URI
        dropped and wanted again in between counts: the waiter must look again)."""
        while self.version == version:
            await self._changed.wait()

    def _bump_changed(self) -> None:
        self.version += 1
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    def _bump_confirmed(self) -> None:
        event, self._confirmed = self._confirmed, asyncio.Event()
        event.set()

    # -- reports from the session's background work ------------------------------------------

    def listening(self, session: Any, uris: frozenset[str], *, missed: bool = False) -> None:
        """The server now sends updates of ``uris`` on ``session``. Subscribers confirmed on an
        earlier session, or on this one before its update stream was lost (``missed``), hear of
        each of their URIs once: updates made meanwhile were not sent."""
        self._live = (session, uris)
        self._failed.pop(session, None)  # a stream is up again
        for sub in self._subscribers:
            if sub.session is not None and (missed or sub.session is not session) and sub.uris <= uris:
                for uri in sorted(sub.uris):
                    sub.push(uri)
                sub.session = session
        self._bump_confirmed()

    def refused(self, session: Any, uri: str, reason: str) -> None:
        """The server refused to send updates of ``uri`` on ``session``."""
        self._refused[(session, uri)] = reason
        self._bump_confirmed()

    def dropped(self, session: Any) -> None:
        """The session's update stream is down (2026-07-28): nothing is confirmed until it is up."""
        if self._live is not None and self._live[0] is session:
            self._live = None
        self._bump_confirmed()

    def failed(self, session: Any, reason: str) -> None:
        """The session's update stream kept failing (2026-07-28 ``subscriptions/listen``): every
        subscriber, and every one that waits for a confirmation, gets ``reason``."""
        self.dropped(session)
        self._failed[session] = reason
        for sub in self._subscribers:
            sub.fail(ConnectionError(reason))
        self._bump_confirmed()

    def updated(self, uri: str) -> None:
        """The server says ``uri`` changed: tell each subscriber it concerns."""
        for sub in self._subscribers:
            if sub.matches(uri):
                sub.push(uri)

    async def settled(self) -> None:
        """Wait until the server sends updates of no URI that nobody watches any more."""
        while self._live is not None and not self._live[1] <= self.wanted():
            await self._confirmed.wait()

    async def confirmed(self, subscriber: Subscriber, session: Any) -> None:
        """Wait until ``session`` sends updates of every URI of ``subscriber``.

        Raises:
            LookupError: the server refused one of the URIs (the reason is the message).
            ConnectionError: the update stream of ``session`` ended.
        """
        while True:
            for uri in sorted(subscriber.uris):
                reason = self._refused.get((session, uri))
                if reason is not None:
                    raise LookupError(f"resources/subscribe {uri} was refused: {reason}")
            if (reason := self._failed.get(session)) is not None:
                raise ConnectionError(reason)
            live = self._live
            if live is not None and live[0] is session and subscriber.uris <= live[1]:
                if subscriber.session is None:
                    subscriber.session = session
                return
            await self._confirmed.wait()
