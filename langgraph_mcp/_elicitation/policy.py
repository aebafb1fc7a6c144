"""How a server's requests for input are answered, per its configuration.

* ``elicitation="interrupt"`` (default): a person answers through ``interrupt()``;
  ``"decline"``: every question is declined; a callable: an async
  ``handler(request, call_info) -> response`` answers in code.
* Sampling: ``sampling_model`` answers, after an ``mcp_sampling`` approval interrupt when
  ``sampling_approval`` is set; with neither a model nor a person's text, it is refused.
* Roots come from the server's ``roots`` configuration.

:class:`Answerer` answers for one call; :class:`CodeSink` answers a live 2025-11-25 request on
the spot, without a person (and refuses one that would need a person).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

import mcp_types as types
from langchain_core.language_models import BaseChatModel
from pydantic import ValidationError

from langgraph_mcp._compat.langgraph import ask, refused_resume
from langgraph_mcp._elicitation.answers import (
    UnfitQuestion,
    call_scope,
    check_response,
    elicitation_request,
    is_stale,
    prepare,
    resume_type,
    sampling_key,
    sampling_resume_type,
)
from langgraph_mcp._elicitation.hitl import hitl_fields
from langgraph_mcp._elicitation.refusals import AnswerRefused
from langgraph_mcp._elicitation.sampling import (
    SamplingResult,
    UnfitSampling,
    check_request,
    offered_tools,
    run_sampling_model,
    text_result,
    wants_tools,
)
from langgraph_mcp._session import SAMPLING_REQUESTS_MAX, CallSink
from langgraph_mcp._session.routing import sampled_too_often
from langgraph_mcp.config import ServerConfig
from langgraph_mcp.errors import MCPProtocolError, MCPToolCallError
from langgraph_mcp.types import (
    ElicitationHandler,
    MCPCallInfo,
    MCPElicitationInterrupt,
    MCPElicitationRequest,
    MCPSamplingInterrupt,
)

__all__ = ["Answerer", "CodeSink", "needs_person", "unfit_error"]

logger = logging.getLogger("langgraph_mcp.elicitation")

Responses = dict[str, Any]
"""``InputResponses`` for one round, by the server's request key."""


def _refusal_in(error: ValidationError) -> AnswerRefused | None:
    """The :class:`AnswerRefused` an answer's validator raised, if that is what ``error`` is."""
    for detail in error.errors():
        cause = (detail.get("ctx") or {}).get("error")
        if isinstance(cause, AnswerRefused):
            return cause
    return None


def needs_person(config: ServerConfig) -> bool:
    """Can this server's requests ever need a person (an interrupt)?"""
    return config.elicitation == "interrupt" or bool(config.sampling_approval)


def _error(message: str) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message=message)


def unfit_error(server: str, exc: UnfitQuestion) -> types.ErrorData:
    """The JSON-RPC error (``-32602``, invalid params) a server gets for a question that is not
    shown to a person; its tool call then ends as the server decides."""
    logger.warning("MCP server %r sent an elicitation request that is refused: %s", server, exc)
    return types.ErrorData(
        code=types.INVALID_PARAMS, message=f"elicitation request refused by the client: {exc}"
    )


class Answerer:
    """One call's answers to its server's questions.

    Questions answered (and sampling requests decided) in this run are remembered by key, so a
    call that is re-issued and asks the very same thing again gets the same answer without
    asking again.
    """

    def __init__(
        self,
        server: str,
        config: ServerConfig,
        *,
        tool_name: str,
        tool_call_id: str | None,
        in_graph: bool,
        roots: Callable[[], types.ListRootsResult],
    ) -> None:
        self.server = server
        self.config = config
        self.tool_name = tool_name
        self.tool_call_id = tool_call_id
        self.in_graph = in_graph
        self.scope = call_scope(server, tool_name, tool_call_id)
        self._roots = roots
        self._answered: dict[str, dict[str, Any]] = {}
        self._decisions: dict[str, dict[str, Any]] = {}
        self._samples = 0
        self._steps = 0
        """Interrupts this call asked a person's answers in (see :meth:`_ask`)."""
        """Sampling requests of 2026-07-28 rounds (and a task's questions) answered in this run
        (a 2025-11-25 server's live ones are counted by the session layer)."""

    @property
    def info(self) -> MCPCallInfo:
        return {"server": self.server, "tool_name": self.tool_name, "tool_call_id": self.tool_call_id}

    def question(
        self, base: str, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
    ) -> MCPElicitationRequest:
        """The payload entry for one of this call's questions.

        Raises:
            UnfitQuestion: it may not be shown to a person (see
                :func:`~langgraph_mcp._elicitation.answers.elicitation_request`).
        """
        return elicitation_request(
            base, params, scope=self.scope, loopback_http=self.config.elicitation_loopback_http
        )

    def unfit(self, exc: UnfitQuestion) -> MCPProtocolError:
        """The call's error for a question that cannot be refused on its own (a 2026-07-28 round,
        a ``-32042`` error): the call ends, as the SDK's driver ends it for a refused question."""
        logger.warning("MCP server %r sent an elicitation request that is refused: %s", self.server, exc)
        return MCPProtocolError(
            self.server, f"{self.tool_name!r} asked a question that is not shown to a person: {exc}"
        )

    # -- elicitation ------------------------------------------------------------------------

    async def elicit(self, requests: list[MCPElicitationRequest]) -> dict[str, types.ElicitResult]:
        """Answer now, per the policy (an interrupt for a person, a handler, or decline).

        Raises:
            ValueError: a handler's answer does not fit its question.
            MCPToolCallError: a person is needed but the call runs outside a graph.
        """
        policy = self.config.elicitation
        if policy == "decline":
            return {r["key"]: types.ElicitResult(action="decline") for r in requests}
        if callable(policy):
            handler = cast(ElicitationHandler, policy)
            try:
                return {r["key"]: check_response(r, await handler(r, self.info)) for r in requests}
            except AnswerRefused as exc:  # a handler's answer: said to its developer
                raise ValueError(exc.detail) from None
        return self._ask(requests)

    def _ask(self, requests: list[MCPElicitationRequest]) -> dict[str, types.ElicitResult]:
        pending = [r for r in requests if r["key"] not in self._answered]
        if pending:
            self._needs_graph("input")
            payload: MCPElicitationInterrupt = {
                "type": "mcp_elicitation",
                "server": self.server,
                "tool_name": self.tool_name,
                "tool_call_id": self.tool_call_id,
                "requests": pending,
            }
            # Which of the call's questions this is: counted as the call asks them, so a replay
            # counts them alike (a UI's form title shows it, and the decisions name it).
            self._steps += 1
            payload["step"] = self._steps
            payload["action_requests"], payload["review_configs"] = hitl_fields(
                self.tool_name, pending, self._steps
            )
            # A stored answer to another question (the call was re-issued and the server now asks
            # something else) is skipped: the next interrupt asks the person this question.
            schema = resume_type(pending, self.tool_name, self._steps)
            try:
                while is_stale(resume := ask(payload, response_schema=schema)):
                    pass
            except ValidationError as exc:
                # A person's answer that does not fit: refused in their words (the pydantic error,
                # with the question keys, stays the cause); the interrupt stays pending.
                refused = _refusal_in(exc)
                if refused is None:
                    raise
                raise refused_resume(refused) from exc
            for request in pending:
                self._answered[request["key"]] = resume["responses"][request["key"]]
        return {r["key"]: types.ElicitResult.model_validate(self._answered[r["key"]]) for r in requests}

    def _needs_graph(self, what: str) -> None:
        if not self.in_graph:
            raise MCPToolCallError(
                f"MCP server {self.server!r} asked for {what} during {self.tool_name!r}; that needs a "
                "person, but the tool is not running inside a LangGraph graph, so it cannot be "
                "interrupted. Run it in a graph with a checkpointer, or configure elicitation='decline' "
                "or a handler.",
                kind="elicitation",
            )

    # -- sampling --------------------------------------------------------------------------

    def sampling_decision(self, params: types.CreateMessageRequestParams) -> dict[str, Any] | None:
        """The person's decision on a sampling request (an interrupt), or ``None`` when the server
        is not configured to ask for approval. A decision stored for another request is not
        applied to this one; a request repeated by a re-issued call reuses its decision.

        Raises:
            MCPToolCallError: the request is refused before anyone is asked
                (:func:`~langgraph_mcp._elicitation.sampling.check_request`).
        """
        if not self.config.sampling_approval:
            return None
        self._check(params)
        key = sampling_key(params, scope=self.scope)
        if key in self._decisions:
            return self._decisions[key]
        self._needs_graph("approval of a sampling request")
        payload: MCPSamplingInterrupt = {
            "type": "mcp_sampling",
            "server": self.server,
            "tool_name": self.tool_name,
            "tool_call_id": self.tool_call_id,
            "key": key,
            "request": params.model_dump(mode="json", by_alias=True, exclude_none=True),
        }
        if wants_tools(params):
            payload["tools"] = offered_tools(params)
        schema = sampling_resume_type(key, self.config.sampling_model is not None)
        while is_stale(decision := ask(payload, response_schema=schema)):
            pass
        self._decisions[key] = cast(dict[str, Any], decision)
        return self._decisions[key]

    async def sample(
        self, params: types.CreateMessageRequestParams, decision: Mapping[str, Any] | None
    ) -> SamplingResult:
        """Answer a sampling request, given the person's ``decision`` (if one was asked for).

        Raises:
            MCPToolCallError: declined by the person, nobody can answer (no model, no text), or
                the request or the model's answer is refused
                (:func:`~langgraph_mcp._elicitation.sampling.check_request`,
                :func:`~langgraph_mcp._elicitation.sampling.run_sampling_model`).
        """
        self._check(params)
        if decision is not None:
            if decision["action"] == "decline":
                raise self._refused("the person declined the sampling request")
            if decision.get("content") is not None:
                return text_result(str(decision["content"]))
        model = cast("BaseChatModel | None", self.config.sampling_model)
        if model is None:
            raise self._refused(
                f"sampling is not enabled for MCP server {self.server!r} "
                "(configure sampling_model, optionally with sampling_approval)"
            )
        try:
            return await run_sampling_model(model, params)
        except UnfitSampling as exc:
            raise self._refused(str(exc)) from None

    def _check(self, params: types.CreateMessageRequestParams) -> None:
        try:
            check_request(params, tools_declared=self.config.samples_with_tools)
        except UnfitSampling as exc:
            logger.warning("MCP server %r sent a sampling request that is refused: %s", self.server, exc)
            raise self._refused(f"the request is refused: {exc}") from None

    def _refused(self, why: str) -> MCPToolCallError:
        return MCPToolCallError(f"MCP server {self.server!r} asked to sample a model: {why}", kind="sampling")

    # -- 2026-07-28 rounds ------------------------------------------------------------------

    async def plan_round(
        self, requests: Mapping[str, types.InputRequest]
    ) -> Callable[[], Awaitable[Responses]]:
        """Ask a person what one ``InputRequiredResult`` needs from a person (now: one interrupt for
        its questions, one per sampling approval, in key order, so replays line up), and return
        how to produce the responses. What needs no person (a handler, decline, the sampling
        model, roots) is done only when the responses are produced, so a round replayed from
        the checkpoint never runs it again."""
        ordered = sorted(requests.items())
        for _, req in ordered:
            if isinstance(req, types.ElicitRequest):
                await prepare(req.params)
        try:
            forms = [
                (key, self.question(key, req.params))
                for key, req in ordered
                if isinstance(req, types.ElicitRequest)
            ]
        except UnfitQuestion as exc:
            raise self.unfit(exc) from None
        by_person: Responses = {}
        if forms and self.config.elicitation == "interrupt":
            answers = self._ask([request for _, request in forms])
            by_person = {key: answers[request["key"]] for key, request in forms}
        decisions = {
            key: self.sampling_decision(req.params)
            for key, req in ordered
            if isinstance(req, types.CreateMessageRequest)
        }

        async def respond() -> Responses:
            responses = dict(by_person)
            if forms and not by_person:
                answers = await self.elicit([request for _, request in forms])
                responses.update({key: answers[request["key"]] for key, request in forms})
            for key, req in ordered:
                if isinstance(req, types.CreateMessageRequest):
                    self._samples += 1
                    if self._samples > SAMPLING_REQUESTS_MAX:
                        raise sampled_too_often(self.server, self.tool_name)
                    responses[key] = await self.sample(req.params, decisions[key])
                elif isinstance(req, types.ListRootsRequest):
                    responses[key] = self._roots()
            return responses

        return respond


class CodeSink(CallSink):
    """Answers a server's live (2025-11-25) requests on the spot, without a person: ``decline``,
    a handler, or ``sampling_model`` without approval. A request that would need a person is
    refused with an error the server sees. ``tool_name`` / ``tool_call_id`` are ``None`` when the
    request could not be tied to a call."""

    def __init__(
        self,
        server: str,
        config: ServerConfig,
        *,
        tool_name: str | None = None,
        tool_call_id: str | None = None,
        on_log: Callable[[types.LoggingMessageNotificationParams], Awaitable[None]] | None = None,
        scope: str | None = None,
    ) -> None:
        self.server = server
        self.config = config
        self.info: MCPCallInfo = {"server": server, "tool_name": tool_name, "tool_call_id": tool_call_id}
        self.scope = scope if scope is not None else call_scope(server, tool_name, tool_call_id)
        """The call's scope (given: its :class:`Answerer`'s, worked out once for both)."""
        self._on_log = on_log

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        if self._on_log is not None:
            await self._on_log(params)

    async def on_elicit(
        self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
    ) -> types.ElicitResult | types.ErrorData:
        await prepare(params)
        try:
            request = elicitation_request(
                "elicitation", params, scope=self.scope, loopback_http=self.config.elicitation_loopback_http
            )
        except UnfitQuestion as exc:  # refused whatever the policy, as in every other path
            return unfit_error(self.server, exc)
        policy = self.config.elicitation
        if policy == "decline":
            return types.ElicitResult(action="decline")
        if callable(policy):
            try:
                return check_response(request, await cast(ElicitationHandler, policy)(request, self.info))
            except ValueError as exc:
                return _error(str(exc))
        return self._refuse("an elicitation request", "it needs a person")

    async def on_sample(self, params: types.CreateMessageRequestParams) -> SamplingResult | types.ErrorData:
        model = cast("BaseChatModel | None", self.config.sampling_model)
        if model is None:
            return _error(
                f"sampling is not enabled for MCP server {self.server!r} "
                "(configure sampling_model, optionally with sampling_approval)"
            )
        if self.config.sampling_approval:
            return self._refuse("a sampling request", "it needs a person's approval")
        try:
            check_request(params, tools_declared=self.config.samples_with_tools)
        except UnfitSampling as exc:
            logger.warning("MCP server %r sent a sampling request that is refused: %s", self.server, exc)
            return types.ErrorData(code=types.INVALID_PARAMS, message=f"sampling request refused: {exc}")
        try:
            return await run_sampling_model(model, params)
        except UnfitSampling as exc:
            return _error(f"sampling request not answered: {exc}")

    def _refuse(self, what: str, why: str) -> types.ErrorData:
        if self.info["tool_call_id"] is None:
            logger.warning(
                "MCP server %r sent %s that cannot be tied to one tool call; %s, so it is refused",
                self.server,
                what,
                why,
            )
            return _error(f"{what} cannot be tied to one of this client's tool calls and {why}; refused")
        return _error(f"{what} {why}, and none can be asked here; refused")
