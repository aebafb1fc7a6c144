"""At most ``max_concurrent_calls`` tool calls in flight per session, handed out fairly.

A :class:`FairLimiter` has ``limit`` slots. A call takes one for as long as its request is in
flight and gives it back when the request ends, however it ends, or as soon as the server asks
it something (a 2025-11-25 call held open while a person answers, which then goes on without a
slot: taking one again could wait on calls that wait for it; a 2026-07-28 call holds one per
round). When every slot is taken, calls queue by *key* (the LangGraph thread, or the run when there
is none): a freed slot goes to the waiting key that was served least recently, so a graph that
fires a hundred calls delays another graph's single call by at most the calls already running,
not by a hundred. Within one key, calls keep their order. A call cancelled (or timed out) while it
queues leaves the queue and takes nothing.

Limiters are bound to the event loop that uses them (like sessions). Who a call is made for
is told by the layer that knows (:func:`queue_by`; this layer knows nothing of threads or runs).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Callable, Hashable
from contextlib import asynccontextmanager

__all__ = ["FairLimiter", "Slot", "queue_by", "queue_key"]


def _nobody() -> Hashable:
    return None


_key_of_caller: Callable[[], Hashable] = _nobody


def queue_key() -> Hashable:
    """Who the call being made is made for (see :func:`queue_by`; ``None``: nobody says)."""
    return _key_of_caller()


def queue_by(key_of_caller: Callable[[], Hashable]) -> None:
    """Queue calls by what ``key_of_caller()`` returns in the calling task (the layer that
    knows about graphs installs its LangGraph thread or run)."""
    global _key_of_caller
    _key_of_caller = key_of_caller


_SERVED_MEMORY = 4096  # keys whose last turn is remembered (the oldest are forgotten first)


class Slot:
    """A slot held by one call; :meth:`release` gives it back (once; later calls do nothing)."""

    def __init__(self, limiter: FairLimiter) -> None:
        self._limiter: FairLimiter | None = limiter

    def release(self) -> None:
        limiter, self._limiter = self._limiter, None
        if limiter is not None:
            limiter._release()


class FairLimiter:
    """``limit`` slots, handed to waiting keys round-robin (see the module docstring)."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self.active = 0
        self._queues: dict[Hashable, collections.deque[asyncio.Future[None]]] = {}
        self._served: collections.OrderedDict[Hashable, int] = collections.OrderedDict()
        self._tick = 0

    @property
    def waiting(self) -> int:
        """Calls queued for a slot."""
        return sum(len(q) for q in self._queues.values())

    @asynccontextmanager
    async def slot(self, key: Hashable) -> AsyncIterator[Slot]:
        """Hold one slot for the block, queueing under ``key`` while all are taken. The block may
        give it back early (:meth:`Slot.release`)."""
        if self.active < self.limit and not self._queues:
            self.active += 1
            self._note_served(key)
        else:
            ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._queues.setdefault(key, collections.deque()).append(ticket)
            try:
                await ticket
            except BaseException:
                if ticket.done() and not ticket.cancelled():
                    self._release()  # the slot arrived as the wait was cancelled: pass it on
                else:
                    self._forget(key, ticket)
                raise
        held = Slot(self)
        try:
            yield held
        finally:
            held.release()

    def _forget(self, key: Hashable, ticket: asyncio.Future[None]) -> None:
        queue = self._queues.get(key)
        if queue is None:
            return
        try:
            queue.remove(ticket)
        except ValueError:
            return
        if not queue:
            del self._queues[key]

    def _release(self) -> None:
        """Hand the freed slot to the waiting key served least recently (never served first, then
        in order of arrival), or put it back."""
        while self._queues:
            key = min(self._queues, key=lambda k: self._served.get(k, -1))
            queue = self._queues[key]
            ticket = queue.popleft()
            if not queue:
                del self._queues[key]
            if not ticket.done():
                self._note_served(key)
                ticket.set_result(None)  # the slot passes on: ``active`` is unchanged
                return
        self.active -= 1

    def _note_served(self, key: Hashable) -> None:
        self._tick += 1
        self._served[key] = self._tick
        self._served.move_to_end(key)
        while len(self._served) > _SERVED_MEMORY:
            self._served.popitem(last=False)
