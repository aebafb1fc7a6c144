"""Hidden values kept secret while their call runs: a step of the call
(:func:`~langgraph_mcp._call.pipeline.run_pipeline`)."""

from __future__ import annotations

from typing import Any

from langgraph_mcp._call.call import Call, Next
from langgraph_mcp._support.redact import value_secrets

__all__ = ["hold_secrets"]


async def hold_secrets(call: Call, next_step: Next) -> Any:
    """Hidden values are secrets of the call while it runs: kept out of the HTTP and MCP client
    libraries' own log records (they log each message at DEBUG) and of its errors."""
    if not call.hidden:
        return await next_step(call)
    with call.connection.redact.holding(value_secrets(call.hidden)):
        return await next_step(call)
