"""Results a UI made up for MCP calls whose question was left unanswered, replaced by what happened.

Agent Chat UI answers a pending question (an interrupt) that the person did not answer, because
they typed a new message instead, with a made-up ``ToolMessage`` "Successfully handled tool call."
for the waiting call. The new run starts from that input and drops the interrupted step: the call
never ran (or never finished). Told it succeeded, a model reports an order placed that was not.

This module recognises such results (the mark, no artifact: a real MCP result always has one, and
only after the latest AI message, where such a UI puts them) and replaces each, same message id, by
the call's real result when it finished in the dropped step, else by an error saying it did not run
and what it waited for. It is the one home of that repair: ``MCPMiddleware`` runs it before each
model call, and ``MCPToolNode.unanswered_repair`` is the same as a node of a graph of one's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command

from langgraph_mcp._call.adapter import MCPTool
from langgraph_mcp._compat.langgraph import DroppedStep

__all__ = ["UNANSWERED_MARK", "Waited", "made_up", "unanswered", "what_happened"]

UNANSWERED_MARK = "Successfully handled tool call."
"""The result Agent Chat UI gives a call whose question (interrupt) is pending when the person
types a new message instead of answering: the new run drops the question and the call never
runs."""


Waited = Literal["approval", "turn", "server", "unknown"]
"""What a call whose question was left unanswered was waiting for: its own approval, the
approval of its turn's calls, a question from its server, or something not known."""

_WAITED: Mapping[str, str] = {
    "approval": "was not executed: it was waiting for a person's approval",
    "turn": "was not executed: it was waiting, with the other calls of its turn, for a person's approval",
    "server": (
        "did not complete: its server asked the person a question and was waiting for the answer "
        "(the server may have begun the work; it was not finished)"
    ),
    "unknown": "did not complete: it was waiting for a person's answer",
}

ToolLookup = Callable[[str], MCPTool | None]
"""The MCP tool of a name (``None``: not one of the caller's MCP tools)."""


def unanswered(message: ToolMessage, name: str, waited: Waited) -> ToolMessage:
    """``message`` (same id, so it replaces the made-up result in the state) saying what happened
    to the call: it did not run (or not to its end), because the question it waited on was left
    unanswered and dropped when the person sent a new message."""
    text = (
        f"The tool call `{name}` {_WAITED[waited]}, and the person sent a new message instead of "
        "answering, so the question was dropped. Do not treat the call as done; if it is still "
        "wanted, ask the person or call it again."
    )
    return message.model_copy(update={"content": text, "status": "error"})


def made_up(state: Any) -> list[tuple[ToolMessage, str]]:
    """The results in ``state`` that may be made up by a UI (:data:`UNANSWERED_MARK`, no
    artifact), with each call's tool name: only the messages after the latest AI message are
    looked at (where such a UI puts them)."""
    messages = state.get("messages") if isinstance(state, Mapping) else None
    trailing: list[ToolMessage] = []
    ai = None
    for message in reversed(messages or []):
        if isinstance(message, AIMessage):
            ai = message
            break
        if isinstance(message, ToolMessage):
            trailing.append(message)
    if ai is None or not trailing:
        return []
    calls = {c.get("id"): c.get("name", "") for c in ai.tool_calls}
    return [
        (m, calls[m.tool_call_id])
        for m in reversed(trailing)
        if m.tool_call_id in calls and m.artifact is None and m.content == UNANSWERED_MARK
    ]


def what_happened(
    found: list[tuple[ToolMessage, str]], dropped: DroppedStep | None, tool: ToolLookup
) -> dict[str, Any] | None:
    """Each made-up result of an MCP call of the caller's (a tool ``tool`` knows, or a call whose
    MCP question the dropped step left pending) replaced, same message id, by what happened to the
    call: its real result when it finished in the dropped step, else why it did not run. Results
    of other calls are left alone."""
    fixed = []
    for message, name in found:
        real = _result_in(dropped, message.tool_call_id) if dropped is not None else None
        waited = _question_of(dropped, message.tool_call_id) if dropped is not None else None
        known = tool(name)
        ours = known is not None or waited in ("approval", "server") or (real is not None and _from_mcp(real))
        if not ours:
            continue  # not an MCP call of the caller's
        if real is not None:
            fixed.append(real.model_copy(update={"id": message.id}))
            continue
        if waited is None:
            waited = "approval" if known is not None and known.needs_approval else "unknown"
        fixed.append(unanswered(message, name, waited))
    return {"messages": fixed} if fixed else None


def _result_in(dropped: DroppedStep, call_id: str) -> ToolMessage | None:
    """The result the call wrote, or its task returned, in the dropped step (it finished there),
    if any: a message, in a list, or in a ``Command``'s update (results into state)."""
    for _channel, value in dropped.written:
        pending = [value]
        while pending:
            item = pending.pop()
            if isinstance(item, ToolMessage) and item.tool_call_id == call_id:
                return item
            if isinstance(item, list | tuple):
                pending.extend(item)
            elif isinstance(item, Command) and isinstance(item.update, Mapping):
                pending.append(item.update.get("messages"))
    return None


def _from_mcp(message: ToolMessage) -> bool:
    """Is ``message`` an MCP tool's result (its artifact names its server)?"""
    return isinstance(message.artifact, Mapping) and "server" in message.artifact


def _question_of(dropped: DroppedStep, call_id: str) -> Waited | None:
    """What the call waited for in the dropped step, by the questions left pending there."""
    turn = False
    for value in dropped.asked:
        if not isinstance(value, Mapping):
            continue
        if value.get("type") == "tool_approvals":
            approvals = value.get("approvals") or []
            if any(isinstance(a, Mapping) and a.get("tool_call_id") == call_id for a in approvals):
                return "approval"
            turn = True  # the turn's calls wait for it
        elif value.get("tool_call_id") == call_id:
            return "approval" if value.get("type") == "tool_approval" else "server"
    return "turn" if turn else None
