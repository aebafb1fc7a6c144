"""A 2026-07-28 call: ``InputRequiredResult`` rounds, driven in the call's own frame.

The call is sent; while the server answers with an ``InputRequiredResult``:

* a round that asks (``input_requests``) is answered (a person through ``interrupt()``, a
  handler, the sampling model, roots) and sent again with the responses and the echoed
  ``request_state``. At most ``INPUT_ROUNDS_MAX`` (the SDK's cap, 10) such rounds.
* a round that only carries ``request_state`` ("not done yet") is polled with the SDK driver's
  back-off (50 ms doubling to 250 ms), for as long as the call's clock allows.

A call answered with a task (the tasks extension) is followed to its result
(:func:`~langgraph_mcp._elicitation.tasks.follow`).

In a checkpointed run each round that asks, and the answer that follows it, is stored (see
:class:`~langgraph_mcp._elicitation.durable.Journal`), and so is a task handle: a resumed run sends
only the round that was answered, and what needs no person (the sampling model, a handler) is not
run again for a stored round. If the server no longer accepts a stored ``request_state`` (it
expired, or the server restarted with a new key), the call is re-issued, and questions it repeats
are answered from the answers already given. (A node re-run without a resume value, after a crash or
a drain, sends the call's first request again before it finds its stored rounds: each stored round
costs a checkpoint write, which only calls that ask pay.)
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types as types

from langgraph_mcp._compat.mcp import INPUT_ROUNDS_MAX, STATE_ONLY_BACKOFF
from langgraph_mcp._elicitation.durable import STORED_ERRORS, Journal, decode_error, encode_error
from langgraph_mcp._elicitation.policy import Answerer
from langgraph_mcp._elicitation.tasks import follow, remember, remembered
from langgraph_mcp._session import CallClock, CallSink, Round, ServerConnection
from langgraph_mcp._session.taskwire import TaskHandle
from langgraph_mcp.errors import MCPProtocolError, MCPServerError, MCPToolCallError

__all__ = ["run_rounds"]

logger = logging.getLogger("langgraph_mcp.elicitation")


_INLINE = {"kind": "inline"}
"""Stored for a first request answered at once: a marker only (the result is not stored)."""


def _encode(result: Round) -> dict[str, Any]:
    if isinstance(result, TaskHandle):
        # Only what following the task needs: its status message (the server's words) and its
        # ``_meta`` are not kept. The id is: a resumed run finds its task only through it.
        data = result.model_dump(
            mode="json", by_alias=True, exclude_none=True, exclude={"status_message", "meta"}
        )
        return {"kind": "task", "data": data}
    kind = "input_required" if isinstance(result, types.InputRequiredResult) else "result"
    return {"kind": kind, "data": result.model_dump(mode="json", by_alias=True, exclude_none=True)}


def _decode(stored: dict[str, Any]) -> Round:
    if stored["kind"] == "error":
        raise decode_error(stored)
    if stored["kind"] == "input_required":
        return types.InputRequiredResult.model_validate(stored["data"])
    if stored["kind"] == "task":
        return TaskHandle.model_validate(stored["data"])
    return types.CallToolResult.model_validate(stored["data"])


def _kept(result: Round) -> bool:
    """Is ``result`` stored as soon as it arrives: a round that asks, or a task handle (a replay
    must find it, not send the request that made it again)."""
    if isinstance(result, TaskHandle):
        return True
    return isinstance(result, types.InputRequiredResult) and bool(result.input_requests)


def _is_stale_state(exc: MCPServerError) -> bool:
    data = exc.data
    return (
        exc.code == types.INVALID_PARAMS
        and isinstance(data, Mapping)
        and data.get("reason") == "invalid_request_state"
    )


async def run_rounds(
    connection: ServerConnection,
    name: str,
    arguments: Mapping[str, Any],
    *,
    clock: CallClock,
    answers: Answerer,
    sink: CallSink,
    progress: Any,
    journal_key: str,
    wire: Mapping[str, Any] | None = None,
    keep: Callable[[], bool] | None = None,
) -> types.CallToolResult:
    """Run one 2026-07-28 call to its result (see the module docstring).

    Raises:
        the errors of :meth:`ServerConnection.send_call`; ``MCPToolCallError`` when the server
        asks too many times or a request is refused; ``GraphInterrupt`` while a person answers;
        what following a task raises (:func:`~langgraph_mcp._elicitation.tasks.follow`). ``keep()``:
        the run is only being handed over (a drain), so a task is left running on the server when
        the call is cancelled.
    """
    tasks = connection.offers_tasks and connection.follows_tasks()
    journal = Journal.open(journal_key, tasks=tasks)
    given: Round | None = None
    if not tasks and (journal is None or not journal.resuming):
        # The first request, sent as ``first()`` below would send it. A result at once is the
        # call's result, with nothing stored; the rounds are set up only when the server asks
        # (a plain call holds none of their closures while it waits).
        given = await connection.send_call(
            name,
            arguments,
            clock=clock,
            sink=sink,
            progress=progress,
            input_responses=None,
            request_state=None,
            **(wire or {}),
        )
        if isinstance(given, types.CallToolResult):
            return given
    return await _rounds(
        connection,
        name,
        arguments,
        clock=clock,
        answers=answers,
        sink=sink,
        progress=progress,
        journal=journal,
        tasks=tasks,
        given=given,
        wire=wire,
        keep=keep,
    )


async def _rounds(
    connection: ServerConnection,
    name: str,
    arguments: Mapping[str, Any],
    *,
    clock: CallClock,
    answers: Answerer,
    sink: CallSink,
    progress: Any,
    journal: Journal | None,
    tasks: bool,
    given: Round | None,
    wire: Mapping[str, Any] | None,
    keep: Callable[[], bool] | None,
) -> types.CallToolResult:
    """:func:`run_rounds` past its first request when ``given`` (its answer) is not ``None``."""

    async def send(responses: dict[str, Any] | None, state: str | None) -> Round:
        return await connection.send_call(
            name,
            arguments,
            clock=clock,
            sink=sink,
            progress=progress,
            input_responses=responses,
            request_state=state,
            **(wire or {}),
        )

    async def stored(thunk: Callable[[], Awaitable[Round]]) -> Round:
        if journal is None:
            return await thunk()

        async def encoded() -> dict[str, Any]:
            try:
                return _encode(await thunk())
            except STORED_ERRORS as exc:
                return encode_error(exc)

        value = await journal.record(encoded)
        if value == _INLINE:  # a first request answered at once, before a replay: send it again
            return await thunk()
        return _decode(value)

    async def asked(result: Round) -> Round:
        """A round that asks, or a task handle, is stored before anything else happens (a replay
        finds it)."""
        if journal is None or not _kept(result):
            return result
        return await stored(lambda: _ready(result))

    async def first() -> Round:
        """The call's first request. With a server that may answer with a task, its answer is
        looked for in the journal first even when the run was not resumed (a run picked up after
        a crash): sending it again would start a second task. Only a marker is stored for an
        answer that is neither a task nor a round that asks."""
        if given is not None:  # sent already: a call that cannot start a task, not resumed
            return await asked(given)
        if tasks and (handle := remembered(journal)) is not None:
            return handle  # an attempt before this one (a retry) started the task
        if journal is not None and journal.resuming:
            return await stored(lambda: send(None, None))
        if journal is None or not tasks:
            return await asked(await send(None, None))
        fresh: list[Round] = []

        async def marked() -> dict[str, Any]:
            try:
                result = await send(None, None)
            except STORED_ERRORS as exc:
                return encode_error(exc)
            if _kept(result) or isinstance(result, types.InputRequiredResult):
                return _encode(result)  # the rounds that follow it may start a task: replayable
            fresh.append(result)
            return _INLINE

        value = await journal.record(marked)
        if value == _INLINE:
            return fresh[0] if fresh else await send(None, None)
        return _decode(value)

    async def reissued(exc: MCPServerError) -> Round:
        """The server no longer accepts the state it handed out: send the call afresh."""
        if not _is_stale_state(exc):
            raise exc
        logger.info(
            "MCP server %r no longer accepts the stored request state of %r (%s); re-issuing the call",
            connection.name,
            name,
            exc.reason,
        )
        clock.stats.resends += 1
        return await stored(lambda: send(None, None))

    result = await first()
    rounds = 0
    first_delay, max_delay = STATE_ONLY_BACKOFF
    delay = first_delay
    while isinstance(result, types.InputRequiredResult):
        if not result.input_requests:
            # "Not done yet": poll again after a back-off. Polls are not stored (a resumed run
            # polls again from the last stored state), so a long wait writes no checkpoints.
            await clock.sleep(delay)
            delay = min(delay * 2, max_delay)
            state = result.request_state
            try:
                if tasks and journal is not None:  # the answer may be a task: replayable
                    result = await stored(lambda state=state: send(None, state))  # type: ignore[misc]
                else:
                    result = await asked(await send(None, state))
            except MCPServerError as exc:
                result = await reissued(exc)
            continue
        delay = first_delay
        rounds += 1
        if rounds > INPUT_ROUNDS_MAX:
            raise MCPToolCallError(
                f"MCP tool {name!r} on server {connection.name!r} asked for input more than "
                f"{INPUT_ROUNDS_MAX} times",
                kind="protocol",
            )
        respond = await answers.plan_round(result.input_requests)
        state = result.request_state

        async def answer_and_send(respond: Any = respond, state: str | None = state) -> Round:
            with clock.answering():
                responses = await respond()
            return await send(responses or None, state)

        try:
            result = await stored(answer_and_send)
        except MCPServerError as exc:
            result = await reissued(exc)
    if isinstance(result, TaskHandle) and connection.follows_tasks():
        remember(journal, result)
        return await follow(
            connection,
            name,
            result,
            clock=clock,
            answers=answers,
            progress=progress,
            journal=journal,
            keep=keep,
        )
    if not isinstance(result, types.CallToolResult):
        raise MCPProtocolError(connection.name, f"unsupported result for {name!r}: {type(result).__name__}")
    return result


async def _ready(result: Round) -> Round:
    return result
