"""Long runs as MCP tasks (the 2026-07-28 tasks extension, ``io.modelcontextprotocol/tasks``).

For a client that declared the extension on its request, a call whose run is still going after
``ServeOptions.task_after`` seconds (at once with ``tasks="always"``) is answered with a task
handle (``resultType: "task"``) while the run goes on in the server:

* ``tasks/get``: ``working`` (with the run's last progress message), ``input_required`` with the
  run's questions (``inputRequests``, as in an input round), ``completed`` with the tool result,
  ``failed`` or ``cancelled``;
* ``tasks/update`` with ``inputResponses``: the answers resume the run;
* ``tasks/cancel``: cancels the run.

The task id is ``<thread id>~<tool>:<run id>`` (:mod:`langgraph_mcp.serve._threads`), and what a
task is comes from its thread's checkpoints: a server restarted on a durable checkpointer answers
for a task it did not start, and a run its old process left part way goes on from its last
checkpoint. Only the caller who owns the thread reaches the task.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from langchain_core.runnables import RunnableConfig
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError

from langgraph_mcp.serve._calls import (
    Call,
    Host,
    answers_of,
    cannot_answer,
    input_round,
    new_run_id,
    pending_questions,
    resume_command,
)
from langgraph_mcp.serve._questions import Unanswered
from langgraph_mcp.serve._remote import is_remote
from langgraph_mcp.serve._reports import LogLevels, request_reporter
from langgraph_mcp.serve._runs import Outcome, Report, Reporter, drive, end_cancelled, outcome_of
from langgraph_mcp.serve._threads import owner_of, owns, split_task_id, task_id

__all__ = ["TASKS_EXTENSION", "Runs", "ServedTasks"]

logger = logging.getLogger("langgraph_mcp.serve")
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The tasks extension (2026-07-28) a client declares to have long runs answered as tasks."""
MISSING_CAPABILITY = -32021
MODERN = "2026-07-28"
_NOT_FOUND = "Failed to retrieve task: Task not found"
TASK_METADATA = "served_as"
"""The checkpoint metadata key of a run's checkpoints when it ran as a task (value ``"task"``)."""
_RUNS_MAX = 10_000


def _stamp(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}Z"


@dataclass
class Run:
    """A run this process follows as a task."""

    task_id: str
    call: Call
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    job: asyncio.Task[Outcome] | None = None
    message: str | None = None
    cancelled: bool = False
    failure: str | None = None
    refusal: str | None = None
    inline: Reporter | None = None
    """Where the run's reports also go while the call that started it waits for it."""


class Runs:
    """The runs of a :class:`~langgraph_mcp.serve.GraphServer` that are tasks."""

    def __init__(self, server: Host) -> None:
        self._server = server
        self._runs: dict[str, Run] = {}

    def start(self, run: Run, payload: Any, inline: Reporter | None = None) -> None:
        """Run ``payload`` in the background for ``run``; ``inline`` also gets its reports while
        it is set on the run (the call that started it is still open). A run already going for
        this task is left as it is: two requests that both found it stopped start it once."""
        if run.job is not None and not run.job.done():
            return
        run.inline = inline

        async def report(said: Report) -> None:
            if said.kind == "progress":
                run.message = said.message
                run.updated = time.time()
            if run.inline is not None:
                await run.inline(said)

        run.failure = run.refusal = None
        config: RunnableConfig = {**run.call.config, "metadata": {TASK_METADATA: "task"}}
        run.job = asyncio.ensure_future(drive(run.call.graph, payload, config, report, durable=True))
        run.job.add_done_callback(lambda _job: setattr(run, "updated", time.time()))
        self._keep(run)

    def _keep(self, run: Run) -> None:
        """Keep ``run`` for its task id; beyond :data:`_RUNS_MAX`, the oldest runs not going
        (ended, or never started here) go first, and a running one stays."""
        self._runs.setdefault(run.task_id, run)
        if len(self._runs) > _RUNS_MAX:
            ended = [k for k, r in self._runs.items() if r.job is None or r.job.done()]
            for key in ended[: len(self._runs) - _RUNS_MAX]:
                del self._runs[key]

    def find(self, value: str, owner: str) -> Run:
        """The task ``value`` of ``owner``: a run of this process, or one found from its thread."""
        parts = split_task_id(value)
        if parts is None or not owns(owner, parts[0]):
            raise MCPError(types.INVALID_PARAMS, _NOT_FOUND)
        run = self._runs.get(value)
        if run is not None:
            return run
        tool_name = parts[1].partition(":")[0]
        found = self._server.served(tool_name)
        if found is None:
            raise MCPError(types.INVALID_PARAMS, _NOT_FOUND)
        # Kept at once, so that requests about it at the same time share one run; ids that name
        # no thread churn out with the oldest ended runs (ids are at most 512 characters).
        run = Run(value, Call(found[0], found[1], parts[0], None))
        self._keep(run)
        return run

    async def state(self, run: Run) -> dict[str, Any]:
        """The task as ``tasks/get`` shows it now."""
        options = self._server.options
        base: dict[str, Any] = {
            "taskId": run.task_id,
            "createdAt": _stamp(run.created),
            "lastUpdatedAt": _stamp(run.updated),
            "ttlMs": options.task_ttl_ms,
            "pollIntervalMs": options.poll_interval_ms,
        }
        if run.cancelled:
            return {**base, "status": "cancelled", "statusMessage": "cancelled by the client"}
        if run.job is not None and not run.job.done():
            return {**base, "status": "working", **({"statusMessage": run.message} if run.message else {})}
        if run.job is not None and not run.job.cancelled() and run.job.exception() is not None:
            logger.error("The run of task %s failed", run.call.tool.tool_name, exc_info=run.job.exception())
            run.failure = f"The run of {run.call.tool.tool_name} failed."
        if run.failure:
            return {
                **base,
                "status": "failed",
                "error": {"code": types.INTERNAL_ERROR, "message": run.failure},
            }
        if run.refusal:
            return {**base, "status": "completed", "result": _error(run.refusal)}
        outcome = await outcome_of(run.call.graph, run.call.config)
        if outcome.kind == "missing":
            raise MCPError(types.INVALID_PARAMS, _NOT_FOUND)
        if outcome.kind == "cancelled":
            return {**base, "status": "cancelled", "statusMessage": "cancelled by the client"}
        if outcome.kind == "stopped":  # left part way by an earlier process (a deployment
            if run.job is None or run.job.done():  # cancels a run whose stream was dropped): go
                self.start(run, None)  # on, once (a poll that came meanwhile may have started it)
            return {**base, "status": "working", "statusMessage": "resumed"}
        if outcome.kind == "asked":
            requests = {
                q.key: q.request().model_dump(by_alias=True, mode="json", exclude_none=True)
                for q in pending_questions(outcome)
            }
            return {**base, "status": "input_required", "inputRequests": requests}
        return {**base, "status": "completed", "result": _dump(self._server.result(run.call, outcome))}

    async def update(self, run: Run, responses: dict[str, Any]) -> None:
        """Answers to the run's questions: resume it."""
        if run.cancelled or (run.job is not None and not run.job.done()):
            return
        outcome = await outcome_of(run.call.graph, run.call.config)
        if outcome.kind != "asked":
            return
        asked = pending_questions(outcome)
        answers = answers_of(responses)
        if any(q.key not in answers for q in asked):
            return  # asked again on the next poll
        try:
            command = resume_command(outcome, asked, answers)
        except Unanswered as exc:
            run.refusal = str(exc)
            return
        if run.cancelled:  # cancelled while the answers were read
            return
        self.start(run, command)

    async def cancel(self, run: Run) -> None:
        """Cancel the run, and mark its thread so (a restarted server does not resume it)."""
        run.cancelled = True
        run.updated = time.time()
        if run.job is not None and not run.job.done():
            run.job.cancel()
            await asyncio.wait({run.job})
        outcome = await outcome_of(run.call.graph, run.call.config)
        if outcome.kind not in ("done", "missing", "cancelled") and not is_remote(run.call.graph):
            await end_cancelled(run.call.graph, run.call.config)


def _dump(result: types.CallToolResult) -> dict[str, Any]:
    return result.model_dump(by_alias=True, mode="json", exclude_none=True, exclude={"result_type"})


def _error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client declared the tasks extension."""
    capabilities = ctx.session.client_capabilities
    extensions = capabilities.extensions if capabilities is not None else None
    return bool(extensions) and TASKS_EXTENSION in (extensions or {})


def _refuse_undeclared(ctx: ServerRequestContext[Any, Any]) -> None:
    if not declared(ctx):
        raise MCPError(
            MISSING_CAPABILITY,
            "Missing required client capability",
            {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
        )


class TaskParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any] | None = None


class ServedTasks(Extension):
    """The tasks extension of a :class:`~langgraph_mcp.serve.GraphServer`."""

    identifier = TASKS_EXTENSION

    def __init__(self, server: Host, runs: Runs, levels: LogLevels) -> None:
        self._server = server
        self._runs = runs
        self._levels = levels

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("tasks/get", TaskParams, self._get),
            MethodBinding("tasks/update", TaskParams, self._update),
            MethodBinding("tasks/cancel", TaskParams, self._cancel),
        ]

    def _run(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> Run:
        _refuse_undeclared(ctx)
        return self._runs.find(params.task_id, owner_of(ctx.request))

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        return await self._runs.state(self._run(ctx, params))

    async def _update(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        await self._runs.update(self._run(ctx, params), params.input_responses or {})
        return {}

    async def _cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        await self._runs.cancel(self._run(ctx, params))
        return {}

    async def intercept_tool_call(
        self, params: types.CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        server = self._server
        if (
            server.options.tasks == "never"
            or ctx.protocol_version != MODERN
            or not declared(ctx)
            or params.request_state is not None
            or server.served(params.name) is None
        ):
            return await call_next(ctx)
        begun = server.begin(params.name, params.arguments, ctx.request, params.meta)
        if isinstance(begun, types.CallToolResult):
            return begun
        run = Run(task_id(begun.thread, f"{begun.tool.tool_name}:{new_run_id()}"), begun)
        inline = server.options.tasks == "auto"
        self._runs.start(run, begun.payload, request_reporter(ctx, self._levels) if inline else None)
        if inline and run.job is not None:
            try:
                await asyncio.wait({run.job}, timeout=server.options.task_after)
            except asyncio.CancelledError:
                # The call ended before it gave a task id: nobody can follow or cancel the run.
                run.cancelled = True
                run.job.cancel()
                raise
            finally:
                run.inline = None  # the call ends here, as a result or as a task
            if run.job.done() and run.job.exception() is None:
                outcome = run.job.result()
                if outcome.kind == "done":
                    return server.result(begun, outcome)
                if outcome.kind == "asked":  # it stopped to ask: an input round, as inline
                    asked = pending_questions(outcome)
                    refusal = cannot_answer(begun, asked, ctx.session.client_capabilities)
                    return refusal if refusal is not None else input_round(begun, asked)
        state = await self._runs.state(run)
        keep = ("taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs")
        return {"resultType": "task", **{k: v for k, v in state.items() if k in keep}}
