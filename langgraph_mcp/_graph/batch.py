"""A turn's calls together: the node's batch of calls (each in its own task) and the one rule for
asking a turn's approvals together, which ``MCPToolNode`` and ``MCPMiddleware`` share."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.errors import GraphInterrupt

from langgraph_mcp._call.approval import ApprovalRequest, ask_together

__all__ = ["Batch", "decided_together", "first_failure"]


def decided_together(requests: Sequence[ApprovalRequest]) -> dict[str, dict[str, Any]] | None:
    """The decisions for a turn's approval questions, asked in one interrupt when there are two or
    more (``approval_mode="batched"``); ``None`` for one or none: a single question is asked by its
    call, as in per-call mode. Call inside a graph.

    Raises:
        GraphInterrupt: the question.
    """
    return ask_together(requests) if len(requests) > 1 else None


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
