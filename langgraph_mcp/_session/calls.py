"""``tools/call`` requests: the headers and ``_meta`` they carry, their turn on the session
(``max_concurrent_calls``), their routing (:class:`~langgraph_mcp._session.routing.Router`),
re-sends, and the check of a result against the tool's ``outputSchema``."""

from __future__ import annotations

import logging
import operator
from collections.abc import Mapping
from contextlib import nullcontext
from typing import Annotated, Any, Protocol, cast

import mcp_types as types
from jsonschema.exceptions import SchemaError, best_match
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from pydantic import Discriminator, Tag, TypeAdapter
from referencing.exceptions import Unresolvable

from langgraph_mcp._compat.mcp import call_headers, send_unchecked
from langgraph_mcp._session.clock import CallClock
from langgraph_mcp._session.era import MODERN
from langgraph_mcp._session.failures import NotSent, SessionExpired, Wording, guarded
from langgraph_mcp._session.listings import Listings
from langgraph_mcp._session.owner import Session
from langgraph_mcp._session.plain import plain_check
from langgraph_mcp._session.routing import CallSink, InFlight
from langgraph_mcp._session.taskwire import TaskHandle
from langgraph_mcp._support.headers import header_problem
from langgraph_mcp._support.patterns import PatternNotChecked, UnsafePattern, regex_budget
from langgraph_mcp._support.redact import Redactor, header_secrets, mask_all
from langgraph_mcp._support.schema import schema_validator
from langgraph_mcp.errors import (
    OUTCOME_UNKNOWN,
    MCPConnectionError,
    MCPProtocolError,
    MCPServerError,
    MCPToolCallError,
)

__all__ = ["Calls", "Round", "TaskMemo", "masked_result"]

_NOTHING = nullcontext()
"""The block of a call without per-call headers (one for every call: nothing to set or undo)."""

logger = logging.getLogger("langgraph_mcp.pool")

Round = types.CallToolResult | types.InputRequiredResult | TaskHandle
"""What one ``tools/call`` request returns: the result, a request for input, or a task to
follow (2026-07-28)."""


class TaskMemo(Protocol):
    """Where the 2025-11-25 task a call started is kept for a retry of that call in this process
    (that task API gives nothing to store in a checkpoint): a retry follows the same task, or
    fetches its result again, instead of starting another."""

    def recall(self) -> types.Task | None:
        """The task an earlier attempt of the call started, if any."""
        ...

    def keep(self, task: types.Task) -> None:
        """Keep the task the call started."""
        ...

    def forget(self) -> None:
        """The call failed following it: a retry starts the call afresh."""
        ...


def _round_kind(value: Any) -> str:
    kind = value.get("resultType") if isinstance(value, dict) else getattr(value, "result_type", None)
    return "task" if kind == "task" else "input" if kind == "input_required" else "result"


_ROUND: TypeAdapter[Round] = TypeAdapter(
    Annotated[
        Annotated[types.CallToolResult, Tag("result")]
        | Annotated[types.InputRequiredResult, Tag("input")]
        | Annotated[TaskHandle, Tag("task")],
        Discriminator(_round_kind),
    ]
)
"""A ``tools/call`` answer, read as the shape its ``resultType`` names (so that what is wrong
with it is said about that shape only)."""
_LEGACY_TASK_ROUND: TypeAdapter[types.CallToolResult | types.CreateTaskResult] = TypeAdapter(
    types.CreateTaskResult | types.CallToolResult
)
_MAX_UNSENT = 3
_LOG_LEVEL_META = "io.modelcontextprotocol/logLevel"
_TRANSPORT_HEADERS = frozenset(
    {"accept", "connection", "content-length", "content-type", "host", "last-event-id", "transfer-encoding"}
)


class Calls(Listings):
    """Sends ``tools/call`` requests over the live session."""

    def timeout_for(self, tool: str) -> tuple[float | None, str]:
        """The limit for one call of ``tool`` (seconds, ``None``: none) and how to name it: the
        server's ``tool_timeouts``, then its ``timeout``, then the pool's ``default_timeout``."""
        config = self.config
        if tool in config.tool_timeouts:
            return config.tool_timeouts[tool], f"server {self.name!r} tool_timeouts[{tool!r}]"
        if "timeout" in config.model_fields_set:
            return config.timeout, f"server {self.name!r} timeout"
        return self.default_timeout, "the default timeout"

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> types.CallToolResult:
        """Call ``name`` directly, outside any graph, within its configured limit: questions from
        the server get only the answers code can give (see ``elicitation``), and a 2026-07-28
        round that asks is an error.

        Raises:
            MCPConnectionError, MCPTimeoutError, MCPServerError, MCPProtocolError.
        """
        clock = CallClock(self.timeout_for(name)[0], server=self.name, what=f"tool {name!r}")
        result = await self.send_call(name, arguments or {}, clock=clock, sink=self._fallback)
        if not isinstance(result, types.CallToolResult):
            raise MCPProtocolError(self.name, f"{name!r} asked for input; call it through a tool in a graph")
        return result

    async def send_call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        clock: CallClock,
        sink: CallSink,
        exclusive: bool = False,
        progress: ProgressFnT | None = None,
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        input_responses: types.InputResponses | None = None,
        request_state: str | None = None,
        task_memo: TaskMemo | None = None,
    ) -> Round:
        """Send one ``tools/call`` request over the shared session and return what it returned.

        ``sink`` receives the server's requests and logs that belong to this call; ``exclusive``
        says they may need a person (see :meth:`~langgraph_mcp._session.routing.Router.track`).
        ``clock`` bounds the request, the time it waits for its turn included. On 2026-07-28 a
        ``HEADER_MISMATCH`` (the tool's schema changed since it was listed) re-lists the tools and
        sends the request once more. A successful result is checked against the tool's
        ``outputSchema``. ``meta`` is sent as the request's ``_meta``; ``headers`` are HTTP headers
        for this request only (they never replace the protocol's own). A 2025-11-25 call that runs
        as a task keeps it in ``task_memo``, and follows the one kept there by an earlier attempt
        instead of sending the request again.

        Raises:
            MCPConnectionError: cannot connect, or the session died or closed during the call
                (its outcome is unknown; the next call reconnects).
            MCPTimeoutError: ``clock`` ran out; the server was asked to cancel the request.
            MCPServerError: the server answered with a JSON-RPC error.
            MCPProtocolError: the answer broke the protocol or the tool's ``outputSchema``.
            MCPToolCallError: (kind ``header``) one of ``headers`` cannot be sent; nothing was.
        """
        if headers:
            headers = self._own_headers(name, headers)
        if progress is not None:
            progress = _masked_progress(progress, self.redact)
        session, client = await self._live()
        if self.config.log_level is not None and self.era == MODERN:
            meta = {**(meta or {}), _LOG_LEVEL_META: self.config.log_level}
        task = await self._legacy_task(name)
        earlier = task_memo.recall() if task is not None and task_memo is not None else None
        request = types.CallToolRequest(
            params=types.CallToolRequestParams(
                name=name,
                arguments=dict(arguments),
                input_responses=input_responses,
                request_state=request_state,
                task=task,
                _meta=cast(types.RequestParamsMeta, dict(meta)) if meta else None,
            )
        )
        resent = renewed = False
        unsent = 0
        # This call's header values are secrets too while it runs: in what is said about it or
        # logged, by this package or the HTTP libraries, and in what the server echoes.
        with self.redact.holding(header_secrets(headers)) if headers else _NOTHING:
            while True:
                result: Round | types.CreateTaskResult
                try:
                    if earlier is not None:  # an attempt before this one started the task
                        result = types.CreateTaskResult(task=earlier)
                    else:
                        result = await self._send(
                            session, client, request, clock, sink, exclusive, progress, headers
                        )
                except NotSent:
                    unsent += 1
                    if unsent > _MAX_UNSENT:
                        raise MCPConnectionError(
                            self.name, "the session kept ending before the call could be sent"
                        ) from None
                    clock.stats.resends += 1
                    session, client = await self._live()
                    continue
                except SessionExpired as exc:
                    if renewed:
                        raise MCPServerError(self.name, exc.code, exc.message) from None
                    # The server rejected the request unread: send it once more, on a new session.
                    renewed = True
                    clock.stats.resends += 1
                    session, client = await self._live()
                    continue
                except MCPServerError as exc:
                    if exc.code != types.HEADER_MISMATCH or self.era != MODERN or resent:
                        raise
                    resent = True
                    clock.stats.resends += 1
                    await self.refresh_tools()
                    continue
                if isinstance(result, types.CreateTaskResult):  # 2025-11-25: never sent again
                    if task_memo is not None:
                        task_memo.keep(result.task)
                    try:
                        result = await self._follow_legacy_task(
                            name, result.task, session, client, clock, sink, exclusive, progress, headers
                        )
                    except BaseException:
                        if task_memo is not None:
                            task_memo.forget()
                        raise
                if isinstance(result, types.CallToolResult):
                    if result.is_error:  # the server's own words, which may echo a secret
                        return masked_result(result, self.redact)
                    self._check_output(name, result)
                return result

    async def _request_round(
        self,
        client: Client,
        request: types.CallToolRequest | types.GetTaskPayloadRequest,
        progress: ProgressFnT | None,
    ) -> Round | types.CreateTaskResult:
        if isinstance(request, types.GetTaskPayloadRequest):
            return await client.session.send_request(request, types.CallToolResult)
        if request.params.task is not None:
            # The SDK reads a 2025-11-25 tools/call answer as a CallToolResult only; a task
            # request is answered with a CreateTaskResult (or a result, if the server chose).
            params = request.params.model_dump(by_alias=True, mode="json", exclude_none=True)
            raw = await send_unchecked(client.session, "tools/call", params)
            return _LEGACY_TASK_ROUND.validate_python(raw, by_name=False)
        return await client.session.send_request(request, _ROUND, progress_callback=progress)

    async def _legacy_task(self, name: str) -> types.TaskMetadata | None:
        """The ``task`` parameter of a 2025-11-25 call of ``name`` when it must run as a task
        (:meth:`~langgraph_mcp._session.tasks.TaskRequests._legacy_task`); ``None`` otherwise."""
        return None

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
        raise MCPProtocolError(self.name, f"{name!r} was answered with a task that was not asked for")

    def _own_headers(self, tool: str, headers: Mapping[str, str]) -> dict[str, str]:
        """Per-call headers without the ones the protocol and the transport set themselves
        (dropped, with one warning per name).

        Raises:
            MCPToolCallError: one of them cannot be sent (see
                :func:`~langgraph_mcp._support.headers.header_problem`); nothing is sent.
                Sending it would end the session, and every other call on it.
        """
        if self.config.transport not in ("http", "sse"):
            if "<stdio>" not in self._warned_headers:
                self._warned_headers.add("<stdio>")
                logger.warning(
                    "MCP server %r speaks %s: per-call headers are sent over HTTP only; ignored",
                    self.name,
                    self.config.transport,
                )
            return {}
        if not isinstance(headers, Mapping):
            raise MCPToolCallError(
                f"MCP server {self.name!r}: the call to {tool!r} was not sent: its per-call headers "
                f"are a {type(headers).__name__}, not a mapping of names to values",
                kind="header",
            )
        kept: dict[str, str] = {}
        for name, value in headers.items():
            problem = header_problem(name, value)
            if problem is not None:
                raise MCPToolCallError(
                    f"MCP server {self.name!r}: the call to {tool!r} was not sent: {problem} "
                    "(check the tool's ToolOptions.headers)",
                    kind="header",
                )
            lowered = name.lower()
            if lowered.startswith("mcp-") or lowered in _TRANSPORT_HEADERS:
                if lowered not in self._warned_headers:
                    self._warned_headers.add(lowered)
                    logger.warning(
                        "MCP server %r: the per-call header %r is set by the protocol or the transport; "
                        "it is not sent",
                        self.name,
                        name,
                    )
                continue
            kept[name] = value
        return kept

    async def _send(
        self,
        session: Session,
        client: Client,
        request: types.CallToolRequest | types.GetTaskPayloadRequest,
        clock: CallClock,
        sink: CallSink,
        exclusive: bool,
        progress: ProgressFnT | None,
        headers: Mapping[str, str] | None,
        *,
        tool: str | None = None,
    ) -> Round | types.CreateTaskResult:
        """Send ``request`` in turn (a slot), tracked as a call of ``tool`` (the server's
        requests during it belong to the call), and return its result: a ``tools/call``, or the
        ``tasks/result`` request that fetches a 2025-11-25 task's result (``tool`` names it)."""
        name = tool if tool is not None else cast(types.CallToolRequest, request).params.name
        wording = Wording(
            what=f"the call to {name!r}",
            answer=f"{name!r}",
            http_failure=f"during the call to {name!r}. {OUTCOME_UNKNOWN}",
        )
        async with guarded(self.name, session, self.redact, wording), clock.running(), self._slot() as slot:
            if not session.alive:  # it ended while the call waited for a slot: nothing was sent
                raise NotSent
            lend = slot.release if slot is not None else None
            while True:
                call: InFlight | None = None
                try:
                    async with self.router.track(
                        sink, tool=name, exclusive=exclusive, clock=clock, lend=lend
                    ) as call:
                        with call_headers(client.session, headers) if headers else _NOTHING:
                            result = await self._request_round(client, request, progress)
                except MCPError:
                    if call is not None and call.refusal is not None:
                        raise call.refusal from None
                    if call is None or not call.resend:
                        raise
                if call.refusal is not None:  # the router ended it (it sampled too often)
                    raise call.refusal
                if call.resend:
                    # Abandoned so that its question can be tied to it
                    # (_session.routing.Router._break_deadlock): what the
                    # server answered is dropped; send it again, in turn.
                    clock.stats.resends += 1
                    continue
                if not call.scope.cancelled_caught:
                    return result
                closed = f"the connection was closed during the call to {name!r}. {OUTCOME_UNKNOWN}"
                raise MCPConnectionError(self.name, closed)

    def _check_output(self, name: str, result: types.CallToolResult) -> None:
        tool = self.listed(name)
        if tool is None or tool.output_schema is None:
            return
        if result.structured_content is None:
            raise MCPProtocolError(
                self.name, f"tool {name!r} declares an outputSchema but returned no structured content"
            )
        plain = self._plain_outputs.get(name)
        if plain is None or plain[0] is not tool:
            plain = self._plain_outputs[name] = (tool, plain_check(tool.output_schema))
        if plain[1] is not None and plain[1](result.structured_content):
            return  # surely fits its plain schema
        cached = self._validators.get(name)
        if cached is None or cached[0] is not tool:
            try:
                cached = (tool, schema_validator(tool.output_schema))  # never fetches a $ref
            except SchemaError as exc:
                logger.warning(
                    "MCP tool %r of server %r has an invalid outputSchema: %s", name, self.name, exc.message
                )
                cached = (tool, None)
            self._validators[name] = cached
        validator = cached[1]
        if validator is None:
            return
        try:
            with regex_budget():  # its patterns may hold the event loop 25-60 ms at most in all
                error = best_match(validator.iter_errors(result.structured_content))
        except PatternNotChecked as exc:  # fails closed: a result that cannot be checked is refused
            raise MCPProtocolError(
                self.name,
                f"the structured content of {name!r} cannot be checked against its outputSchema: "
                + exc.message,
            ) from None
        except UnsafePattern as exc:  # listed tools have none (vet_tool): only if it could not look
            raise MCPProtocolError(
                self.name,
                f"the outputSchema of {name!r} has a pattern that cannot be checked in linear time: {exc}",
            ) from None
        except Unresolvable as exc:
            raise MCPProtocolError(
                self.name, f"the outputSchema of {name!r} has a $ref that does not resolve: {exc}"
            ) from None
        except RecursionError:
            raise MCPProtocolError(
                self.name, f"the outputSchema of {name!r} cannot be checked: its $refs loop"
            ) from None
        if error is not None:
            where = ".".join(map(str, error.absolute_path)) or "<structured content>"
            raise MCPProtocolError(
                self.name,
                f"the structured content of {name!r} breaks its outputSchema at {where}: {error.message}",
            )


def masked_result(result: types.CallToolResult, redact: Redactor) -> types.CallToolResult:
    """An ``isError`` result without the secrets its text (text blocks, text resources) and
    structured content show; the same result when they show none."""
    content = [_masked_block(block, redact) for block in result.content]
    structured = mask_all(result.structured_content, redact)
    if structured == result.structured_content and all(map(operator.is_, content, result.content)):
        return result
    return result.model_copy(update={"content": content, "structured_content": structured})


def _masked_block(block: types.ContentBlock, redact: Redactor) -> types.ContentBlock:
    if isinstance(block, types.TextContent):
        text = redact(block.text)
        return block if text == block.text else block.model_copy(update={"text": text})
    if isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.TextResourceContents):
        text = redact(block.resource.text)
        if text != block.resource.text:
            return block.model_copy(update={"resource": block.resource.model_copy(update={"text": text})})
    return block


def _masked_progress(report: ProgressFnT, redact: Redactor) -> ProgressFnT:
    """``report``, given the server's progress messages without the secrets."""

    async def masked(progress: float, total: float | None, message: str | None) -> None:
        await report(progress, total, redact(message) if message else message)

    return masked
