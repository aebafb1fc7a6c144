"""Long runs as 2025-11-25 experimental tasks, for clients that ask for one.

The server declares task-augmented ``tools/call`` (``capabilities.tasks.requests.tools.call``)
and lists its tools with ``execution.taskSupport`` (``ServeOptions.legacy_task_support``). A
call with a ``task`` parameter is answered with a ``CreateTaskResult`` while the run goes on:

* ``tasks/get``: the task now (``working``, ``input_required``, ``completed``, ``failed``,
  ``cancelled``), with the run's last progress message;
* ``tasks/result``: waits for the run; its questions are asked during this request as live
  ``elicitation/create`` requests, and the answers resume the run; then the tool result (or the
  JSON-RPC error of a failed or cancelled task);
* ``tasks/cancel``: cancels the run (and marks its thread, as on 2026-07-28).

The runs are those of the 2026-07-28 tasks (:class:`~langgraph_mcp.serve._tasks.Runs`): the same
task ids, owners and durability.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError

from langgraph_mcp.serve._calls import (
    QUESTION_TIMEOUT,
    Host,
    answers_of,
    cannot_answer,
    new_run_id,
    pending_questions,
    resume_command,
)
from langgraph_mcp.serve._questions import Question, Unanswered
from langgraph_mcp.serve._runs import outcome_of
from langgraph_mcp.serve._tasks import Run, Runs
from langgraph_mcp.serve._threads import owner_of, task_id

__all__ = ["LegacyTasks"]

MODERN = "2026-07-28"
_KEYS = {"taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt"}
_CAPABILITY: dict[str, Any] = {"requests": {"tools": {"call": {}}}, "cancel": {}}


def _legacy(state: dict[str, Any]) -> dict[str, Any]:
    """A task as the 2025-11-25 ``Task`` shows it."""
    task = {k: v for k, v in state.items() if k in _KEYS}
    task["ttl"] = state.get("ttlMs")
    task["pollInterval"] = state.get("pollIntervalMs")
    return task


async def _ask(ctx: ServerRequestContext[Any, Any], question: Question) -> types.ElicitResult:
    params = question.params
    if isinstance(params, types.ElicitRequestURLParams):
        return await ctx.session.elicit_url(
            params.message,
            params.url,
            params.elicitation_id or question.key,
            related_request_id=ctx.request_id,
        )
    return await ctx.session.elicit_form(
        params.message, params.requested_schema, related_request_id=ctx.request_id
    )


class LegacyTasks:
    """A server middleware serving the 2025-11-25 task API (see the module docstring); other
    requests, and every 2026-07-28 request, pass through."""

    def __init__(self, server: Host, runs: Runs) -> None:
        self._server = server
        self._runs = runs

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        method, params = ctx.method, dict(ctx.params or {})
        if method == "initialize":  # only 2025-11-25 (and older) clients send it
            result = await call_next(ctx)
            if isinstance(result, dict):
                result.setdefault("capabilities", {})["tasks"] = {
                    "requests": {"tools": {"call": {}}},
                    "cancel": {},
                }
            elif isinstance(result, types.InitializeResult):
                result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
                result["capabilities"]["tasks"] = _CAPABILITY
            return result
        if ctx.protocol_version == MODERN or ctx.request_id is None:
            return await call_next(ctx)
        if method == "tools/call" and params.get("task") is not None:
            return await self._create(ctx, params)
        if method in ("tasks/get", "tasks/result", "tasks/cancel"):
            run = self._runs.find(str(params.get("taskId", "")), owner_of(ctx.request))
            if method == "tasks/get":
                return _legacy(await self._runs.state(run))
            if method == "tasks/cancel":
                await self._runs.cancel(run)
                return _legacy(await self._runs.state(run))
            return await self._result(ctx, run)
        return await call_next(ctx)

    async def _create(self, ctx: ServerRequestContext[Any, Any], params: dict[str, Any]) -> HandlerResult:
        name = str(params.get("name", ""))
        begun = self._server.begin(name, params.get("arguments"), ctx.request, params.get("_meta"))
        if isinstance(begun, types.CallToolResult):  # refused: an unknown tool, bad arguments
            raise MCPError(types.INVALID_PARAMS, str(getattr(begun.content[0], "text", "refused")))
        run = Run(task_id(begun.thread, f"{begun.tool.tool_name}:{new_run_id()}"), begun)
        self._runs.start(run, begun.payload)
        return {"task": _legacy(await self._runs.state(run))}

    async def _result(self, ctx: ServerRequestContext[Any, Any], run: Run) -> HandlerResult:
        """Wait for the run, asking its questions live, and answer with its result."""
        while True:
            if run.job is not None and not run.job.done():
                await asyncio.wait({run.job})
            state = await self._runs.state(run)
            status = state["status"]
            if status == "working":  # a run left part way by an earlier process was started again
                continue
            if status == "completed":
                return dict(state["result"])
            if status == "failed":
                raise MCPError(int(state["error"]["code"]), str(state["error"]["message"]))
            if status == "cancelled":
                raise MCPError(types.INVALID_PARAMS, "The task was cancelled.")
            outcome = await outcome_of(run.call.graph, run.call.config)
            asked = pending_questions(outcome)
            refusal = cannot_answer(run.call, asked, ctx.session.client_capabilities)
            if refusal is not None:
                return refusal.model_dump(by_alias=True, mode="json", exclude_none=True)
            with anyio.fail_after(QUESTION_TIMEOUT):  # a client that never answers ends the request
                answers = {q.key: await _ask(ctx, q) for q in asked}
            try:
                command = resume_command(outcome, asked, answers_of(answers))
            except Unanswered as exc:
                run.refusal = str(exc)
                continue
            self._runs.start(run, command)
