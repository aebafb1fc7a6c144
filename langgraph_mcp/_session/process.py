"""A stdio server's process, for the one case the SDK cannot handle: stopping it when the
session that owns it can no longer run (its event loop is closed, or idle while the pool
closes).

The SDK starts each stdio server in a session (and process group) of its own. A handle opens a
pidfd at spawn time where the OS has them (Linux 5.3+), so a signal never reaches a process
that merely reuses the number of one that already ended; elsewhere it falls back to the PID.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import threading
import time

from langgraph_mcp._session import grace as kill_grace

__all__ = ["ServerProcess"]


class ServerProcess:
    """A handle on one stdio server process (the leader of its own process group)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._fd: int | None = None
        self._closed = False
        self._lock = threading.Lock()
        try:
            self._fd = os.pidfd_open(pid)
        except ProcessLookupError:  # already ended and reaped: nothing of it to stop
            self._closed = True
        except (AttributeError, OSError):  # no pidfds here: fall back to the number
            pass

    def __repr__(self) -> str:
        return f"ServerProcess(pid={self.pid})"

    def exited(self) -> bool:
        """The process has ended (zombies included), or the handle was closed."""
        with self._lock:
            if self._closed:
                return True
            if self._fd is not None:
                poller = select.poll()
                poller.register(self._fd, select.POLLIN)
                return bool(poller.poll(0))
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def send_signal(self, sig: signal.Signals) -> bool:
        """Signal its process group while it runs; False if it has ended."""
        if self.exited():
            return False
        return self._signal_group(sig)

    def _signal_group(self, sig: signal.Signals) -> bool:
        killpg = getattr(os, "killpg", None)  # POSIX only
        if killpg is None or self._closed:
            return False
        try:
            killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    async def stop(self, grace: float | None = None) -> None:
        """SIGTERM to its process group, then SIGKILL after ``grace`` seconds (default:
        :data:`~langgraph_mcp._session.grace.KILL`) to what is left of
        the group (a wrapper such as ``npx`` may have exited and left its child); returns once the
        process has ended (or after a further second if even SIGKILL does not end it).
        Cancelling the caller leaves the SIGKILL to a timer."""
        if not self.send_signal(signal.SIGTERM):
            self.close()
            return
        try:
            await self._ended_within(grace if grace is not None else kill_grace.KILL)
            # A group keeps its id while any member lives; an empty one is not there to signal
            # (its id reused by a new group leader within these seconds is a risk we accept).
            self._signal_group(signal.SIGKILL)
            await self._ended_within(1.0)
        except BaseException:
            self._kill_later(0.0)
            raise
        self.close()

    def stop_soon(self, grace: float | None = None) -> None:
        """:meth:`stop` without waiting (for code that cannot await): the SIGKILL comes from a
        timer thread, so it does not depend on any event loop."""
        if not self.send_signal(signal.SIGTERM):
            self.close()
            return
        self._kill_later(grace if grace is not None else kill_grace.KILL)

    def _kill_later(self, delay: float) -> None:
        def kill() -> None:
            self._signal_group(signal.SIGKILL)
            self.close()

        timer = threading.Timer(delay, kill)
        timer.daemon = True
        timer.start()

    async def _ended_within(self, seconds: float) -> bool:
        fd = self._fd
        if fd is None:  # no pidfd to wait on: look now and then
            deadline = time.monotonic() + seconds
            while not self.exited() and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.02)
            return self.exited()
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[None] = loop.create_future()

        def readable() -> None:  # the pidfd is readable once the process has ended
            if not ended.done():
                ended.set_result(None)

        try:
            loop.add_reader(fd, readable)
        except (OSError, ValueError):  # closed meanwhile by whoever else stopped it
            return self.exited()
        try:
            await asyncio.wait_for(ended, seconds)
        except TimeoutError:
            pass
        finally:
            loop.remove_reader(fd)
        return self.exited()

    def close(self) -> None:
        """Forget the process: the handle never signals again (and releases its pidfd)."""
        with self._lock:
            fd, self._fd, self._closed = self._fd, None, True
        if fd is not None:
            os.close(fd)
