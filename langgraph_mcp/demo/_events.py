"""The ``events`` demo server: two event types (``io.modelcontextprotocol/events``) and one tool.

Served with ``events/list``, ``events/poll`` and ``events/stream`` (push) through the MCP SDK's
server extension API, on protocol 2026-07-28 sessions (the extension is not defined before), and
declared as ``capabilities.extensions["io.modelcontextprotocol/events"] = {"listChanged": false}``:

- ``note.added``: a note was added with the tool ``add_note(text, tag="")``; its data is
  ``{"text", "tag"}``, and the argument ``{"tag": ...}`` keeps only the notes with that tag.
- ``clock.tick``: one event a second, data ``{"n": <count>}``; the clock starts with the first
  subscription to it.

Everything lives in memory: each type keeps its last 1000 events, and a cursor is the number of
events of that type before the position it stands for. A poll or stream without a cursor starts
from now; one from a cursor older than the history answers ``truncated: true`` and resumes from
the oldest event kept. A stream sends ``notifications/events/active``, then each event as it
happens, and a heartbeat every 5 seconds, until the client cancels it. An unknown event type is
the error -32023 (``NotFound``, ``data: {"kind": "event"}``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import RequestParams
from pydantic import BaseModel

EXTENSION = "io.modelcontextprotocol/events"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
NOT_FOUND = -32023
HISTORY = 1000
HEARTBEAT_SECONDS = 5.0

NOTE = "note.added"
TICK = "clock.tick"

TYPES: list[dict[str, Any]] = [
    {
        "name": NOTE,
        "description": "A note was added (with the tool add_note)",
        "delivery": ["push", "poll"],
        "inputSchema": {"type": "object", "properties": {"tag": {"type": "string"}}},
        "payloadSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "tag": {"type": "string"}},
        },
    },
    {
        "name": TICK,
        "description": "The clock ticked (one event a second)",
        "delivery": ["poll", "push"],
        "inputSchema": {"type": "object", "properties": {}},
        "payloadSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
    },
]


class _Notification(BaseModel):
    """A notification outside the spec's own union: what ``send_notification`` needs."""

    method: str
    params: dict[str, Any] | None = None


class _ListParams(RequestParams):
    cursor: str | None = None


class _PollParams(RequestParams):
    name: str
    arguments: dict[str, Any] | None = None
    cursor: str | None = None
    maxEvents: int | None = None


class _StreamParams(RequestParams):
    name: str
    arguments: dict[str, Any] | None = None
    cursor: str | None = None


@dataclass
class _History:
    """The last events of one type; event ``i`` (counting from 0 since the server started) is
    the one after cursor ``str(i)``."""

    prefix: str
    events: deque[dict[str, Any]]
    total: int = 0

    @property
    def oldest(self) -> int:
        return self.total - len(self.events)

    def append(self, data: dict[str, Any]) -> str:
        self.total += 1
        event_id = f"{self.prefix}-{self.total}"
        timestamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self.events.append({"eventId": event_id, "timestamp": timestamp, "data": data})
        return event_id

    def start(self, cursor: str | None) -> tuple[int, bool]:
        """Where to read from after ``cursor`` (``None``: now), and whether events were lost."""
        if cursor is None:
            return self.total, False
        try:
            at = int(cursor)
        except ValueError:
            return self.total, True  # not a cursor of this server
        if at > self.total:
            return self.total, True  # from before a restart
        if at < self.oldest:
            return self.oldest, True
        return at, False

    def after(self, at: int) -> list[tuple[int, dict[str, Any]]]:
        """The events from index ``at`` on, with their indexes."""
        first = self.oldest
        return [(first + i, e) for i, e in enumerate(self.events) if first + i >= at]


def _matches(name: str, event: dict[str, Any], arguments: dict[str, Any] | None) -> bool:
    tag = (arguments or {}).get("tag")
    return name != NOTE or tag is None or event["data"].get("tag") == tag


def build_server(tick_seconds: float = 1.0, history: int = HISTORY) -> MCPServer:
    """A fresh ``events`` server whose clock ticks every ``tick_seconds`` seconds, keeping the
    last ``history`` events of each type."""
    histories = {
        name: _History(prefix, deque(maxlen=history)) for name, prefix in ((NOTE, "note"), (TICK, "tick"))
    }
    waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
    clock: list[asyncio.Task[None]] = []

    def publish(name: str, data: dict[str, Any]) -> str:
        event_id = histories[name].append(data)
        for loop, event in list(waiters):
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)
        return event_id

    async def tick() -> None:
        while True:
            await asyncio.sleep(tick_seconds)
            publish(TICK, {"n": histories[TICK].total + 1})

    def kept(name: str) -> _History:
        if name not in histories:
            raise MCPError(NOT_FOUND, "NotFound", {"kind": "event"})
        if name == TICK and (not clock or clock[0].done() or clock[0].get_loop().is_closed()):
            clock[:] = [asyncio.get_running_loop().create_task(tick())]
        return histories[name]

    async def list_events(ctx: ServerRequestContext[Any, Any], params: _ListParams) -> HandlerResult:
        return {"resultType": "complete", "events": TYPES}

    async def poll(ctx: ServerRequestContext[Any, Any], params: _PollParams) -> HandlerResult:
        kind = kept(params.name)
        at, truncated = kind.start(params.cursor)
        result: dict[str, Any] = {
            "resultType": "complete",
            "events": [],
            "hasMore": False,
            "nextPollMs": 1000,
        }
        if truncated:
            return {**result, "cursor": str(at), "truncated": True}
        limit = max(params.maxEvents or 50, 1)
        found = [(i, e) for i, e in kind.after(at) if _matches(params.name, e, params.arguments)]
        page = found[:limit]
        result["events"] = [{"name": params.name, **e} for _, e in page]
        result["hasMore"] = len(found) > limit
        result["cursor"] = str(page[-1][0] + 1 if result["hasMore"] else kind.total)
        result["truncated"] = False
        return result

    async def stream(ctx: ServerRequestContext[Any, Any], params: _StreamParams) -> HandlerResult:
        kind = kept(params.name)
        meta = {SUBSCRIPTION_ID: ctx.request_id}

        async def send(method: str, fields: dict[str, Any]) -> None:
            note = cast(
                Any, _Notification(method=f"notifications/events/{method}", params={**fields, "_meta": meta})
            )
            await ctx.session.send_notification(note, related_request_id=ctx.request_id)

        at, truncated = kind.start(params.cursor)
        wake = (asyncio.get_running_loop(), asyncio.Event())
        waiters.add(wake)
        try:
            await send("active", {"cursor": str(at), "truncated": truncated})
            beat = time.monotonic() + HEARTBEAT_SECONDS
            while True:
                wake[1].clear()
                for i, event in kind.after(at):
                    at = i + 1
                    if _matches(params.name, event, params.arguments):
                        await send("event", {"name": params.name, **event, "cursor": str(at)})
                if time.monotonic() >= beat:
                    await send("heartbeat", {"cursor": str(at)})
                    beat = time.monotonic() + HEARTBEAT_SECONDS
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake[1].wait(), max(beat - time.monotonic(), 0))
        finally:
            waiters.discard(wake)

    class _Events(Extension):
        identifier = EXTENSION

        def settings(self) -> dict[str, Any]:
            return {"listChanged": False}

        def methods(self) -> list[MethodBinding]:
            return [
                MethodBinding("events/list", _ListParams, list_events),
                MethodBinding("events/poll", _PollParams, poll),
                MethodBinding("events/stream", _StreamParams, stream),
            ]

    srv = MCPServer("events", extensions=[_Events()])

    @srv.tool()
    async def add_note(text: str, tag: str = "") -> str:
        """Add a note (a ``note.added`` event, with ``text`` and ``tag``); return the event's id."""
        return publish(NOTE, {"text": text, "tag": tag})

    return srv


server: MCPServer = build_server()
