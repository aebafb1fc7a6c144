"""Every private LangGraph name this package relies on, in one place.

langgraph is pinned to 1.2.x: a rename fails loudly at import here, not somewhere along a call.
Nothing else in the package imports a private LangGraph name. ``MCPToolNode`` also overrides or
reads private members of ``ToolNode`` (:data:`TOOL_NODE_MEMBERS`); they are checked here, at
import, for the same reason.
"""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from langchain_core.runnables.config import var_child_runnable_config
from langgraph._internal._constants import (
    CONFIG_KEY_CALL,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_CHECKPOINTER,
    CONFIG_KEY_SCRATCHPAD,
    INTERRUPT,
    NS_SEP,
    RETURN,
)
from langgraph._internal._scratchpad import PregelScratchpad
from langgraph.config import get_config, get_store
from langgraph.errors import _mark_invalid_resume
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import _default_handle_tool_errors, _get_all_injected_args
from langgraph.pregel._algo import _scratchpad
from langgraph.types import _interrupt_id, interrupt

from langgraph_mcp.errors import MCPConfigError

__all__ = [
    "TOOL_NODE_MEMBERS",
    "ask",
    "shown_question",
    "concurrency_limited",
    "DroppedStep",
    "adropped_step",
    "dropped_step",
    "default_handle_tool_errors",
    "graph_config",
    "graph_configurable",
    "graph_store",
    "server_store",
    "graph_run_key",
    "in_graph",
    "injected_args",
    "is_checkpointed",
    "is_resuming",
    "pending_questions",
    "refused_resume",
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
    "_handle_tool_errors",
    "_awrap_tool_call",
)
"""``ToolNode`` members ``MCPToolNode`` overrides (``_afunc``, ``_func``, ``_arun_one``,
``_run_one``) or uses (``langgraph_mcp.apps.view_calls_node`` copies a node's error handling and
wrapper)."""
_missing = [
    m for m in TOOL_NODE_MEMBERS if not hasattr(ToolNode, m) and m not in ToolNode.__init__.__code__.co_names
]
if _missing:  # pragma: no cover - only with an unsupported langgraph
    raise ImportError(
        f"langgraph's ToolNode has no {', '.join(_missing)}; this langgraph version is not supported"
    )


def graph_config() -> Any:
    """The config of the graph run this is called in, if any."""
    try:
        return get_config()
    except RuntimeError:
        return None


def graph_store() -> Any:
    """The store of the graph run this is called in, if any."""
    try:
        return get_store()
    except RuntimeError:
        return None


async def server_store() -> Any:
    """The LangGraph server's store (the one its runs are given), in a LangGraph server's
    process (its custom app, its lifespan).

    Raises:
        MCPConfigError: this is not a LangGraph server's process.
    """
    try:
        from langgraph_api.store import get_store  # type: ignore[import-untyped]
    except ImportError:
        raise MCPConfigError(None, "store", "no store given, and this is not a LangGraph server") from None
    return await get_store()


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


# -- a resume value is an answer only to a question that was asked ---------------------------------
#
# LangGraph hands a plain ``Command(resume=value)`` to the first ``interrupt()`` that runs, whether
# or not any question was pending when it was sent: sent to a thread paused at a static breakpoint
# (or after a failed run), it would answer whatever the resumed run asks first, a tool approval
# included. ``ask`` takes such a value only for the interrupt that was pending. What was pending
# is read from the step's pending writes (the ``INTERRUPT`` writes LangGraph keeps per task), which
# the scratchpad holds in its ``get_null_resume`` closure: checked here, at import.


def _closure(function: Callable[..., Any]) -> dict[str, Any]:
    code = getattr(function, "__code__", None)
    cells = getattr(function, "__closure__", None) or ()
    names = code.co_freevars if code is not None else ()
    return {name: cell.cell_contents for name, cell in zip(names, cells, strict=False)}


_probe = _scratchpad(None, [], "task", "node:task", None, 0, 1).get_null_resume
if not {"pending_writes", "parent_scratchpad"} <= set(_probe.__code__.co_freevars):  # pragma: no cover
    raise ImportError("langgraph's task scratchpad changed shape; this langgraph version is not supported")
del _probe


def _pending_interrupts(scratchpad: PregelScratchpad) -> dict[str, Any]:
    """The interrupts the step's tasks were waiting on, this graph's and its parents': their
    values (what the person was shown), by id."""
    pending: dict[str, Any] = {}
    current: PregelScratchpad | None = scratchpad
    while current is not None:
        cells = _closure(current.get_null_resume)
        for _task, channel, value in cells.get("pending_writes") or ():
            if channel == INTERRUPT:
                asked = value if isinstance(value, list | tuple) else [value]
                pending.update((str(i.id), getattr(i, "value", None)) for i in asked if hasattr(i, "id"))
        current = cells.get("parent_scratchpad")
    return pending


def pending_questions(conf: Mapping[str, Any] | None) -> list[Any]:
    """The values of the interrupts the running task's step was waiting on (this graph's and its
    parents'): empty outside a task, and in a run that resumes no question that was asked."""
    scratchpad = None if conf is None else conf.get(CONFIG_KEY_SCRATCHPAD)
    if not isinstance(scratchpad, PregelScratchpad):
        return []
    return list(_pending_interrupts(scratchpad).values())


_NOT_PENDING = object()
_answering: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "langgraph_mcp_answering", default=_NOT_PENDING
)


def shown_question() -> Any:
    """Inside the validation of an answer by :func:`ask`: the value of the interrupt that was
    pending with the id of the one being answered (what the person saw when they answered), or
    ``None`` when no such interrupt was pending (an answer replayed from an earlier step, or one
    sent while nothing was asked)."""
    value = _answering.get()
    return None if value is _NOT_PENDING else value


def _no_resume(consume: bool = False) -> None:
    return None


def ask(value: Any, *, response_schema: Any) -> Any:
    """``interrupt(value, response_schema=...)``, except that a plain ``Command(resume=...)`` value
    sent while this question was not pending (no interrupt with the id this one gets was waiting)
    is not taken as its answer: the question is asked. Answers this task was given before are
    replayed as ever; an answer addressed to this interrupt by id is taken."""
    config = get_config()
    conf = config.get("configurable") or {}
    scratchpad = conf.get(CONFIG_KEY_SCRATCHPAD)
    if scratchpad is None:
        return interrupt(value, response_schema=response_schema)
    namespace = conf.get(CONFIG_KEY_CHECKPOINT_NS, "")
    pending = _pending_interrupts(scratchpad)
    counter = scratchpad.interrupt_counter
    shown = _answering.set(_NOT_PENDING)

    def count() -> int:
        # interrupt() numbers itself first, then validates any answer: which question the
        # person saw under this interrupt's id is known to the validator from here on.
        index: int = counter()
        _answering.set(pending.get(_interrupt_id(namespace, index), _NOT_PENDING))
        return index

    changes: dict[str, Any] = {"interrupt_counter": count}
    if scratchpad.get_null_resume(False) is not None and (
        # If this interrupt consumes the plain value, it does so as answer number len(resume).
        _interrupt_id(namespace, len(scratchpad.resume)) not in pending
    ):
        # Same counter and answers, no plain value: only this call of interrupt() sees it so
        # (a context variable, not the shared scratchpad), and the value stays for the interrupt
        # it was meant for.
        changes["get_null_resume"] = _no_resume
    hidden = dataclasses.replace(scratchpad, **changes)
    token = var_child_runnable_config.set({**config, "configurable": {**conf, CONFIG_KEY_SCRATCHPAD: hidden}})
    try:
        return interrupt(value, response_schema=response_schema)
    finally:
        var_child_runnable_config.reset(token)
        _answering.reset(shown)


# -- the step a new input dropped -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DroppedStep:
    """The step a thread was interrupted in, which the current run's new input dropped (LangGraph
    starts from the input; the step's finished tasks' writes and its questions are left behind)."""

    written: list[tuple[str, Any]]
    """``(channel, value)`` written by the step's tasks that finished, and the return values of
    the tasks its nodes ran that finished (channel ``__return__``)."""
    asked: list[Any]
    """The values of the step's interrupts (the questions left unanswered)."""


_WALK = 8
"""Checkpoints looked at, newest first, for the current run's input."""


def _thread(conf: Mapping[str, Any] | None) -> tuple[Any, dict[str, Any]] | None:
    if conf is None or conf.get(CONFIG_KEY_CHECKPOINTER) is None or conf.get("thread_id") is None:
        return None
    # The task's namespace ends with the task's own segment; the graph's checkpoints are under the rest.
    namespace = str(conf.get(CONFIG_KEY_CHECKPOINT_NS, "")).rpartition(NS_SEP)[0]
    thread = {"thread_id": conf["thread_id"], "checkpoint_ns": namespace}
    return conf[CONFIG_KEY_CHECKPOINTER], {"configurable": thread}


def _dropped(tuples: list[Any]) -> DroppedStep | None:
    """From checkpoints newest first: the one before the latest ``input`` checkpoint, if it was
    interrupted."""
    for index, item in enumerate(tuples[:-1]):
        if (item.metadata or {}).get("source") == "input":
            parent = tuples[index + 1]
            writes = parent.pending_writes or []
            asked = [
                v
                for _t, c, value in writes
                if c == INTERRUPT
                for v in (value if isinstance(value, list | tuple) else [value])
            ]
            if not asked:
                return None
            # A node's own channel writes, and what the tasks it ran finished with (RETURN: a
            # node that runs each call in a task of its own, as MCPToolNode does, had not written
            # the calls that finished yet when another asked).
            written = [
                (c, value)
                for _t, c, value in writes
                if c == RETURN or (c != INTERRUPT and not c.startswith("__"))
            ]
            return DroppedStep(written, [getattr(a, "value", a) for a in asked])
    return None


async def adropped_step(conf: Mapping[str, Any] | None) -> DroppedStep | None:
    """The interrupted step the current run's input dropped, read from the graph's checkpointer
    (``None``: none, no checkpointer, or it cannot be read)."""
    thread = _thread(conf)
    if thread is None:
        return None
    saver, config = thread
    tuples: list[Any] = []
    try:
        item = await saver.aget_tuple(config)
        while item is not None and len(tuples) < _WALK:
            tuples.append(item)
            item = await saver.aget_tuple(item.parent_config) if item.parent_config else None
    except Exception:  # a checkpointer that cannot be read here: nothing is known
        return None
    return _dropped(tuples)


def dropped_step(conf: Mapping[str, Any] | None) -> DroppedStep | None:
    """:func:`adropped_step` for synchronous runs."""
    thread = _thread(conf)
    if thread is None:
        return None
    saver, config = thread
    tuples: list[Any] = []
    try:
        item = saver.get_tuple(config)
        while item is not None and len(tuples) < _WALK:
            tuples.append(item)
            item = saver.get_tuple(item.parent_config) if item.parent_config else None
    except Exception:  # e.g. an asynchronous-only checkpointer
        return None
    return _dropped(tuples)


def refused_resume(error: BaseException) -> BaseException:
    """``error``, marked as LangGraph marks a resume value that does not fit its interrupt's
    ``response_schema``: ``ToolNode`` fails the run with it whatever ``handle_tool_errors`` says,
    and the interrupt stays pending."""
    _mark_invalid_resume(error)
    return error
