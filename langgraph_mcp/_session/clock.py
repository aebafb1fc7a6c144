"""A call's time limit, on the client's own clock.

One :class:`CallClock` per tool call bounds everything the server spends on it: every request
of the call (2026-07-28 rounds, re-sends), the time a request waits for its turn on a shared
session, and the back-off between polls. It stops while the client is busy answering the
server's own questions (a person thinking, a sampling model writing), so only server time
counts. It uses the event loop's clock, and nothing else in the package sets a read timeout: a
request runs as long as its limit allows, however long that is (``None``: no limit).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from fractions import Fraction

from langgraph_mcp.errors import MCPTimeoutError

__all__ = ["CallClock", "CallStats"]


class CallStats:
    """What one call did besides its request, for tracing: the rounds of input the client
    answered (each question of a 2025-11-25 server, each ``InputRequiredResult`` round that
    asks), the seconds it spent answering them, and the requests sent again."""

    __slots__ = ("client_seconds", "resends", "rounds")

    def __init__(self) -> None:
        self.rounds = 0
        self.client_seconds = 0.0
        self.resends = 0


class CallClock:
    """``limit`` seconds of server time for one call (``None``: no limit).

    One request of the call runs against it at a time (:meth:`running`); :meth:`pause`,
    :meth:`resume` and :meth:`refund` may be called from other tasks (the ones answering the
    server's requests).
    """

    def __init__(self, limit: float | None, *, server: str, what: str) -> None:
        self.limit = limit
        self.server = server
        self.what = what
        self._remaining = limit
        self._timeout: asyncio.Timeout | None = None
        self._since: float | None = None
        self._pauses = 0
        self._armed: int | None = None  # this clock's entry in its loop's _Deadlines
        self.samples: Fraction = Fraction(0)
        """Sampling requests the server sent during this call, a request no call could be tied to
        counted as a share among the calls that may have sent it (bounded:
        :data:`~langgraph_mcp._session.routing.SAMPLING_REQUESTS_MAX`)."""
        self.stats = CallStats()
        """Where this call's rounds, answering time and re-sends are counted (a held call's
        clock is pointed at the stats of the run now following it)."""

    @property
    def remaining(self) -> float | None:
        if self._remaining is None:
            return None
        if self._since is None:
            return self._remaining
        return max(0.0, self._remaining - (asyncio.get_running_loop().time() - self._since))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the block against the time left; raise :class:`MCPTimeoutError` when it runs out
        (the block is cancelled, which asks the server to cancel a request in flight)."""
        if self._remaining is None:  # no limit: nothing to arm, nothing to pause
            yield
            return
        if self._remaining <= 0:
            raise self._expired()
        assert self._timeout is None, "one request of a call at a time"
        self._start()
        try:
            # A timeout with no timer of its own: the loop's shared timer expires it
            # (``Timeout.reschedule`` to now), so cancellation works as ``asyncio.timeout``'s.
            async with asyncio.timeout_at(None) as timeout:
                self._timeout = timeout
                _arm(self)
                try:
                    yield
                finally:
                    _disarm(self)
        except TimeoutError:
            if timeout.expired():
                raise self._expired() from None
            raise
        finally:
            self._timeout = None
            self._stop()

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` as server time (a poll interval): raise when the limit comes first."""
        async with self.running():
            await asyncio.sleep(seconds)

    def pause(self) -> None:
        """Stop counting (the client is answering the server); calls nest."""
        self._pauses += 1
        if self._pauses == 1:
            self._stop()
            self._reschedule()

    @contextmanager
    def answering(self) -> Iterator[None]:
        """The block answers the server (one round of input): the clock is stopped meanwhile,
        and the round and its time are counted in :attr:`stats`."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        self.pause()
        try:
            yield
        finally:
            self.resume()
            stats = self.stats
            stats.rounds += 1
            stats.client_seconds += loop.time() - started

    def resume(self) -> None:
        self._pauses -= 1
        if self._pauses == 0 and self._timeout is not None:
            self._start()
            self._reschedule()

    def refund(self, seconds: float) -> None:
        """Give back ``seconds`` that were counted but were the client's time."""
        if self._remaining is not None and seconds > 0:
            self._remaining += seconds
            self._reschedule()

    def _start(self) -> None:
        if self._pauses == 0:
            self._since = asyncio.get_running_loop().time()

    def _stop(self) -> None:
        if self._since is not None and self._remaining is not None:
            try:
                now = asyncio.get_running_loop().time()
            except RuntimeError:  # closed outside its loop (a loop closed under it): none counted
                now = self._since
            self._remaining = max(0.0, self._remaining - (now - self._since))
        self._since = None

    def _reschedule(self) -> None:
        timeout = self._timeout
        if timeout is not None and not timeout.expired():
            if timeout.when() is not None:  # an expiry on its way, from before a pause
                timeout.reschedule(None)
            _disarm(self)
            _arm(self)

    def _expire(self) -> None:
        """The loop's timer found this clock's deadline passed: cancel the running block."""
        timeout = self._timeout
        if timeout is not None and not timeout.expired():
            timeout.reschedule(asyncio.get_running_loop().time())

    def _deadline(self) -> float | None:
        if self._remaining is None or self._since is None:
            return None
        return self._since + self._remaining

    def _expired(self) -> MCPTimeoutError:
        return MCPTimeoutError(self.server, self.what, self.limit or 0.0)


class _Deadlines:
    """The deadlines of every running :class:`CallClock` of one event loop, on one timer.

    A heap of ``(deadline, entry, clock)``; a clock's entry is live while ``clock._armed`` is
    that entry's number, and dead ones are dropped when they reach the top (or all at once,
    when they outnumber the live ones). The timer is armed for the earliest live deadline;
    one that fires early (its deadline's clock stopped meanwhile) arms itself again for the
    next. Only that timer (and ``_LOOPS``, weakly) holds it, so a loop closed with calls still
    running keeps nothing alive. Touched only from its own loop's thread.
    """

    __slots__ = ("__weakref__", "heap", "live", "loop", "timer", "timer_at")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.heap: list[tuple[float, int, CallClock]] = []
        self.live = 0
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at = float("inf")

    def arm(self, clock: CallClock, when: float) -> None:
        entry = next(_ENTRIES)
        clock._armed = entry
        self.live += 1
        heapq.heappush(self.heap, (when, entry, clock))
        if when < self.timer_at:
            self._schedule(when)

    def disarm(self, clock: CallClock) -> None:
        clock._armed = None
        self.live -= 1
        heap = self.heap
        while heap and heap[0][2]._armed != heap[0][1]:
            heapq.heappop(heap)
        if not heap:
            if self.timer is not None:
                self.timer.cancel()
                self.timer, self.timer_at = None, float("inf")
        elif len(heap) > 64 and len(heap) > 4 * self.live:  # a long call holds the top
            self.heap = [item for item in heap if item[2]._armed == item[1]]
            heapq.heapify(self.heap)

    def _schedule(self, when: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer, self.timer_at = self.loop.call_at(when, self._fire), when

    def _fire(self) -> None:
        # Everything due by the time this timer was armed for has expired (the loop runs a
        # timer up to its clock's resolution early).
        due = max(self.timer_at, self.loop.time())
        self.timer, self.timer_at = None, float("inf")
        heap = self.heap
        while heap and (heap[0][2]._armed != heap[0][1] or heap[0][0] <= due):
            _, entry, clock = heapq.heappop(heap)
            if clock._armed == entry:
                clock._armed = None
                self.live -= 1
                clock._expire()
        if heap:
            self._schedule(heap[0][0])


_ENTRIES = itertools.count()
_LOOPS: weakref.WeakValueDictionary[int, _Deadlines] = weakref.WeakValueDictionary()
"""Each loop's deadlines, by the loop's ``id`` (an idle loop's go with its timer). Each entry is
touched only from its own loop's thread."""


def _arm(clock: CallClock) -> None:
    when = clock._deadline()
    if when is None:  # paused: nothing counts until it resumes
        return
    loop = asyncio.get_running_loop()
    deadlines = _LOOPS.get(id(loop))
    if deadlines is None or deadlines.loop is not loop:  # none yet, or a dead loop's id
        deadlines = _LOOPS[id(loop)] = _Deadlines(loop)
    deadlines.arm(clock, when)


def _disarm(clock: CallClock) -> None:
    if clock._armed is None:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # closed outside its loop (a loop closed under it): nothing to tell
        clock._armed = None
        return
    deadlines = _LOOPS.get(id(loop))
    if deadlines is None or deadlines.loop is not loop:  # its entry was dropped with the timer
        clock._armed = None
        return
    deadlines.disarm(clock)
