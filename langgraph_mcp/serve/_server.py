"""The MCP server that serves graphs: tools listed from the graphs, each call a run, its
questions asked in the client's era.

* 2026-07-28 (stateless): a run that asks ends the call with an ``InputRequiredResult`` whose
  ``requestState`` names the run's thread (sealed by the SDK); the client calls again with its
  answers, which resume the run (``Command(resume=...)``) where it stopped.
* 2025-11-25: the question is a live ``elicitation/create`` request during the call; the answer
  resumes the run and the call goes on.

A client that declared no elicitation capability gets an error result naming the question,
never a call that waits for ever. Long runs become tasks (:mod:`langgraph_mcp.serve._tasks`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import mcp_types as types
from langgraph.checkpoint.memory import InMemorySaver
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer, RequestStateSecurity

from langgraph_mcp.serve._calls import (
    QUESTION_TIMEOUT,
    Call,
    ServeOptions,
    answers_of,
    cannot_answer,
    error_result,
    input_round,
    pending_questions,
    resume_command,
)
from langgraph_mcp.serve._legacy_tasks import LegacyTasks
from langgraph_mcp.serve._questions import Question, Unanswered
from langgraph_mcp.serve._reports import LogLevels, reporter
from langgraph_mcp.serve._runs import Outcome, Reporter, drive, outcome_of
from langgraph_mcp.serve._tasks import Runs, ServedTasks
from langgraph_mcp.serve._threads import (
    THREAD_META_KEY,
    conversation_thread,
    new_thread,
    owner_of,
    owns,
)
from langgraph_mcp.serve._tools import GraphTool

__all__ = ["GraphServer", "create_mcp_server"]

logger = logging.getLogger("langgraph_mcp.serve")
MODERN = "2026-07-28"


def _meta_thread(meta: Any) -> str | None:
    extra = meta if isinstance(meta, Mapping) else (getattr(meta, "model_extra", None) or {})
    value = extra.get(THREAD_META_KEY) if isinstance(extra, Mapping) else None
    return value if isinstance(value, str) and value else None


class GraphServer(MCPServer[Any]):
    """An MCP server whose tools are LangGraph graphs (an ``MCPServer`` of the ``mcp`` SDK: run
    it with ``.run("stdio")``, ``.streamable_http_app()`` or :func:`langgraph_mcp.serve.serve`).

    Args:
        graphs: The graphs to serve: compiled graphs or :class:`GraphTool`s.
        name: The server's name (also the audience its ``requestState`` is sealed for).
        checkpointer: Where runs are kept for graphs compiled without one (default: in memory);
            a durable one (SQLite, Postgres) lets questions and tasks outlive the process. A
            function of no arguments is called on the first request, in the server's event loop
            (for savers made in a loop, e.g. ``AsyncSqliteSaver``).
        options: :class:`ServeOptions`.
        token_verifier: Verifies bearer tokens on HTTP (with ``auth``); each user's threads are
            their own.
        auth: The SDK's ``AuthSettings`` (issuer, resource server URL, required scopes): the
            server then publishes its protected-resource metadata.
        request_state_security: Keys that seal ``requestState`` (2026-07-28 questions); give
            durable keys for questions answered after a restart.
        instructions: Server instructions shown to clients.

    Example:
        ```python
        from langgraph_mcp.serve import GraphServer

        server = GraphServer([graph], name="agent")
        server.run("stdio")
        ```
    """

    def __init__(
        self,
        graphs: Sequence[Any] | Any,
        *,
        name: str = "langgraph",
        checkpointer: Any = None,
        options: ServeOptions | None = None,
        token_verifier: TokenVerifier | None = None,
        auth: AuthSettings | None = None,
        request_state_security: RequestStateSecurity | None = None,
        instructions: str | None = None,
    ) -> None:
        self.options = options or ServeOptions()
        items = list(graphs) if isinstance(graphs, Sequence) else [graphs]
        self._checkpointer = checkpointer
        self._saver: Any = None
        self._tools: dict[str, GraphTool] = {}
        self._graphs: dict[str, Any] = {}
        for item in items:
            tool = item if isinstance(item, GraphTool) else GraphTool(item)
            if tool.tool_name in self._tools:
                raise ValueError(f"Two graphs are served as the tool {tool.tool_name!r}: give one a name.")
            self._tools[tool.tool_name] = tool
        self.runs = Runs(self)
        self._levels = LogLevels()
        tasks = ServedTasks(self, self.runs, self._levels)
        super().__init__(
            name,
            instructions=instructions,
            token_verifier=token_verifier,
            auth=auth,
            request_state_security=request_state_security,
            extensions=[tasks] if self.options.tasks != "never" else None,
            middleware=[LegacyTasks(self, self.runs)] if self.options.legacy_task_support else None,
        )
        # MCPServer has no public way to serve logging/setLevel (2025-11-25 clients send it)
        self._lowlevel_server.add_request_handler(
            "logging/setLevel", types.SetLevelRequestParams, self._levels.set_level
        )

    # -- listing ------------------------------------------------------------------------------

    def _extra_arguments(self) -> dict[str, Any]:
        key = self.options.thread_argument
        if not key:
            return {}
        description = "Name a conversation to continue it across calls (same name, same thread)."
        return {key: {"type": "string", "description": description}}

    async def list_tools(self) -> list[types.Tool]:
        tools = [tool.listing(self._extra_arguments()) for tool in self._tools.values()]
        support = self.options.legacy_task_support
        if support is not None:
            for tool in tools:
                tool.execution = types.ToolExecution(task_support=support)
        return tools

    def served(self, name: str) -> tuple[GraphTool, Any] | None:
        """The tool ``name`` and its graph (bound to the server's checkpointer)."""
        tool = self._tools.get(name)
        if tool is None:
            return None
        graph = self._graphs.get(name)
        if graph is None:
            graph = tool.graph
            if hasattr(graph, "checkpointer") and graph.checkpointer in (None, False):
                graph = graph.copy({"checkpointer": self._bound_saver()})
            self._graphs[name] = graph
        return tool, graph

    def _bound_saver(self) -> Any:
        if self._saver is None:
            made = self._checkpointer
            if made is None:
                made = InMemorySaver()
            elif callable(made) and not hasattr(made, "aget_tuple"):
                made = made()
            self._saver = made
        return self._saver

    # -- one call -------------------------------------------------------------------------------

    def begin(
        self, name: str, arguments: Mapping[str, Any] | None, request: Any, meta: Any
    ) -> Call | types.CallToolResult:
        """The run a new call starts, or the error result that refuses it."""
        found = self.served(name)
        if found is None:
            return error_result(f"Unknown tool: {name}")
        tool, graph = found
        args = dict(arguments or {})
        conversation = _meta_thread(meta)
        key = self.options.thread_argument
        if key and key in args and key not in (tool.input_schema or {}).get("properties", {}):
            named = args.pop(key)
            if named is not None and not isinstance(named, str):
                return error_result(f"Invalid arguments for {name} ({key}): must be a string")
            conversation = named or conversation
        problem = tool.check(args)
        if problem is not None:
            return error_result(problem)
        owner = owner_of(request)
        thread = conversation_thread(owner, conversation) if conversation else new_thread(owner)
        return Call(tool, graph, thread, tool.graph_input(args))

    def result(self, call: Call, outcome: Outcome) -> types.CallToolResult:
        try:
            return call.tool.result(outcome.values)
        except Exception:
            logger.exception("The result of %s could not be built", call.tool.tool_name)
            return error_result(f"The result of {call.tool.tool_name} could not be built.")

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> types.CallToolResult | types.InputRequiredResult:
        if context is None:
            raise ValueError("A served graph is called through an MCP request.")
        rctx = context.request_context
        modern = context.protocol_version == MODERN
        report = reporter(context, self._levels)
        if modern and context.request_state:
            resumed = await self._resume_round(name, context, report)
            if isinstance(resumed, types.CallToolResult | types.InputRequiredResult):
                return resumed
            call, outcome = resumed
        else:
            begun = self.begin(name, arguments, rctx.request, rctx.meta)
            if isinstance(begun, types.CallToolResult):
                return begun
            call = begun
            try:
                outcome = await drive(call.graph, call.payload, call.config, report)
            except Exception:
                return self.failed(call)
        return await self._finish(call, outcome, context, report)

    def failed(self, call: Call) -> types.CallToolResult:
        logger.exception("The run of %s failed (thread %s)", call.tool.tool_name, call.thread)
        return error_result(f"The run of {call.tool.tool_name} failed.")

    async def _finish(
        self, call: Call, outcome: Outcome, context: Context[Any, Any], report: Reporter
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Ask the run's questions until it is done (live on 2025-11-25, a round on 2026-07-28)."""
        if outcome.kind == "stopped":  # its process ended part way: go on from the checkpoint
            try:
                outcome = await drive(call.graph, None, call.config, report)
            except Exception:
                return self.failed(call)
        while outcome.kind == "asked":
            asked = pending_questions(outcome)
            refusal = cannot_answer(call, asked, context.client_capabilities)
            if refusal is not None:
                return refusal
            if context.protocol_version == MODERN:
                return input_round(call, asked)
            answers: dict[str, types.ElicitResult] = {}
            try:
                with anyio.fail_after(QUESTION_TIMEOUT):
                    for question in asked:
                        answers[question.key] = await _ask_live(context, question)
            except TimeoutError:
                return error_result(
                    f"The client did not answer within {QUESTION_TIMEOUT:g} s. The run is paused at its "
                    "question and was not resumed."
                )
            try:
                command = resume_command(outcome, asked, answers)
            except Unanswered as exc:
                return error_result(str(exc))
            try:
                outcome = await drive(call.graph, command, call.config, report)
            except Exception:
                return self.failed(call)
        return self.result(call, outcome)

    async def _resume_round(
        self, name: str, context: Context[Any, Any], report: Reporter
    ) -> tuple[Call, Outcome] | types.CallToolResult | types.InputRequiredResult:
        """A 2026-07-28 call that comes back with answers: resume its run."""
        found = self.served(name)
        try:
            thread = str(json.loads(context.request_state or "")["thread"])
        except (ValueError, KeyError, TypeError):
            thread = ""
        owner = owner_of(context.request_context.request)
        if found is None or not owns(owner, thread):
            return error_result("This answer is not for a run of yours.")
        tool, graph = found
        call = Call(tool, graph, thread, None)
        outcome = await outcome_of(graph, call.config)
        if outcome.kind == "missing":
            return error_result("This answer is not for a run of yours.")
        if outcome.kind == "cancelled":
            return error_result(f"The run of {name} was cancelled.")
        if outcome.kind != "asked":
            return call, outcome  # answered already (a replayed round): its result
        asked = pending_questions(outcome)
        answers = answers_of(context.input_responses)
        if any(q.key not in answers for q in asked):
            return await self._finish(call, outcome, context, report)  # the same questions again
        try:
            command = resume_command(outcome, asked, answers)
        except Unanswered as exc:
            return error_result(str(exc))
        try:
            return call, await drive(graph, command, call.config, report)
        except Exception:
            return self.failed(call)


async def _ask_live(context: Context[Any, Any], question: Question) -> types.ElicitResult:
    session = context.request_context.session
    params = question.params
    if isinstance(params, types.ElicitRequestURLParams):
        return await session.elicit_url(
            params.message,
            params.url,
            params.elicitation_id or question.key,
            related_request_id=context.request_id,
        )
    return await session.elicit_form(
        params.message, params.requested_schema, related_request_id=context.request_id
    )


def create_mcp_server(graphs: Sequence[Any] | Any, **kwargs: Any) -> GraphServer:
    """An MCP server serving ``graphs`` (see :class:`GraphServer` for the keywords).

    Example:
        ```python
        from langgraph_mcp.serve import create_mcp_server

        create_mcp_server(graph, name="agent").run("stdio")
        ```
    """
    return GraphServer(graphs, **kwargs)
