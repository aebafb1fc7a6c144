"""Every private LangGraph and MCP SDK name this package relies on, in one place.

langgraph is pinned to 1.2.x and mcp to 2.x: a rename in either fails loudly at import here,
not somewhere along a call. Nothing else in the package imports a private name from them.
``MCPToolNode`` also overrides or reads private members of ``ToolNode``
(:data:`TOOL_NODE_MEMBERS`); they are checked here, at import, for the same reason.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import mcp_types as types
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
from mcp.client.session import ClientSession
from mcp.shared.dispatcher import CallOptions

__all__ = [
    "TOOL_NODE_MEMBERS",
    "INPUT_ROUNDS_MAX",
    "STATE_ONLY_BACKOFF",
    "absorb_tool_listing",
    "call_headers",
    "concurrency_limited",
    "default_handle_tool_errors",
    "graph_configurable",
    "graph_run_key",
    "in_graph",
    "injected_args",
    "is_checkpointed",
    "is_resuming",
    "send_unchecked",
    "task_scratchpad",
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


# -- per-request HTTP headers ------------------------------------------------------------------
# ``ClientSession.send_request`` builds each request's transport options (the HTTP headers of
# streamable HTTP among them) in its ``_stamp`` hook, synchronously, in the caller's task. Headers
# for one call are added there, from a context variable the caller sets around the send; the
# protocol's own headers are never replaced.

_call_headers: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "langgraph_mcp_call_headers", default=None
)


def _with_call_headers(stamp: Callable[[dict[str, Any], Any], None]) -> Callable[[dict[str, Any], Any], None]:
    def stamped(data: dict[str, Any], opts: Any) -> None:
        stamp(data, opts)
        extra = _call_headers.get()
        if extra:
            headers = opts.setdefault("headers", {})
            taken = {k.lower() for k in headers}
            headers.update({k: v for k, v in extra.items() if k.lower() not in taken})

    stamped._langgraph_mcp_headers = True  # type: ignore[attr-defined]
    return stamped


@contextmanager
def call_headers(session: Any, headers: Mapping[str, str] | None) -> Iterator[None]:
    """Send ``headers`` with the requests ``session`` (an SDK ``ClientSession``) sends in this
    context.

    Raises:
        RuntimeError: this SDK version offers no way to add them (nothing is sent then).
    """
    if not headers:
        yield
        return
    stamp = getattr(session, "_stamp", None)
    if stamp is None:  # pragma: no cover - only with an unsupported SDK
        raise RuntimeError("this mcp SDK version cannot send per-call HTTP headers")
    if not getattr(stamp, "_langgraph_mcp_headers", False):
        session._stamp = _with_call_headers(stamp)
    token = _call_headers.set(headers)
    try:
        yield
    finally:
        _call_headers.reset(token)


# -- a request whose result is read as sent ----------------------------------------------------
# ``ClientSession.send_request`` validates a whole result before returning it, so one malformed
# tool loses a whole ``tools/list`` page. The page is read as sent instead, through the same
# path ``send_request`` takes (``_stamp`` adds what the negotiated era requires, ``_dispatcher``
# sends it), and its tools are checked one by one; the kept ones are then given back to the
# session (``_absorb_tool_listing``), which derives the ``Mcp-Param-*`` headers of later calls
# from them exactly as after its own ``list_tools``.

SESSION_MEMBERS = ("_stamp", "_dispatcher", "_absorb_tool_listing")
"""``ClientSession`` members used to read a listing as sent."""
_missing_session = [
    m
    for m in SESSION_MEMBERS
    if not hasattr(ClientSession, m) and m not in ClientSession.__init__.__code__.co_names
]
if _missing_session:  # pragma: no cover - only with an unsupported SDK
    raise ImportError(
        f"mcp's ClientSession has no {', '.join(_missing_session)}; this mcp version is not supported"
    )


async def send_unchecked(session: ClientSession, method: str, params: Mapping[str, Any] | None) -> Any:
    """Send one request over ``session`` and return its result as the server sent it (parsed
    JSON, not validated).

    Raises:
        MCPError: the server answered with an error, or the connection closed.
    """
    data: dict[str, Any] = {"method": method}
    if params:
        data["params"] = dict(params)
    opts: CallOptions = {}
    session._stamp(data, opts)
    return await session._dispatcher.send_raw_request(method, data.get("params"), opts)


def absorb_tool_listing(session: ClientSession, page: types.ListToolsResult, *, complete: bool) -> None:
    """Tell ``session`` about a page of tools it did not list itself; ``complete``: the page is
    the whole listing (so the session forgets tools not in it)."""
    session._absorb_tool_listing(page, complete=complete)
