"""The run driver: one run of a served graph, streamed, to its end or its questions.

A run streams with ``stream_mode=["updates", "custom"]``; each chunk becomes a report for the
caller (progress with a message, or a log record):

* a node's update: progress ``"<node> done"``;
* a custom ``mcp_progress`` event (:class:`~langgraph_mcp.types.MCPProgressEvent`, e.g. from an
  ``MCPToolNode`` inside the graph): progress with its message;
* a custom ``mcp_log`` event (:class:`~langgraph_mcp.types.MCPLogEvent`): a log record at its level;
* any other custom event: progress with its ``message`` field, or its text.

When the stream ends, the thread's state tells the outcome: pending interrupts (the run asks), or
the final values (the run is done).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END

__all__ = ["Outcome", "Report", "Reporter", "drive", "end_cancelled", "outcome_of"]

_TEXT_MAX = 500
_ENDED = "served_run"
"""The checkpoint metadata key that marks a thread whose run was cancelled."""
_LEVELS = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}


@dataclass(frozen=True)
class Report:
    """What a run says while it runs: ``progress`` (a step count and a message) or ``log``."""

    kind: Literal["progress", "log"]
    message: str
    step: int = 0
    level: str = "info"
    logger: str | None = None
    data: Any = None


Reporter = Callable[[Report], Awaitable[None]]


@dataclass(frozen=True)
class Outcome:
    """How a run stopped: ``done`` with the final ``values``, ``asked`` with its pending
    ``interrupts`` (LangGraph ``Interrupt`` objects: ``id`` and ``value``), ``stopped`` part way
    (its process ended: it goes on from its last checkpoint), ``cancelled`` (see :func:`end_cancelled`)
    or ``missing`` (no such thread)."""

    kind: Literal["done", "asked", "stopped", "missing", "cancelled"]
    values: Any = None
    interrupts: tuple[Any, ...] = field(default_factory=tuple)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text[:_TEXT_MAX]


def _report(mode: str, chunk: Any, step: int) -> Report | None:
    if mode == "updates" and isinstance(chunk, Mapping):
        nodes = [str(node) for node in chunk if not str(node).startswith("__")]
        return Report("progress", f"{', '.join(nodes)} done", step) if nodes else None
    if mode != "custom":
        return None
    if isinstance(chunk, Mapping):
        kind = chunk.get("type")
        if kind == "mcp_log":
            level = str(chunk.get("level", "info"))
            data = chunk.get("data")
            return Report(
                "log",
                _short(data),
                step,
                level=level if level in _LEVELS else "info",
                logger=str(chunk["logger"]) if chunk.get("logger") else None,
                data=data,
            )
        if kind == "mcp_progress":
            tool = chunk.get("tool_name") or "tool"
            message = chunk.get("message") or f"{chunk.get('progress')}/{chunk.get('total') or '?'}"
            return Report("progress", _short(f"{tool}: {message}"), step)
        if isinstance(chunk.get("message"), str):
            return Report("progress", _short(chunk["message"]), step)
    return Report("progress", _short(chunk), step)


async def outcome_of(graph: Any, config: RunnableConfig) -> Outcome:
    """The outcome the thread's state shows now."""
    snapshot = await graph.aget_state(config)
    interrupts = tuple(getattr(snapshot, "interrupts", ()) or ())
    if interrupts:
        return Outcome("asked", interrupts=interrupts)
    if snapshot.created_at is None:
        return Outcome("missing")
    if (snapshot.metadata or {}).get(_ENDED) == "cancelled":
        return Outcome("cancelled", values=snapshot.values)
    if snapshot.next:
        return Outcome("stopped", values=snapshot.values)
    return Outcome("done", values=snapshot.values)


async def drive(
    graph: Any, payload: Any, config: RunnableConfig, report: Reporter | None = None, *, durable: bool = False
) -> Outcome:
    """Run ``graph`` on ``payload`` (an input, a ``Command(resume=...)`` or ``None`` to go on
    from the last checkpoint) in the thread of ``config``; ``report`` gets what it says. With
    ``durable``, each step's checkpoint is written before the next step starts (a task's run,
    which a restarted server goes on with from its last checkpoint)."""
    step = 0
    extra: dict[str, Any] = {}
    if not hasattr(graph, "checkpointer"):  # a deployment's graph: a dropped call cancels its run
        extra["on_disconnect"] = "cancel"
    elif durable:
        extra["durability"] = "sync"
    async for item in graph.astream(payload, config, stream_mode=["updates", "custom"], **extra):
        if report is None:
            continue
        mode, chunk = (item.event.split("|", 1)[0], item.data) if hasattr(item, "event") else item
        said = _report(str(mode), chunk, step + 1)
        if said is not None:
            step += 1
            await report(said)
    return await outcome_of(graph, config)


async def end_cancelled(graph: Any, config: RunnableConfig) -> None:
    """Mark the thread's run as cancelled in its checkpoints (it ends there: nothing resumes it,
    in this process or after a restart)."""
    marked: RunnableConfig = {**config, "metadata": {**config.get("metadata", {}), _ENDED: "cancelled"}}
    await graph.aupdate_state(marked, None, as_node=END)
