"""One subscription to an MCP server's events, as an async iterator of :class:`MCPEvent`.

The client side of the events extension (SEP-3415 draft) for one event type and its arguments,
delivered by poll, push or webhook:

- **poll**: ``events/poll`` from the cursor; while ``hasMore``, at once; else after ``nextPollMs``,
  never sooner than ``poll_floor`` seconds (default 1 s); a poll that cannot reach the server (or
  times out) is tried again, from the same cursor, after a back-off; an answer that cannot be read
  (over :data:`~langgraph_mcp._session.eventwire.MAX_PAGE_EVENTS` events, or not one) is asked
  again at once for half as many events (``maxEvents``), down to one; a ``truncated`` answer's fresh cursor is
  kept (history was lost: :attr:`EventSubscription.gaps` counts it); a ``null`` cursor is never
  kept nor sent back (the next poll asks with ``null``);
- **push**: ``events/stream`` from the cursor; the cursor of each ``active``, ``event`` and
  ``heartbeat`` frame is kept; a stream silent for twice the longest gap seen between its
  heartbeats (30 s assumed before two arrived) is dead and opened again from the cursor; one that
  ends or fails is opened again after a back-off; ``terminated`` ends the subscription
  (:class:`~langgraph_mcp.MCPServerError`);
- **webhook**: ``events/subscribe`` with a URL of a :class:`~langgraph_mcp._events.webhooks.
  WebhookReceiver` (one path per subscription) and a fresh secret; renewed (same URL, type and
  arguments, from the cursor) at half the time left before ``refreshBefore``; each delivery's
  signature and freshness are checked by the receiver; a ``gap`` keeps its cursor and counts,
  ``terminated`` ends the subscription.

Either way, after ``notifications/events/list_changed`` the types are listed again, and a type
gone, or no longer offered in the mode, ends the subscription.

**Cursors and at-least-once.** :attr:`EventSubscription.cursor` is the position after the events
given so far (of a poll page, after its last event; a server that gives each polled event its own
cursor, after each). Keep it after handling each event and resume from it: nothing is lost, and
only what was handled but not yet kept (and the rest of a poll page) is given again. The iterator
reads only while the consumer waits for the next event: a stream or poll loop is not run ahead
(a webhook subscription is renewed on time regardless). Within a subscription an event id is
given once (the last :data:`SEEN_IDS` ids are remembered). Events that are too large, too deep or
not the shape are refused, counted in :attr:`EventSubscription.refused`, never given.
"""

from __future__ import annotations

import asyncio
import collections
import datetime
import logging
import math
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from langgraph_mcp._events.webhooks import WebhookReceiver, new_secret, subscription_path
from langgraph_mcp._session.era import MODERN
from langgraph_mcp._session.eventroutes import StreamFrame
from langgraph_mcp._session.events import (
    declares_events,
    event_stream,
    list_event_types,
    poll_events,
    subscribe_webhook,
    unsubscribe_webhook,
)
from langgraph_mcp._session.eventwire import (
    DELIVERY_MODES,
    EVENTS_EXTENSION,
    MAX_PAGE_EVENTS,
    DeliveryMode,
    EventOccurrence,
    error_name,
    occurrence_or_refusal,
)
from langgraph_mcp._session.tasklisten import listen_extension
from langgraph_mcp.errors import (
    MCPAuthenticationError,
    MCPConfigError,
    MCPConnectionError,
    MCPError,
    MCPProtocolError,
    MCPServerError,
    MCPTimeoutError,
)

if TYPE_CHECKING:
    from langgraph_mcp._session.connection import ServerConnection

__all__ = ["ASSUMED_HEARTBEAT", "SEEN_IDS", "EventSubscription", "MCPEvent", "SubscriptionOptions"]

logger = logging.getLogger("langgraph_mcp.events")

ASSUMED_HEARTBEAT = 30.0
"""Seconds between a pushed stream's heartbeats assumed until two arrived (the draft: at least
every 30 s)."""

SEEN_IDS = 10_000
"""Event ids a subscription remembers to give each event once."""

MAX_DRAIN = 100
"""Pages polled back to back while the server says more are waiting; then it waits as usual."""

MAX_WAIT = 3600.0
"""The longest wait between two polls, whatever the server's ``nextPollMs``."""

STABLE = 30.0
"""A stream open this long that ended served: it is reopened without a growing back-off."""

UNSUBSCRIBE_TIMEOUT = 5.0
"""Seconds an ended webhook subscription waits for its ``events/unsubscribe``."""

MIN_RENEWAL = 1.0
"""The least seconds between two renewals of a webhook subscription (a ``refreshBefore`` in the
past, or a clock far off, does not make it renew in a loop)."""

NO_EXPIRY_RENEWAL = 3600.0
"""Seconds between renewals of a webhook subscription granted with no expiry (the draft: renew
occasionally even then)."""

_RETRY = (0.5, 30.0)
"""A stream that ended or failed is opened again after this many seconds, doubling up to the
second value; a stream that delivered something starts the back-off again."""


@dataclass(frozen=True)
class MCPEvent:
    """One event of an MCP server (the events extension).

    ``event_id`` is the server's id of the event, unique for it: the key to give an event at most
    once. ``cursor`` is the subscription's position after it (``None``: the type keeps no history,
    or the position is after the page the event came in).
    """

    server: str
    name: str
    event_id: str
    timestamp: str
    data: dict[str, Any]
    arguments: dict[str, Any] = field(default_factory=dict)
    cursor: str | None = None

    def fields(self) -> dict[str, Any]:
        """The event as JSON: its server, name, id, time, the subscription's arguments and its
        data (not the cursor: a position of the subscription, not of the event)."""
        return {
            "server": self.server,
            "name": self.name,
            "event_id": self.event_id,
            "timestamp": self.timestamp,
            "arguments": self.arguments,
            "data": self.data,
        }

    @classmethod
    def of(cls, server: str, arguments: Mapping[str, Any], occurrence: EventOccurrence) -> MCPEvent:
        return cls(
            server=server,
            name=occurrence.name,
            event_id=occurrence.event_id,
            timestamp=occurrence.timestamp,
            data=occurrence.data,
            arguments=dict(arguments),
            cursor=occurrence.cursor,
        )


class SubscriptionOptions(TypedDict, total=False):
    """The options of a subscription (:class:`EventSubscription`; ``MCPPool.events`` takes them
    as keywords): its arguments, mode, starting cursor, poll pacing and webhook receiver."""

    arguments: Mapping[str, Any] | None
    mode: DeliveryMode | None
    cursor: str | None
    poll_floor: float
    max_events: int | None
    receiver: WebhookReceiver | None
    ttl_ms: int | None
    max_age_ms: int | None


class EventSubscription(AsyncIterator[MCPEvent]):
    """The events of one type (and arguments) of one server, in the order sent, each once.

    Made by :meth:`MCPPool.events <langgraph_mcp.MCPPool.events>`. Iterate it (``async for``);
    :meth:`aclose` (or ``async with``) stops it. Keep :attr:`cursor` to resume later, in this or
    another process, with ``cursor=``.
    """

    def __init__(
        self,
        connection: ServerConnection,
        name: str,
        *,
        arguments: Mapping[str, Any] | None = None,
        mode: DeliveryMode | None = None,
        cursor: str | None = None,
        poll_floor: float = 1.0,
        max_events: int | None = None,
        receiver: WebhookReceiver | None = None,
        ttl_ms: int | None = None,
        max_age_ms: int | None = None,
        session: Callable[[], AbstractAsyncContextManager[ServerConnection]] | None = None,
    ) -> None:
        if mode is not None and mode not in DELIVERY_MODES:
            raise MCPConfigError(connection.name, "mode", f"events of {name!r}: no delivery mode {mode!r}")
        if mode == "webhook" and receiver is None:
            raise MCPConfigError(
                connection.name,
                "receiver",
                f"events of {name!r} by webhook need a WebhookReceiver",
            )
        if max_age_ms is not None and max_age_ms < 1:
            raise MCPConfigError(connection.name, "max_age_ms", "must be 1 ms or more")
        if not (poll_floor >= 0 and math.isfinite(poll_floor)):
            raise MCPConfigError(
                connection.name, "poll_floor", "must be a finite number of seconds, 0 or more"
            )
        self.connection = connection
        self.server = connection.name
        self.name = name
        self.arguments: dict[str, Any] = dict(arguments or {})
        self.mode: DeliveryMode | None = mode
        """The mode asked for; once started, the mode in use."""
        self.cursor: str | None = cursor
        """The position after the events given so far and handled (see the module docs)."""
        self.gaps = 0
        """Times the server said events were lost (its history did not reach back to the
        cursor)."""
        self.refused = 0
        """Events refused (too large, too deep, or not an event)."""
        self.too_old = 0
        """Events left out for having been made more than ``max_age_ms`` before the subscription
        started (by their timestamp), sent by a server all the same."""
        self.poll_floor = poll_floor
        self.max_events = max_events
        self.receiver = receiver
        self.ttl_ms = ttl_ms
        self.max_age_ms = max_age_ms
        self._oldest: datetime.datetime | None = None
        """With ``max_age_ms``: the oldest time of an event wanted (set when the subscription
        starts)."""
        self._age_asked = False
        """Whether a request from the starting cursor was answered: ``maxAgeMs`` goes only with
        those (later ones resume from this subscription's own position)."""
        self._seen: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._run: AsyncGenerator[MCPEvent, None] | None = None
        self._changes = 0
        self._session = session
        """Opens the session the subscription runs on, when it is not ``connection`` (a user's
        own, on a server that acts for each user): held from the start to the end."""

    def __repr__(self) -> str:
        return f"EventSubscription({self.server!r}, {self.name!r}, mode={self.mode!r})"

    def __aiter__(self) -> EventSubscription:
        return self

    async def __anext__(self) -> MCPEvent:
        if self._run is None:
            self._run = self._events()
        return await self._run.__anext__()

    async def aclose(self) -> None:
        """Stop: an open stream is closed (its request cancelled)."""
        if self._run is not None:
            await self._run.aclose()

    async def __aenter__(self) -> EventSubscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- the loops -------------------------------------------------------------------------------

    async def _events(self) -> AsyncGenerator[MCPEvent, None]:
        if self.max_age_ms is not None:
            started = datetime.datetime.now(datetime.UTC)
            self._oldest = started - datetime.timedelta(milliseconds=self.max_age_ms)
        async with AsyncExitStack() as held:
            if self._session is not None:
                self.connection = await held.enter_async_context(self._session())
            events = self._events_on()
            try:
                async for event in events:
                    yield event
            finally:
                await events.aclose()  # its own clean-up (a stream, a webhook) before the session's

    async def _events_on(self) -> AsyncGenerator[MCPEvent, None]:
        self.mode = await self._chosen_mode()
        self._changes = self.connection.event_routes.list_changes
        loop = {"poll": self._poll, "push": self._push, "webhook": self._webhook}[self.mode]()
        async with AsyncExitStack() as stack:
            if self._hears_list_changes():
                # The draft delivers notifications/events/list_changed only on a listen stream
                # that opted in (counted where it arrives, like one sent with a poll's answer).
                listening = asyncio.ensure_future(self._listen_for_changes())
                stack.push_async_callback(_cancelled, listening)
            try:
                async for event in loop:
                    yield event
            finally:
                await loop.aclose()

    async def _listen_for_changes(self) -> None:
        """Keep a ``subscriptions/listen`` with ``eventsListChanged`` open, opened anew after a
        back-off (5 s, doubling to five minutes) when it ends or is refused."""
        pause = 5.0
        while True:
            began = time.monotonic()
            changes = {"eventsListChanged": True}
            async with listen_extension(self.connection, changes, "listen for event type changes") as frames:
                with suppress(anyio.EndOfStream, anyio.ClosedResourceError):
                    async for frame in frames:
                        if frame.kind == "ended":
                            break
            if time.monotonic() - began > 60.0:
                pause = 5.0
            await anyio.sleep(pause)
            pause = min(pause * 2, 300.0)

    def _hears_list_changes(self) -> bool:
        """Does the server say its event types change (``listChanged``), on a 2026-07-28 session
        (where such notifications come only through ``subscriptions/listen``)?"""
        declared = self.connection.server_extensions.get(EVENTS_EXTENSION)
        return (
            self.connection.era == MODERN
            and isinstance(declared, Mapping)
            and declared.get("listChanged") is True
        )

    async def _chosen_mode(self) -> DeliveryMode:
        """The mode to read in: the one asked for, else push when offered, else poll.

        Raises:
            MCPConfigError: the server has no events, no such type, or not in that mode.
        """
        await self.connection.connect()
        if not declares_events(self.connection):
            raise MCPConfigError(self.server, None, "the server does not declare the events extension")
        offered = await self._offered()
        if self.mode is not None:
            if self.mode not in offered:
                raise MCPConfigError(
                    self.server, "mode", f"event type {self.name!r} is not delivered by {self.mode!r} here"
                )
            return self.mode
        for mode in DELIVERY_MODES:
            if mode in offered and (mode != "webhook" or self.receiver is not None):
                return mode
        raise MCPConfigError(
            self.server, "receiver", f"event type {self.name!r} is delivered only by webhook: give a receiver"
        )

    async def _offered(self) -> tuple[DeliveryMode, ...]:
        for kind in await list_event_types(self.connection):
            if kind.name == self.name:
                return kind.delivery
        raise MCPConfigError(self.server, None, f"the server has no event type {self.name!r}")

    async def _check_list(self) -> None:
        """After ``list_changed``: the type is listed again; gone, or no longer in the mode, the
        subscription ends."""
        changes = self.connection.event_routes.list_changes
        if changes == self._changes:
            return
        self._changes = changes
        offered = await self._offered()
        if self.mode not in offered:
            raise MCPConfigError(
                self.server, "mode", f"event type {self.name!r} is no longer delivered by {self.mode!r}"
            )

    def _older_than_wanted(self, stamp: str) -> bool:
        """Whether an event of time ``stamp`` (ISO 8601) was made before the oldest time wanted
        (``max_age_ms`` before the subscription started: an event made since is never too old,
        however late it is read); a time that cannot be read, or has no zone, is not."""
        if self._oldest is None:
            return False
        try:
            at = datetime.datetime.fromisoformat(stamp.replace(" ", "T", 1))
        except ValueError:
            return False
        return at.tzinfo is not None and at < self._oldest

    def _age_to_ask(self) -> int | None:
        """``maxAgeMs`` for the next request: only until one from the starting cursor was
        answered, counted from when the subscription started."""
        if self._oldest is None or self._age_asked:
            return None
        return max(1, round((datetime.datetime.now(datetime.UTC) - self._oldest).total_seconds() * 1000))

    def _given(self, raw: Any) -> MCPEvent | None:
        """``raw`` as an event to give, or ``None``: refused, or given already. An event of
        another type than the subscription's is refused."""
        refused = raw.get("refused") if isinstance(raw, Mapping) else None
        occurrence = refused if isinstance(refused, str) else occurrence_or_refusal(raw)
        if isinstance(occurrence, EventOccurrence) and occurrence.name != self.name:
            occurrence = "it is of another event type than the subscription's"
        if isinstance(occurrence, str):
            self.refused += 1
            logger.warning(
                "MCP server %r: an event of %r was refused: %s", self.server, self.name, occurrence
            )
            return None
        if occurrence.event_id in self._seen:
            return None
        if self._older_than_wanted(occurrence.timestamp):
            self.too_old += 1
            if self.too_old in (1, 10, 100, 1000) or self.too_old % 10_000 == 0:
                logger.info(
                    "MCP server %r: %d events of %r were older than wanted (max_age_ms); left out",
                    self.server,
                    self.too_old,
                    self.name,
                )
            return None
        self._seen[occurrence.event_id] = None
        if len(self._seen) > SEEN_IDS:
            self._seen.popitem(last=False)
        return MCPEvent.of(self.server, self.arguments, occurrence)

    async def _poll(self) -> AsyncGenerator[MCPEvent, None]:
        drained = 0
        retry = _RETRY[0]
        asking = self.max_events  # fewer after an answer that could not be read, then back
        while True:
            listed = False  # an unreadable listing is not an unreadable page
            try:
                await self._check_list()
                listed = True
                answer = await poll_events(
                    self.connection,
                    self.name,
                    self.arguments,
                    self.cursor,
                    max_events=asking,
                    max_age_ms=self._age_to_ask(),
                )
            except MCPProtocolError:
                # Not a poll answer: too many events in one page, or not one at all. Asked again
                # for half as many at once; an answer of one event that still cannot be read ends it.
                if not listed or asking == 1:
                    raise
                asking = max(1, min(asking or MAX_PAGE_EVENTS, MAX_PAGE_EVENTS) // 2)
                logger.warning(
                    "MCP server %r: an events/poll answer of %r could not be read; asking for %d events",
                    self.server,
                    self.name,
                    asking,
                )
                continue
            except (MCPConnectionError, MCPTimeoutError) as exc:
                if isinstance(exc, MCPAuthenticationError):
                    raise
                # The server is down or slow: asked again from the same cursor after a back-off,
                # as a pushed stream is opened again.
                await anyio.sleep(retry)
                retry = min(retry * 2, _RETRY[1])
                continue
            retry = _RETRY[0]
            self._age_asked = True
            if asking is not None and asking != self.max_events and len(answer.events) < asking:
                # A page that was not full (the backlog is read): back towards the pages asked for.
                asking *= 2
                if asking >= (self.max_events or MAX_PAGE_EVENTS):
                    asking = self.max_events
            last = len(answer.events) - 1
            for index, raw in enumerate(answer.events):
                event = self._given(raw)
                if event is None:
                    continue
                if index == last:  # the page's cursor is after its last event
                    self.cursor = answer.cursor
                elif event.cursor is not None:  # a server that says where each event ends
                    self.cursor = event.cursor
                yield event
            self.cursor = answer.cursor  # None: no history; the next poll asks from now
            if answer.truncated and answer.cursor is not None:
                self._gap()
            if answer.has_more and answer.events and drained < MAX_DRAIN:
                drained += 1
                continue  # more are waiting: at once (a page with none waits, as does a long drain)
            drained = 0
            wait = (answer.next_poll_ms if answer.next_poll_ms is not None else 1000) / 1000
            await anyio.sleep(min(max(wait, self.poll_floor), MAX_WAIT))

    async def _push(self) -> AsyncGenerator[MCPEvent, None]:
        retry = _RETRY[0]
        while True:
            await self._check_list()
            opened = time.monotonic()
            delivered = False
            async with event_stream(
                self.connection, self.name, self.arguments, self.cursor, max_age_ms=self._age_to_ask()
            ) as frames:
                longest: float | None = None
                last_beat: float | None = None
                alive = opened  # when the last event or heartbeat was received
                errors = 0
                while True:
                    silence = 2 * (longest if longest is not None else ASSUMED_HEARTBEAT)
                    current = await _next_frame(frames, alive + silence - time.monotonic())
                    if current is None:
                        logger.info(
                            "MCP server %r: the events stream of %r sent no event or heartbeat for %.1f s; "
                            "reopened",
                            self.server,
                            self.name,
                            silence,
                        )
                        break
                    if current.kind == "ended":
                        self._ended(current.error)
                        break
                    self._age_asked = True  # the stream is open: what it sends was asked with it
                    if current.kind == "terminated":
                        raise self._terminated(current.params)
                    if current.kind == "error":
                        errors += 1
                        if errors in (1, 10, 100, 1000):  # not once per frame: a server may send many
                            logger.warning(
                                "MCP server %r: the events stream of %r reported an error (%d so far)",
                                self.server,
                                self.name,
                                errors,
                            )
                        continue
                    if current.kind == "event":
                        alive = current.received
                        delivered = True
                        event = self._given(current.params)
                        if event is not None:
                            self._advance(current.params)  # the position after it, as it is given
                            yield event
                    elif current.kind == "heartbeat":
                        if last_beat is not None:
                            longest = max(longest or 0.0, current.received - last_beat)
                        last_beat = alive = current.received
                    elif current.kind == "active" and current.params.get("truncated") is True:
                        self._gap()
                    self._advance(current.params)
            if delivered or time.monotonic() - opened > STABLE:
                retry = _RETRY[0]  # it served: the back-off starts again
            if not delivered:
                await anyio.sleep(retry)  # a stream that served nothing is not reopened at once
                retry = min(retry * 2, _RETRY[1])

    async def _webhook(self) -> AsyncGenerator[MCPEvent, None]:
        assert self.receiver is not None  # checked when made
        receiver = self.receiver
        path = subscription_path(self.server, self.name, self.arguments)
        secret = new_secret()
        # Open before subscribing: the server's challenge may come before its answer.
        deliveries = receiver.open(path, secret)
        url = receiver.url(path)
        failed: list[BaseException] = []

        async def renew(deadline: float) -> None:
            """Renewed on time whether or not the consumer is reading (a slow consumer must not
            let it lapse); a renewal that fails ends the subscription with its error."""
            try:
                while True:
                    await anyio.sleep(max(deadline - anyio.current_time(), 0.0))
                    await self._check_list()
                    deadline = await self._subscribe(url, secret, first=False)
            except Exception as exc:
                failed.append(exc)
                receiver.close(path)

        renewing: asyncio.Future[None] | None = None
        try:
            renewing = asyncio.ensure_future(renew(await self._subscribe(url, secret, first=True)))
            while True:
                try:
                    delivery = await deliveries.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    if failed:
                        raise failed[0] from None
                    closed = "the webhook receiver was closed"
                    raise MCPConfigError(self.server, "receiver", closed) from None
                if delivery.kind == "terminated":
                    raise self._terminated(delivery.body)
                if delivery.kind == "gap":
                    self._gap()
                elif delivery.kind == "event":
                    event = self._given(delivery.body)
                    if event is not None:
                        self._advance(delivery.body)
                        yield event
                        continue
                self._advance(delivery.body)
        finally:
            if renewing is not None:
                renewing.cancel()
                with suppress(asyncio.CancelledError):
                    await renewing
            receiver.close(path)
            deliveries.close()
            # Ended here: the server stops sending (a later subscription from the kept cursor is
            # then a replay of what came after it). At worst the subscription lapses at its TTL.
            with anyio.CancelScope(shield=True), anyio.move_on_after(UNSUBSCRIBE_TIMEOUT), suppress(MCPError):
                await unsubscribe_webhook(self.connection, self.name, self.arguments, url)

    async def _subscribe(self, url: str, secret: str, *, first: bool) -> float:
        """``events/subscribe`` (first, or to renew: same URL, type and arguments, from the
        cursor); when to renew next (half the time left before ``refreshBefore``)."""
        answer = await subscribe_webhook(
            self.connection,
            self.name,
            self.arguments,
            url=url,
            secret=secret,
            cursor=self.cursor,
            ttl_ms=self.ttl_ms,
            max_age_ms=self._age_to_ask(),
        )
        self._age_asked = True
        if first and (answer.truncated or self.cursor is None):
            # Where it starts (None: no history): when its history no longer reaches back to the
            # cursor, the fresh position. (A renewal's is not taken: deliveries it made before
            # answering may not have been given yet, and they move the cursor themselves.)
            self.cursor = answer.cursor
        if answer.truncated:
            self._gap()
        now = anyio.current_time()
        left = _seconds_until(answer.refresh_before)
        return now + (
            NO_EXPIRY_RENEWAL if left is None else min(max(left / 2, MIN_RENEWAL), NO_EXPIRY_RENEWAL)
        )

    def _advance(self, params: Mapping[str, Any]) -> None:
        """A frame's cursor is the position now (``null``: no history; absent: unchanged)."""
        if "cursor" not in params:
            return
        cursor = params["cursor"]
        if cursor is None or (isinstance(cursor, str) and len(cursor) <= 4096):
            self.cursor = cursor

    def _gap(self) -> None:
        self.gaps += 1
        logger.warning(
            "MCP server %r: events of %r were lost (its history was truncated)", self.server, self.name
        )

    def _ended(self, error: Exception | None) -> None:
        """A stream's request ended: reopened, unless the server refuses for good."""
        if isinstance(error, MCPAuthenticationError):
            raise error
        if isinstance(error, MCPServerError) and (
            error.code in (-32602, -32601)
            or error_name(error.code) in ("NotFound", "Forbidden", "Unsupported")
        ):
            raise error  # the server refuses the subscription: opening it again would not change that
        if error is not None and not isinstance(error, MCPError):
            raise error

    def _terminated(self, params: Mapping[str, Any]) -> MCPServerError:
        raw = params.get("error")
        error = raw if isinstance(raw, Mapping) else {}
        code = error.get("code")
        message = error.get("message")
        return MCPServerError(
            self.server,
            code if isinstance(code, int) and not isinstance(code, bool) else -32603,
            f"the server ended the events of {self.name!r}: "
            + (message[:200] if isinstance(message, str) and message else "terminated"),
        )


async def _next_frame(frames: MemoryObjectReceiveStream[StreamFrame], silence: float) -> StreamFrame | None:
    """The stream's next frame (one received already first, whatever the time); ``None`` after
    ``silence`` seconds without one. A stream that was dropped (it fell behind) reads as
    ``ended``."""
    try:
        return frames.receive_nowait()
    except anyio.WouldBlock:
        pass
    except (anyio.EndOfStream, anyio.ClosedResourceError):
        return StreamFrame("ended")
    with anyio.move_on_after(max(silence, 0.0)):
        try:
            return await frames.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return StreamFrame("ended")
    return None


def _seconds_until(moment: str | None) -> float | None:
    """Seconds from now until the ISO 8601 time ``moment`` (``None``: no time given, or not one;
    a time without a zone is UTC)."""
    if moment is None:
        return None
    try:
        when = datetime.datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return (when - datetime.datetime.now(datetime.UTC)).total_seconds()


async def _cancelled(task: asyncio.Task[None]) -> None:
    """Cancel ``task`` and wait until it ended."""
    task.cancel()
    with suppress(asyncio.CancelledError):
        await task
