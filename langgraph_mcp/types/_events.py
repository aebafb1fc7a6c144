"""MCP events' run input types; re-exported by (and documented in) :mod:`langgraph_mcp.types`."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

__all__ = ["MCPEventInput", "MCPEventMessage", "MCPEventPayload"]


class MCPEventPayload(TypedDict):
    """One MCP event, as a triggered run gets it under ``mcp_event``: which trigger started the
    run, the server, the event type's name, the server's id of the event, its time and the
    subscription's arguments, and the event's ``data`` as the server sent it (untrusted)."""

    trigger: str
    server: str
    name: str
    event_id: str
    timestamp: str
    """ISO 8601, as the server gave it."""
    arguments: dict[str, Any]
    data: dict[str, Any]


class MCPEventMessage(TypedDict):
    """The user message a triggered run starts with (``input: "messages"``): what happened, with
    the event's data marked as the server's."""

    role: Literal["user"]
    content: str


class MCPEventInput(TypedDict):
    """The input of a run an MCP event started (``langgraph_mcp.events.EventTriggers``): the
    event under ``mcp_event`` and, unless the trigger says ``input: "event"``, one user message
    under ``messages`` (a graph whose state has ``messages`` reads it like a person's message; a
    graph without ``mcp_event`` in its state ignores that key)."""

    messages: NotRequired[list[MCPEventMessage]]
    mcp_event: MCPEventPayload
