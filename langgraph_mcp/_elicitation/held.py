"""A 2025-11-25 call whose server asks mid-call, held open while a person answers.

The ``tools/call`` request runs in a task of its own (the *held call*); the server's questions
reach it as live ``elicitation/create`` / ``sampling/createMessage`` requests, which it turns
into events for the call's frame in the graph. The frame asks the person with ``interrupt()``
and the graph pauses; the held call stays open (its clock stopped, ``elicitation_timeout``
bounding the wait). When the run resumes in the same process, the frame finds the held call
again (by thread, task and tool call) and delivers the answer.

If the held call is gone (the process restarted, or nobody answered within
``elicitation_timeout``), the call is sent again and the server asks again: an answer given
before is replayed only to the very same question (question keys:
:data:`~langgraph_mcp._elicitation.answers.question_key`); a different question is asked anew.
Whatever the tool did before asking is done again, so prefer 2026-07-28 for tools with side effects.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import mcp_types as types
from langgraph.errors import GraphBubbleUp, is_invalid_resume

from langgraph_mcp._elicitation.answers import UnfitQuestion, prepare
from langgraph_mcp._elicitation.policy import Answerer, unfit_error
from langgraph_mcp._session import ABANDON_GRACE, CallClock, CallSink, LoopScope, ServerConnection
from langgraph_mcp._stream.progress import CallObserver
from langgraph_mcp.errors import OUTCOME_UNKNOWN, MCPConnectionError, MCPProtocolError, MCPToolCallError

__all__ = ["run_held"]

logger = logging.getLogger("langgraph_mcp.elicitation")

_HeldKey = tuple[str, str, str, str]
# Per connection and event loop: a held call lives on the session of the loop that sent it.
_registry: weakref.WeakKeyDictionary[LoopScope, dict[_HeldKey, HeldCall]] = weakref.WeakKeyDictionary()


@dataclass(eq=False)
class _Question:
    kind: Literal["elicitation", "sampling"]
    request: Any  # MCPElicitationRequest | CreateMessageRequestParams
    answer: asyncio.Future[Any]


class HeldCall(CallSink):
    """One held ``tools/call`` and the questions its server asked during it."""

    def __init__(
        self, connection: ServerConnection, answers: Answerer, clock: CallClock, observer: CallObserver
    ) -> None:
        self.connection = connection
        self.answers = answers
        self.clock = clock
        self.observer = observer
        """Where the call's progress and logs go: the frame currently following the call."""
        self.questions: list[_Question] = []
        self.changed = asyncio.Event()
        self.task: asyncio.Task[types.CallToolResult] | None = None
        self._scope: anyio.CancelScope | None = None
        self._person_too_slow = False

    def start(self, name: str, arguments: Mapping[str, Any], wire: Mapping[str, Any]) -> None:
        self.task = asyncio.ensure_future(self._run(name, arguments, wire))
        self.task.add_done_callback(_consume)

    async def _progress(self, progress: float, total: float | None, message: str | None) -> None:
        await self.observer.on_progress(progress, total, message)

    async def _run(
        self, name: str, arguments: Mapping[str, Any], wire: Mapping[str, Any]
    ) -> types.CallToolResult:
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                try:
                    result = await self.connection.send_call(
                        name,
                        arguments,
                        clock=self.clock,
                        sink=self,
                        exclusive=True,
                        progress=self._progress,
                        **wire,
                    )
                except Exception:
                    if not self._person_too_slow:
                        raise
                else:
                    if not self._person_too_slow:
                        if not isinstance(result, types.CallToolResult):
                            raise MCPProtocolError(self.connection.name, f"unsupported result for {name!r}")
                        return result
            if self._person_too_slow:
                limit = self.connection.config.elicitation_timeout or 0
                raise MCPToolCallError(
                    f"nobody answered MCP server {self.connection.name!r} within {limit:g}s "
                    "(elicitation_timeout); the question was answered 'cancel' and the call dropped",
                    kind="timeout",
                )
            raise MCPConnectionError(
                self.connection.name, f"the call to {name!r} was stopped. {OUTCOME_UNKNOWN}"
            )
        finally:
            # A question still waiting is not answered here: the server cancels its own request
            # when the call is cancelled, and elicitation_timeout bounds it otherwise.
            self.changed.set()

    def cancel(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()

    # -- the server's requests (CallSink) -------------------------------------------------

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        await self.observer.on_log(params)

    async def on_elicit(
        self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
    ) -> types.ElicitResult | types.ErrorData:
        await prepare(params)
        try:
            question = self.answers.question("elicitation", params)
        except UnfitQuestion as exc:
            return unfit_error(self.connection.name, exc)
        result: types.ElicitResult | types.ErrorData = await self._ask("elicitation", question)
        return result

    async def on_sample(self, params: types.CreateMessageRequestParams) -> Any:
        return await self._ask("sampling", params)

    async def _ask(self, kind: Literal["elicitation", "sampling"], request: Any) -> Any:
        if not self._person_too_slow:  # (else the call is being dropped: no more questions)
            question = _Question(kind, request, asyncio.get_running_loop().create_future())
            self.questions.append(question)
            self.changed.set()
            limit = self.connection.config.elicitation_timeout
            with anyio.move_on_after(limit if limit is not None else float("inf")):
                return await asyncio.shield(question.answer)
            self._person_too_slow = True
        if self._scope is not None:
            # The server ends the call on this answer; what it returns is dropped. Cancelled only
            # if it goes on: a cancellation that crosses the result ends mcp 1.x servers.
            self._scope.deadline = min(self._scope.deadline, anyio.current_time() + ABANDON_GRACE)
        if kind == "sampling":
            return types.ErrorData(code=types.INVALID_REQUEST, message="nobody answered in time")
        return types.ElicitResult(action="cancel")

    # -- the frame ---------------------------------------------------------------------------

    async def next_event(self, index: int) -> _Question | types.CallToolResult:
        """Question ``index`` once asked, or the call's result (raising its error)."""
        assert self.task is not None
        while True:
            if index < len(self.questions):
                return self.questions[index]
            if self.task.done():
                return self.task.result()
            self.changed.clear()
            waiter = asyncio.ensure_future(self.changed.wait())
            try:
                await asyncio.wait({waiter, self.task}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()


def _forget(calls: dict[_HeldKey, HeldCall], key: _HeldKey, held: HeldCall, _: object) -> None:
    if calls.get(key) is held:
        del calls[key]


def _consume(task: asyncio.Task[Any]) -> None:
    """A held call may end while no frame awaits it (the graph is paused): log, don't warn."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        logger.debug("held MCP call ended with %r", exc)


def _key(runtime: Any, tool_call_id: str | None) -> _HeldKey | None:
    """Where a held call is found again when the same graph task runs again."""
    if runtime is None or tool_call_id is None:
        return None
    configurable = (getattr(runtime, "config", None) or {}).get("configurable", {})
    info = getattr(runtime, "execution_info", None)
    return (
        str(configurable.get("thread_id", "")),
        str(configurable.get("checkpoint_ns", "")),
        str(getattr(info, "task_id", "") or ""),
        tool_call_id,
    )


async def run_held(
    connection: ServerConnection,
    name: str,
    arguments: Mapping[str, Any],
    *,
    clock: CallClock,
    answers: Answerer,
    observer: CallObserver,
    runtime: Any,
    wire: Mapping[str, Any] | None = None,
) -> types.CallToolResult:
    """Run (or resume following) one held 2025-11-25 call to its result. ``wire`` holds the
    request's ``meta`` and ``headers`` (see ``ServerConnection.send_call``).

    Questions answered in an earlier run of this graph task are replayed first (each
    ``interrupt()`` gets its own stored answer back, nothing is delivered twice); the first
    unanswered one is answered and delivered.
    """
    calls = _registry.setdefault(connection.scope(), {})
    key = _key(runtime, answers.tool_call_id) if answers.in_graph else None
    held = calls.get(key) if key is not None else None
    if (
        held is None
        or held.task is None
        or held.task.done()
        or held.task.get_loop() is not asyncio.get_running_loop()
    ):
        held = HeldCall(connection, answers, clock, observer)
        held.start(name, arguments, wire or {})
        if key is not None:
            calls[key] = held
            assert held.task is not None
            held.task.add_done_callback(functools.partial(_forget, calls, key, held))
    held.observer = observer
    held.answers = answers
    held.clock.stats = clock.stats  # what the held request does from now on counts for this run
    index = 0
    try:
        while True:
            event = await held.next_event(index)
            if isinstance(event, types.CallToolResult):
                return event
            replay = event.answer.done()
            answer = await _answer(answers, event, replay=replay)
            if not event.answer.done():
                event.answer.set_result(answer)
            index += 1
    except BaseException as exc:
        # A person is asked, or their answer did not fit (the interrupt stays pending): the call
        # stays held for the resumed run. Anything else ends it.
        if not isinstance(exc, GraphBubbleUp) and not is_invalid_resume(exc):
            held.cancel()
        raise


async def _answer(answers: Answerer, question: _Question, *, replay: bool) -> Any:
    """The answer to deliver for ``question``. A question answered in an earlier run of this
    graph task (``replay``) only consumes its interrupt again; nothing else runs twice."""
    if question.kind == "elicitation":
        request = question.request
        if replay and answers.config.elicitation != "interrupt":
            return None
        return (await answers.elicit([request]))[request["key"]]
    try:
        decision = answers.sampling_decision(question.request)
        if replay:
            return None
        return await answers.sample(question.request, decision)
    except MCPToolCallError as exc:
        return types.ErrorData(code=types.INVALID_REQUEST, message=str(exc))
