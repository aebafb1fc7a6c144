"""Helpers that build resume values for MCP elicitation interrupts.

::

    from langgraph_mcp.elicitation import accept, resume_elicitations

    out = await graph.ainvoke(inputs, thread)
    while pending := out.get("__interrupt__"):
        out = await graph.ainvoke(
            resume_elicitations(pending, lambda p: {r["key"]: accept({"ok": True}) for r in p["requests"]}),
            thread,
        )

The payload and resume types are in :mod:`langgraph_mcp.types`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from langgraph.types import Command, Interrupt

from langgraph_mcp.types import (
    ELICITATION_INTERRUPT_TYPE,
    MCPElicitationAccept,
    MCPElicitationCancel,
    MCPElicitationDecline,
    MCPElicitationInterrupt,
    MCPElicitationResponse,
    MCPElicitationResume,
)

__all__ = ["accept", "cancel", "decline", "resume_elicitations"]


def accept(content: Mapping[str, Any] | None = None) -> MCPElicitationAccept:
    """An ``accept`` response (``content`` for form requests; none for URL requests)."""
    return {"action": "accept", "content": dict(content) if content is not None else None}


def decline() -> MCPElicitationDecline:
    """A ``decline`` response: the person said no."""
    return {"action": "decline"}


def cancel() -> MCPElicitationCancel:
    """A ``cancel`` response: the person dismissed the question without answering."""
    return {"action": "cancel"}


def resume_elicitations(
    interrupts: Iterable[Interrupt | Mapping[str, Any]],
    answer: Callable[[MCPElicitationInterrupt], Mapping[str, MCPElicitationResponse]],
) -> Command[Any]:
    """``Command(resume={interrupt_id: {"responses": answer(payload)}, ...})`` for every pending
    MCP elicitation interrupt (others are left out).

    ``interrupts`` are LangGraph ``Interrupt`` objects, or their JSON form ``{"id", "value"}`` as
    LangGraph server returns them (``langgraph-sdk``: pass ``Command(...).resume`` as
    ``command={"resume": ...}``)."""
    resume: dict[str, MCPElicitationResume] = {}
    for item in interrupts:
        ident, value = (item["id"], item["value"]) if isinstance(item, Mapping) else (item.id, item.value)
        if isinstance(value, dict) and value.get("type") == ELICITATION_INTERRUPT_TYPE:
            resume[ident] = {"responses": dict(answer(cast(MCPElicitationInterrupt, value)))}
    return Command(resume=resume)
