"""A call answered with a task (2026-07-28 tasks extension): what is kept in the checkpoint, how
its questions are asked, and parking the run on it.

The session layer polls the task (:meth:`~langgraph_mcp._session.tasks.TaskRequests.follow_task`).
Here:

* the task's handle is stored in the call's journal
  (:class:`~langgraph_mcp._elicitation.durable.Journal`) as soon as it arrives, so a resumed run, a
  run picked up after a crash, or another worker follows the same task instead of creating a new one
  (see :func:`~langgraph_mcp._elicitation.rounds.run_rounds` for the first request);
* its questions (``inputRequests``) are asked exactly like an ``InputRequiredResult`` round's
  (``Answerer.plan_round``: an interrupt for a person, a handler, the sampling model), and each
  ``tasks/update`` that answered them is stored, so a replay never answers a question twice;
* with ``task_detach_after``, the run parks on the task with an ``mcp_task`` interrupt
  (:class:`~langgraph_mcp.types.MCPTaskInterrupt`) instead of holding a worker. Parking needs the
  journal: without one a resumed run could not find its task again, so the call keeps polling.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import mcp_types as types
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.types import interrupt

from langgraph_mcp._compat.langgraph import graph_config, graph_configurable, graph_store
from langgraph_mcp._elicitation.durable import STORED_ERRORS, Journal
from langgraph_mcp._elicitation.parked import ParkedTask, record_parked, sealer_from_env, unrecord_parked
from langgraph_mcp._elicitation.policy import Answerer
from langgraph_mcp._session import CallClock, ServerConnection
from langgraph_mcp._session.calls import TaskMemo
from langgraph_mcp._session.tasks import QUESTIONS_MAX, Asker, Parker
from langgraph_mcp._session.taskwire import TaskHandle, TaskState
from langgraph_mcp.types._tasks import TASK_INTERRUPT_TYPE, MCPTaskInterrupt

__all__ = ["follow", "forget", "remember", "remembered", "retry_memo"]

logger = logging.getLogger("langgraph_mcp.tasks")


async def follow(
    connection: ServerConnection,
    name: str,
    handle: TaskHandle,
    *,
    clock: CallClock,
    answers: Answerer,
    progress: Any,
    journal: Journal | None,
    keep: Callable[[], bool] | None,
) -> types.CallToolResult:
    """Follow the task ``handle`` of the call of ``name`` to its result (see the module
    docstring). Raises what :meth:`ServerConnection.follow_task` raises, and ``GraphInterrupt``
    while a person answers or the run is parked. Without a journal nobody could follow the task
    after a drain, so a drain cancels it too."""
    parked: list[bool] = []
    try:
        result = await connection.follow_task(
            name,
            handle,
            clock=clock,
            progress=progress,
            asker=_asker(connection, handle.task_id, clock, answers, journal),
            parker=_parker(connection, answers, handle.task_id, parked)
            if journal is not None and answers.in_graph
            else None,
            keep=keep if journal is not None else None,
        )
    except GraphBubbleUp:
        if not parked:
            # A person is asked now, not the task waited on: nothing is parked on it until the
            # call parks again (a new record then).
            await _unpark(connection, handle.task_id)
        raise  # asked or parked: the task is followed again when the run resumes
    except BaseException as exc:
        forget(journal)  # a retry starts the call afresh
        if isinstance(exc, Exception):  # ended (not cancelled): nothing parks on the task any more
            await _unpark(connection, handle.task_id)
        raise
    await _unpark(connection, handle.task_id)
    return result  # remembered still: a retry of the node reads the same (finished) task


def _asker(
    connection: ServerConnection, task_id: str, clock: CallClock, answers: Answerer, journal: Journal | None
) -> Asker:
    async def ask(requests: dict[str, types.InputRequest]) -> set[str]:
        respond = await answers.plan_round(requests)  # a person is asked here (an interrupt)
        keys = sorted(requests)
        failed: list[BaseException] = []

        async def answer_and_update() -> dict[str, Any]:
            with clock.answering():
                responses = await respond()
            try:
                async with clock.running():  # the call's own limit, not a request's
                    await connection.update_task(task_id, dict(responses), timeout=None)
            except STORED_ERRORS as exc:
                # Stored as "not sent": a replay asks again (the answers are kept with the
                # interrupts), rather than failing again the same way.
                failed.append(exc)
                return {"kind": "not_updated", "keys": []}
            return {"kind": "updated", "keys": keys}

        done = await (answer_and_update() if journal is None else journal.record(answer_and_update))
        if failed:
            raise failed[0]
        # A replayed update may be an earlier one (the task asked something else since): its keys
        # are answered; what is still outstanding is asked on the next poll.
        answered = done.get("keys") if isinstance(done, dict) else None
        return {key for key in answered if isinstance(key, str)} if isinstance(answered, list) else set()

    return ask


def _parker(connection: ServerConnection, answers: Answerer, task_id: str, parked: list[bool]) -> Parker:
    async def park(state: TaskState) -> None:
        # No task id: a server may use it as a bearer token for the task's state.
        payload: MCPTaskInterrupt = {
            "type": TASK_INTERRUPT_TYPE,
            "server": connection.name,
            "tool_name": answers.tool_name,
            "tool_call_id": answers.tool_call_id,
            "status": "input_required" if state.status == "input_required" else "working",
            "status_message": connection.redact(state.status_message) if state.status_message else None,
            "poll_interval_ms": round(state.poll_interval() * 1000),
        }
        try:
            interrupt(payload)  # returns once the run was resumed: the caller looks at the task again
        except GraphInterrupt:
            parked.append(True)
            await _record(connection, answers, task_id, state)  # parked now (not when replayed)
            raise

    return park


async def _record(connection: ServerConnection, answers: Answerer, task_id: str, state: TaskState) -> None:
    """Record where the run parks (:mod:`langgraph_mcp._elicitation.parked`), when the graph has
    a store, a thread and the key to seal the record with. A record that cannot be written is
    logged: the run stays parked, to be resumed by hand."""
    store, sealer = graph_store(), sealer_from_env()
    config = graph_config() or {}
    configurable = config.get("configurable") or {}
    thread = configurable.get("thread_id")
    if store is None or sealer is None or not isinstance(thread, str) or connection.private:
        return  # (a user's own session: nobody but that user's run may look at its tasks)
    metadata = config.get("metadata") or {}
    assistant = configurable.get("assistant_id") or metadata.get("assistant_id")
    parked = ParkedTask(
        server=connection.name,
        task_id=task_id,
        thread_id=thread,
        assistant_id=assistant if isinstance(assistant, str) else None,
        tool_name=answers.tool_name,
        tool_call_id=answers.tool_call_id,
        status=state.status,
        poll_interval_ms=round(state.poll_interval() * 1000),
        parked_at=time.time(),
        questions=tuple(sorted(state.input_requests or ()))[:QUESTIONS_MAX],
    )
    try:
        await record_parked(store, sealer, parked)
    except Exception as exc:
        logger.warning(
            "MCP server %r: the run parked on a task of %s, but it could not be recorded (%s);"
            " it wakes only when resumed",
            connection.name,
            answers.tool_name,
            type(exc).__name__,
        )


async def _unpark(connection: ServerConnection, task_id: str) -> None:
    """The call ended, or asks a person: forget the record of its task, if any was kept."""
    store, sealer = graph_store(), sealer_from_env()
    if store is None or sealer is None:
        return
    try:
        await unrecord_parked(store, sealer, connection.name, task_id)
    except Exception as exc:
        logger.warning(
            "MCP server %r: a task's parked record could not be deleted (%s)",
            connection.name,
            type(exc).__name__,
        )


# -- a retry in the same process ---------------------------------------------------------------
# A ``RetryPolicy`` runs the node again in the same execution, where LangGraph does not replay
# the stored rounds of the failed attempt (their positions are not counted again). The handle of
# a task that attempt started is kept here, so the retry follows it (or reads its result, when it
# finished) instead of starting another. Bounded; dropped when the call fails. A 2025-11-25 task
# (which nothing is stored for) is kept here the same way (:func:`retry_memo`).

_HANDLES: OrderedDict[tuple[Any, ...], TaskHandle | types.Task] = OrderedDict()
_HANDLES_MAX = 4096
_HANDLES_LOCK = threading.Lock()


_CALL_TASK = "mcp_tool_call"
"""The graph task each call of a turn runs in (``_graph.node._tool_call_task``): its id is new at
every attempt."""


def _where(journal: Journal) -> tuple[Any, ...] | None:
    return _where_call(journal.key)


def _where_call(key: str) -> tuple[Any, ...] | None:
    """Where a call's handle is kept: its thread, the namespace of the node that runs it (without
    the ``mcp_tool_call:<id>`` graph task of this attempt, whose id a retry does not keep) and the
    call ``key`` (server, tool, tool call id)."""
    conf = graph_configurable()
    thread = conf.get("thread_id") if conf else None
    if conf is None or thread is None:
        return None
    namespace = str(conf.get("checkpoint_ns", ""))
    node = "|".join(part for part in namespace.split("|") if part.split(":", 1)[0] != _CALL_TASK)
    return (str(thread), node, key)


def remember(journal: Journal | None, handle: TaskHandle) -> None:
    """Keep ``handle`` for a retry of its call in this process."""
    _keep(_where(journal) if journal is not None else None, handle)


def _keep(where: tuple[Any, ...] | None, handle: TaskHandle | types.Task) -> None:
    if where is None:
        return
    with _HANDLES_LOCK:
        _HANDLES[where] = handle
        _HANDLES.move_to_end(where)
        while len(_HANDLES) > _HANDLES_MAX:
            _HANDLES.popitem(last=False)


def remembered(journal: Journal | None) -> TaskHandle | None:
    """The handle an earlier attempt of this call (in this process) was given, if any."""
    where = _where(journal) if journal is not None else None
    if where is None:
        return None
    with _HANDLES_LOCK:
        handle = _HANDLES.get(where)
    return handle if isinstance(handle, TaskHandle) else None


def forget(journal: Journal | None) -> None:
    _drop(_where(journal) if journal is not None else None)


def _drop(where: tuple[Any, ...] | None) -> None:
    if where is not None:
        with _HANDLES_LOCK:
            _HANDLES.pop(where, None)


class _RetryMemo(TaskMemo):
    """A 2025-11-25 task kept for a retry of its call in this process (see above)."""

    def __init__(self, where: tuple[Any, ...]) -> None:
        self._where = where

    def recall(self) -> types.Task | None:
        with _HANDLES_LOCK:
            task = _HANDLES.get(self._where)
        return task if isinstance(task, types.Task) else None

    def keep(self, task: types.Task) -> None:
        _keep(self._where, task)

    def forget(self) -> None:
        _drop(self._where)


def retry_memo(key: str) -> TaskMemo | None:
    """Where the 2025-11-25 task of the call ``key`` (its answers' scope) is kept for a retry of
    the call in this process; ``None`` outside a graph thread."""
    where = _where_call(key)
    return _RetryMemo(where) if where is not None else None
