"""Helpers shared by the tests (plain functions, not fixtures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Send

from langgraph_mcp import MCPPool, MCPTool, load_mcp_tools


def runtime_config() -> RunnableConfig:
    """Config that lets a ToolNode run outside a graph."""
    return {"configurable": {"__pregel_runtime": Runtime()}}


def tool_call(name: str, args: dict[str, Any] | None = None, call_id: str = "call_1") -> dict[str, Any]:
    return {"name": name, "args": args or {}, "id": call_id, "type": "tool_call"}


async def call(tool: MCPTool, args: dict[str, Any] | None = None, call_id: str = "call_1") -> ToolMessage:
    result = await tool.ainvoke(tool_call(tool.name, args, call_id))
    assert isinstance(result, ToolMessage)
    return result


async def tools_by_name(pool: MCPPool) -> dict[str, MCPTool]:
    return {t.name: t for t in await load_mcp_tools(pool)}


async def server_stats(pool: MCPPool, server: str = "demo") -> dict[str, int]:
    """The demo server's own counters: its PID, handshakes and tools/call requests seen."""
    result = await pool.connection(server).call_tool("stats", {}, timeout=30)
    assert result.structured_content is not None, result
    return dict(result.structured_content)


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def spawned_pids(pid_dir: Path) -> list[int]:
    return sorted(int(p.name) for p in pid_dir.iterdir())


def json_content(message: ToolMessage) -> Any:
    assert isinstance(message.content, str)
    return json.loads(message.content)


def send_per_call(state: dict[str, Any]) -> list[Send] | str:
    """Route each tool call of the last message to the ``tools`` node as its own task."""
    calls = state["messages"][-1].tool_calls
    return [Send("tools", [{**c, "type": "tool_call"}]) for c in calls] or END
