"""A stdio server's process, for the one case the SDK cannot handle: stopping it when the
session that owns it can no longer run (its event loop is closed, or idle while the pool
closes).

The SDK starts each stdio server in a session (and process group) of its own. A handle opens a
pidfd at spawn time where the OS has them (Linux 5.3+), so a signal never reaches a process
that merely reuses the number of one that already ended; elsewhere it falls back to the PID.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import threading
import time

__all__ = ["ServerProcess"]

KILL_GRACE = 2.0
"""Seconds a server gets to exit after SIGTERM before SIGKILL."""


class ServerProcess:
    """A handle on one stdio server process (the leader of its own process group)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._fd: int | None = None
        self._closed = False
        self._lock = threading.Lock()
        with contextlib.suppress(AttributeError, OSError):  # no pidfds here, or already reaped
            self._fd = os.pidfd_open(pid)

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

    def signal(self, sig: signal.Signals) -> bool:
        """Signal its process group while it runs; False if it has ended."""
        killpg = getattr(os, "killpg", None)  # POSIX only
        if killpg is None or self.exited():
            return False
        try:
            killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    async def stop(self, grace: float = KILL_GRACE) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds; returns once it has ended (or after a
        further second if even SIGKILL does not end it)."""
        if self.signal(signal.SIGTERM) and not await self._ended_within(grace):
            self.signal(signal.SIGKILL)
            await self._ended_within(1.0)
        self.close()

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

        loop.add_reader(fd, readable)
        try:
            await asyncio.wait_for(ended, seconds)
        except TimeoutError:
            pass
        finally:
            loop.remove_reader(fd)
        return self.exited()

    def stop_soon(self, grace: float = KILL_GRACE) -> None:
        """:meth:`stop` without waiting (for code that cannot await): the SIGKILL, if needed,
        comes from a timer thread, so it does not depend on any event loop."""
        if not self.signal(signal.SIGTERM):
            self.close()
            return

        def kill() -> None:
            self.signal(signal.SIGKILL)
            self.close()

        timer = threading.Timer(grace, kill)
        timer.daemon = True
        timer.start()

    def close(self) -> None:
        """Forget the process: the handle never signals again (and releases its pidfd)."""
        with self._lock:
            fd, self._fd, self._closed = self._fd, None, True
        if fd is not None:
            os.close(fd)
