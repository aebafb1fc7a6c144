"""Runs parked on a task, resumed when the task changes: no cron, and no poll where a server
pushes.

A call that parks its run on a task (``task_detach_after``) records where the run waits
(:mod:`langgraph_mcp._elicitation.parked`). :class:`WakeupLoop` reads those records from the
store every few seconds and, per server:

* asks the server to push the tasks' status (``subscriptions/listen`` with their ids,
  :mod:`langgraph_mcp._session.tasklisten`); a task it acknowledges is not polled;
* looks at each task once with ``tasks/get`` when the listen opens, and again whenever it is
  opened anew (a task may have changed before anybody listened, or while the stream was down);
* polls with ``tasks/get``, at the interval the server asked for (at least a second), the tasks
  the server did not acknowledge, and every task of a server that speaks 2025-11-25 or does not
  offer the notifications;
* and resumes the run (:data:`Resume`) once the task's status is not the one it parked with:
  ended, asking for input, or gone from the server. The resumed run looks at the task itself
  (one ``tasks/get``): its result becomes the tool's, or it asks its question, or it parks again
  (a newer record, watched anew).

Across processes and replicas one process watches at a time: the wake-ups hold a lease
(:class:`~langgraph_mcp._events.triggers._Lease`) like a trigger does. A resume is idempotent: it
resumes only a run whose thread still shows the ``mcp_task`` interrupt of that tool call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from typing import Any, Literal

import anyio
from langgraph.store.base import BaseStore

from langgraph_mcp._elicitation.parked import ParkedTask, parked_tasks, unrecord_parked
from langgraph_mcp._oauth.records import Sealer
from langgraph_mcp._session import ServerConnection
from langgraph_mcp._session.eventroutes import StreamFrame
from langgraph_mcp._session.tasklisten import (
    acknowledged_tasks,
    listen_tasks,
    offers_task_notices,
    task_notice,
)
from langgraph_mcp._session.taskwire import TERMINAL, poll_seconds
from langgraph_mcp.errors import MCPError, MCPServerError
from langgraph_mcp.types._tasks import TASK_INTERRUPT_TYPE

__all__ = ["ACK_TIMEOUT", "SCAN_INTERVAL", "Resume", "Resumed", "WakeupLoop", "api_resume", "graph_resume"]

logger = logging.getLogger("langgraph_mcp.tasks")

SCAN_INTERVAL = 2.0
"""Seconds between two reads of the parked-task records."""
ACK_TIMEOUT = 10.0
"""Seconds a listen waits for its acknowledgement before its tasks are polled instead."""
POLL_FLOOR = 1.0
"""The least seconds between two polls of a task nobody pushes."""
RETRY_WAKE = 300.0
"""Seconds after which a run resumed for a record that is still there is looked at again (its
resume may have been lost with the process that ran it)."""

Resumed = Literal["resumed", "later", "gone"]
"""What a resume did: ``resumed``; ``later`` (the run cannot be resumed yet: it is still parking,
or busy); ``gone`` (nothing waits on the task any more: the record is deleted)."""
Resume = Callable[[ParkedTask, str], Awaitable[Resumed]]
"""Resumes the run of a parked task whose task is now in the given status."""


class WakeupLoop:
    """Watches the parked tasks recorded in ``store`` and resumes their runs (module docs).

    Args:
        connect: The connection of a server by name (its shared session).
        store: The store the runs record in, or a coroutine function giving it.
        sealer: Opens the records (the key they were sealed with).
        resume: Resumes a run (for a deployment: :func:`api_resume`).
        lease: Held while watching, when several processes run the wake-ups (``None``: one).
        scan_interval: Seconds between two reads of the records.
    """

    def __init__(
        self,
        connect: Callable[[str], ServerConnection],
        store: BaseStore | Callable[[], Awaitable[BaseStore]],
        sealer: Sealer,
        resume: Resume,
        *,
        lease: Any = None,
        scan_interval: float = SCAN_INTERVAL,
    ) -> None:
        self._connect = connect
        self._store = store
        self._sealer = sealer
        self._resume = resume
        self.lease = lease
        self.scan_interval = scan_interval
        self._servers: dict[str, _ServerWatch] = {}
        self.resumed = 0
        """Runs resumed so far."""

    async def store(self) -> BaseStore:
        return self._store if isinstance(self._store, BaseStore) else await self._store()

    async def run(self) -> None:
        """Watch until cancelled (holding the lease, when there is one)."""
        pause = 1.0
        while True:
            try:
                if self.lease is None:
                    await self._watch()
                else:
                    await self._leased()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.warning("task wake-ups stopped (%s); again in %.0f s", type(exc).__name__, pause)
            finally:
                await self._stop_servers()
            await asyncio.sleep(pause)
            pause = min(pause * 2, 60.0)

    async def _leased(self) -> None:
        if not self.lease.valid():
            await self.lease.acquire()
        watching = asyncio.ensure_future(self._watch())
        keeping = asyncio.ensure_future(self.lease.keep())
        try:
            await asyncio.wait({watching, keeping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (watching, keeping):
                task.cancel()
            ended = await asyncio.gather(keeping, watching, return_exceptions=True)
        for outcome in ended:
            if isinstance(outcome, Exception):
                raise outcome

    async def aclose(self) -> None:
        await self._stop_servers()
        if self.lease is not None:
            await self.lease.release()

    async def _stop_servers(self) -> None:
        servers, self._servers = self._servers, {}
        for watch in servers.values():
            await watch.stop()

    async def _watch(self) -> None:
        store = await self.store()
        while True:
            records = await parked_tasks(store, self._sealer)
            by_server: dict[str, dict[str, ParkedTask]] = {}
            for key, record in records.items():
                by_server.setdefault(record.server, {})[key] = record
            for server in list(self._servers):
                if server not in by_server:
                    await self._servers.pop(server).stop()
            for server, records_of in by_server.items():
                watch = self._servers.get(server)
                if watch is None:
                    watch = self._servers[server] = _ServerWatch(self, server)
                watch.update(records_of)
            await asyncio.sleep(self.scan_interval)

    async def wake(self, key: str, parked: ParkedTask, status: str) -> bool:
        """Resume ``parked``'s run (its task is now ``status``): whether it is done with."""
        try:
            outcome = await self._resume(parked, status)
        except Exception as exc:
            logger.warning(
                "a run parked on a task of %r could not be resumed (%s); tried again",
                parked.server,
                type(exc).__name__,
            )
            return False
        logger.debug("parked task of %r (%s) is %s: %s", parked.server, parked.tool_call_id, status, outcome)
        if outcome == "gone":
            await unrecord_parked(await self.store(), self._sealer, parked.server, parked.task_id)
            return True
        if outcome == "resumed":
            self.resumed += 1
            return True
        return False


class _ServerWatch:
    """One server's parked tasks: a listen for their status, polls for the rest."""

    def __init__(self, wakeups: WakeupLoop, server: str) -> None:
        self.wakeups = wakeups
        self.server = server
        self.parked: dict[str, ParkedTask] = {}
        self.woken: dict[str, tuple[float, float]] = {}
        """Records whose run was resumed: their ``parked_at`` and when they were woken."""
        self.pending: dict[str, str] = {}
        """Records to wake whose run could not be resumed yet, with their task's status."""
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._retries: set[asyncio.Task[None]] = set()
        self._looked: set[tuple[str, float]] = set()
        """Parks (task id, ``parked_at``) looked at since a listen stream last ended."""

    def update(self, parked: dict[str, ParkedTask]) -> None:
        now = time.monotonic()
        for key in list(self.woken):
            at, when = self.woken[key]
            record = parked.get(key)
            if record is None or record.parked_at != at or now - when > RETRY_WAKE:
                del self.woken[key]  # gone, parked anew, or woken long ago without effect
        watched = {key: record for key, record in parked.items() if key not in self.woken}
        for key in list(self.pending):
            if key not in watched:
                del self.pending[key]
        if set(watched) != set(self.parked) or any(
            watched[key].parked_at != self.parked[key].parked_at for key in watched
        ):
            self._changed.set()
        self.parked = watched
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())
        for key, status in list(self.pending.items()):
            retry = asyncio.ensure_future(self._consider(key, status))
            self._retries.add(retry)
            retry.add_done_callback(self._retries.discard)

    async def stop(self) -> None:
        for retry in list(self._retries):
            retry.cancel()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError, Exception):
                await task

    async def _run(self) -> None:
        retry = 1.0
        while True:
            try:
                connection = self.wakeups._connect(self.server)
                await connection.connect()
                if offers_task_notices(connection):
                    await self._listen(connection)
                else:
                    await self._poll(connection, None)
                retry = 1.0
            except asyncio.CancelledError:
                raise
            except MCPError as exc:
                logger.warning("parked tasks of %r: %s; watched again in %.0f s", self.server, exc, retry)
                await asyncio.sleep(retry)
                retry = min(retry * 2, 60.0)

    async def _listen(self, connection: ServerConnection) -> None:
        """Listen for the status of the tasks parked now, anew whenever they change, until the
        stream ends. A new listen is opened before the one it replaces is closed (a status sent
        between the two is read from either), and a task is looked at once (``tasks/get``) when a
        listen first covers its park: it may have changed before anybody listened."""
        frames: asyncio.Queue[tuple[str, StreamFrame]] = asyncio.Queue()
        open_listens: dict[str, _OpenListen] = {}
        current: str | None = None
        covered: dict[str, str] = {}  # task id -> key, of the current listen
        polling: asyncio.Task[None] | None = None
        changed = asyncio.ensure_future(self._changed.wait())
        # The task ids are secrets (bearer tokens on some servers): masked in every log record
        # while they are in flight, as while a call follows its task.
        secrets = _Secrets(connection)
        try:
            while True:
                wanted = {record.task_id: key for key, record in self.parked.items()}
                # A task no longer parked needs no new listen (its notices are ignored): only a
                # task not covered yet, or parked anew, does.
                if current is None or not set(wanted) <= set(covered) or self._reparked(wanted):
                    self._changed.clear()
                    changed.cancel()
                    changed = asyncio.ensure_future(self._changed.wait())
                    if polling is not None:
                        polling.cancel()
                        polling = None
                    if not wanted:
                        for lid in list(open_listens):
                            await open_listens.pop(lid).close()
                        current, covered = None, {}
                        await changed
                        continue
                    secrets.hold(wanted)
                    lid = f"{len(open_listens)}-{time.monotonic()}"
                    open_listens[lid] = await _OpenListen.start(connection, wanted, lid, frames)
                    acknowledged = await self._acknowledged(lid, frames, {**covered, **wanted})
                    if acknowledged is None:  # the new listen ended at once
                        await open_listens.pop(lid).close()
                        self._looked.clear()
                        return
                    for old in [other for other in open_listens if other != lid]:
                        await open_listens.pop(old).close()
                    current, covered = lid, wanted
                    secrets.keep(wanted)
                    for task_id, key in wanted.items():
                        stamp = (task_id, self.parked[key].parked_at)
                        if stamp not in self._looked:
                            self._looked.add(stamp)
                            await self._look(connection, key)
                    unacknowledged = set(wanted) - acknowledged
                    if unacknowledged:
                        polling = asyncio.ensure_future(self._poll(connection, unacknowledged))
                coming = asyncio.ensure_future(frames.get())
                done, _ = await asyncio.wait({coming, changed}, return_when=asyncio.FIRST_COMPLETED)
                if coming not in done:
                    coming.cancel()
                    continue  # the parked tasks changed: listen anew
                lid, frame = coming.result()
                if frame.kind == "ended" and lid == current:
                    self._looked.clear()  # the stream is down: what changed meanwhile is looked at
                    return
                await self._notice(frame, covered)
        finally:
            changed.cancel()
            if polling is not None:
                polling.cancel()
            for listen in open_listens.values():
                await listen.close()
            secrets.release()

    def _reparked(self, wanted: dict[str, str]) -> bool:
        """Was a task of ``wanted`` parked anew since a listen covered it?"""
        return any(
            (task_id, self.parked[key].parked_at) not in self._looked for task_id, key in wanted.items()
        )

    async def _acknowledged(
        self, lid: str, frames: asyncio.Queue[tuple[str, StreamFrame]], by_id: dict[str, str]
    ) -> set[str] | None:
        """Wait for listen ``lid``'s acknowledgement (the task ids it agreed to; none after
        :data:`ACK_TIMEOUT`), handling the other listens' notices meanwhile; ``None``: it ended."""
        deadline = time.monotonic() + ACK_TIMEOUT
        while (left := deadline - time.monotonic()) > 0:
            try:
                got, frame = await asyncio.wait_for(frames.get(), left)
            except TimeoutError:
                break
            if got == lid and frame.kind == "acknowledged":
                return acknowledged_tasks(frame) & set(by_id)
            if got == lid and frame.kind == "ended":
                return None
            await self._notice(frame, by_id)
        return set()

    async def _notice(self, frame: StreamFrame, by_id: dict[str, str]) -> None:
        notice = task_notice(frame) if frame.kind == "task" else None
        if notice is not None and notice.task_id in by_id:
            await self._consider(by_id[notice.task_id], notice.status)

    async def _poll(self, connection: ServerConnection, task_ids: set[str] | None) -> None:
        """Poll ``task_ids`` (``None``: every task parked now, as records come and go) until
        cancelled."""
        if task_ids is not None and not task_ids:
            await asyncio.Event().wait()
        while True:
            wait = 30.0
            for key, record in list(self.parked.items()):
                if task_ids is None or record.task_id in task_ids:
                    await self._look(connection, key)
                    wait = min(wait, max(poll_seconds(record.poll_interval_ms), POLL_FLOOR))
            await asyncio.sleep(wait)

    async def _look(self, connection: ServerConnection, key: str) -> None:
        record = self.parked.get(key)
        if record is None:
            return
        try:
            with connection.redact.holding((record.task_id,)):
                state = await connection.get_task(record.task_id, timeout=30.0)
        except MCPServerError:
            status = "gone"  # the server no longer knows it: the run learns why when it looks
        else:
            status = state.status
        await self._consider(key, status)

    async def _consider(self, key: str, status: str) -> None:
        record = self.parked.get(key)
        if record is None or key in self.woken:
            return
        if status == record.status and status not in TERMINAL:
            return  # still as it was when the run parked
        if await self.wakeups.wake(key, record, status):
            self.pending.pop(key, None)
            self.woken[key] = (record.parked_at, time.monotonic())
            self.parked.pop(key, None)
        else:
            self.pending[key] = status  # tried again at the next scan


async def _next(frames: Any) -> StreamFrame | None:
    try:
        frame: StreamFrame = await frames.receive()
    except Exception:  # closed or ended
        return None
    return frame


def _interrupt_of(state: Mapping[str, Any], parked: ParkedTask) -> str | None:
    """The id of the ``mcp_task`` interrupt of ``parked``'s tool call in a thread state, if the
    thread shows one."""
    found: list[Any] = list(state.get("interrupts") or [])
    for task in state.get("tasks") or []:
        if isinstance(task, Mapping):
            found.extend(task.get("interrupts") or [])
    for item in found:
        value = item.get("value") if isinstance(item, Mapping) else None
        if (
            isinstance(value, Mapping)
            and value.get("type") == TASK_INTERRUPT_TYPE
            and value.get("server") == parked.server
            and value.get("tool_call_id") == parked.tool_call_id
        ):
            interrupt_id = item.get("id") or item.get("interrupt_id")
            if isinstance(interrupt_id, str):
                return interrupt_id
    return None


def api_resume(client: Any) -> Resume:
    """Resume runs through a LangGraph server's API (``langgraph_sdk`` async ``client``): a run is
    resumed (``Command(resume={interrupt_id: {"task_status": status}})``, on the assistant that
    parked it) only while its thread shows that tool call's ``mcp_task`` interrupt."""

    async def resume(parked: ParkedTask, status: str) -> Resumed:
        try:
            state = await client.threads.get_state(parked.thread_id)
        except Exception as exc:
            if _status(exc) == 404:
                return "gone"  # the thread was deleted
            raise
        interrupt_id = _interrupt_of(state, parked)
        if interrupt_id is None:
            thread = await client.threads.get(parked.thread_id)
            busy = isinstance(thread, Mapping) and thread.get("status") in ("busy", "interrupted")
            return "later" if busy else "gone"
        if parked.assistant_id is None:
            logger.warning("a run parked on a task of %r has no assistant to resume it on", parked.server)
            return "gone"
        try:
            await client.runs.create(
                parked.thread_id,
                parked.assistant_id,
                command={"resume": {interrupt_id: {"task_status": status}}},
                multitask_strategy="reject",
                metadata={"mcp_task_wakeup": parked.tool_call_id or parked.tool_name},
            )
        except Exception as exc:
            if _status(exc) == 409:
                return "later"  # a run is on the thread now
            raise
        return "resumed"

    return resume


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def graph_resume(graph: Any) -> Resume:
    """Resume runs of a compiled ``graph`` in this process (it has a checkpointer): a run is
    resumed, in a task of its own, only while its thread shows that tool call's ``mcp_task``
    interrupt. For a script or a notebook; a deployment resumes through its API
    (:func:`api_resume`)."""
    running: _Running = {}

    async def resume(parked: ParkedTask, status: str) -> Resumed:
        from langgraph.types import Command

        if parked.thread_id in running:
            return "later"  # one run per thread: the next look comes after this one
        config: dict[str, Any] = {"configurable": {"thread_id": parked.thread_id}}
        snapshot = await graph.aget_state(config)
        interrupts = [{"id": i.id, "value": i.value} for i in snapshot.interrupts]
        interrupt_id = _interrupt_of({"interrupts": interrupts}, parked)
        if interrupt_id is None:
            return "later" if snapshot.next else "gone"
        run = asyncio.ensure_future(
            graph.ainvoke(Command(resume={interrupt_id: {"task_status": status}}), config)
        )
        running[parked.thread_id] = run
        run.add_done_callback(_finished(running, parked))
        return "resumed"

    return resume


_Running = dict[str, asyncio.Task[Any]]


def _finished(running: _Running, parked: ParkedTask) -> Callable[[asyncio.Task[Any]], None]:
    def done(task: asyncio.Task[Any]) -> None:
        running.pop(parked.thread_id, None)
        if not task.cancelled() and task.exception() is not None:
            logger.warning(
                "a run resumed for a task of %r failed (%s)", parked.server, type(task.exception()).__name__
            )

    return done


class _OpenListen:
    """One open ``subscriptions/listen``, its frames copied into a queue shared by the listens of
    a server (tagged with its id), so that two may be read at once while one replaces the other."""

    def __init__(self, context: Any, reader: asyncio.Task[None]) -> None:
        self._context = context
        self._reader = reader

    @classmethod
    async def start(
        cls,
        connection: ServerConnection,
        task_ids: Mapping[str, str],
        lid: str,
        queue: asyncio.Queue[tuple[str, StreamFrame]],
    ) -> _OpenListen:
        context = listen_tasks(connection, list(task_ids))
        stream = await context.__aenter__()

        async def read() -> None:
            try:
                async for frame in stream:
                    queue.put_nowait((lid, frame))
            except (anyio.ClosedResourceError, anyio.EndOfStream):
                pass
            queue.put_nowait((lid, StreamFrame("ended")))

        return cls(context, asyncio.ensure_future(read()))

    async def close(self) -> None:
        self._reader.cancel()
        with suppress(asyncio.CancelledError):
            await self._reader
        await self._context.__aexit__(None, None, None)


class _Secrets:
    """The task ids a server's listens carry, masked in log records while any listen has them."""

    def __init__(self, connection: ServerConnection) -> None:
        self._redact = connection.redact
        self._held: dict[frozenset[str], Any] = {}

    def hold(self, task_ids: Mapping[str, str]) -> None:
        ids = frozenset(task_ids)
        if ids not in self._held:
            block = self._redact.holding(ids)
            block.__enter__()
            self._held[ids] = block

    def keep(self, task_ids: Mapping[str, str]) -> None:
        """Only ``task_ids`` are in flight now: the others are let go."""
        ids = frozenset(task_ids)
        for other in [held for held in self._held if held != ids]:
            self._held.pop(other).__exit__(None, None, None)

    def release(self) -> None:
        for block in self._held.values():
            block.__exit__(None, None, None)
        self._held.clear()
