"""The interrupt a call raises when it parks on a running task; re-exported by (and documented in)
:mod:`langgraph_mcp.types`."""

from __future__ import annotations

from typing import Final, Literal

from typing_extensions import TypedDict

__all__ = ["TASK_INTERRUPT_TYPE", "MCPTaskInterrupt"]

TASK_INTERRUPT_TYPE: Final = "mcp_task"
"""The ``type`` of :class:`MCPTaskInterrupt`."""


class MCPTaskInterrupt(TypedDict):
    """The ``interrupt()`` value raised when a call parks the run on a task still running on its
    server (the server's ``task_detach_after`` passed). The run holds no worker meanwhile; resume
    it (``Command(resume=True)``, any value) to look at the task again: its result is then the
    tool's, or the run parks once more while the task is still running."""

    type: Literal["mcp_task"]
    server: str
    """The name of the MCP server that runs the task."""
    tool_name: str
    """The tool whose call the task is."""
    tool_call_id: str | None
    """The tool call that waits on the task (the task's own id is not shown: a server may use it
    as a bearer token)."""
    status: Literal["working", "input_required"]
    """The task's status when the run parked."""
    status_message: str | None
    """The server's last words on the task, without its secrets (at most 1,000 characters)."""
    poll_interval_ms: int
    """How long the server suggests waiting before looking again (milliseconds, 50 to 30,000)."""
