"""The frames of pushed streams, routed to their streams in the order received.

A pushed stream is one long request whose notifications each name the request in
``_meta["io.modelcontextprotocol/subscriptionId"]``: an events stream (``events/stream``, frames
``notifications/events/active|event|heartbeat|error|terminated``) or a task status stream
(``subscriptions/listen`` for task ids, frames ``notifications/subscriptions/acknowledged`` and
``notifications/tasks``). :class:`EventRoutes` sees every notification of the session first
(:func:`~langgraph_mcp._compat.mcp.hook_notifications`), in receive order, and hands each open
stream its own frames; ``notifications/events/list_changed`` is counted. A listen stream that is
not one of these (the SDK's own, for list changes) is left to the SDK.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Literal, Protocol

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from langgraph_mcp._compat.mcp import send_unchecked
from langgraph_mcp._session.eventwire import MAX_EVENT_BYTES, SUBSCRIPTION_META

__all__ = ["STREAM_BUFFER", "EventRoutes", "FrameKind", "StreamFrame", "pushed_request"]

logger = logging.getLogger("langgraph_mcp.events")

STREAM_BUFFER = 1000
"""Frames of one pushed stream held until read; one more ends the stream (it is reopened from
its cursor, so nothing is lost, at worst sent twice)."""

_FRAMES = "notifications/events/"
_LIST_CHANGED = "notifications/events/list_changed"
_LISTEN_FRAMES = {"notifications/subscriptions/acknowledged": "acknowledged", "notifications/tasks": "task"}

_TASK_FIELDS = ("taskId", "status", "pollIntervalMs")
_QUESTION_KEYS_MAX = 32
_KEY_MAX = 256

FrameKind = Literal["active", "event", "heartbeat", "error", "terminated", "acknowledged", "task", "ended"]
"""A pushed stream's frame (``ended``: the stream is over, see :attr:`StreamFrame.error`)."""


@dataclass(frozen=True)
class StreamFrame:
    """One frame of a pushed stream: its kind and params as sent (``_meta`` left in). ``ended``
    closes the stream: ``error`` is why (``None``: the server answered the request, or the
    stream fell behind and was dropped)."""

    kind: FrameKind
    params: Mapping[str, Any] = field(default_factory=dict)
    error: Exception | None = None
    received: float = field(default_factory=time.monotonic)
    """When it was received (``time.monotonic()``): a stream's liveness is judged by when its
    frames came, not by when a slow reader got to them."""


class EventRoutes:
    """The session's open pushed streams by request id, and the event types' list changes.

    :meth:`take` runs on the session's receive path, in receive order (see
    :func:`~langgraph_mcp._compat.mcp.hook_notifications`); it never blocks."""

    def __init__(self) -> None:
        self._streams: dict[str, MemoryObjectSendStream[StreamFrame]] = {}
        self.list_changes = 0
        """How many ``notifications/events/list_changed`` were received (a loop that saw fewer
        lists again)."""

    def open(self, request_id: str) -> MemoryObjectReceiveStream[StreamFrame]:
        send, receive = anyio.create_memory_object_stream[StreamFrame](STREAM_BUFFER)
        self._streams[request_id] = send
        return receive

    def close(self, request_id: str) -> None:
        send = self._streams.pop(request_id, None)
        if send is not None:
            send.close()

    def end(self, request_id: str, error: Exception | None) -> None:
        """The stream's request finished (answered, failed): its reader gets ``ended``."""
        send = self._streams.get(request_id)
        if send is not None:
            with suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                send.send_nowait(StreamFrame("ended", error=error))
            self.close(request_id)

    def take(self, method: str, params: Mapping[str, Any] | None) -> bool:
        if method == _LIST_CHANGED:
            self.list_changes += 1
            return True
        listen_kind = _LISTEN_FRAMES.get(method)
        if listen_kind is None and not method.startswith(_FRAMES):
            return False
        meta = params.get("_meta") if isinstance(params, Mapping) else None
        request_id = meta.get(SUBSCRIPTION_META) if isinstance(meta, Mapping) else None
        send = self._streams.get(request_id) if isinstance(request_id, str) else None
        if listen_kind is not None:
            if send is None or params is None:
                return False  # the SDK's own listen stream, or none: the SDK decides
            kind = listen_kind
        else:
            if send is None or params is None:
                return True  # a frame of no stream of ours (one we closed): dropped
            kind = method[len(_FRAMES) :]
            if kind not in ("active", "event", "heartbeat", "error", "terminated"):
                return True
        if kind == "task":
            params = _task_frame(params, request_id)  # type: ignore[arg-type]  # a str, checked above
        if kind == "event" and _too_large(params):
            # Refused where it is received, not held: the reader counts it refused.
            params = {"_meta": meta, "refused": f"it is over {MAX_EVENT_BYTES} bytes long"}
        try:
            send.send_nowait(StreamFrame(kind, params))  # type: ignore[arg-type]  # checked above
        except anyio.WouldBlock:
            logger.warning(
                "an events stream fell %d frames behind; it is reopened from its cursor", STREAM_BUFFER
            )
            self.close(request_id)  # type: ignore[arg-type]  # a str, checked above
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._streams.pop(request_id, None)  # type: ignore[arg-type]
        return True


def _task_frame(params: Mapping[str, Any], request_id: str) -> dict[str, Any]:
    """What is kept of a ``notifications/tasks``: only what says whether the task changed (its
    id, status, poll interval and the keys of its questions, bounded). Its result, its questions
    and its status message are read with ``tasks/get`` by whoever follows it: nothing large, or
    secret, is held here."""
    kept: dict[str, Any] = {key: params[key] for key in _TASK_FIELDS if key in params}
    kept["_meta"] = {SUBSCRIPTION_META: request_id}
    questions = params.get("inputRequests")
    if isinstance(questions, Mapping):
        first = islice(questions, _QUESTION_KEYS_MAX)
        kept["inputRequests"] = {key: {} for key in first if isinstance(key, str) and len(key) <= _KEY_MAX}
    return kept


def _too_large(params: Mapping[str, Any]) -> bool:
    """Is an event frame's data over :data:`MAX_EVENT_BYTES`? Counted by walking its strings
    and containers, stopping as soon as the bound is passed (no copy is made)."""
    size = 0
    pending: list[Any] = [params.get("data")]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            size += len(item)
        elif isinstance(item, Mapping):
            size += sum(len(k) for k in item if isinstance(k, str))
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
        else:
            size += 8
        if size > MAX_EVENT_BYTES:
            return True
    return False


class _Session(Protocol):
    """What a pushed request needs of a server's connection (which imports this module)."""

    event_routes: EventRoutes

    async def request(
        self,
        what: str,
        send: Callable[[Any], Awaitable[Any]],
        *,
        timeout: float | Literal["default"] | None = ...,
    ) -> Any: ...


@asynccontextmanager
async def pushed_request(
    connection: _Session, method: str, params: Mapping[str, Any], what: str
) -> AsyncIterator[MemoryObjectReceiveStream[StreamFrame]]:
    """One long request whose notifications name it (``events/stream``, ``subscriptions/listen``),
    open while in the block: its frames routed to it in the order received, the last one
    ``ended`` (its answer came, or it failed: :attr:`StreamFrame.error`). Leaving the block
    cancels the request; the block may be held across an async generator's yields (the request
    runs in a task of its own, not a task group). ``what`` names it in errors."""
    request_id = f"pushed-{uuid.uuid4().hex}"
    routes = connection.event_routes
    frames = routes.open(request_id)

    async def send(client: Any) -> Any:
        return await send_unchecked(client.session, method, params, request_id=request_id)

    async def run() -> None:
        try:
            await connection.request(what, send, timeout=None)
        except Exception as exc:  # any failure ends the stream; its reader decides
            routes.end(request_id, exc)
        else:
            routes.end(request_id, None)

    task = asyncio.ensure_future(run())
    try:
        yield frames
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task
        routes.close(request_id)
        frames.close()
