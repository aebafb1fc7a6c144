"""Which call a server's request or log message belongs to.

Every request in flight is tracked as an :class:`InFlight` with the :class:`CallSink` of its
call. A server-to-client request (``elicitation/create``, ``sampling/createMessage``) or log
notification is handed to the sink of the call it belongs to, found in this order:

1. the call whose context the SDK ran the callback in (in-process and streamable HTTP deliver a
   call's requests in that call's context);
2. the only call *active* on the server (sent, not finished, not itself waiting for an answer: a
   call that waits for an answer cannot ask anything else);
3. when several calls are active and one of them may need a person (``exclusive``), the request
   waits until all but one of those calls have finished with the server's answer or been tied to
   a question of their own: the remaining one asked it. The wait is bounded
   (``ATTRIBUTION_WAIT``, then the ``fallback`` answers) and does not count against the asker's
   clock. If every one of them is itself waiting on such a request (each asked at the same
   moment, so none can finish), they are cancelled (the server is told) and sent again one at a
   time: their questions then come one by one, each tied to its call;
4. otherwise nobody: the router's ``fallback`` sink answers without a call (or refuses).

A call that ended without the server's answer (timed out, cancelled, closed) may still have a
question on its way; for ``GHOST_GRACE`` seconds it stays a candidate, and a question that can
only be its own is dropped (answered ``cancel``), never handed to another call. So is a question
that can only come from abandoned calls.

An abandoned call is not cancelled (no ``notifications/cancelled``) while the server may be
finishing it: answered ``cancel``, a tool usually returns at once, and a cancellation that
crosses its result on the way ends servers built on the ``mcp`` 1.x SDK (before 1.12.3, any
cancellation of a running request does). Only a call still running ``ABANDON_GRACE`` seconds
later is cancelled.

Over transports that carry no caller context (stdio and SSE, 2025-11-25), calls that may need a
person take turns, but only calls of tools that have asked something before: a tool that never
asks runs in parallel with everything, and a tool's first question costs at most one re-send.
While a call waits for its answer it gives up its turn; it takes a turn again before the answer
is sent. Time spent waiting for a turn counts against the call's clock; time spent answering
does not.

A call's sampling requests are counted on its clock (one clock per call, across its requests):
past ``SAMPLING_REQUESTS_MAX`` the request is refused, the call's request is cancelled (the server
is told) and the call ends with an error (:attr:`InFlight.refusal`). A sampling request that
cannot be tied to one call is shared among the calls that may have sent it: each is charged its
part (a half, with two), so the bound holds per call however requests are tied, and calls that
stay within it do not stop each other.

The router knows nothing about interrupts: a sink is any object with the three methods below.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal, Protocol, TypeVar

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from langgraph_mcp._session.clock import CallClock
from langgraph_mcp.errors import MCPToolCallError

__all__ = [
    "ABANDON_GRACE",
    "ATTRIBUTION_WAIT",
    "GHOST_GRACE",
    "SAMPLING_REQUESTS_MAX",
    "CallSink",
    "InFlight",
    "Router",
    "sampled_too_often",
]

logger = logging.getLogger("langgraph_mcp.pool")

ATTRIBUTION_WAIT = 30.0
"""Seconds a request that cannot be tied to one call yet waits for the other calls to settle."""
GHOST_GRACE = 5.0
"""Seconds a call that ended without the server's answer may still be the sender of a request."""
SAMPLING_REQUESTS_MAX = 50
"""The most sampling requests (``sampling/createMessage``) answered for one tool call, in both
eras: a server that asks again after every answer would otherwise have the client's model called
for as long as the call's clock allows (the model's time does not count against it)."""
ABANDON_GRACE = 10.0
"""Seconds an abandoned call (its question answered ``cancel``, to be sent again) may go on
before it is cancelled."""

_R = TypeVar("_R")


def sampled_too_often(server: str, tool: str) -> MCPToolCallError:
    """The error of a call whose server asked to sample more than ``SAMPLING_REQUESTS_MAX`` times."""
    return MCPToolCallError(
        f"MCP server {server!r} asked to sample a model more than {SAMPLING_REQUESTS_MAX} times "
        f"during one call of {tool!r}; the call was stopped",
        kind="sampling",
    )


class CallSink(Protocol):
    """Receives what the server sends for one call while it runs."""

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None: ...

    async def on_elicit(
        self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
    ) -> types.ElicitResult | types.ErrorData: ...

    async def on_sample(
        self, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData: ...


@dataclass(eq=False)
class InFlight:
    """One request in flight, and the call it belongs to."""

    sink: CallSink
    tool: str
    exclusive: bool
    """Its requests may need a person, so they must be tied to it."""
    clock: CallClock
    state: Literal["queued", "active", "blocked", "done"] = "queued"
    blocks: int = 0
    """How often it has waited for an answer (a request tied to it)."""
    has_turn: bool = False
    answered: bool = False
    """It ended with the server's answer (a result or an error), so it has no request pending."""
    resend: bool = False
    """Abandoned, to be sent again (its question could not be tied to it): what the server
    answers is dropped, and so is any question it asks meanwhile."""
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    """Cancelled when the session closes under the request, or when it goes on ``ABANDON_GRACE``
    seconds after it was abandoned."""
    lend: Callable[[], None] | None = None
    """Gives back what the call holds while the server works on it (its ``max_concurrent_calls``
    slot), called once, when the server first asks it something."""
    refusal: MCPToolCallError | None = None
    """Why the router ended the call (it sampled too often): its request was cancelled, and this
    is the call's error."""

    def may_have_asked(self, blocks: int, ghosts: set[InFlight]) -> bool:
        """Could it have sent a request that arrived when it had waited ``blocks`` times?"""
        if self.blocks != blocks:
            return False  # tied to a later request of its own
        return self.state == "active" or self in ghosts


@dataclass(eq=False)
class _Parked:
    """A request that could not be tied to a call yet, and the calls that may have sent it."""

    candidates: dict[InFlight, int]
    """Each candidate and how often it had waited for an answer when the request arrived."""
    since: float

    def left(self, ghosts: set[InFlight]) -> list[InFlight]:
        return [c for c, blocks in self.candidates.items() if c.may_have_asked(blocks, ghosts)]


_DROPPED = object()
"""The request's call is gone (cancelled, or to be sent again): the request needs no answer."""


def _cancel_if_running(call: InFlight) -> None:
    if call.state != "done":
        call.scope.cancel()


_CURRENT: contextvars.ContextVar[InFlight | None] = contextvars.ContextVar(
    "langgraph_mcp_in_flight", default=None
)


class Router:
    """Routes one session's server-to-client requests and logs to the calls they belong to."""

    def __init__(self, server: str, fallback: CallSink) -> None:
        self.server = server
        self.fallback = fallback
        """Answers requests that belong to no call (or that cannot be tied to one)."""
        self.untied = False
        """Requests of this session carry no caller context (stdio or SSE, 2025-11-25)."""
        self._calls: set[InFlight] = set()
        self._ghosts: set[InFlight] = set()
        self._asks: set[str] = set()
        self._turn = asyncio.Lock()
        self._changed = asyncio.Event()
        self._answering = 0
        self._parked: list[_Parked] = []

    @asynccontextmanager
    async def track(
        self,
        sink: CallSink,
        *,
        tool: str,
        exclusive: bool,
        clock: CallClock,
        lend: Callable[[], None] | None = None,
    ) -> AsyncIterator[InFlight]:
        """Track one request of a call while the block sends it (after its turn, if it takes
        turns); the block runs inside the request's close scope. ``lend`` is called when the
        server first asks the call something (see :attr:`InFlight.lend`)."""
        call = InFlight(sink=sink, tool=tool, exclusive=exclusive, clock=clock, lend=lend)
        token = _CURRENT.set(call)
        self._calls.add(call)
        try:
            with call.scope:
                if self._takes_turns(call):
                    await self._abandoned_ended()
                    await self._take_turn(call)
                call.state = "active"
                try:
                    yield call
                except MCPError:
                    call.answered = True  # the server answered with an error
                    raise
                else:
                    call.answered = True
        finally:
            call.state = "done"
            self._give_turn(call)
            self._calls.discard(call)
            if not call.answered:
                self._haunt(call)
            _CURRENT.reset(token)
            self._notify()

    async def drained(self) -> None:
        """Wait until no request is in flight either way (ours, or the server's to a call)."""
        while self._calls or self._answering:
            await self._wait_for_change()

    def working(self) -> int:
        """Requests in flight that are not waiting for an answer (which may take a person)."""
        return sum(1 for call in list(self._calls) if call.state in ("queued", "active"))

    def cancel_all(self) -> int:
        """Cancel every request in flight (the session is closing); return how many."""
        for call in self._calls:
            call.scope.cancel()
        return len(self._calls)

    # -- server -> client ------------------------------------------------------------------

    async def elicit(
        self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
    ) -> types.ElicitResult | types.ErrorData:
        call = await self._owner()
        if call is _DROPPED:
            return types.ElicitResult(action="cancel")
        if not isinstance(call, InFlight):
            return await self.fallback.on_elicit(params)
        return await self._answer(call, lambda: call.sink.on_elicit(params))

    async def sample(
        self, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        call = await self._owner()
        if call is _DROPPED:
            return types.ErrorData(code=types.INVALID_REQUEST, message="the call was cancelled")
        # Untied: it is shared among the calls that may have sent it (each is charged its part),
        # so the bound does not depend on whether a request could be tied, and calls that stay
        # within it are not stopped by each other's requests.
        if isinstance(call, InFlight):
            counted, share = [call], Fraction(1)
        else:
            counted = [c for c in self._calls if c.may_have_asked(c.blocks, self._ghosts)]
            share = Fraction(1, len(counted)) if counted else Fraction(0)
        if self._sampled_too_often(counted, share):
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message=f"more than {SAMPLING_REQUESTS_MAX} sampling requests in one tool call; refused",
            )
        if not isinstance(call, InFlight):
            return await self.fallback.on_sample(params)
        return await self._answer(call, lambda: call.sink.on_sample(params))

    def _sampled_too_often(self, calls: list[InFlight], share: Fraction) -> bool:
        """Charge each of ``calls`` its ``share`` of one sampling request; end those past the
        bound."""
        over = False
        for call in calls:
            call.clock.samples += share
            if call.clock.samples <= SAMPLING_REQUESTS_MAX:
                continue
            over = True
            if call.refusal is None:
                logger.warning(
                    "MCP server %r asked to sample a model more than %d times during one call of %r; "
                    "the call is stopped",
                    self.server,
                    SAMPLING_REQUESTS_MAX,
                    call.tool,
                )
                call.refusal = sampled_too_often(self.server, call.tool)
            call.scope.cancel()
        return over

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        call = _CURRENT.get()
        if call is None or call not in self._calls:
            active = [c for c in self._calls if c.state == "active"]
            call = active[0] if len(active) == 1 and not self._ghosts else None
        if call is not None:
            await call.sink.on_log(params)

    # -- internals ---------------------------------------------------------------------------

    async def _answer(self, call: InFlight, answer: Callable[[], Awaitable[_R]]) -> _R:
        """Let ``call`` answer a request tied to it: it waits (its clock stopped, its turn
        given up), then takes a turn again before the answer goes to the server."""
        self._asks.add(call.tool)
        if call.lend is not None:
            lend, call.lend = call.lend, None
            lend()
        call.state = "blocked"
        call.blocks += 1
        self._give_turn(call)
        self._answering += 1
        self._notify()
        try:
            with call.clock.answering():
                return await answer()
        finally:
            self._answering -= 1
            self._notify()
            await self._reactivate(call)

    async def _reactivate(self, call: InFlight) -> None:
        """``call`` answered: it is active on the server again, in turn where it takes turns."""
        if call.state != "blocked":
            return  # it ended meanwhile
        try:
            if self._takes_turns(call) and not call.has_turn:
                await self._take_turn(call)
                if call.state != "blocked":  # it ended while waiting for the turn
                    self._give_turn(call)
        finally:
            if call.state == "blocked":
                call.state = "active"

    async def _owner(self) -> InFlight | object | None:
        """The call a request belongs to, ``None`` for none, or ``_DROPPED``."""
        current = _CURRENT.get()
        if current is not None and (current in self._calls or current in self._ghosts):
            return current if current.state != "done" and not current.resend else _DROPPED
        snapshot = {
            c: c.blocks for c in (*self._calls, *self._ghosts) if c.may_have_asked(c.blocks, self._ghosts)
        }
        if snapshot and all(c.resend for c in snapshot):
            return _DROPPED  # only abandoned calls may have asked it
        if len(snapshot) <= 1:
            only = next(iter(snapshot), None)
            return _DROPPED if only is not None and only.state == "done" else only
        if not any(c.exclusive for c in snapshot):
            return None  # nobody needs a person: answer without knowing the call
        # From now on, calls of these tools take turns: their next questions are tied at once.
        self._asks.update(c.tool for c in snapshot)
        parked = _Parked(snapshot, since=asyncio.get_running_loop().time())
        self._parked.append(parked)
        self._notify()
        try:
            with anyio.move_on_after(ATTRIBUTION_WAIT):
                while True:
                    left = parked.left(self._ghosts)
                    if all(c.resend for c in left):
                        return _DROPPED  # its call is gone, or abandoned
                    if len(left) == 1 and left[0].state != "done":
                        # The time spent finding out was the client's, not the server's.
                        left[0].clock.refund(asyncio.get_running_loop().time() - parked.since)
                        return left[0]
                    if len(left) <= 1:
                        return _DROPPED
                    self._break_deadlock()
                    await self._wait_for_change()
        finally:
            self._parked.remove(parked)
            self._notify()
        logger.warning(
            "MCP server %r asked something while %d calls were running; it could not be tied to "
            "one of them within %gs",
            self.server,
            len(snapshot),
            ATTRIBUTION_WAIT,
        )
        return None

    def _break_deadlock(self) -> None:
        """When every call that may have sent a waiting request is itself waiting on one (as many
        requests as calls), none can finish: abandon them all, to be sent again one at a time.

        Their questions are answered ``cancel`` (the parked requests are dropped) and each call
        runs on to the server's answer, which is dropped. They are not cancelled: the cancellation
        could reach the server while it writes the result the ``cancel`` answer led to, which ends
        servers built on the ``mcp`` 1.x SDK. A call still running ``ABANDON_GRACE`` seconds later
        is cancelled after all."""
        stuck = {c for parked in self._parked for c in parked.left(self._ghosts)}
        if not stuck or any(c.state == "done" or c.resend for c in stuck) or len(self._parked) < len(stuck):
            return  # a call may still finish (a ghost fade, an abandoned call end): wait
        logger.info(
            "MCP server %r: %d calls asked at the same moment; sending them again one at a time",
            self.server,
            len(stuck),
        )
        loop = asyncio.get_running_loop()
        for call in stuck:
            call.resend = True
            loop.call_later(ABANDON_GRACE, _cancel_if_running, call)
        self._notify()

    def _haunt(self, call: InFlight) -> None:
        """``call`` ended without the server's answer: for a while, it may still be asking."""
        self._ghosts.add(call)

        def fade() -> None:
            self._ghosts.discard(call)
            self._notify()

        asyncio.get_running_loop().call_later(GHOST_GRACE, fade)

    async def _abandoned_ended(self) -> None:
        """Wait until no abandoned call runs on the server: a question one of them may still ask
        is then never taken for one of a call sent in its place."""
        while any(c.resend for c in self._calls):
            await self._wait_for_change()

    def _takes_turns(self, call: InFlight) -> bool:
        return self.untied and call.exclusive and call.tool in self._asks

    async def _take_turn(self, call: InFlight) -> None:
        await self._turn.acquire()
        call.has_turn = True

    def _give_turn(self, call: InFlight) -> None:
        if call.has_turn:
            call.has_turn = False
            self._turn.release()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def _wait_for_change(self) -> None:
        await self._changed.wait()
