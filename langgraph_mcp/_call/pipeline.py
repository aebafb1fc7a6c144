"""One call of an MCP tool, as ordered steps: the path from the model's arguments to the wire and
back.

:class:`~langgraph_mcp._call.adapter.MCPTool` builds one :class:`Call` and hands it to
:func:`run_pipeline`. Each step does one job and passes the call on to the next, or stops it
with the call's outcome (a ``(content, artifact)`` pair, or a message or ``Command`` as content);
what a step does with the outcome on its way back is its own job too. Down, in order:

1. :func:`lazy_start`: a ``lazy`` server's tool starts its server and must still be listed;
2. :func:`check_arguments`: hidden arguments leave the model's, which must fit the schema;
3. :func:`hidden_values`: the hidden arguments' values, from the run;
4. :func:`approve`: a person's decision (or one recorded before); back, an edit notice;
5. :func:`hold_secrets`: hidden values kept out of logs and errors while the call runs;
6. :func:`to_result`: back, the result (or the failure) as the call's outcome;
7. :func:`choose_session`: the shared session, the thread's, or the user's OAuth session;
8. :func:`send`: the call itself (:func:`~langgraph_mcp._call.runner.run_call`, or a resource
   read), and the MCP Apps view sent with its result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from langgraph.prebuilt import ToolRuntime

from langgraph_mcp._call.approval import ApprovalRequest, Approved, ask_approval, recorded_outcome
from langgraph_mcp._call.arguments import ArgumentChecker, UnusableSchema, describe_source, resolve_source
from langgraph_mcp._call.results import (
    CallSite,
    call_failed,
    call_result,
    failure,
    not_listed,
    with_edit_notice,
)
from langgraph_mcp._call.runner import run_call
from langgraph_mcp._call.view import show_view
from langgraph_mcp._oauth.calls import user_session
from langgraph_mcp._oauth.options import per_user_oauth
from langgraph_mcp._pool.pool import MCPPool
from langgraph_mcp._pool.resources import is_read_tool, read_as_tool_result
from langgraph_mcp._session import ServerConnection
from langgraph_mcp._support.redact import value_secrets
from langgraph_mcp.errors import (
    MCPConnectionError,
    MCPProtocolError,
    MCPServerError,
    MCPTimeoutError,
    MCPToolCallError,
    MissingValue,
)
from langgraph_mcp.options import ToolOptions

__all__ = ["Call", "run_pipeline"]

CALL_FAILURES = (MCPConnectionError, MCPTimeoutError, MCPServerError, MCPProtocolError, MCPToolCallError)
"""What the session layer raises for a call that could not complete
(:func:`~langgraph_mcp._call.results.call_failed`)."""


@dataclass(slots=True)
class Call:
    """One call of one tool, as it goes down the steps: the tool's part (fixed when the call is
    built) and the call's own (arguments, values and session, filled in on the way)."""

    name: str
    """The tool's exposed name."""
    server: str
    mcp_name: str
    """The tool's name on the server."""
    connection: ServerConnection
    """The server's shared connection."""
    pool: MCPPool | None
    mcp_tool: types.Tool
    checker: ArgumentChecker
    options: ToolOptions
    approval: Sequence[str]
    """The decisions a person may take (empty: no approval is asked)."""
    messages_key: str
    tool_timeout: float | None
    """The tool's own ``timeout`` (``None``: the server's)."""
    question: Callable[[dict[str, Any], Sequence[str]], ApprovalRequest]
    """The approval question for the model's arguments and the decisions allowed."""
    arguments: dict[str, Any]
    """The model's arguments (without hidden ones once checked): what a person and a view see."""
    runtime: ToolRuntime | None
    tool_call_id: str | None
    hidden: dict[str, Any] = field(default_factory=dict)
    """The hidden arguments' values."""
    session: ServerConnection | None = None
    """The connection the call goes over (:func:`choose_session`)."""

    def site(self) -> CallSite:
        """Who and where, for the call's messages (the era as the connection knows it now)."""
        return CallSite(self.name, self.server, self.mcp_name, self.tool_call_id, era=self.connection.era)


Next = Callable[[Call], Awaitable[Any]]
Step = Callable[[Call, Next], Awaitable[Any]]


async def lazy_start(call: Call, next_step: Next) -> Any:
    """For a tool of a ``lazy`` server (maybe offered from the tool catalog): start the server
    if it has not started (bounded by its ``connect_timeout``) and make sure it still lists
    this tool as it was offered; else the call's error, and it is not sent."""
    pool = call.pool
    if pool is not None and pool.catalog is not None and call.connection.config.lazy:
        try:
            listed = await pool.live_tools(call.server)
        except CALL_FAILURES as exc:
            return call_failed(call.site(), exc, limit="connect_timeout")
        refused = not_listed(call.site(), call.mcp_tool, listed)
        if refused is not None:
            return refused
    return await next_step(call)


async def check_arguments(call: Call, next_step: Next) -> Any:
    """The model may not choose a hidden argument; the rest must fit the schema (LangGraph's
    ``ToolInvocationError`` otherwise). A schema no arguments could fit fails the call."""
    arguments, checker = call.arguments, call.checker
    for hidden in call.options.hidden:
        arguments.pop(hidden, None)
    if checker.null_is_absent:
        checker.drop_null_headers(arguments)
    try:
        await checker.acheck(arguments)  # off the event loop when it is costly
    except UnusableSchema as exc:  # no arguments could fit: not the model's to fix
        return failure(call.site(), exc.reason, kind="protocol")
    return await next_step(call)


async def hidden_values(call: Call, next_step: Next) -> Any:
    """The hidden arguments' values, each from its source in the run."""
    hidden = call.options.hidden
    if hidden:
        values: dict[str, Any] = {}
        for argument, source in hidden.items():
            where = f"hidden argument {argument!r} of MCP tool {call.name!r} (server {call.server!r})"
            if call.runtime is None:
                text = f"{where} comes from {describe_source(source)}, but the tool runs outside a graph"
                return failure(call.site(), text, kind="hidden_argument")
            try:
                values[argument] = await resolve_source(source, call.runtime)
            except MissingValue as exc:
                text = f"{where} comes from {describe_source(source)}: {exc}"
                return failure(call.site(), text, kind="hidden_argument")
        call.hidden = values
    return await next_step(call)


async def approve(call: Call, next_step: Next) -> Any:
    """A person's decision before the call is sent: rejected, it stops here; edited, it goes on
    with the edited arguments and, back, its result says what ran. Without approval, an answer
    asked before this process's policy stopped asking still holds."""
    if call.approval:
        try:
            outcome: Approved | Any = ask_approval(call.question(call.arguments, call.approval))
        except MCPToolCallError as exc:
            return failure(call.site(), str(exc), kind=exc.kind)
    else:
        outcome = recorded_outcome(lambda allowed: call.question(call.arguments, allowed))
        if outcome is None:
            return await next_step(call)
    if not isinstance(outcome, Approved):
        return outcome, None
    if not outcome.edited:
        return await next_step(call)
    hidden = call.options.hidden
    call.arguments = {k: v for k, v in outcome.arguments.items() if k not in hidden}
    return with_edit_notice(await next_step(call), call.arguments, call.messages_key)


async def hold_secrets(call: Call, next_step: Next) -> Any:
    """Hidden values are secrets of the call while it runs: kept out of the HTTP and MCP client
    libraries' own log records (they log each message at DEBUG) and of its errors."""
    if not call.hidden:
        return await next_step(call)
    with call.connection.redact.holding(value_secrets(call.hidden)):
        return await next_step(call)


async def to_result(call: Call, next_step: Next) -> Any:
    """Back: the server's result as the call's outcome (messages, cut outputs, ``Command``s), or
    the message for a call the session layer could not complete."""
    if call.tool_timeout is not None:
        limit = "the tool's timeout"
    else:
        limit = call.connection.timeout_for(call.mcp_name)[1]
    try:
        result = await next_step(call)
    except CALL_FAILURES as exc:
        return call_failed(call.site(), exc, limit=limit)
    return await call_result(
        call.site(),
        result,
        handling=call.connection.config.output_for(call.mcp_name),
        runtime=call.runtime,
        mapping=call.options.result,
        messages_key=call.messages_key,
    )


def _session_for(call: Call) -> AbstractAsyncContextManager[ServerConnection]:
    pool, connection, runtime = call.pool, call.connection, call.runtime
    if pool is not None and per_user_oauth(connection.config) is not None:
        return user_session(pool, connection, runtime, call.name, None)
    if pool is None or connection.config.session_scope != "thread":
        return nullcontext(connection)
    configurable = ((runtime.config if runtime is not None else None) or {}).get("configurable") or {}
    thread_id = configurable.get("thread_id")
    return pool.using(call.server, None if thread_id is None else str(thread_id))


async def choose_session(call: Call, next_step: Next) -> Any:
    """The shared connection; for a ``session_scope="thread"`` server, this conversation's own;
    for a per-user OAuth server, the user's: held in use for the whole call."""
    async with _session_for(call) as session:
        call.session = session
        return await next_step(call)


async def send(call: Call) -> types.CallToolResult:
    """The call on the wire, with the hidden values; then the MCP Apps view sent with its result
    (given the arguments without the hidden ones)."""
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
        headers=options.headers(runtime) if options.headers is not None and runtime is not None else None,
    )
    await show_view(session, call.mcp_tool, call.name, call.arguments, result, runtime, call.tool_call_id)
    return result


STEPS: tuple[Step, ...] = (
    lazy_start,
    check_arguments,
    hidden_values,
    approve,
    hold_secrets,
    to_result,
    choose_session,
)
"""The steps of every call, in the order they run on the way down."""


async def run_pipeline(call: Call) -> Any:
    """Run ``call`` down :data:`STEPS` to :func:`send` and back: its outcome, a ``(content,
    artifact)`` pair (or a message or ``Command`` as content)."""

    def at(index: int) -> Next:
        if index == len(STEPS):
            return send
        step, rest = STEPS[index], at(index + 1)
        return lambda c: step(c, rest)

    return await at(0)(call)
