"""The tasks extension's wire shapes (``io.modelcontextprotocol/tasks``, 2026-07-28).

Every value a server sends here is bounded before it is used: the poll interval is clamped
(:data:`POLL_BOUNDS`), the status message is cut (:data:`STATUS_MESSAGE_MAX`), and a task id that
is not a short printable string is refused.
"""

from __future__ import annotations

from typing import Any, Literal

import mcp_types as types
from pydantic import BaseModel, ConfigDict, TypeAdapter, field_validator

__all__ = [
    "ACK",
    "POLL_BOUNDS",
    "STATE",
    "STATUS_MESSAGE_MAX",
    "TASKS_EXTENSION",
    "TERMINAL",
    "TaskHandle",
    "TaskParams",
    "TaskRequest",
    "TaskState",
    "poll_seconds",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The extension's identifier, advertised in every 2026-07-28 request's client capabilities."""
TERMINAL = frozenset({"completed", "failed", "cancelled"})
"""Statuses after which a task never changes."""
POLL_BOUNDS = (0.05, 30.0)
"""Seconds between two ``tasks/get`` requests: the server's ``pollIntervalMs``, within these
bounds (a server asking for 0 ms must not turn the client into a busy loop)."""
STATUS_MESSAGE_MAX = 1000
"""Characters of a status message kept (a longer one is cut)."""
_TASK_ID_MAX = 256
_DEFAULT_POLL = 1.0


def poll_seconds(ms: float | None) -> float:
    """Seconds until the next poll: a server's poll interval (milliseconds) within
    :data:`POLL_BOUNDS`, 1 s when it gives none."""
    low, high = POLL_BOUNDS
    if ms is None or ms != ms:  # NaN
        return _DEFAULT_POLL
    return min(max(ms / 1000, low), high)


TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]


class _TaskFields(types.Result):
    model_config = ConfigDict(extra="ignore")

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    poll_interval_ms: float | None = None

    @field_validator("task_id")
    @classmethod
    def _short_id(cls, value: str) -> str:
        if not value or len(value) > _TASK_ID_MAX or not value.isprintable():
            raise ValueError(f"a task id is a printable string of 1 to {_TASK_ID_MAX} characters")
        return value

    @field_validator("status_message")
    @classmethod
    def _cut(cls, value: str | None) -> str | None:
        return value[:STATUS_MESSAGE_MAX] if value is not None else None

    def poll_interval(self) -> float:
        """Seconds until the next poll (see :func:`poll_seconds`)."""
        return poll_seconds(self.poll_interval_ms)


class TaskHandle(_TaskFields):
    """A ``tools/call`` answered with a task (``CreateTaskResult``)."""

    result_type: Literal["task"]


class TaskState(_TaskFields):
    """A ``tasks/get`` result: the task now, with its questions, result or error."""

    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any] | None = None


class TaskRequest(types.Request[TaskParams, str]):
    name_param = "taskId"  # streamable HTTP: Mcp-Name carries the task id (routing)


class _Ack(BaseModel):
    model_config = ConfigDict(extra="ignore")


STATE: TypeAdapter[TaskState] = TypeAdapter(TaskState)
ACK: TypeAdapter[_Ack] = TypeAdapter(_Ack)
