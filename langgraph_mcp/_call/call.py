"""One call of an MCP tool as it goes down the steps of
:func:`~langgraph_mcp._call.pipeline.run_pipeline` and back: :class:`Call`, and what a step is.

A step is ``async def step(call, next_step)``: it does its one job and passes the call on
(``await next_step(call)``), or stops it with the call's outcome; what it does with the outcome
on its way back is its job too. The steps live with their concern: the argument check and hidden
values with the arguments, approval with approval, the result with the results, the session and
the call itself with the runner.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import mcp_types as types
from langgraph.prebuilt import ToolRuntime

from langgraph_mcp._pool.pool import MCPPool
from langgraph_mcp._session import ServerConnection
from langgraph_mcp.options import ToolOptions

__all__ = ["Call", "Checker", "Next", "Step"]


class Checker(Protocol):
    """What a step asks of the tool's argument checker
    (:class:`~langgraph_mcp._call.arguments.ArgumentChecker`)."""

    @property
    def null_is_absent(self) -> frozenset[str]: ...

    def drop_null_headers(self, arguments: dict[str, Any]) -> None: ...

    async def acheck(self, arguments: dict[str, Any]) -> None: ...


@dataclass(slots=True)
class Call:
    """One call of one tool: the tool's part (fixed when the call is built) and the call's own
    (arguments, values and session, filled in on the way down)."""

    name: str
    """The tool's exposed name."""
    server: str
    mcp_name: str
    """The tool's name on the server."""
    connection: ServerConnection
    """The server's shared connection."""
    pool: MCPPool | None
    mcp_tool: types.Tool
    checker: Checker
    options: ToolOptions
    approval: Sequence[str]
    """The decisions a person may take (empty: no approval is asked)."""
    messages_key: str
    tool_timeout: float | None
    """The tool's own ``timeout`` (``None``: the server's)."""
    question: Callable[[dict[str, Any], Sequence[str]], Any]
    """The approval question (an :class:`~langgraph_mcp._call.approval.ApprovalRequest`) for
    these arguments and the decisions allowed."""
    arguments: dict[str, Any]
    """The model's arguments (without hidden ones once checked): what a person and a view see."""
    runtime: ToolRuntime | None
    tool_call_id: str | None
    hidden: dict[str, Any] = field(default_factory=dict)
    """The hidden arguments' values."""
    session: ServerConnection | None = None
    """The connection the call goes over, once chosen."""


Next = Callable[[Call], Awaitable[Any]]
"""The rest of the steps, from a step's point of view."""


class Step(Protocol):
    """One step: the call and the rest of the steps; its outcome."""

    def __call__(self, call: Call, next_step: Next) -> Awaitable[Any]: ...
