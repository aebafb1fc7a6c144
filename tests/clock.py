"""An event loop whose clock runs faster than the wall clock, for waits longer than any limit.

``run_dilated(main, factor=200)`` runs ``main()`` on a loop where every timer (``asyncio.sleep``,
``anyio.fail_after``, httpx read timeouts, the package's own call clocks) sees ``factor`` loop
seconds pass per real second. A test can then hold a call open for "10 minutes" in three real
seconds and see which limit fires. Everything that waits must run on this loop (serve fixture
servers with ``serve_in_loop``, not in another process, whose clock is not dilated).

``run_virtual(main)`` goes further, for code that only waits on timers and on other tasks of the
same loop (no sockets, pipes or threads): the loop's clock stands still while anything is ready
to run and jumps straight to the next timer otherwise. Waits take no real time and land exactly
where they were scheduled, however loaded the machine is, so a test can assert the loop seconds
it expects to the millisecond.
"""

from __future__ import annotations

import asyncio
import selectors
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")


class _DilatedSelector(selectors.BaseSelector):
    """The default selector, waiting ``factor`` times less than it is asked to."""

    def __init__(self, factor: float) -> None:
        self._inner = selectors.DefaultSelector()
        self._factor = factor

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._inner.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        return self._inner.select(None if timeout is None else timeout / self._factor)

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return self._inner.get_map()

    def close(self) -> None:
        self._inner.close()


class DilatedEventLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose ``time()`` advances ``factor`` times faster than real time."""

    def __init__(self, factor: float) -> None:
        super().__init__(selector=_DilatedSelector(factor))
        self.factor = factor
        self._origin = time.monotonic()

    def time(self) -> float:
        return self._origin + (time.monotonic() - self._origin) * self.factor


class _VirtualSelector(selectors.BaseSelector):
    """The default selector, asked only whether something is ready: a wait for a timer is not
    spent but added to the loop's clock (``advance``)."""

    def __init__(self, advance: Callable[[float], None]) -> None:
        self._inner = selectors.DefaultSelector()
        self._advance = advance

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._inner.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = self._inner.select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:  # no timer at all: only the loop's own wake-up can come
            return self._inner.select(None)
        self._advance(timeout)
        return []

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return self._inner.get_map()

    def close(self) -> None:
        self._inner.close()


class VirtualTimeEventLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose ``time()`` moves only when it would otherwise wait for a
    timer, and then by exactly that wait."""

    def __init__(self) -> None:
        self._now = 0.0
        super().__init__(selector=_VirtualSelector(self._advance))

    def _advance(self, seconds: float) -> None:
        self._now += seconds

    def time(self) -> float:
        return self._now


# The session layer's limits on what takes real time (opening a TCP connection, a process
# exiting): on a dilated loop they would fire after a few real milliseconds on a loaded machine.
_REAL_TIME_GRACES = ("HTTP", "EXIT", "KILL")


def run_dilated(main: Callable[[], Awaitable[T]], factor: float = 200.0) -> T:
    """Run ``main()`` to completion on a fresh :class:`DilatedEventLoop`, with the session layer's
    limits on real-time work (``grace.HTTP``, ``EXIT``, ``KILL``) dilated by the same factor, so
    they keep their real length while the limits under test run fast."""
    from langgraph_mcp._session import grace

    saved = {name: getattr(grace, name) for name in _REAL_TIME_GRACES}
    for name, seconds in saved.items():
        setattr(grace, name, seconds * factor)
    try:
        with asyncio.Runner(loop_factory=lambda: DilatedEventLoop(factor)) as runner:
            return runner.run(main())  # type: ignore[arg-type]
    finally:
        for name, seconds in saved.items():
            setattr(grace, name, seconds)


def run_virtual(main: Callable[[], Awaitable[T]]) -> T:
    """Run ``main()`` to completion on a fresh :class:`VirtualTimeEventLoop` (timers and tasks
    only: see the module docstring)."""
    with asyncio.Runner(loop_factory=VirtualTimeEventLoop) as runner:
        return runner.run(main())  # type: ignore[arg-type]


class ManualClock:
    """A clock that moves only when told (:meth:`advance`): a stand-in for ``time.monotonic``
    wherever the package takes a clock, so a test can step past a lifetime without waiting."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
