"""MCP events on the wire (``io.modelcontextprotocol/events``, SEP-3415 draft): list the event
types, poll, open a pushed stream, subscribe a webhook, and route a stream's frames.

A server that declares the extension (:func:`declares_events`) lists its event types with
``events/list``. Each subscription (a type and its ``arguments``) is delivered in one mode:

- ``events/poll`` (:func:`poll_events`): the client asks; the answer has events, a cursor, and
  when to ask again;
- ``events/stream`` (:func:`event_stream`): one long request whose notifications are the frames
  ``notifications/events/active|event|heartbeat|error|terminated``, routed to it in the order
  received (:mod:`langgraph_mcp._session.eventroutes`);
- ``events/subscribe`` (:func:`subscribe_webhook`): the server POSTs each event to a URL.

What the client does with them (the loops, cursors, deduplication) is decided above this layer
(:mod:`langgraph_mcp._events`). Only MCP here: no LangGraph.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from anyio.streams.memory import MemoryObjectReceiveStream
from pydantic import BaseModel

from langgraph_mcp._compat.mcp import send_unchecked
from langgraph_mcp._session.eventroutes import StreamFrame, pushed_request
from langgraph_mcp._session.eventwire import (
    EVENTS_EXTENSION,
    EventType,
    PollAnswer,
    SubscribeAnswer,
)
from langgraph_mcp.errors import MCPProtocolError

if TYPE_CHECKING:
    from langgraph_mcp._session.connection import ServerConnection

__all__ = [
    "MAX_EVENT_TYPES",
    "MAX_LIST_PAGES",
    "declares_events",
    "event_stream",
    "list_event_types",
    "poll_events",
    "subscribe_webhook",
    "unsubscribe_webhook",
]

logger = logging.getLogger("langgraph_mcp.events")

_Answer = TypeVar("_Answer", bound=BaseModel)

MAX_EVENT_TYPES = 1000
"""``events/list`` stops after this many entries, valid or not."""

MAX_LIST_PAGES = 100
"""``events/list`` stops after this many pages (a server that pages for ever ends here)."""


def declares_events(connection: ServerConnection) -> bool:
    """Did the server declare the events extension on its live (or last) session?"""
    return EVENTS_EXTENSION in connection.server_extensions


async def list_event_types(connection: ServerConnection) -> list[EventType]:
    """Every event type of ``events/list`` (paged; stops at a repeated cursor, after
    :data:`MAX_EVENT_TYPES` entries or :data:`MAX_LIST_PAGES` pages). A type that is not valid is
    left out, with a warning.

    Raises:
        MCPServerError, MCPConnectionError, MCPTimeoutError: as for any request.
    """
    types: list[EventType] = []
    seen: set[str] = set()
    cursor: str | None = None
    entries: list[Any] = []
    for _page in range(MAX_LIST_PAGES):
        answer = await _ask(connection, "events/list", {"cursor": cursor} if cursor is not None else None)
        page = answer.get("events") if isinstance(answer, Mapping) else None
        entries.extend(page[: MAX_EVENT_TYPES - len(entries)] if isinstance(page, list) else [])
        following = answer.get("nextCursor") if isinstance(answer, Mapping) else None
        if (
            len(entries) >= MAX_EVENT_TYPES
            or not isinstance(following, str)
            or not following
            or following in seen
        ):
            break
        seen.add(following)
        cursor = following
    left_out = 0
    for raw in entries:
        try:
            types.append(EventType.model_validate(raw))
        except ValueError:
            left_out += 1
    if left_out:
        logger.warning(
            "MCP server %r: %d event types of events/list are not valid; left out", connection.name, left_out
        )
    return types


def _subscription(
    name: str, arguments: Mapping[str, Any], cursor: str | None, max_age_ms: int | None
) -> dict[str, Any]:
    """The params naming a subscription; ``maxAgeMs`` (the oldest event wanted, in ms before
    now) only with a cursor: from now there is nothing older to leave out."""
    params: dict[str, Any] = {"name": name, "arguments": dict(arguments), "cursor": cursor}
    if max_age_ms is not None and cursor is not None:
        params["maxAgeMs"] = max_age_ms
    return params


async def _ask(
    connection: ServerConnection,
    method: str,
    params: Mapping[str, Any] | None,
    *,
    about: str | None = None,
) -> Any:
    """One ``events/*`` request over the connection's live session: its answer as sent."""

    async def send(client: Any) -> Any:
        return await send_unchecked(client.session, method, params)

    return await connection.request(f"{method} {about}" if about else method, send)


def _read(connection: ServerConnection, model: type[_Answer], answer: Any, refusal: str) -> _Answer:
    """``answer`` read as ``model``.

    Raises:
        MCPProtocolError: it is not one (``refusal`` says what the answer is not).
    """
    try:
        return model.model_validate(answer)
    except ValueError:
        raise MCPProtocolError(connection.name, refusal) from None


async def poll_events(
    connection: ServerConnection,
    name: str,
    arguments: Mapping[str, Any],
    cursor: str | None,
    *,
    max_events: int | None = None,
    max_age_ms: int | None = None,
) -> PollAnswer:
    """One ``events/poll``: the events after ``cursor`` (``None``: from now), none older than
    ``max_age_ms``.

    Raises:
        MCPProtocolError: the answer is not a poll result.
        MCPServerError, MCPConnectionError, MCPTimeoutError: as for any request.
    """
    params = _subscription(name, arguments, cursor, max_age_ms)
    if max_events is not None:
        params["maxEvents"] = max_events
    answer = await _ask(connection, "events/poll", params, about=name)
    return _read(connection, PollAnswer, answer, f"its events/poll answer for {name} is not a poll result")


@asynccontextmanager
async def event_stream(
    connection: ServerConnection,
    name: str,
    arguments: Mapping[str, Any],
    cursor: str | None,
    *,
    max_age_ms: int | None = None,
) -> AsyncIterator[MemoryObjectReceiveStream[StreamFrame]]:
    """An ``events/stream`` open while in the block: its frames in the order sent, the last one
    ``ended`` (from ``cursor``, none older than ``max_age_ms``). Leaving the block cancels the
    request (the server ends the stream); it may be held across an async generator's yields."""
    params = _subscription(name, arguments, cursor, max_age_ms)
    async with pushed_request(connection, "events/stream", params, f"events/stream {name}") as frames:
        yield frames


async def subscribe_webhook(
    connection: ServerConnection,
    name: str,
    arguments: Mapping[str, Any],
    *,
    url: str,
    secret: str,
    cursor: str | None,
    ttl_ms: int | None = None,
    max_age_ms: int | None = None,
) -> SubscribeAnswer:
    """``events/subscribe`` of a webhook: create, or renew (same server, url, type and
    arguments), the subscription that POSTs events to ``url`` signed with ``secret``.

    Raises:
        MCPProtocolError: the answer is not a subscription.
        MCPServerError: refused (e.g. ``CallbackEndpointError``: the URL did not answer the
            server's challenge), MCPConnectionError, MCPTimeoutError: as for any request.
    """
    params = _subscription(name, arguments, cursor, max_age_ms)
    params["delivery"] = {"mode": "webhook", "url": url, "secret": secret}
    if ttl_ms is not None:
        params["ttlMs"] = ttl_ms
    answer = await _ask(connection, "events/subscribe", params, about=name)
    not_one = f"its events/subscribe answer for {name} is not a subscription"
    return _read(connection, SubscribeAnswer, answer, not_one)


async def unsubscribe_webhook(
    connection: ServerConnection, name: str, arguments: Mapping[str, Any], url: str
) -> None:
    """``events/unsubscribe`` of the webhook subscription of ``url``, type and arguments.

    Raises:
        MCPServerError (e.g. ``NotFound``), MCPConnectionError, MCPTimeoutError: as for any request.
    """
    params = {"name": name, "arguments": dict(arguments), "delivery": {"url": url}}
    await _ask(connection, "events/unsubscribe", params, about=name)
