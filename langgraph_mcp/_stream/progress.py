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
  does not kill a call that is making progress;
* unless the server's ``progress_ui`` is off, a generative-UI message (``push_ui_message``,
  component ``mcp-progress``, props :class:`~langgraph_mcp.types.MCPProgressUIProps`), one per call, id
  ``mcp-progress:<tool_call_id>``, updated in place (``merge=True``) at each notification and
  marked ``done`` or ``failed`` by :meth:`CallObserver.track` when the call ends. Its metadata
  names the ``tool_call_id`` and the ``message_id`` of the AI message that made the call (what
  Agent Chat UI anchors it to). It always goes to ``stream_mode="custom"``; its final state
  (``done`` or ``failed``) is also written to the graph's ``ui`` state key when the state has
  one (``ui_message_reducer``), so that it outlives the run. Only calls that report progress
  get one; a failure to emit it is logged at debug level and never fails the call.

Log notifications (``notifications/message``) always go to Python logging,
under ``langgraph_mcp.server.<server>`` (see
:meth:`~langgraph_mcp._session.callbacks.Callbacks._on_log`). With ``log_events`` enabled for the
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

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Mapping
from typing import Any, Literal, TypeVar

import mcp_types as types
from langchain_core.callbacks import adispatch_custom_event
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig, ensure_config
from langgraph.errors import GraphBubbleUp
from langgraph.graph.ui import push_ui_message
from langgraph.prebuilt import ToolRuntime
from langgraph.runtime import Runtime, get_runtime

from langgraph_mcp._support.sanitise import sanitise_text
from langgraph_mcp.types import PROGRESS_UI_NAME, MCPLogEvent, MCPProgressEvent, MCPProgressUIProps

__all__ = ["UI_STATE_KEY", "CallObserver", "calling_message_id", "has_key"]

_STRAGGLER_TURNS = 3
"""Event loop turns a call that reported progress yields after its result, so that progress
notifications the server sent before the result are delivered before the call ends."""

logger = logging.getLogger("langgraph_mcp.progress")

UI_STATE_KEY = "ui"
"""The state key the progress UI message is also written to, when the graph's state has it."""
_UI_MESSAGE_LIMIT = 500
_ANCHOR_SEARCH = 64
"""How many of the latest messages are searched for the AI message that made the call."""
_T = TypeVar("_T")


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
        progress_ui: bool = True,
    ) -> None:
        self.server = server
        self.progress_ui = progress_ui
        self.tool_name = tool_name
        self.runtime = runtime
        self.tool_call_id = tool_call_id
        self.log_events = log_events
        self._context = contextvars.copy_context()
        self._node_runtime = _node_runtime()
        self._config: RunnableConfig | None = None
        """The config the tool ran with, which custom callback events are dispatched with:
        made from the captured context when the first event is dispatched (a copy of the config
        and its callback manager that a call with no events would hold for nothing)."""
        self._notified = 0
        """Progress notifications received for this call."""
        self._ui: MCPProgressUIProps | None = None
        """The call's progress UI message as last shown (``None`` until its first progress)."""
        self._ui_metadata: dict[str, Any] | None = None
        """Its metadata, found once per call (the state the call sees does not change)."""

    @property
    def node_runtime(self) -> Runtime[Any] | None:
        """The running node's ``Runtime`` (heartbeat, drain control), if inside a graph."""
        return self._node_runtime

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self._notified += 1
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
        self._show_progress(progress, total, message)
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
        if self._config is None:
            self._config = self._context.run(ensure_config)
        try:
            await adispatch_custom_event(event["type"], event, config=self._config)
        except RuntimeError as exc:  # no parent run: the tool was invoked outside a graph
            logger.debug("no callback event for MCP %s: %s", event["type"], exc)

    async def track(self, call: Awaitable[_T]) -> _T:
        """Await ``call``; then mark the call's progress UI message ``done`` (a result) or
        ``failed`` (an exception). An interrupt leaves it as it is: the call is still pending."""
        try:
            result = await call
        except GraphBubbleUp:
            raise
        except BaseException:
            self._finish("failed")
            raise
        if self._notified:
            # The SDK hands each progress notification to a task of its own: ones the server sent
            # just before its result may not have reached us yet. Let them land in this call.
            for _ in range(_STRAGGLER_TURNS):
                await asyncio.sleep(0)
        self._finish("done")
        return result

    # -- the progress UI message --------------------------------------------------------------

    def _show_progress(self, progress: float, total: float | None, message: str | None) -> None:
        if not self.progress_ui or self.runtime is None or self.tool_call_id is None:
            return
        if self._ui is not None and self._ui["status"] != "running":
            return  # a notification that arrived after the call ended: the bar stays finished
        props: MCPProgressUIProps = {
            "server": self.server,
            "tool_name": self.tool_name,
            "tool_call_id": self.tool_call_id,
            "progress": progress,
            "total": total,
            "message": sanitise_text(message, _UI_MESSAGE_LIMIT) if message else None,
            "status": "running",
        }
        self._push(props, keep=False)

    def _finish(self, status: Literal["done", "failed"]) -> None:
        if self._ui is None or self._ui["status"] != "running":
            return
        self._push({**self._ui, "status": status}, keep=True)

    def _push(self, props: MCPProgressUIProps, *, keep: bool) -> None:
        """Stream the message; with ``keep`` (its last state, when the call ends) also write it
        to the state's ``ui`` key: one write per call, not one per notification, in the step's
        checkpoint writes."""
        assert self.runtime is not None and self.tool_call_id is not None
        state = self.runtime.state
        metadata = self._ui_metadata
        if metadata is None:
            metadata = {"tool_call_id": self.tool_call_id}
            message_id = calling_message_id(state, self.tool_call_id)
            if message_id is not None:
                metadata["message_id"] = message_id
            self._ui_metadata = metadata
        try:
            self._context.run(
                push_ui_message,
                PROGRESS_UI_NAME,
                dict(props),
                id=f"{PROGRESS_UI_NAME}:{self.tool_call_id}",
                metadata=dict(metadata),
                state_key=UI_STATE_KEY if keep and has_key(state, UI_STATE_KEY) else None,
                merge=True,
            )
        except Exception as exc:  # outside a graph, after the node ended, a state that refuses it
            logger.debug("dropped the progress UI message of %r: %r", self.tool_call_id, exc)
            return
        self._ui = props


def has_key(state: Any, key: str) -> bool:
    return isinstance(state, Mapping) and key in state


def calling_message_id(state: Any, tool_call_id: str) -> str | None:
    """The id of the AI message among the latest in ``state`` that made call ``tool_call_id``."""
    messages = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
    if not isinstance(messages, list):
        return None
    for message in reversed(messages[-_ANCHOR_SEARCH:]):
        if isinstance(message, AIMessage) and any(c.get("id") == tool_call_id for c in message.tool_calls):
            return message.id
    return None


def _node_runtime() -> Runtime[Any] | None:
    try:
        return get_runtime()
    except (RuntimeError, KeyError):
        return None
