"""One call's run, seen from both ways of serving it (inline and as a task): what starts it,
the questions it asks, the resume value its answers make, and what the tasks need of the server.

Also :class:`ServeOptions`, the options every part reads.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import mcp_types as types
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from langgraph_mcp.serve._questions import Question, questions_for, resume_value
from langgraph_mcp.serve._remote import is_remote, remote_thread
from langgraph_mcp.serve._runs import Outcome
from langgraph_mcp.serve._threads import THREAD_ARGUMENT
from langgraph_mcp.serve._tools import GraphTool

__all__ = [
    "QUESTION_TIMEOUT",
    "Call",
    "Host",
    "ServeOptions",
    "answers_of",
    "cannot_answer",
    "error_result",
    "input_round",
    "new_run_id",
    "pending_questions",
    "resume_command",
]


QUESTION_TIMEOUT = 3600.0
"""Seconds a 2025-11-25 client has to answer a live question (``elicitation/create``) before the
call (or the task's ``tasks/result``) ends with an error; the run stays paused at its question."""


@dataclass(frozen=True)
class ServeOptions:
    """How graphs are served.

    Args:
        thread_argument: The optional argument added to every tool that names a conversation
            kept across calls (``None``: none is added; ``_meta["io.langgraph/thread"]`` still
            works).
        tasks: ``"auto"``: a run still going after ``task_after`` seconds becomes a task, for a
            client that declared the tasks extension; ``"always"``: every such call is a task at
            once; ``"never"``: calls are always answered inline.
        task_after: Seconds an ``"auto"`` call may run inline before it becomes a task.
        poll_interval_ms: The poll interval suggested to clients following a task.
        task_ttl_ms: How long a task's record is kept after it is created (advertised as ``ttlMs``).
        legacy_task_support: ``execution.taskSupport`` of every tool for 2025-11-25 clients:
            ``"optional"`` (a client may ask for a task), ``"required"`` (clients that follow
            tasks only when a tool requires one, as this package's, then do) or ``None`` (no
            2025-11-25 tasks).

    Example:
        ```python
        options = ServeOptions(thread_argument="conversation", tasks="always", poll_interval_ms=200)
        server = GraphServer([graph], options=options)
        ```
    """

    thread_argument: str | None = THREAD_ARGUMENT
    tasks: Literal["auto", "always", "never"] = "auto"
    task_after: float = 5.0
    poll_interval_ms: int = 500
    task_ttl_ms: int = 3_600_000
    legacy_task_support: Literal["optional", "required"] | None = "optional"


def error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


@dataclass
class Call:
    """One call's run: the tool, its thread and what starts it."""

    tool: GraphTool
    graph: Any
    thread: str
    payload: Any

    @property
    def config(self) -> RunnableConfig:
        """The run's config: its thread (on a deployment, the thread's UUID there)."""
        thread = remote_thread(self.thread) if is_remote(self.graph) else self.thread
        return {"configurable": {"thread_id": thread}}


class Host(Protocol):
    """What the tasks need of the server that serves the graphs."""

    options: ServeOptions

    def served(self, name: str) -> tuple[GraphTool, Any] | None: ...

    def begin(
        self, name: str, arguments: Mapping[str, Any] | None, request: Any, meta: Any
    ) -> Call | types.CallToolResult: ...

    def result(self, call: Call, outcome: Outcome) -> types.CallToolResult: ...


def pending_questions(outcome: Outcome) -> list[Question]:
    """The questions of every pending interrupt of a run that asks."""
    return [q for interrupt in outcome.interrupts for q in questions_for(str(interrupt.id), interrupt.value)]


def resume_command(
    outcome: Outcome, asked: Sequence[Question], answers: Mapping[str, types.ElicitResult]
) -> Command[Any]:
    """``Command(resume={interrupt id: value})`` for every pending interrupt."""
    values: dict[str, Any] = {}
    for interrupt in outcome.interrupts:
        mine = [q for q in asked if q.interrupt_id == str(interrupt.id)]
        values[str(interrupt.id)] = resume_value(interrupt.value, mine, answers)
    return Command(resume=values)


def input_round(call: Call, asked: Sequence[Question]) -> types.InputRequiredResult:
    """The 2026-07-28 input round that asks ``asked``: its ``requestState`` names the run's
    thread (the SDK seals it, bound to the tool, the arguments and the caller)."""
    return types.InputRequiredResult(
        input_requests={q.key: q.request() for q in asked},
        request_state=json.dumps({"thread": call.thread}),
    )


def cannot_answer(
    call: Call, asked: Sequence[Question], capabilities: types.ClientCapabilities | None
) -> types.CallToolResult | None:
    """The error result for a client that cannot answer these questions, else ``None``."""
    elicitation = capabilities.elicitation if capabilities is not None else None
    url_needed = any(isinstance(q.params, types.ElicitRequestURLParams) for q in asked)
    if elicitation is not None and (
        not url_needed or elicitation.url is not None or elicitation.form is None
    ):
        return None
    first = asked[0].params.message if asked else ""
    return error_result(
        f"The run of {call.tool.tool_name} asks a question ({first!r}) but this client cannot answer "
        "questions: it declared no elicitation capability. The run is paused and was not resumed."
    )


def answers_of(responses: Any) -> dict[str, types.ElicitResult]:
    """The client's answers (``inputResponses``) as ``ElicitResult``s; others are left out."""
    answers: dict[str, types.ElicitResult] = {}
    for key, value in dict(responses or {}).items():
        data = value.model_dump(by_alias=True) if hasattr(value, "model_dump") else value
        try:
            answers[str(key)] = types.ElicitResult.model_validate(data)
        except ValueError:
            continue
    return answers


def new_run_id() -> str:
    """A short random id for one run of a thread."""
    return uuid.uuid4().hex[:16]
