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
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

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
            async with asyncio.timeout_at(self._deadline()) as timeout:
                self._timeout = timeout
                yield
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
            self._remaining = max(0.0, self._remaining - (asyncio.get_running_loop().time() - self._since))
        self._since = None

    def _reschedule(self) -> None:
        timeout = self._timeout
        if timeout is not None and not timeout.expired():
            timeout.reschedule(self._deadline())

    def _deadline(self) -> float | None:
        if self._remaining is None or self._since is None:
            return None
        return self._since + self._remaining

    def _expired(self) -> MCPTimeoutError:
        return MCPTimeoutError(self.server, self.what, self.limit or 0.0)
