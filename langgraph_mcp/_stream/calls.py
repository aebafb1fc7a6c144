"""MCP tool calls, followed through a run's stream events: the v3 stream projection.

:class:`MCPCallTracker` folds the events a run streams (the ``tools`` channel's starts and ends,
the ``custom`` channel's ``mcp_progress`` / ``mcp_log`` events and ``mcp-app`` views, and the
interrupts a step ends with) into one :class:`~langgraph_mcp.types.MCPCallSnapshot` per MCP call.
It reads events as LangGraph's v3 protocol carries them, in process (objects) or off the wire
(JSON), so the same fold serves :class:`MCPStreamTransformer` (``stream_events(version="v3")``,
``compile(transformers=[...])``) and a client of a deployment's event streaming API
(:meth:`MCPCalls.from_events`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.stream._types import ProtocolEvent, StreamTransformer
from langgraph.stream.stream_channel import StreamChannel
from langgraph.types import Command

from langgraph_mcp.types import APP_UI_NAME, MCPCallSnapshot

__all__ = ["MCP_CHANNEL", "MCPCallTracker", "MCPCalls", "MCPStreamTransformer"]

MCP_CHANNEL = "mcp"
"""The projection's channel: ``run.extensions["mcp"]`` in process, ``custom:mcp`` on the wire."""

_QUESTIONS = frozenset(
    {
        "mcp_elicitation",
        "tool_approval",
        "tool_approvals",
        "mcp_sampling",
        "mcp_task",
        "mcp_authorization",
        "skill_approval",
    }
)
_RESULT_CHARS = 2000
_MAX_CALLS = 10_000
"""Calls a tracker follows at once (a run with more keeps the first ones)."""


class MCPCalls(Mapping[str, MCPCallSnapshot]):
    """The latest snapshot of each MCP call of a run, by tool-call id, in the order they appeared;
    filled as the run streams (``run.extensions["mcp_calls"]``)."""

    def __init__(self) -> None:
        self._calls: dict[str, MCPCallSnapshot] = {}

    def __getitem__(self, key: str) -> MCPCallSnapshot:
        return self._calls[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._calls)

    def __len__(self) -> int:
        return len(self._calls)

    def __repr__(self) -> str:
        return f"MCPCalls({ {k: v['status'] for k, v in self._calls.items()}!r})"

    @classmethod
    def from_events(cls, events: Iterable[Mapping[str, Any]]) -> MCPCalls:
        """The calls a sequence of v3 protocol events shows: those of a run, or what a
        deployment sends on its ``custom:mcp`` channel (the items of ``langgraph-sdk``'s
        ``thread.extensions["mcp"]``)."""
        tracker = MCPCallTracker()
        for event in events:
            tracker.feed(event)
        return tracker.calls


class MCPCallTracker:
    """Folds v3 protocol events into MCP call snapshots (:meth:`feed`)."""

    def __init__(self) -> None:
        self.calls = MCPCalls()
        self._started: dict[str, tuple[str, Any]] = {}
        """Tool calls seen starting (name, input) that are not known to be MCP calls yet."""

    def feed(self, event: Mapping[str, Any]) -> list[MCPCallSnapshot]:
        """Take one protocol event (or one item of ``langgraph-sdk``'s ``thread.extensions["mcp"]``,
        ``{"name": "mcp", "payload": <snapshot>}``); the snapshots it changed."""
        if event.get("name") == MCP_CHANNEL and isinstance(event.get("payload"), Mapping):
            payload = event["payload"]
            return self._snapshot(payload) if payload.get("type") == "mcp_call" else []
        method = event.get("method")
        params = event.get("params")
        if not isinstance(params, Mapping):
            return []
        data = params.get("data")
        changed: list[MCPCallSnapshot] = []
        if method == "tools" and isinstance(data, Mapping):
            changed += self._tool_event(data)
        elif method == "custom" and isinstance(data, Mapping):
            changed += self._custom(data)
        elif (
            method in ("custom:mcp", MCP_CHANNEL)
            and isinstance(data, Mapping)
            and data.get("type") == "mcp_call"
        ):
            changed += self._snapshot(data)
        interrupts = params.get("interrupts")
        if interrupts:
            changed += self._questions(interrupts)
        return changed

    # -- one kind of event each ------------------------------------------------------------------

    def _tool_event(self, data: Mapping[str, Any]) -> list[MCPCallSnapshot]:
        call_id, kind = data.get("tool_call_id"), data.get("event")
        if not isinstance(call_id, str):
            return []
        if kind == "tool-started":
            self._started[call_id] = (str(data.get("tool_name") or ""), data.get("input"))
            while len(self._started) > _MAX_CALLS:  # the oldest starts that never ended go first
                self._started.pop(next(iter(self._started)))
            return []
        # (A call's progress comes on the custom channel as well as in tool-output-delta: the
        # custom channel's is taken, once.)
        if kind == "tool-finished":
            status, server, text = _finished(data.get("output"), call_id)
            if call_id not in self.calls and server is None:
                self._started.pop(call_id, None)
                return []  # not an MCP call
            snapshot = self._call(call_id, server)
            if snapshot is None:
                return []
            return [self._set(snapshot, change="finished", status=status, questions=[], result=text)]
        if kind == "tool-error":
            self._started.pop(call_id, None)
            if call_id in self.calls:
                return [
                    self._set(self.calls._calls[call_id], change="finished", status="failed", questions=[])
                ]
        return []

    def _custom(self, data: Mapping[str, Any]) -> list[MCPCallSnapshot]:
        kind = data.get("type")
        if kind == "mcp_progress":
            snapshot = self._call(data.get("tool_call_id"), data.get("server"), data.get("tool_name"))
            if snapshot is None:
                return []
            return [
                self._set(
                    snapshot,
                    change="progress",
                    progress=data.get("progress"),
                    total=data.get("total"),
                    message=data.get("message"),
                )
            ]
        if kind == "mcp_log":
            snapshot = self._call(data.get("tool_call_id"), data.get("server"), data.get("tool_name"))
            return [] if snapshot is None else [self._set(snapshot, change="log", log=dict(data))]
        if kind == "ui" and data.get("name") == APP_UI_NAME:
            props = data.get("props")
            if not isinstance(props, Mapping):
                return []
            snapshot = self._call(props.get("tool_call_id"), props.get("server"), props.get("tool_name"))
            return [] if snapshot is None else [self._set(snapshot, change="view", view=dict(props))]
        return []

    def _snapshot(self, data: Mapping[str, Any]) -> list[MCPCallSnapshot]:
        """A snapshot sent by a deployment's transformer: taken as it is."""
        call_id = data.get("tool_call_id")
        if not isinstance(call_id, str) or (call_id not in self.calls and len(self.calls) >= _MAX_CALLS):
            return []
        snapshot: MCPCallSnapshot = copy.deepcopy(dict(data))  # type: ignore[assignment]
        self.calls._calls[call_id] = snapshot
        return [copy.deepcopy(snapshot)]

    def _questions(self, interrupts: Sequence[Any]) -> list[MCPCallSnapshot]:
        asked: dict[str, list[dict[str, Any]]] = {}
        servers: dict[str, Any] = {}
        for item in interrupts:
            value = getattr(item, "value", item)
            if isinstance(value, Mapping) and "value" in value and "type" not in value:
                value = value["value"]  # an interrupt as JSON: {"id": ..., "value": ...}
            if not isinstance(value, Mapping) or value.get("type") not in _QUESTIONS:
                continue
            for question in value.get("approvals") or [value]:  # a batch: one per call
                if isinstance(question, Mapping) and isinstance(question.get("tool_call_id"), str):
                    asked.setdefault(question["tool_call_id"], []).append(dict(value))
                    servers[question["tool_call_id"]] = question.get("server")
        changed = []
        for call_id, questions in asked.items():
            snapshot = self._call(call_id, servers.get(call_id))
            if snapshot is not None:
                changed.append(self._set(snapshot, change="question", status="waiting", questions=questions))
        return changed

    # -- the snapshots ---------------------------------------------------------------------------

    def _call(self, call_id: Any, server: Any, tool_name: Any = None) -> MCPCallSnapshot | None:
        """The call's snapshot, made when it first shows it is an MCP call."""
        if not isinstance(call_id, str):
            return None
        found = self.calls._calls.get(call_id)
        if found is not None:
            if found["server"] is None and isinstance(server, str):
                found["server"] = server
            return found
        if len(self.calls) >= _MAX_CALLS:
            return None
        name, args = self._started.pop(call_id, (tool_name if isinstance(tool_name, str) else "", None))
        snapshot: MCPCallSnapshot = {
            "type": "mcp_call",
            "tool_call_id": call_id,
            "tool_name": name or (tool_name if isinstance(tool_name, str) else ""),
            "server": server if isinstance(server, str) else None,
            "args": dict(args) if isinstance(args, Mapping) else None,
            "status": "running",
            "change": "started",
            "progress": None,
            "total": None,
            "message": None,
            "log": None,
            "questions": [],
            "view": None,
            "result": None,
        }
        self.calls._calls[call_id] = snapshot
        return snapshot

    @staticmethod
    def _set(snapshot: MCPCallSnapshot, **changes: Any) -> MCPCallSnapshot:
        """``snapshot`` changed (in place: the mapping keeps the latest), and a copy to emit."""
        snapshot.update(changes)  # type: ignore[typeddict-item]
        if snapshot["status"] == "waiting" and changes.get("change") in ("progress", "log"):
            snapshot["status"] = "running"  # answered: the call goes on
            snapshot["questions"] = []
        return copy.deepcopy(snapshot)  # what is handed out never changes after


def _finished(output: Any, call_id: str) -> tuple[str, str | None, str | None]:
    """A finished tool call's status (``done`` or ``error``), MCP server (``None``: not known to
    be an MCP result) and result text, from its output as streamed: a ``ToolMessage`` (or its
    JSON serialisation), or a ``Command`` whose update carries the call's ``ToolMessage`` (a
    result written into state, the skills loader). An MCP result names its server in its
    artifact, an MCP error result in its ``response_metadata`` (``mcp_server``)."""
    message = _message_of(output, call_id)
    status, artifact, content, metadata = "success", None, message, None
    if isinstance(message, ToolMessage):
        status, artifact, content = message.status or "success", message.artifact, message.content
        metadata = message.response_metadata
    elif isinstance(message, Mapping) and message.get("type") == "constructor":
        kwargs = message.get("kwargs") or {}
        status, artifact, content = (
            kwargs.get("status") or "success",
            kwargs.get("artifact"),
            kwargs.get("content"),
        )
        metadata = kwargs.get("response_metadata")
    server = artifact.get("server") if isinstance(artifact, Mapping) else None
    if server is None and isinstance(metadata, Mapping):
        server = metadata.get("mcp_server")
    text = content if isinstance(content, str) else None if content is None else str(content)
    return (
        "error" if status == "error" else "done",
        server if isinstance(server, str) else None,
        text[:_RESULT_CHARS] if text is not None else None,
    )


def _message_of(output: Any, call_id: str) -> Any:
    """The call's ``ToolMessage`` in ``output``: itself, or the one for ``call_id`` among the
    messages a ``Command`` (object, or JSON) updates the state with."""
    update = getattr(output, "update", None) if isinstance(output, Command) else None
    if update is None and isinstance(output, Mapping) and output.get("type") != "constructor":
        update = output.get("update")
    if update is None:
        return output
    pairs = update.items() if isinstance(update, Mapping) else update if isinstance(update, list) else ()
    for pair in pairs:
        values = pair[1] if isinstance(pair, tuple | list) and len(pair) == 2 else None
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, ToolMessage) and value.tool_call_id == call_id:
                return value
            if isinstance(value, Mapping) and (value.get("kwargs") or {}).get("tool_call_id") == call_id:
                return value
    return None


class MCPStreamTransformer(StreamTransformer):
    """The MCP calls of a run, for ``stream_events(version="v3")``: each MCP tool call's progress,
    logs, task status, pending questions and view as :class:`~langgraph_mcp.types.MCPCallSnapshot`
    objects next to LangGraph's ``run.tool_calls``.

    ``run.extensions["mcp"]`` yields a snapshot at each change of a call (also sent on a
    deployment's event streaming API as the ``custom:mcp`` channel); ``run.extensions["mcp_calls"]``
    (:class:`MCPCalls`) keeps the latest snapshot per call. ``create_mcp_agent`` registers it; for
    a graph of your own::

        graph = builder.compile(checkpointer=saver, transformers=[MCPStreamTransformer])
        run = await graph.astream_events(inputs, config, version="v3")
        async for snapshot in run.extensions["mcp"]:
            print(snapshot["tool_name"], snapshot["status"], snapshot["progress"])
    """

    required_stream_modes = ("custom", "tools", "values")

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._tracker = MCPCallTracker()
        self._snapshots: StreamChannel[MCPCallSnapshot] = StreamChannel(MCP_CHANNEL)

    def init(self) -> dict[str, Any]:
        return {MCP_CHANNEL: self._snapshots, "mcp_calls": self._tracker.calls}

    def process(self, event: ProtocolEvent) -> bool:
        if tuple(event["params"]["namespace"])[: len(self.scope)] != self.scope:
            return True  # not this scope's or a subgraph's of it
        for snapshot in self._tracker.feed(event):
            self._snapshots.push(snapshot)
        return True
