"""Every private LangGraph and MCP SDK name this package relies on, in one place.

langgraph is pinned to 1.2.x and mcp to 2.x: a rename in either fails loudly at import here,
not somewhere along a call. Nothing else in the package imports a private name from them.
``MCPToolNode`` also overrides or reads private members of ``ToolNode``
(:data:`TOOL_NODE_MEMBERS`); they are checked here, at import, for the same reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph._internal._constants import (
    CONFIG_KEY_CALL,
    CONFIG_KEY_CHECKPOINTER,
    CONFIG_KEY_SCRATCHPAD,
)
from langgraph.config import get_config
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import _default_handle_tool_errors, _get_all_injected_args
from mcp.client._input_required import (
    _STATE_ONLY_BACKOFF_CAP_SECONDS,
    _STATE_ONLY_BACKOFF_INITIAL_SECONDS,
    DEFAULT_INPUT_REQUIRED_MAX_ROUNDS,
)

__all__ = [
    "TOOL_NODE_MEMBERS",
    "INPUT_ROUNDS_MAX",
    "STATE_ONLY_BACKOFF",
    "default_handle_tool_errors",
    "graph_configurable",
    "in_graph",
    "injected_args",
    "is_checkpointed",
    "is_resuming",
]

default_handle_tool_errors = _default_handle_tool_errors
"""``ToolNode``'s default ``handle_tool_errors``."""

injected_args = _get_all_injected_args
"""How ``ToolNode`` computes the injected arguments of a tool (state, store, runtime)."""

INPUT_ROUNDS_MAX: int = DEFAULT_INPUT_REQUIRED_MAX_ROUNDS
"""The SDK driver's cap on ``InputRequiredResult`` rounds (applied here to rounds that ask)."""

STATE_ONLY_BACKOFF: tuple[float, float] = (
    _STATE_ONLY_BACKOFF_INITIAL_SECONDS,
    _STATE_ONLY_BACKOFF_CAP_SECONDS,
)
"""The SDK driver's back-off for state-only rounds: first sleep, doubling up to this cap."""


TOOL_NODE_MEMBERS = ("_afunc", "_func", "_arun_one", "_parse_input", "_tools_by_name", "_injected_args")
"""``ToolNode`` members ``MCPToolNode`` overrides (``_afunc``, ``_func``, ``_arun_one``) or uses."""
_missing = [
    m for m in TOOL_NODE_MEMBERS if not hasattr(ToolNode, m) and m not in ToolNode.__init__.__code__.co_names
]
if _missing:  # pragma: no cover - only with an unsupported langgraph
    raise ImportError(
        f"langgraph's ToolNode has no {', '.join(_missing)}; this langgraph version is not supported"
    )


def graph_configurable() -> Mapping[str, Any] | None:
    """The running graph task's ``configurable``, read-only (``None`` outside a runnable context)."""
    try:
        return get_config().get("configurable") or {}
    except RuntimeError:
        return None


def in_graph(conf: Mapping[str, Any] | None) -> bool:
    """Inside a LangGraph task, where ``interrupt()`` works?"""
    return conf is not None and CONFIG_KEY_SCRATCHPAD in conf


def is_checkpointed(conf: Mapping[str, Any] | None) -> bool:
    """Inside a checkpointed graph task, where ``@task`` results are stored and replayed?"""
    return (
        conf is not None
        and CONFIG_KEY_SCRATCHPAD in conf
        and conf.get(CONFIG_KEY_CHECKPOINTER) is not None
        and CONFIG_KEY_CALL in conf
    )


def is_resuming(conf: Mapping[str, Any] | None) -> bool:
    """Has this task been given resume values (so it may have stored results to replay)?"""
    if conf is None:
        return False
    scratchpad = conf.get(CONFIG_KEY_SCRATCHPAD)
    if scratchpad is None:
        return False
    return bool(scratchpad.resume) or scratchpad.get_null_resume(False) is not None
