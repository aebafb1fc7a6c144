"""One MCP tool call, from the tool's frame to the wire and back.

:func:`run_call` connects, then picks once how the call runs, by the server's protocol era and
its policies, and runs it to its result:

* ``rounds`` (2026-07-28): the server asks through ``InputRequiredResult`` rounds, answered in
  this frame (:func:`~langgraph_mcp._elicitation.rounds.run_rounds`);
* ``held`` (2025-11-25, a person may be asked): the request is held open in a task of its own
  while the person answers (:func:`~langgraph_mcp._elicitation.held.run_held`);
* ``plain`` (2025-11-25, no person needed): the server's live requests are answered on the spot
  by code (``decline``, a handler, the sampling model).

Every mode is wrapped in the ``-32042`` URL-required retry, runs against one :class:`CallClock`
(the call's timeout, stopped while the client answers the server), is cancelled when the
graph run is asked to drain, and is traced (an OpenTelemetry span and a LangChain child run,
when either is on: :func:`~langgraph_mcp._call.trace.traced`).

As the last steps of a call (:func:`~langgraph_mcp._call.pipeline.run_pipeline`),
:func:`choose_session` picks the session it goes over and :func:`send` makes it (a resource read
for the read tool), then sends the MCP Apps view with its result.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Awaitable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any, Literal, TypeVar

import mcp_types as types
from langgraph.errors import GraphDrained
from langgraph.prebuilt import ToolRuntime
from langgraph.runtime import Runtime

from langgraph_mcp._call.call import Call, Next
from langgraph_mcp._call.trace import traced
from langgraph_mcp._call.view import show_view
from langgraph_mcp._compat.langgraph import graph_configurable, in_graph
from langgraph_mcp._elicitation.held import run_held
from langgraph_mcp._elicitation.policy import Answerer, CodeSink, needs_person
from langgraph_mcp._elicitation.rounds import run_rounds
from langgraph_mcp._elicitation.tasks import retry_memo
from langgraph_mcp._elicitation.url_required import retry_after_url_elicitation
from langgraph_mcp._oauth.calls import user_session
from langgraph_mcp._oauth.options import per_user_oauth
from langgraph_mcp._pool.credentials import credential_session
from langgraph_mcp._pool.resources import is_read_tool, read_as_tool_result
from langgraph_mcp._session import CallClock, ServerConnection
from langgraph_mcp._stream.progress import CallObserver
from langgraph_mcp.errors import MCPConnectionError, MCPProtocolError

__all__ = ["Mode", "choose_session", "run_call", "send"]

Mode = Literal["rounds", "held", "plain"]
_T = TypeVar("_T")
_DRAIN_POLL = 0.1
logger = logging.getLogger("langgraph_mcp.pool")


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
        MCPConnectionError, MCPTimeoutError, MCPServerError, MCPProtocolError: see
            :mod:`langgraph_mcp.errors`.
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
        scope=answers.scope,
    )

    async with traced(
        connection, tool=tool_name, mcp_tool=mcp_name, tool_call_id=observer.tool_call_id
    ) as trace:
        trace.stats = clock.stats
        await connection.connect()
        trace.connected()
        wire: dict[str, Any] = {
            "meta": trace.carry(meta),
            "headers": headers,
            "task_memo": retry_memo(answers.scope) if answers.in_graph else None,
        }
        attempt = _Attempt(connection, mcp_name, arguments, runtime, clock, answers, sink, observer, wire)
        call = _cancel_on_drain(retry_after_url_elicitation(answers, attempt), observer.node_runtime)
        trace.result = await observer.track(call)  # marks the call's progress UI message done or failed
        return trace.result


class _Attempt:
    """Sends the call once (again after the URLs the server asked for were visited), in the
    connection's protocol mode. (An object rather than a closure: a call in flight holds one
    object, not a cell per variable.)"""

    __slots__ = (
        "answers",
        "arguments",
        "attempts",
        "clock",
        "connection",
        "mcp_name",
        "mode",
        "observer",
        "runtime",
        "sink",
        "wire",
    )

    def __init__(
        self,
        connection: ServerConnection,
        mcp_name: str,
        arguments: Mapping[str, Any],
        runtime: ToolRuntime | None,
        clock: CallClock,
        answers: Answerer,
        sink: CodeSink,
        observer: CallObserver,
        wire: dict[str, Any],
    ) -> None:
        self.connection = connection
        self.mcp_name = mcp_name
        self.arguments = arguments
        self.runtime = runtime
        self.clock = clock
        self.answers = answers
        self.sink = sink
        self.observer = observer
        self.wire = wire
        self.mode = _mode(connection)
        self.attempts = 0

    def keep(self) -> bool:
        return _draining(self.observer.node_runtime)

    async def __call__(self) -> types.CallToolResult:
        self.attempts += 1
        if self.attempts > 1:  # sent again after the URLs the server asked for were visited
            self.clock.stats.resends += 1
        connection, mcp_name, arguments, clock = self.connection, self.mcp_name, self.arguments, self.clock
        if self.mode == "rounds":
            return await run_rounds(
                connection,
                mcp_name,
                arguments,
                clock=clock,
                answers=self.answers,
                sink=self.sink,
                progress=self.observer.on_progress,
                journal_key=self.answers.scope,
                wire=self.wire,
                keep=self.keep,
            )
        if self.mode == "held":
            return await run_held(
                connection,
                mcp_name,
                arguments,
                clock=clock,
                answers=self.answers,
                observer=self.observer,
                runtime=self.runtime,
                wire=self.wire,
            )
        result = await connection.send_call(
            mcp_name, arguments, clock=clock, sink=self.sink, progress=self.observer.on_progress, **self.wire
        )
        if not isinstance(result, types.CallToolResult):
            raise MCPProtocolError(
                connection.name, f"a 2025-11-25 server asked for input rounds in {mcp_name!r}"
            )
        return result


def _draining(runtime: Runtime[Any] | None) -> bool:
    """The run is being handed over (a drain): what the call started on the server is kept."""
    control = runtime.control if runtime is not None else None
    return control is not None and bool(control.drain_requested)


class _Watched:
    """One call watched for a drain request: its run's control and the task it runs in."""

    __slots__ = ("control", "done", "drained", "loop", "signalled", "task")

    def __init__(self, control: Any, task: asyncio.Task[Any]) -> None:
        self.control = control
        self.task = task
        self.loop = task.get_loop()
        self.signalled = False  # the poller has seen the drain (its thread only)
        self.drained = False  # the task was cancelled for it (its loop only)
        self.done = False  # the call has ended (its loop only)

    def drain(self) -> None:
        """In the call's loop: cancel its task, unless the call has ended meanwhile."""
        if not self.done and not self.drained:
            self.drained = True
            self.task.cancel()


class _DrainPoller:
    """Every call of the process that watches for a drain request, polled by one thread.

    ``RunControl`` has no signal to wait on, so it is polled: by one daemon thread, every
    ``_DRAIN_POLL`` seconds while some call is watched (and asleep otherwise), which cancels a
    drained call's task through its loop. Not by a timer on each loop: a timer due sooner than
    the timers other code arms and cancels (httpx's, for one) holds their cancelled handles in
    the loop's queue until they fall due, and the loop then frees them in bursts that make the
    garbage collector run several times as often."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.watched: set[_Watched] = set()
        self.busy = threading.Event()  # set while something is watched
        self.thread: threading.Thread | None = None

    def add(self, watched: _Watched) -> None:
        with self.lock:
            if self.thread is None or not self.thread.is_alive():  # first use, or after a fork
                thread = threading.Thread(target=self._run, name="langgraph-mcp-drain", daemon=True)
                thread.start()  # before the call is listed: a thread that cannot start lists nothing
                self.thread = thread
            self.watched.add(watched)
            if len(self.watched) == 1:
                self.busy.set()

    def discard(self, watched: _Watched) -> None:
        with self.lock:
            self.watched.discard(watched)

    def after_fork(self) -> None:
        """In a forked child: the parent's calls and thread are not here, and its lock may
        have been copied held."""
        self.lock = threading.Lock()
        self.watched = set()
        self.busy = threading.Event()
        self.thread = None

    def _run(self) -> None:
        while True:
            self.busy.wait()
            time.sleep(_DRAIN_POLL)
            self._poll()

    def _poll(self) -> None:
        # Its own frame, so nothing it looked at is held while the thread sleeps (a finished
        # call's task held until the next poll would be freed then, with many others at once).
        with self.lock:
            watched = list(self.watched)
            if not watched:
                self.busy.clear()
                return
        for one in watched:
            try:
                if one.loop.is_closed():  # closed under the call: nothing left to cancel
                    self.discard(one)
                elif not one.signalled and one.control.drain_requested:
                    one.signalled = True
                    one.loop.call_soon_threadsafe(one.drain)
            except RuntimeError:  # its loop closed between the two
                self.discard(one)
            except Exception:  # a control that cannot be read: the other calls are still watched
                one.signalled = True  # (and it is not read again)
                logger.exception("cannot tell whether a run was asked to drain")


_POLLER = _DrainPoller()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_POLLER.after_fork)


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
    watched = _Watched(control, task)
    before = task.cancelling()
    _POLLER.add(watched)
    try:
        result = await call
    except BaseException:
        if not watched.drained:
            raise
        if task.uncancel() > before:
            raise  # its caller cancelled it too: that wins
        raise GraphDrained(control.drain_reason or "shutdown") from None
    finally:
        watched.done = True
        _POLLER.discard(watched)
    if watched.drained:  # the call swallowed the cancellation the drain sent it
        task.uncancel()
        raise GraphDrained(control.drain_reason or "shutdown")
    return result


# -- the call's last steps (:func:`~langgraph_mcp._call.pipeline.run_pipeline`) ------------------


def _session_for(call: Call) -> AbstractAsyncContextManager[ServerConnection]:
    pool, connection, runtime = call.pool, call.connection, call.runtime
    per_user = pool is not None and call.server in pool.per_user_servers
    if per_user and per_user_oauth(connection.config) is not None:
        assert pool is not None
        return user_session(pool, connection, runtime, call.name, None)
    configurable = ((runtime.config if runtime is not None else None) or {}).get("configurable") or {}
    thread_id = configurable.get("thread_id")
    thread = None if thread_id is None else str(thread_id)
    if per_user:
        # The run's credentials (per_user headers): their own session; none, and the call fails.
        assert pool is not None
        return credential_session(pool, call.server, thread, _credentials(call))
    if pool is None or connection.config.session_scope != "thread":
        return nullcontext(connection)
    return pool.using(call.server, thread)


def _credentials(call: Call) -> dict[str, str] | None:
    """The run's credentials for a per-user server (its ``per_user`` headers), computed once for
    the call: its session carries them, so they are not sent again as per-call headers.

    Raises:
        MCPConnectionError: the headers function failed (its type is said, never its message,
            which may hold a secret).
    """
    options, runtime = call.options, call.runtime
    if not (options.per_user and options.headers is not None and runtime is not None):
        return None
    try:
        return dict(options.headers(runtime))
    except Exception as exc:
        raise MCPConnectionError(
            call.server, f"the per_user headers function failed ({type(exc).__name__}); the call was not sent"
        ) from None


async def choose_session(call: Call, next_step: Next) -> Any:
    """The shared connection; for a ``session_scope="thread"`` server, this conversation's own;
    for a per-user OAuth server, the user's: held in use for the whole call."""
    async with _session_for(call) as session:
        call.session = session
        return await next_step(call)


async def send(call: Call) -> types.CallToolResult:
    """The call on the wire, with the hidden values (:func:`run_call`); then the MCP Apps view
    sent with its result (given the arguments without the hidden ones)."""
    session = call.session
    assert session is not None
    timeout = call.tool_timeout
    if timeout is None:
        timeout = call.connection.timeout_for(call.mcp_name)[0]
    arguments = {**call.arguments, **call.hidden} if call.hidden else call.arguments
    if is_read_tool(call.mcp_tool):
        return await read_as_tool_result(session, arguments.get("uri"), timeout=timeout)
    options, runtime = call.options, call.runtime
    result = await run_call(
        session,
        mcp_name=call.mcp_name,
        tool_name=call.name,
        arguments=arguments,
        timeout=timeout,
        runtime=runtime,
        tool_call_id=call.tool_call_id,
        meta=options.meta(runtime) if options.meta is not None and runtime is not None else None,
        # A per-user server's headers are its session's (sent with every request already).
        headers=(
            options.headers(runtime)
            if options.headers is not None and runtime is not None and not options.per_user
            else None
        ),
    )
    await show_view(session, call.mcp_tool, call.name, call.arguments, result, runtime, call.tool_call_id)
    return result
