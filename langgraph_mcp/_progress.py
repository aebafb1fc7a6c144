"""MCP progress and log notifications -> LangGraph stream events.

During a tool call, every ``notifications/progress`` from the server becomes:

* a ``stream_mode="custom"`` event (through the node's stream writer, so it
  carries the subgraph namespace)::

      {"type": "mcp_progress", "server": "demo", "tool_name": "sleep",
       "tool_call_id": "call_1", "progress": 3, "total": 10, "message": "indexing"}

* the same dict as a ``tool-output-delta`` on ``stream_mode="tools"``
  (``ToolRuntime.emit_output_delta``);
* an ``on_custom_event`` named ``mcp_progress`` in ``astream_events``;
* a heartbeat for the running node, so a ``TimeoutPolicy(idle_timeout=...)``
  does not kill a call that is making progress.

Log notifications (``notifications/message``) always go to Python logging,
under ``langgraph_mcp.server.<server>`` (see ``_session/connection.py``). With ``log_events`` enabled for the
server they also become custom events::

      {"type": "mcp_log", "server": "demo", "tool_name": "sleep", "tool_call_id": "call_1",
       "level": "info", "logger": "indexer", "data": "opened 3 files"}

A log event is emitted only when the log can be tied to one call: it arrived
in that call's own context (in-process and HTTP transports), or that call was
the only one in flight on the connection. Otherwise it is only logged.

The SDK runs these callbacks on the connection's own tasks, outside the graph's
context; each call copies its context when it starts and replays it here.
"""

from __future__ import annotations

import contextvars
import logging
from typing import Any

import mcp_types as types
from langchain_core.callbacks import adispatch_custom_event
from langchain_core.runnables import ensure_config
from langgraph.prebuilt import ToolRuntime
from langgraph.runtime import Runtime, get_runtime

from langgraph_mcp.types import MCPLogEvent, MCPProgressEvent

__all__ = ["CallObserver"]

logger = logging.getLogger("langgraph_mcp.progress")


class CallObserver:
    """Turns one call's notifications into stream events in the caller's graph context.

    Create it inside the tool call (it captures the current context); pass
    :meth:`on_progress` as the SDK's ``progress_callback``.
    """

    def __init__(
        self,
        *,
        server: str,
        tool_name: str,
        tool_call_id: str | None,
        runtime: ToolRuntime | None,
        log_events: bool = False,
    ) -> None:
        self.server = server
        self.tool_name = tool_name
        self.runtime = runtime
        self.tool_call_id = tool_call_id
        self.log_events = log_events
        self._context = contextvars.copy_context()
        self._node_runtime = _node_runtime()
        # The tool run's own config: custom callback events nest under the tool's run.
        self._config = ensure_config()

    @property
    def node_runtime(self) -> Runtime[Any] | None:
        """The running node's ``Runtime`` (heartbeat, drain control), if inside a graph."""
        return self._node_runtime

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        event: MCPProgressEvent = {
            "type": "mcp_progress",
            "server": self.server,
            "tool_name": self.tool_name,
            "tool_call_id": self.tool_call_id,
            "progress": progress,
            "total": total,
            "message": message,
        }
        self._emit(dict(event), delta=True)
        if self._node_runtime is not None:
            self._node_runtime.heartbeat()
        await self._dispatch(dict(event))

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """Called by the connection for a log notification attributed to this call."""
        if not self.log_events:
            return
        event: MCPLogEvent = {
            "type": "mcp_log",
            "server": self.server,
            "tool_name": self.tool_name,
            "tool_call_id": self.tool_call_id,
            "level": params.level,
            "logger": params.logger,
            "data": params.data,
        }
        self._emit(dict(event), delta=False)
        await self._dispatch(dict(event))

    def _emit(self, event: dict[str, Any], *, delta: bool) -> None:
        if self.runtime is None:
            return
        runtime = self.runtime
        try:
            self._context.run(runtime.stream_writer, event)
            if delta:
                self._context.run(runtime.emit_output_delta, event)
        except RuntimeError as exc:  # e.g. a notification that arrives after the node ended
            logger.debug("dropped MCP %s event for %r: %s", event["type"], self.tool_call_id, exc)

    async def _dispatch(self, event: dict[str, Any]) -> None:
        """Also surface the event in ``astream_events`` as ``on_custom_event``."""
        if self.runtime is None:
            return
        try:
            await adispatch_custom_event(event["type"], event, config=self._config)
        except RuntimeError as exc:  # no parent run: the tool was invoked outside a graph
            logger.debug("no callback event for MCP %s: %s", event["type"], exc)


def _node_runtime() -> Runtime[Any] | None:
    try:
        return get_runtime()
    except (RuntimeError, KeyError):
        return None
