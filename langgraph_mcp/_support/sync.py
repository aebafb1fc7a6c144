"""Synchronous use: MCP sessions on an event loop of the package's own.

MCP sessions are async. When a tool (or ``MCPToolNode``) is used from synchronous code
(``graph.invoke``, ``agent.invoke``, ``tool.invoke``), the call runs on one background event
loop that lives as long as the process, in a copy of the caller's context (so ``interrupt()``,
``get_config()`` and the stream writer see the caller's graph task), and the caller's thread
waits for it. The pool keeps that loop's sessions between calls like any other loop's; they are
closed by ``MCPPool.close()`` / ``aclose()``, or when the process exits.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import contextvars
import threading
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar

__all__ = ["bridged", "close_pool", "run_sync", "sync_loop"]

T = TypeVar("T")


class _Pool(Protocol):
    """What this module needs of a connection pool: closing it on this module's loop."""

    async def aclose(self) -> None: ...


_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_pools: weakref.WeakSet[_Pool] = weakref.WeakSet()
_EXIT_TIMEOUT = 10.0
_bridged: contextvars.ContextVar[bool] = contextvars.ContextVar("langgraph_mcp_bridged", default=False)
"""Set in code that runs on the background loop for a synchronous caller."""


def sync_loop() -> asyncio.AbstractEventLoop:
    """The background loop (started on first use)."""
    global _loop, _thread
    with _lock:
        if _loop is None or _thread is None or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            _thread = threading.Thread(target=serve, name="langgraph-mcp-sync", daemon=True)
            _thread.start()
            ready.wait()
            _loop = loop
        return _loop


def run_sync(make: Callable[[], Coroutine[Any, Any, T]], *, pool: _Pool | None = None) -> T:
    """Run ``make()`` on the background loop, in a copy of the caller's context, and return its
    result (or raise its exception). ``pool`` is remembered so its sessions on that loop are
    closed when the process exits.

    Raises:
        RuntimeError: called from the background loop itself (it would wait for itself).
    """
    loop = sync_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        raise RuntimeError("synchronous MCP calls cannot be made from the package's own event loop")
    if pool is not None:
        _pools.add(pool)
    context = contextvars.copy_context()
    context.run(_bridged.set, True)
    done: concurrent.futures.Future[T] = concurrent.futures.Future()
    started: list[asyncio.Task[T]] = []

    def start() -> None:
        if done.cancelled():
            return
        try:
            task = loop.create_task(make(), context=context)
        except BaseException as exc:  # make() itself failed: the caller must not wait forever
            done.set_exception(exc)
            return
        started.append(task)

        def finish(t: asyncio.Task[T]) -> None:
            if done.cancelled():
                return
            if t.cancelled():
                done.set_exception(concurrent.futures.CancelledError())
            elif (exc := t.exception()) is not None:
                done.set_exception(exc)
            else:
                done.set_result(t.result())

        task.add_done_callback(finish)

    loop.call_soon_threadsafe(start)
    try:
        return done.result()
    except BaseException:
        if not done.done():  # the caller gave up (e.g. KeyboardInterrupt): stop the call too
            done.cancel()
            loop.call_soon_threadsafe(lambda: [t.cancel() for t in started])
        raise


def bridged() -> bool:
    """Is this code running on the background loop for a synchronous caller?"""
    return _bridged.get()


def close_pool(pool: _Pool, timeout: float | None = None) -> None:
    """Close ``pool`` (every loop's sessions) from synchronous code."""
    _pools.discard(pool)
    future = asyncio.run_coroutine_threadsafe(pool.aclose(), sync_loop())
    future.result(timeout)


@atexit.register
def _close_at_exit() -> None:
    loop = _loop
    if loop is None or not loop.is_running():
        return
    pools = list(_pools)
    if not pools:
        return

    async def close_all() -> None:
        await asyncio.gather(*(p.aclose() for p in pools), return_exceptions=True)

    with contextlib.suppress(Exception):  # best effort: the process is exiting
        asyncio.run_coroutine_threadsafe(close_all(), loop).result(_EXIT_TIMEOUT)
