"""Every private LangGraph name this package relies on, in one place.

langgraph is pinned to 1.2.x: a rename fails loudly at import here, not somewhere along a call.
Nothing else in the package imports a private LangGraph name. ``MCPToolNode`` also overrides or
reads private members of ``ToolNode`` (:data:`TOOL_NODE_MEMBERS`); they are checked here, at
import, for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from langgraph._internal._constants import (
    CONFIG_KEY_CALL,
    CONFIG_KEY_CHECKPOINTER,
    CONFIG_KEY_SCRATCHPAD,
)
from langgraph.config import get_config
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import _default_handle_tool_errors, _get_all_injected_args

__all__ = [
    "TOOL_NODE_MEMBERS",
    "concurrency_limited",
    "default_handle_tool_errors",
    "graph_configurable",
    "graph_run_key",
    "in_graph",
    "injected_args",
    "is_checkpointed",
    "is_resuming",
    "stream_writer_here",
    "task_scratchpad",
]

default_handle_tool_errors = _default_handle_tool_errors
"""``ToolNode``'s default ``handle_tool_errors``."""

injected_args = _get_all_injected_args
"""How ``ToolNode`` computes the injected arguments of a tool (state, store, runtime)."""

TOOL_NODE_MEMBERS = (
    "_afunc",
    "_func",
    "_arun_one",
    "_run_one",
    "_parse_input",
    "_extract_state",
    "_combine_tool_outputs",
    "_tools_by_name",
    "_injected_args",
)
"""``ToolNode`` members ``MCPToolNode`` overrides (``_afunc``, ``_func``, ``_arun_one``,
``_run_one``) or uses."""
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


def stream_writer_here() -> Callable[[Any], None] | None:
    """The running graph task's custom stream writer (``None`` outside a runnable context)."""
    try:
        get_config()
    except RuntimeError:
        return None
    from langgraph.config import get_stream_writer

    return get_stream_writer()


def graph_run_key() -> Hashable:
    """Who a call is made for: the running graph's ``thread_id``, else its run id (``None``
    outside a runnable context)."""
    try:
        config = get_config()
    except RuntimeError:
        return None
    return (config.get("configurable") or {}).get("thread_id") or config.get("run_id")


def concurrency_limited() -> bool:
    """Does the running graph run limit how many tasks run at once (``max_concurrency``)?"""
    try:
        return get_config().get("max_concurrency") is not None
    except RuntimeError:
        return False


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


def task_scratchpad(conf: Mapping[str, Any] | None) -> object | None:
    """The running graph task's scratchpad: a new object each time the task runs (a resumed
    run included), the same one while it runs."""
    return None if conf is None else conf.get(CONFIG_KEY_SCRATCHPAD)


def is_resuming(conf: Mapping[str, Any] | None) -> bool:
    """Has this task been given resume values (so it may have stored results to replay)?"""
    if conf is None:
        return False
    scratchpad = conf.get(CONFIG_KEY_SCRATCHPAD)
    if scratchpad is None:
        return False
    return bool(scratchpad.resume) or scratchpad.get_null_resume(False) is not None
