"""The MCP call snapshots of the v3 stream projection; re-exported by (and documented in)
:mod:`langgraph_mcp.types`."""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import TypedDict

__all__ = ["MCPCallSnapshot"]


class MCPCallSnapshot(TypedDict):
    """One MCP tool call as ``MCPStreamTransformer`` last saw it (``stream_events(version="v3")``:
    ``run.extensions["mcp"]`` yields one at each change, ``run.extensions["mcp_calls"]`` keeps the
    latest per call; a deployment's event streaming API sends them on the ``custom:mcp`` channel).

    A call appears once it shows it is an MCP call: its first progress, log, question, view, or
    an MCP result."""

    type: Literal["mcp_call"]
    tool_call_id: str
    tool_name: str
    server: str | None
    """The MCP server (``None`` until an event names it)."""
    args: dict[str, Any] | None
    """The arguments the call started with, when the stream showed them."""
    status: Literal["running", "waiting", "done", "error", "failed"]
    """``running``; ``waiting`` for a person (``questions``); ``done`` (a result); ``error`` (an
    error result: the tool failed, or was refused); ``failed`` (the call raised)."""
    change: Literal["started", "progress", "log", "question", "view", "finished"]
    """What this snapshot adds to the last one."""
    progress: float | None
    total: float | None
    message: str | None
    """The latest progress (or task status) message, without secrets or hidden characters."""
    log: dict[str, Any] | None
    """The latest log event of the call (``mcp_log``; servers with ``log_events``)."""
    questions: list[dict[str, Any]]
    """The call's pending questions (interrupt values: elicitation, approval, sampling, task,
    authorization, skill approval); empty once answered."""
    view: dict[str, Any] | None
    """The props of its MCP Apps view (``mcp-app``), once the result brought one."""
    result: str | None
    """The result's text as the model sees it (at most 2,000 characters), once finished."""
