"""Calls answered with a task: the 2026-07-28 tasks extension and the 2025-11-25 experimental API.

2026-07-28 (``io.modelcontextprotocol/tasks``): a server that negotiated the extension may
answer a ``tools/call`` with a task handle (``resultType: "task"``) instead of its result; the
client then polls ``tasks/get`` until the task is done, answers what it asks with
``tasks/update`` and may ``tasks/cancel`` it. This module sends the three requests and follows a
task to its result; what is stored in the checkpoint and how a person is asked is the layer
above's (:func:`~langgraph_mcp._elicitation.tasks.follow`). The wire shapes and the bounds put on
what a server sends are :class:`~langgraph_mcp._session.taskwire.TaskHandle`,
:class:`~langgraph_mcp._session.taskwire.TaskState` and their neighbours.

2025-11-25: a tool that requires a task is called with a ``task`` parameter on a server that
declared task-augmented calls, polled with ``tasks/get``, and its result fetched with
``tasks/result`` (sent like the call itself, so the server's questions reach the call). Those
tasks are followed within this process only: that API gives nothing durable to come back to.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT
from pydantic import TypeAdapter, ValidationError

from langgraph_mcp._session.calls import Calls, masked_result
from langgraph_mcp._session.clock import CallClock
from langgraph_mcp._session.era import MODERN
from langgraph_mcp._session.owner import Session
from langgraph_mcp._session.routing import CallSink
from langgraph_mcp._session.taskwire import (
    ACK,
    STATE,
    STATUS_MESSAGE_MAX,
    TERMINAL,
    TaskHandle,
    TaskParams,
    TaskRequest,
    TaskState,
    poll_seconds,
)
from langgraph_mcp.errors import MCPProtocolError, MCPServerError, MCPTimeoutError, MCPToolCallError

__all__ = ["QUESTIONS_MAX", "QUESTION_ROUNDS_MAX", "Asker", "Parker", "TaskRequests"]

logger = logging.getLogger("langgraph_mcp.pool")

_CANCEL_TIMEOUT = 5.0
QUESTION_ROUNDS_MAX = 50
"""The most times one task may ask for input (a server asking again and again is refused)."""
QUESTIONS_MAX = 32
"""The most questions a task may ask at once."""
_LEGACY_TTL_MS = 3_600_000
"""The lifetime a 2025-11-25 task is asked for (the server may choose another)."""


_INPUTS: TypeAdapter[dict[str, types.InputRequest]] = TypeAdapter(dict[str, types.InputRequest])

Asker = Callable[[dict[str, types.InputRequest]], Awaitable[set[str]]]
"""Answers a task's outstanding questions (``tasks/update`` included) and returns the keys it
answered (they are not asked again)."""
Parker = Callable[[TaskState], Awaitable[None]]
"""Called at each poll once a call has followed its task for ``task_detach_after`` seconds: parks
the run (raises), or returns when the run was resumed since."""


class TaskRequests(Calls):
    """``tasks/get``, ``tasks/update`` and ``tasks/cancel`` over the live session, and following a
    task to its result."""

    offers_tasks: bool = False
    """The server declared the tasks extension (2026-07-28); set when a session connects."""
    legacy_tasks: bool = False
    """The server declared task-augmented ``tools/call`` (the 2025-11-25 experimental task API,
    ``capabilities.tasks.requests.tools.call``); set when a session connects."""

    # -- 2025-11-25: the experimental task API ----------------------------------------------------

    async def _legacy_task(self, name: str) -> types.TaskMetadata | None:
        """A 2025-11-25 tool that requires a task (``execution.taskSupport: "required"``) is
        called as one, on a server that declared task-augmented calls (``tasks`` option on).
        The tools are listed first if this session has not listed them yet."""
        if self.era == MODERN or not self.legacy_tasks or not self.config.tasks:
            return None
        tool = self.listed(name)
        if tool is None:
            tool = next((t for t in await self.list_tools() if t.name == name), None)
        if tool is None or tool.execution is None or tool.execution.task_support != "required":
            return None
        return types.TaskMetadata(ttl=_LEGACY_TTL_MS)

    async def _follow_legacy_task(
        self,
        name: str,
        task: types.Task,
        session: Session,
        client: Client,
        clock: CallClock,
        sink: CallSink,
        exclusive: bool,
        progress: ProgressFnT | None,
        headers: Mapping[str, str] | None,
    ) -> types.CallToolResult:
        """Poll a 2025-11-25 task (``tasks/get``) until it needs input or ends, then fetch its
        result (``tasks/result``), during which the server's questions reach the call as they do
        during a ``tools/call``. A timeout or a cancellation cancels the task on the server (its
        handle is not kept in the checkpoint: a resumed run sends the call again). The task's id
        is masked in whatever is said about the call meanwhile, as on 2026-07-28.
        """
        with self.redact.holding((task.task_id,)):
            result = await self._follow_legacy(
                name, task, session, client, clock, sink, exclusive, progress, headers
            )
            return masked_result(result, self.redact) if result.is_error else result

    async def _follow_legacy(
        self,
        name: str,
        task: types.Task,
        session: Session,
        client: Client,
        clock: CallClock,
        sink: CallSink,
        exclusive: bool,
        progress: ProgressFnT | None,
        headers: Mapping[str, str] | None,
    ) -> types.CallToolResult:
        task_id = task.task_id
        get = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
        shown: str | None = None
        count = 0
        state: types.Task | types.GetTaskResult = task
        try:
            while True:
                message = state.status_message
                if message and message != shown and progress is not None:
                    shown, count = message, count + 1
                    await progress(float(count), None, self.redact(message[:STATUS_MESSAGE_MAX]))
                if state.status != "working":
                    request = types.GetTaskPayloadRequest(
                        params=types.GetTaskPayloadRequestParams(task_id=task_id)
                    )
                    result = await self._send(
                        session, client, request, clock, sink, exclusive, None, headers, tool=name
                    )
                    if not isinstance(result, types.CallToolResult):
                        raise MCPProtocolError(
                            self.name, f"the task of {name!r} did not end with a tool result"
                        )
                    return result
                await clock.sleep(poll_seconds(state.poll_interval))
                async with clock.running():
                    state = await self.request(
                        "poll a task",
                        lambda c: c.session.send_request(get, types.GetTaskResult),
                        timeout=None,
                    )
        except (asyncio.CancelledError, MCPTimeoutError):
            cancel = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
            await self._cancel_quietly(
                name,
                lambda: self.request(
                    "cancel a task",
                    lambda c: c.session.send_request(cancel, types.CancelTaskResult),
                    timeout=_CANCEL_TIMEOUT,
                ),
            )
            raise

    # -- 2026-07-28: the tasks extension ------------------------------------------------------------

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> types.CallToolResult:
        """Call ``name`` directly, outside any graph, within its configured limit (see
        :meth:`Calls.call_tool`); a call answered with a task is followed to its result, and a
        question from the task is an error.

        Raises:
            MCPConnectionError, MCPTimeoutError, MCPServerError, MCPProtocolError,
            MCPToolCallError (the task asked for input, or was cancelled by the server).
        """
        clock = CallClock(self.timeout_for(name)[0], server=self.name, what=f"tool {name!r}")
        result = await self.send_call(name, arguments or {}, clock=clock, sink=self._fallback)
        if isinstance(result, TaskHandle) and self.follows_tasks():
            return await self.follow_task(name, result, clock=clock)
        if not isinstance(result, types.CallToolResult):
            raise MCPProtocolError(self.name, f"{name!r} asked for input; call it through a tool in a graph")
        return result

    def follows_tasks(self) -> bool:
        """Are calls on this session sent able to come back as tasks: the client advertises the
        extension (the server's ``tasks`` option) and the session speaks 2026-07-28."""
        return bool(self.config.tasks) and self.era == MODERN

    async def follow_task(
        self,
        name: str,
        handle: TaskHandle | TaskState,
        *,
        clock: CallClock,
        progress: ProgressFnT | None = None,
        asker: Asker | None = None,
        parker: Parker | None = None,
        keep: Callable[[], bool] | None = None,
    ) -> types.CallToolResult:
        """Poll the task ``handle`` of a call of ``name`` to its result.

        Each new status message goes to ``progress``. Outstanding questions go to ``asker`` once
        each (without one, a question is an error). ``clock`` bounds the time the server takes
        (not the time spent answering); when it runs out, or the caller is cancelled, the task is
        cancelled on the server unless ``keep()`` says the run is only handed over (a drain).

        A task that asks more than :data:`QUESTION_ROUNDS_MAX` times, or more than
        :data:`QUESTIONS_MAX` questions at once, is refused; so is one whose questions cannot be
        read or whose result is not a tool result. A task the call gives up on this way is
        cancelled on the server.

        Raises:
            MCPTimeoutError: the call's limit ran out (the task was cancelled).
            MCPServerError: the task failed with a JSON-RPC error.
            MCPToolCallError: the task was cancelled by the server, asked without an asker, or
                asked too much (cancelled).
            MCPProtocolError: the server broke the protocol (the task was cancelled).
            MCPConnectionError: polling failed; the task may still run.
        """
        # A server may use a task's id as a bearer token for its state: it is masked in whatever
        # is said or logged about the call meanwhile (the server's own error messages included).
        with self.redact.holding((handle.task_id,)):
            return await self._follow(name, handle, clock, progress, asker, parker, keep)

    async def _follow(
        self,
        name: str,
        handle: TaskHandle | TaskState,
        clock: CallClock,
        progress: ProgressFnT | None,
        asker: Asker | None,
        parker: Parker | None,
        keep: Callable[[], bool] | None,
    ) -> types.CallToolResult:
        task_id = handle.task_id
        state: TaskState | TaskHandle = handle
        answered: set[str] = set()
        rounds = 0
        shown: str | None = None
        shown_count = 0
        detach = self.config.task_detach_after
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            while True:
                message = state.status_message
                if message is not None and message != shown and progress is not None:
                    shown, shown_count = message, shown_count + 1
                    await progress(float(shown_count), None, self.redact(message))
                if state.status in TERMINAL:
                    if not isinstance(state, TaskState) and state.status != "cancelled":
                        state = await self._poll(task_id, clock)  # a handle carries no result
                        continue
                    return self._finished(name, state)
                if state.status == "input_required" and isinstance(state, TaskState):
                    pending = {k: v for k, v in (state.input_requests or {}).items() if k not in answered}
                    if pending:
                        rounds += 1
                        if rounds > QUESTION_ROUNDS_MAX or len(pending) > QUESTIONS_MAX:
                            raise MCPToolCallError(
                                f"MCP tool {name!r} on server {self.name!r}: its task asked for input "
                                f"more than {QUESTION_ROUNDS_MAX} times, or more than {QUESTIONS_MAX} "
                                "questions at once; it was cancelled",
                                kind="protocol",
                            )
                        answered |= await self._ask_task(name, pending, asker)
                        state = await self._poll(task_id, clock)
                        continue
                if parker is not None and detach is not None and loop.time() - started >= detach:
                    if isinstance(state, TaskState):
                        await parker(state)
                    state = await self._poll(task_id, clock)
                    continue
                await clock.sleep(state.poll_interval())
                state = await self._poll(task_id, clock)
        except (asyncio.CancelledError, MCPTimeoutError):
            if keep is None or not keep():
                await self._cancel_quietly(name, task_id)
            raise
        except (MCPToolCallError, MCPProtocolError):  # given up on: nobody will follow it
            await self._cancel_quietly(name, task_id)
            raise

    async def _poll(self, task_id: str, clock: CallClock) -> TaskState:
        async with clock.running():
            return await self.get_task(task_id, timeout=None)

    async def _ask_task(self, name: str, pending: dict[str, Any], asker: Asker | None) -> set[str]:
        try:
            requests = _INPUTS.validate_python(pending, by_name=False)
        except ValidationError as exc:
            raise MCPProtocolError(
                self.name,
                f"the task of {name!r} asked for input in a shape the protocol does not have: "
                + self.redact(str(exc.errors()[0].get("msg", "invalid"))),
            ) from None
        if asker is None:
            raise MCPToolCallError(
                f"MCP tool {name!r} on server {self.name!r} asked for input; call it through a tool "
                "in a graph",
                kind="elicitation",
            )
        return await asker(requests)

    def _finished(self, name: str, state: TaskState | TaskHandle) -> types.CallToolResult:
        if state.status == "cancelled":
            why = f": {self.redact(state.status_message)}" if state.status_message else ""
            raise MCPToolCallError(
                f"MCP tool {name!r} on server {self.name!r}: its task was cancelled{why}", kind="protocol"
            )
        assert isinstance(state, TaskState)
        if state.status == "failed":
            error = state.error or {}
            code = error.get("code")
            message = error.get("message")
            raise MCPServerError(
                self.name,
                code if isinstance(code, int) else types.INTERNAL_ERROR,
                self.redact(message if isinstance(message, str) else "the task failed"),
            )
        if state.result is None:
            raise MCPProtocolError(self.name, f"the task of {name!r} completed without a result")
        try:
            result = types.CallToolResult.model_validate(state.result, by_name=False)
        except ValidationError:
            raise MCPProtocolError(
                self.name, f"the task of {name!r} completed with a result that is not a tool result"
            ) from None
        if result.is_error:
            return masked_result(result, self.redact)
        self._check_output(name, result)
        return result

    async def _cancel_quietly(self, name: str, cancel: str | Callable[[], Awaitable[Any]]) -> None:
        """Cancel the task (a 2026-07-28 task id, or how to send a 2025-11-25 ``tasks/cancel``),
        shielded from the cancellation that asked for it; a failure is logged (the task ends by
        its TTL on the server)."""
        with anyio.CancelScope(shield=True):
            try:
                await (self.cancel_task(cancel) if isinstance(cancel, str) else cancel())
            except Exception as exc:  # best effort: the caller's own error is what it reports
                logger.warning(
                    "MCP server %r: the task of %r could not be cancelled: %s",
                    self.name,
                    name,
                    self.redact(str(exc)),
                )

    async def get_task(self, task_id: str, *, timeout: float | None) -> TaskState:
        """The task now (``tasks/get``).

        Raises:
            MCPConnectionError, MCPTimeoutError, MCPServerError, MCPProtocolError.
        """
        request = TaskRequest(method="tasks/get", params=TaskParams(task_id=task_id))
        state = await self.request(
            "poll a task",
            lambda client: client.session.send_request(request, STATE),
            timeout=timeout,
        )
        if state.task_id != task_id:
            raise MCPProtocolError(self.name, "tasks/get answered for another task")
        return state

    async def update_task(self, task_id: str, responses: dict[str, Any], *, timeout: float | None) -> None:
        """Send answers to the task's questions (``tasks/update``)."""
        request = TaskRequest(
            method="tasks/update", params=TaskParams(task_id=task_id, input_responses=responses)
        )
        await self.request(
            "answer a task's questions",
            lambda client: client.session.send_request(request, ACK),
            timeout=timeout,
        )

    async def cancel_task(self, task_id: str) -> None:
        """Ask the server to cancel the task (``tasks/cancel``), within a few seconds."""
        request = TaskRequest(method="tasks/cancel", params=TaskParams(task_id=task_id))
        await self.request(
            "cancel a task",
            lambda client: client.session.send_request(request, ACK),
            timeout=_CANCEL_TIMEOUT,
        )
