"""A turn's calls together: the node's batch of calls (each in its own task) and the one rule for
asking a turn's approvals together, which ``MCPToolNode`` and ``MCPMiddleware`` share."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from langgraph.errors import GraphInterrupt

from langgraph_mcp._call.approval import (
    LOW_RISK,
    ApprovalRequest,
    ask_together,
    escalated,
    judge_risk,
    question_pending,
    turn_pending,
)
from langgraph_mcp.options import ApprovalByRisk

__all__ = [
    "Batch",
    "Turn",
    "ask_turn",
    "decided_together",
    "first_failure",
    "judge_turn",
    "resuming",
    "risk_keys",
    "risk_policies",
]


def decided_together(requests: Sequence[ApprovalRequest]) -> dict[str, dict[str, Any]] | None:
    """The decisions for a turn's approval questions, asked in one interrupt when there are two or
    more (``approval_mode="batched"``); ``None`` for one or none: a single question is asked by its
    call, as in per-call mode. Call inside a graph.

    Raises:
        GraphInterrupt: the question.
    """
    return ask_together(requests) if len(requests) > 1 else None


@dataclasses.dataclass
class Turn:
    """A turn's approval questions once risk is judged (:func:`judge_turn`): the decisions known
    without asking (``given``) and the questions to ask together (``asked``)."""

    given: dict[str, dict[str, Any]] | None
    asked: list[ApprovalRequest]


def resuming() -> str | None:
    """``"turn"`` when the run resumes a question about a turn's calls, ``"other"`` when it resumes
    another question, else ``None``. Call in the graph task (before any work off its thread)."""
    if turn_pending():
        return "turn"
    return "other" if question_pending() else None


def risk_policies(requests: Sequence[ApprovalRequest], tools: Mapping[str, Any]) -> dict[str, ApprovalByRisk]:
    """The approval policies by risk of a turn's questions (question key -> policy), from the
    run's bound tools by name (``Bound.by_name``)."""
    policies = {}
    for request in requests:
        policy = getattr(getattr(tools.get(request.name), "options", None), "approval", None)
        if isinstance(policy, ApprovalByRisk):
            policies[request.key] = policy
    return policies


async def risk_keys(calls: Sequence[Mapping[str, Any]], tools: Mapping[str, Any]) -> set[str]:
    """The question keys of a turn's calls whose tool has an approval policy by risk (by the run's
    bound tools by name)."""
    keys = set()
    for call in calls:
        tool = tools.get(call.get("name", ""))
        args = call.get("args")
        if tool is None or not isinstance(args, Mapping):
            continue
        if isinstance(getattr(tool.options, "approval", None), ApprovalByRisk):
            request = await tool.approval_request(args, call.get("id"))
            if request is not None:
                keys.add(request.key)
    return keys


async def judge_turn(
    requests: Sequence[ApprovalRequest],
    policies: Mapping[str, ApprovalByRisk],
    messages: Sequence[Any],
    resumes: str | None,
    judged: Collection[str] = (),
) -> Turn:
    """A turn some of whose calls have an approval policy by risk (``policies``: question key ->
    policy): each of those is judged first (concurrently); a low-risk call is let through
    (:data:`~langgraph_mcp._call.approval.LOW_RISK`), the rest are asked together when there are
    two or more, and a single one is marked to ask its own question without being judged again
    (:func:`~langgraph_mcp._call.approval.escalated`). A run that resumes a question
    (``resumes``, from :func:`resuming`) is not judged again: a turn's question is answered as it
    was asked (the faces rebuild its calls), any other question leaves each call to its own
    durable judgement; ``judged`` (:func:`risk_keys`) are the keys of the turn's calls under a
    policy by risk: on the resume of a turn's question, those it did not ask about were judged low
    risk when it was asked. Without policies: :func:`decided_together`'s rule."""
    if resumes == "turn":
        shown = {r.key for r in requests}
        low = {key: dict(LOW_RISK) for key in judged if key not in shown}
        return Turn(low or None, list(requests))
    if not any(r.key in policies for r in requests):
        return Turn(None, list(requests))
    if resumes is not None:
        return Turn(None, [])
    risks = await asyncio.gather(
        *(
            judge_risk(
                policies[r.key],
                name=r.name,
                description=r.payload["description"],
                annotations=r.payload["annotations"],
                arguments=r.payload["args"],
                tool_call_id=r.tool_call_id,
                messages=messages,
            )
            if r.key in policies
            else _always()
            for r in requests
        )
    )
    given: dict[str, dict[str, Any]] = {}
    asked: list[ApprovalRequest] = []
    for request, risk in zip(requests, risks, strict=True):
        if risk is None:
            given[request.key] = dict(LOW_RISK)
            continue
        if risk:
            request.payload["risk"] = risk
        asked.append(request)
    if len(asked) == 1:
        given[asked[0].key] = escalated(asked[0].payload.get("risk"))
        return Turn(given, [])
    return Turn(given, asked)


def ask_turn(turn: Turn) -> dict[str, dict[str, Any]] | None:
    """The decisions of a judged turn: those known, and those of its questions asked together
    (two or more; a single one is asked by its call). Call inside a graph.

    Raises:
        GraphInterrupt: the question.
    """
    together = decided_together(turn.asked)
    if together is None:
        return turn.given
    return {**(turn.given or {}), **together}


async def _always() -> Any:  # a falsy judgement: asked, no reason shown
    """The judgement of a call asked whatever its risk (no policy by risk): ask, no reason."""
    return {}


class Batch:
    """The calls of one node run, each in its own task. Every call settles before anything is
    raised; then the first call (in call order) raises for all: the first error, or else every
    interrupt together, in call order."""

    def __init__(self, given: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.given = given
        """Decisions taken for the turn's calls together (``approval_mode="batched"``)."""
        self.enrolled = 0
        self.outcomes: dict[int, BaseException | None] = {}
        self.done = asyncio.Event()

    def enroll(self) -> int:
        index = self.enrolled
        self.enrolled += 1
        return index

    def settle(self, index: int, outcome: BaseException | None) -> None:
        self.outcomes[index] = outcome
        if len(self.outcomes) == self.enrolled:
            self.done.set()

    def failure(self) -> BaseException | None:
        return first_failure([self.outcomes[i] for i in range(self.enrolled)])


def first_failure(outcomes: Sequence[BaseException | None]) -> BaseException | None:
    """The first error, or else every interrupt together, in call order."""
    errors = [o for o in outcomes if o is not None and not isinstance(o, GraphInterrupt)]
    if errors:
        return errors[0]
    interrupts = [i for o in outcomes if isinstance(o, GraphInterrupt) for i in (o.args[0] if o.args else ())]
    return GraphInterrupt(tuple(interrupts)) if interrupts else None
