"""Task status notifications (2026-07-28 tasks extension): ``subscriptions/listen`` for task ids;
and the listen for any extension's notifications the SDK's own listen does not ask for
(:func:`listen_extension`: the events extension's ``eventsListChanged`` too).

A client that declared ``io.modelcontextprotocol/tasks`` may ask a server to push the status of
given tasks: it sends ``subscriptions/listen`` with ``notifications.taskIds``; the server first
acknowledges the ids it agreed to (``notifications/subscriptions/acknowledged``, whose
``notifications.taskIds`` may be fewer, or absent: then it sends nothing for them), then sends a
``notifications/tasks`` (the task's state, as ``tasks/get`` would answer) whenever one changes.
Both name the listen request in ``_meta["io.modelcontextprotocol/subscriptionId"]`` and are routed
to it in the order received (:class:`~langgraph_mcp._session.eventroutes.EventRoutes`).

Servers are not required to send these notifications: a task the server did not acknowledge is
watched by polling ``tasks/get``, which is the caller's decision (:mod:`langgraph_mcp._events.wakeups`).
Only MCP here: no LangGraph.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anyio.streams.memory import MemoryObjectReceiveStream
from pydantic import ValidationError

from langgraph_mcp._session.era import MODERN
from langgraph_mcp._session.eventroutes import StreamFrame, pushed_request
from langgraph_mcp._session.taskwire import STATE, TaskState

if TYPE_CHECKING:
    from langgraph_mcp._session.connection import ServerConnection

__all__ = [
    "LISTEN_TASKS_MAX",
    "TaskNotice",
    "acknowledged_tasks",
    "listen_tasks",
    "offers_task_notices",
    "task_notice",
]

LISTEN_TASKS_MAX = 1000
"""The most task ids asked for on one listen request (more are watched by polling)."""


def offers_task_notices(connection: ServerConnection) -> bool:
    """May ``connection``'s server be asked for task status notifications? (It speaks 2026-07-28
    and declared the tasks extension; whether it agrees is in its acknowledgement.)"""
    return connection.era == MODERN and bool(connection.offers_tasks)


@dataclass(frozen=True)
class TaskNotice:
    """One ``notifications/tasks``: the task's id, status and the keys of the questions it has
    out (its result and questions themselves are not kept here)."""

    task_id: str
    status: str
    poll_interval_ms: float | None
    questions: frozenset[str] = frozenset()


def task_notice(frame: StreamFrame) -> TaskNotice | None:
    """The task status a ``task`` frame carries; ``None`` when it is not a valid one."""
    try:
        state: TaskState = STATE.validate_python(dict(frame.params))
    except (ValidationError, ValueError, TypeError):
        return None
    return TaskNotice(
        state.task_id, state.status, state.poll_interval_ms, frozenset(state.input_requests or ())
    )


def acknowledged_tasks(frame: StreamFrame) -> set[str]:
    """The task ids an ``acknowledged`` frame says the server agreed to send notifications for
    (none when it leaves ``taskIds`` out, or it is not a list of strings)."""
    notifications = frame.params.get("notifications")
    ids = notifications.get("taskIds") if isinstance(notifications, Mapping) else None
    if not isinstance(ids, list):
        return set()
    return {task_id for task_id in ids if isinstance(task_id, str)}


@asynccontextmanager
async def listen_tasks(
    connection: ServerConnection, task_ids: Collection[str]
) -> AsyncIterator[MemoryObjectReceiveStream[StreamFrame]]:
    """A ``subscriptions/listen`` for ``task_ids`` (at most :data:`LISTEN_TASKS_MAX`), open while
    in the block: its frames in the order sent (``acknowledged`` first, then ``task``), the last one
    ``ended`` (the server ended it, or it failed: see :attr:`StreamFrame.error`). Leaving the block
    cancels the request. The task ids are secrets of the caller's: they are sent, never logged."""
    notifications = {"taskIds": sorted(task_ids)[:LISTEN_TASKS_MAX]}
    async with listen_extension(connection, notifications, "listen for task status") as frames:
        yield frames


@asynccontextmanager
async def listen_extension(
    connection: ServerConnection, notifications: Mapping[str, Any], what: str
) -> AsyncIterator[MemoryObjectReceiveStream[StreamFrame]]:
    """A ``subscriptions/listen`` for an extension's notifications (``notifications``: the
    filter, e.g. ``{"taskIds": [...]}`` or ``{"eventsListChanged": true}``), which the SDK's
    listen does not ask for, open while in the block: its frames routed to it in the order sent
    (:class:`~langgraph_mcp._session.eventroutes.EventRoutes`), the last one ``ended``. Leaving
    the block cancels the request. ``what`` names the request in errors."""
    params = {"notifications": dict(notifications)}
    async with pushed_request(connection, "subscriptions/listen", params, what) as frames:
        yield frames
