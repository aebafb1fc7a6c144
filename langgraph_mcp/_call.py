"""One MCP tool call, from the tool's frame to the wire and back.

:func:`run_call` connects, then picks once how the call runs, by the server's protocol era and
its policies, and runs it to its result:

* ``rounds`` (2026-07-28): the server asks through ``InputRequiredResult`` rounds, answered in
  this frame (``_elicitation/rounds.py``);
* ``held`` (2025-11-25, a person may be asked): the request is held open in a task of its own
  while the person answers (``_elicitation/held.py``);
* ``plain`` (2025-11-25, no person needed): the server's live requests are answered on the spot
  by code (``decline``, a handler, the sampling model).

Every mode is wrapped in the ``-32042`` URL-required retry, runs against one :class:`CallClock`
(the call's timeout, stopped while the client answers the server), is cancelled when the
graph run is asked to drain, and is traced (an OpenTelemetry span and a LangChain child run,
when either is on: ``_calltrace.py``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Mapping
from typing import Any, Literal, TypeVar

import mcp_types as types
from langgraph.errors import GraphDrained
from langgraph.prebuilt import ToolRuntime
from langgraph.runtime import Runtime

from langgraph_mcp._calltrace import traced
from langgraph_mcp._compat.langgraph import graph_configurable, in_graph
from langgraph_mcp._elicitation.held import run_held
from langgraph_mcp._elicitation.policy import Answerer, CodeSink, needs_person
from langgraph_mcp._elicitation.rounds import run_rounds
from langgraph_mcp._elicitation.url_required import retry_after_url_elicitation
from langgraph_mcp._progress import CallObserver
from langgraph_mcp._session import CallClock, ServerConnection
from langgraph_mcp.errors import MCPProtocolError

__all__ = ["Mode", "run_call"]

Mode = Literal["rounds", "held", "plain"]
_T = TypeVar("_T")
_DRAIN_POLL = 0.1


def _mode(connection: ServerConnection) -> Mode:
    if connection.era == "2026-07-28":
        return "rounds"
    return "held" if needs_person(connection.config) else "plain"


async def run_call(
    connection: ServerConnection,
    *,
    mcp_name: str,
    tool_name: str,
    arguments: Mapping[str, Any],
    timeout: float | None,
    runtime: ToolRuntime | None,
    tool_call_id: str | None,
    meta: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> types.CallToolResult:
    """Call ``mcp_name`` on ``connection`` and return its result (``isError`` results included).

    ``tool_name`` is the exposed name (for events and payloads); ``timeout`` bounds the server's
    time for the whole call (``None``: no limit); ``meta`` and ``headers`` go with every
    ``tools/call`` request of the call (its ``_meta``, and HTTP headers).

    Raises:
        MCPConnectionError, MCPTimeoutError, MCPServerError, MCPProtocolError: see ``errors.py``.
        MCPToolCallError: a request for input could not be answered (declined URL, refused
            sampling, a person needed outside a graph, too many rounds).
        GraphInterrupt: a person is asked (the call continues when the run resumes).
        GraphDrained: the run was asked to drain; the call was cancelled.
    """
    observer = CallObserver(
        server=connection.name,
        tool_name=tool_name,
        tool_call_id=runtime.tool_call_id if runtime is not None else tool_call_id,
        runtime=runtime,
        log_events=connection.config.log_events,
        progress_ui=connection.config.progress_ui,
    )
    answers = Answerer(
        connection.name,
        connection.config,
        tool_name=tool_name,
        tool_call_id=observer.tool_call_id,
        in_graph=in_graph(graph_configurable()),
        roots=connection.list_roots,
    )
    clock = CallClock(timeout, server=connection.name, what=f"tool {mcp_name!r}")
    sink = CodeSink(
        connection.name,
        connection.config,
        tool_name=tool_name,
        tool_call_id=observer.tool_call_id,
        on_log=observer.on_log,
    )

    async with traced(
        connection, tool=tool_name, mcp_tool=mcp_name, tool_call_id=observer.tool_call_id
    ) as trace:
        trace.stats = clock.stats
        await connection.connect()
        trace.connected()
        mode = _mode(connection)
        wire: dict[str, Any] = {"meta": trace.carry(meta), "headers": headers}
        attempts = 0

        async def attempt() -> types.CallToolResult:
            nonlocal attempts
            attempts += 1
            if attempts > 1:  # sent again after the URLs the server asked for were visited
                clock.stats.resends += 1
            if mode == "rounds":
                return await run_rounds(
                    connection,
                    mcp_name,
                    arguments,
                    clock=clock,
                    answers=answers,
                    sink=sink,
                    progress=observer.on_progress,
                    journal_key=answers.scope,
                    wire=wire,
                    keep=lambda: _draining(observer.node_runtime),
                )
            if mode == "held":
                return await run_held(
                    connection,
                    mcp_name,
                    arguments,
                    clock=clock,
                    answers=answers,
                    observer=observer,
                    runtime=runtime,
                    wire=wire,
                )
            result = await connection.send_call(
                mcp_name, arguments, clock=clock, sink=sink, progress=observer.on_progress, **wire
            )
            if not isinstance(result, types.CallToolResult):
                raise MCPProtocolError(
                    connection.name, f"a 2025-11-25 server asked for input rounds in {mcp_name!r}"
                )
            return result

        call = _cancel_on_drain(retry_after_url_elicitation(answers, attempt), observer.node_runtime)
        trace.result = await observer.track(call)  # marks the call's progress UI message done or failed
        return trace.result


def _draining(runtime: Runtime[Any] | None) -> bool:
    """The run is being handed over (a drain): what the call started on the server is kept."""
    control = runtime.control if runtime is not None else None
    return control is not None and bool(control.drain_requested)


class _Watched:
    """One call watched for a drain request: its run's control and the task it runs in."""

    __slots__ = ("control", "drained", "task")

    def __init__(self, control: Any, task: asyncio.Task[Any]) -> None:
        self.control = control
        self.task = task
        self.drained = False


class _DrainWatch:
    """Every call of one event loop that watches for a drain request, polled by one timer.

    ``RunControl`` has no signal to wait on, so it is polled; one timer per loop (running only
    while some call is watched) polls every watched call, instead of a timer, and a task, per
    call. Touched only from its own loop's thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.watched: set[_Watched] = set()
        self.timer: asyncio.TimerHandle | None = None

    def add(self, watched: _Watched) -> None:
        self.watched.add(watched)
        if self.timer is None:
            self.timer = self.loop.call_later(_DRAIN_POLL, self.poll)

    def discard(self, watched: _Watched) -> None:
        self.watched.discard(watched)
        if not self.watched:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            with _WATCHES_LOCK:
                if not self.watched and _WATCHES.get(self.loop) is self:
                    del _WATCHES[self.loop]

    def poll(self) -> None:
        self.timer = None
        for watched in list(self.watched):
            if not watched.drained and watched.control.drain_requested:
                watched.drained = True
                watched.task.cancel()
        if self.watched:
            self.timer = self.loop.call_later(_DRAIN_POLL, self.poll)


_WATCHES: dict[asyncio.AbstractEventLoop, _DrainWatch] = {}
"""The loops with watched calls now (an idle loop's watch is dropped)."""
_WATCHES_LOCK = threading.Lock()


async def _cancel_on_drain(call: Awaitable[_T], runtime: Runtime[Any] | None) -> _T:
    """Await ``call``; if the run is asked to drain meanwhile, cancel it and raise
    ``GraphDrained`` so the checkpoint keeps the tool call for the resumed run.

    The call runs in the caller's own task (no task of its own): a drain cancels that task,
    and the cancellation is turned back into ``GraphDrained`` here, once the call has unwound.
    """
    control = runtime.control if runtime is not None else None
    task = asyncio.current_task() if control is not None else None
    if control is None or task is None:
        return await call
    loop = asyncio.get_running_loop()
    with _WATCHES_LOCK:
        watch = _WATCHES.get(loop)
        if watch is None:
            watch = _WATCHES[loop] = _DrainWatch(loop)
    watched = _Watched(control, task)
    before = task.cancelling()
    watch.add(watched)
    try:
        result = await call
    except BaseException:
        if not watched.drained:
            raise
        if task.uncancel() > before:
            raise  # its caller cancelled it too: that wins
        raise GraphDrained(control.drain_reason or "shutdown") from None
    finally:
        watch.discard(watched)
    if watched.drained:  # the call swallowed the cancellation the drain sent it
        task.uncancel()
        raise GraphDrained(control.drain_reason or "shutdown")
    return result
