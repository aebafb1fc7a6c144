"""An event loop whose clock runs faster than the wall clock, for waits longer than any limit.

``run_dilated(main, factor=200)`` runs ``main()`` on a loop where every timer (``asyncio.sleep``,
``anyio.fail_after``, httpx read timeouts, the package's own call clocks) sees ``factor`` loop
seconds pass per real second. A test can then hold a call open for "10 minutes" in three real
seconds and see which limit fires. Everything that waits must run on this loop (serve fixture
servers with ``serve_in_loop``, not in another process, whose clock is not dilated).
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


def run_dilated(main: Callable[[], Awaitable[T]], factor: float = 200.0) -> T:
    """Run ``main()`` to completion on a fresh :class:`DilatedEventLoop`."""
    with asyncio.Runner(loop_factory=lambda: DilatedEventLoop(factor)) as runner:
        return runner.run(main())  # type: ignore[arg-type]
