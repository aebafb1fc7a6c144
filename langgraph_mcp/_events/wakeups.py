"""Runs parked on a task, resumed when the task changes: no cron, and no poll where a server
pushes.

A call that parks its run on a task (``task_detach_after``) records where the run waits
(:mod:`langgraph_mcp._elicitation.parked`). :class:`WakeupLoop` reads those records from the
store every few seconds and, per server:

* asks the server to push the tasks' status (``subscriptions/listen`` with their ids,
  :mod:`langgraph_mcp._session.tasklisten`); a new listen is opened before the one it replaces is
  closed, so a status sent in between is read from either;
* looks at each park once with ``tasks/get`` when a listen first covers it, and at every park
  again whenever a listen is opened after one ended (a task may have changed while nobody
  listened);
* polls with ``tasks/get``, at the interval the server asked for (at least a second), the tasks
  the server did not acknowledge, every task of a server that speaks 2025-11-25, does not offer
  the notifications or refuses the listen, and, every five minutes, the acknowledged ones (a
  server may lose a subscription without saying so);
* and resumes the run (:data:`Resume`) once its task is not as it was when the run parked: ended,
  asking another question, or unknown to the server. The resumed run looks at the task itself
  (one ``tasks/get``): its result becomes the tool's, or it asks its question, or it parks again
  (a newer record, watched anew).

One wake at a time per record; a wake that cannot be done yet (the run is still parking, or busy,
or waits on a person) is tried again after a back-off that doubles to ten minutes. The value a
run is resumed with is marked as an answer to another question
(:data:`~langgraph_mcp._elicitation.answers.STALE`): were it ever given to a question the call
asks later in the same task (LangGraph gives a task's later interrupts a resume sent for its
first), the question is asked again, never answered by it.

Across processes and replicas one process watches at a time: the wake-ups hold a lease
(:class:`~langgraph_mcp._events.triggers._Lease`) like a trigger does. A resume happens only while
the run's thread shows the ``mcp_task`` interrupt of that tool call.
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

from langgraph_mcp._elicitation.answers import STALE
from langgraph_mcp._elicitation.parked import (
    Opened,
    ParkedTask,
    move_parked,
    parked_tasks,
    unrecord_parked,
)
from langgraph_mcp._events.triggers import _status
from langgraph_mcp._oauth.records import Sealer
from langgraph_mcp._session import ServerConnection
from langgraph_mcp._session.eventroutes import STREAM_BUFFER, StreamFrame
from langgraph_mcp._session.tasklisten import (
    acknowledged_tasks,
    listen_tasks,
    offers_task_notices,
    task_notice,
)
from langgraph_mcp._session.taskwire import TERMINAL, poll_seconds
from langgraph_mcp.errors import MCPError, MCPServerError
from langgraph_mcp.types._tasks import TASK_INTERRUPT_TYPE

__all__ = [
    "ACK_TIMEOUT",
    "SCAN_INTERVAL",
    "GraphResume",
    "Resume",
    "Resumed",
    "WakeupLoop",
    "api_resume",
    "wakeup_value",
]

logger = logging.getLogger("langgraph_mcp.tasks")

SCAN_INTERVAL = 2.0
"""Seconds between two reads of the parked-task records."""
ACK_TIMEOUT = 10.0
"""Seconds a listen waits for its acknowledgement before its tasks are polled instead."""
POLL_FLOOR = 1.0
"""The least seconds between two polls of a task nobody pushes."""
SAFETY_POLL = 300.0
"""Seconds between two looks at a task the server acknowledged (it may lose a subscription)."""
LISTEN_HEALTHY = 30.0
"""A listen that ends (or fails) sooner is followed by polling, for a back-off that doubles up to
:data:`LISTEN_BACKOFF_MAX`, before the next listen: a server that refuses or drops listens is
never asked in a loop."""
LISTEN_BACKOFF_MAX = 600.0
RETRY_FIRST = 2.0
"""Seconds before a wake that could not be done is tried again (doubling, up to
:data:`RETRY_MAX`)."""
RETRY_MAX = 600.0
RETRY_WAKE = 300.0
"""Seconds after which a run resumed for a record that is still there is looked at again (its
resume may have been lost with the process that ran it)."""
_TASK_NOT_FOUND = -32602
"""The error a server answers ``tasks/get`` with for a task it does not know."""

Resumed = Literal["resumed", "later", "gone"]
"""What a resume did: ``resumed``; ``later`` (the run cannot be resumed yet: it is still parking,
busy, or waits on a person); ``gone`` (nothing waits on the task any more: the record is
deleted)."""
Resume = Callable[[ParkedTask, str], Awaitable[Resumed]]
"""Resumes the run of a parked task whose task is now in the given status."""


def wakeup_value(status: str) -> dict[str, Any]:
    """The value a parked run is resumed with: the park ignores it, and any question of the call
    takes it for an answer to another question (so it asks its own)."""
    return {**STALE, "mcp_task_wakeup": status}


class WakeupLoop:
    """Watches the parked tasks recorded in ``store`` and resumes their runs (module docs).

    Args:
        connect: The connection of a server by name (its shared session).
        store: The store the runs record in, or a coroutine function giving it.
        sealer: Opens the records (the key they were sealed with).
        resume: Resumes a run (for a deployment: :func:`api_resume`).
        unwatchable: Why a server's tasks cannot be watched here (``None``: they can): a server
            not configured, or one whose sessions are each user's.
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
        unwatchable: Callable[[str], str | None] = lambda server: None,
        lease: Any = None,
        scan_interval: float = SCAN_INTERVAL,
    ) -> None:
        self._connect = connect
        self._store = store
        self._sealer = sealer
        self._resume = resume
        self._unwatchable = unwatchable
        self.lease = lease
        self.scan_interval = scan_interval
        self._servers: dict[str, _ServerWatch] = {}
        self._opened: Opened = {}
        self._warned: set[str] = set()
        self._unopened = 0
        self.resumed = 0
        """Runs resumed so far."""

    async def store(self) -> BaseStore:
        return self._store if isinstance(self._store, BaseStore) else await self._store()

    async def run(self) -> None:
        """Watch until cancelled (holding the lease, when there is one)."""
        pause = 1.0
        while True:
            began = time.monotonic()
            try:
                if self.lease is None:
                    await self._watch()
                else:
                    await self.lease.hold_while(self._watch)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.warning("task wake-ups stopped (%s); again in %.0f s", type(exc).__name__, pause)
            finally:
                await self._stop_servers()
            if time.monotonic() - began > 60.0:
                pause = 1.0  # it ran a while: a new failure starts the back-off again
            await asyncio.sleep(pause)
            pause = min(pause * 2, 60.0)

    async def aclose(self) -> None:
        await self._stop_servers()
        closing = getattr(self._resume, "aclose", None)
        if closing is not None:
            await closing()
        if self.lease is not None:
            await self.lease.release()

    async def _stop_servers(self) -> None:
        servers, self._servers = self._servers, {}
        for watch in servers.values():
            await watch.stop()

    async def _watch(self) -> None:
        store = await self.store()
        while True:
            records = await parked_tasks(store, self._sealer, self._opened)
            self._say_unopened()
            by_server: dict[str, dict[str, ParkedTask]] = {}
            for key, record in records.items():
                if await move_parked(store, self._sealer, key, record):
                    continue  # sealed again under the newest key: read at the next scan
                by_server.setdefault(record.server, {})[key] = record
            for server in list(self._servers):
                if server not in by_server:
                    await self._servers.pop(server).stop()
            for server, records_of in by_server.items():
                why = self._unwatchable(server)
                if why is not None:
                    if server not in self._warned:
                        self._warned.add(server)
                        logger.warning(
                            "runs parked on tasks of MCP server %r are not woken here: %s; they wait"
                            " to be resumed",
                            server,
                            why,
                        )
                    continue
                watch = self._servers.get(server)
                if watch is None:
                    watch = self._servers[server] = _ServerWatch(self, server)
                watch.update(records_of)
            await asyncio.sleep(self.scan_interval)

    def _say_unopened(self) -> None:
        unopened = sum(record is None for _at, record in self._opened.values())
        if unopened > self._unopened:
            logger.warning(
                "%d parked-task records do not open with the key (one the graphs sealed them with"
                " is missing): their runs are not woken",
                unopened,
            )
        self._unopened = unopened

    async def wake(self, parked: ParkedTask, status: str) -> Resumed | None:
        """Resume ``parked``'s run (its task is now ``status``); ``None``: it failed (tried again)."""
        try:
            outcome = await self._resume(parked, status)
        except Exception as exc:
            logger.warning(
                "a run parked on a task of %r could not be resumed (%s); tried again",
                parked.server,
                type(exc).__name__,
            )
            return None
        logger.debug("parked task of %r (%s) is %s: %s", parked.server, parked.tool_call_id, status, outcome)
        if outcome == "gone":
            try:
                await unrecord_parked(await self.store(), self._sealer, parked.server, parked.task_id)
            except Exception as exc:
                logger.warning("a parked task's record could not be deleted (%s)", type(exc).__name__)
                return None
        elif outcome == "resumed":
            self.resumed += 1
        return outcome


class _ServerWatch:
    """One server's parked tasks: a listen for their status, polls for the rest."""

    def __init__(self, wakeups: WakeupLoop, server: str) -> None:
        self.wakeups = wakeups
        self.server = server
        self.parked: dict[str, ParkedTask] = {}
        """The records watched now, by store key."""
        self.woken: dict[str, tuple[float, float]] = {}
        """Records whose run was resumed: their ``parked_at`` and when they were woken."""
        self.retry: dict[str, tuple[str, float, float]] = {}
        """Wakes to try again: the task's status, when, and the back-off that led there."""
        self._waking: set[str] = set()
        """Records being woken now (one wake at a time each)."""
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._spawned: set[asyncio.Task[None]] = set()
        self._looked: set[tuple[str, float]] = set()
        """Parks (task id, ``parked_at``) looked at since a listen stream last ended."""
        self._pause = 1.0
        """The back-off after a failure, or before listening again after a listen that ended
        soon (kept across restarts of the watch)."""
        self._listen_after = 0.0

    def update(self, parked: dict[str, ParkedTask]) -> None:
        now = time.monotonic()
        for key in list(self.woken):
            at, when = self.woken[key]
            record = parked.get(key)
            if record is None or record.parked_at != at or now - when > RETRY_WAKE:
                del self.woken[key]  # gone, parked anew, or woken long ago without effect
                if record is not None:
                    # Woken long ago and still parked (the resumed run was lost with its
                    # process): looked at again as soon as a listen covers it.
                    self._looked.discard((record.task_id, record.parked_at))
        watched = {key: record for key, record in parked.items() if key not in self.woken}
        for key in [key for key in self.retry if key not in watched or watched[key] != self.parked.get(key)]:
            del self.retry[key]  # gone, or parked anew: watched afresh
        # Only a task not covered yet, or parked anew, needs a new listen (a task that left is
        # ignored where its notices arrive).
        if any(key not in self.parked or record != self.parked[key] for key, record in watched.items()):
            self._changed.set()
        self.parked = watched
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())
        for key, (status, due, _delay) in list(self.retry.items()):
            if now >= due:
                self._spawn_wake(key, status)

    async def stop(self) -> None:
        spawned = list(self._spawned)
        for wake in spawned:
            wake.cancel()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError, Exception):
                await task
        await asyncio.gather(*spawned, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                connection = self.wakeups._connect(self.server)
                await connection.connect()
                if offers_task_notices(connection) and time.monotonic() >= self._listen_after:
                    began = time.monotonic()
                    await self._listen(connection)
                    if time.monotonic() - began < LISTEN_HEALTHY:
                        self._listen_after = time.monotonic() + self._pause  # polled meanwhile
                        self._pause = min(self._pause * 2, LISTEN_BACKOFF_MAX)
                    else:
                        self._pause = 1.0
                else:
                    until = self._listen_after if offers_task_notices(connection) else None
                    await self._poll(connection, None, until=until)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # an MCP failure, or anything else: never silent, never a loop
                what = str(exc) if isinstance(exc, MCPError) else type(exc).__name__
                logger.warning(
                    "parked tasks of %r: %s; watched again in %.0f s", self.server, what, self._pause
                )
                await asyncio.sleep(self._pause)
                self._pause = min(self._pause * 2, LISTEN_BACKOFF_MAX)

    async def _listen(self, connection: ServerConnection) -> None:
        """Listen for the status of the tasks parked now, anew whenever they change, until the
        stream ends or fails (module docs)."""
        frames: asyncio.Queue[tuple[str, StreamFrame]] = asyncio.Queue(STREAM_BUFFER)
        open_listens: dict[str, _OpenListen] = {}
        current: str | None = None
        covered: dict[str, str] = {}  # task id -> key, of the current listen
        pollers: list[asyncio.Task[None]] = []
        changed = asyncio.ensure_future(self._changed.wait())
        secrets = _Secrets(connection)  # the task ids are secrets: masked in logs while in flight
        try:
            while True:
                wanted = {record.task_id: key for key, record in self.parked.items()}
                anew = current is None or not set(wanted) <= set(covered) or self._reparked(wanted)
                if not anew:
                    covered.update(wanted)  # a record kept under a new name: its notices find it
                    if changed.done():  # a change that needs no new listen: wait for the next
                        self._changed.clear()
                        changed = asyncio.ensure_future(self._changed.wait())
                if anew:
                    self._changed.clear()
                    changed.cancel()
                    changed = asyncio.ensure_future(self._changed.wait())
                    for poller in pollers:
                        poller.cancel()
                    pollers = []
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
                        return
                    for old in [other for other in open_listens if other != lid]:
                        await open_listens.pop(old).close()
                    current, covered = lid, wanted
                    secrets.keep(wanted)
                    for task_id, key in wanted.items():
                        record = self.parked.get(key)
                        if record is not None and (task_id, record.parked_at) not in self._looked:
                            self._looked.add((task_id, record.parked_at))
                            await self._look(connection, key)
                    silent = set(wanted) - acknowledged
                    pollers = [
                        asyncio.ensure_future(self._poll(connection, silent)),
                        asyncio.ensure_future(self._poll(connection, acknowledged, every=SAFETY_POLL)),
                    ]
                coming = asyncio.ensure_future(frames.get())
                done, _ = await asyncio.wait({coming, changed}, return_when=asyncio.FIRST_COMPLETED)
                if coming not in done:
                    coming.cancel()
                    continue  # the parked tasks changed: listen anew
                lid, frame = coming.result()
                if frame.kind == "ended" and lid == current:
                    return
                self._notice(frame, covered)
        except MCPError as exc:
            logger.info("parked tasks of %r: the listen failed (%s); polled meanwhile", self.server, exc)
        finally:
            self._looked.clear()  # whatever changed while no listen was open is looked at
            changed.cancel()
            for poller in pollers:
                poller.cancel()
            for listen in open_listens.values():
                await listen.close()
            secrets.release()

    def _reparked(self, wanted: dict[str, str]) -> bool:
        """Was a task of ``wanted`` parked anew since a listen covered it?"""
        looked = self._looked
        for task_id, key in wanted.items():
            record = self.parked.get(key)
            if record is not None and (task_id, record.parked_at) not in looked:
                return True
        return False

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
            self._notice(frame, by_id)
        return set()

    def _notice(self, frame: StreamFrame, by_id: dict[str, str]) -> None:
        notice = task_notice(frame) if frame.kind == "task" else None
        if notice is not None and notice.task_id in by_id:
            self._consider(by_id[notice.task_id], notice.status, notice.questions)

    async def _poll(self, connection: ServerConnection, task_ids: set[str] | None, **when: Any) -> None:
        """Poll ``task_ids`` (``None``: every task parked now, as records come and go) until
        cancelled, or until ``until`` (``time.monotonic()``); every ``every`` seconds, or at the
        least interval their server asked for."""
        every: float | None = when.get("every")
        until: float | None = when.get("until")
        if task_ids is not None and not task_ids:
            await asyncio.Event().wait()
        while until is None or time.monotonic() < until:
            wait = every if every is not None else 30.0
            if every is not None:
                await asyncio.sleep(every)  # looked at when the listen opened
            for key, record in list(self.parked.items()):
                if task_ids is None or record.task_id in task_ids:
                    await self._look(connection, key)
                    if every is None:
                        wait = min(wait, max(poll_seconds(record.poll_interval_ms), POLL_FLOOR))
            if every is None:
                await asyncio.sleep(wait if until is None else max(min(wait, until - time.monotonic()), 0.0))

    async def _look(self, connection: ServerConnection, key: str) -> None:
        record = self.parked.get(key)
        if record is None:
            return
        try:
            with connection.redact.holding((record.task_id,)):
                state = await connection.get_task(record.task_id, timeout=30.0)
        except MCPServerError as exc:
            if exc.code == _TASK_NOT_FOUND:
                self._consider(key, "gone", None)  # the run learns why when it looks
            return
        except MCPError:
            return  # looked at again at the next poll, or when a listen opens anew
        except Exception as exc:
            logger.warning("parked tasks of %r: a look failed (%s)", self.server, type(exc).__name__)
            return
        self._consider(key, state.status, frozenset(state.input_requests or ()))

    def _consider(self, key: str, status: str, questions: frozenset[str] | None) -> None:
        record = self.parked.get(key)
        if record is None or key in self.woken:
            return
        waiting = self.retry.get(key)
        if waiting is not None and waiting[0] == status and time.monotonic() < waiting[1]:
            return  # tried already for this status: again when its back-off is over
        asks_more = (
            questions is not None and status == "input_required" and questions != set(record.questions)
        )
        if status == record.status and status not in TERMINAL and not asks_more:
            return  # still as it was when the run parked
        self._spawn_wake(key, status)

    def _spawn_wake(self, key: str, status: str) -> None:
        if key in self._waking or key in self.woken:
            return  # one wake at a time
        self._waking.add(key)
        task = asyncio.ensure_future(self._wake(key, status))
        self._spawned.add(task)
        task.add_done_callback(self._spawned.discard)

    async def _wake(self, key: str, status: str) -> None:
        try:
            record = self.parked.get(key)
            if record is None:
                return
            outcome = await self.wakeups.wake(record, status)
            if outcome in ("resumed", "gone"):
                self.retry.pop(key, None)
                self.woken[key] = (record.parked_at, time.monotonic())
                if self.parked.get(key) is record:
                    del self.parked[key]
            else:
                delay = min(self.retry.get(key, ("", 0.0, RETRY_FIRST / 2))[2] * 2, RETRY_MAX)
                self.retry[key] = (status, time.monotonic() + delay, delay)
        finally:
            self._waking.discard(key)


class _OpenListen:
    """One open ``subscriptions/listen``, its frames copied into a queue shared by the listens of
    a server (tagged with its id), so that two may be read at once while one replaces the other.
    The queue is bounded: a reader waits, its stream's own buffer fills, and a stream that falls
    that far behind is ended (the listen is opened anew and each task looked at)."""

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
                    await queue.put((lid, frame))
            except (anyio.ClosedResourceError, anyio.EndOfStream):
                pass
            await queue.put((lid, StreamFrame("ended")))

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
            and value.get("tool_name") == parked.tool_name
            and value.get("tool_call_id") == parked.tool_call_id
        ):
            interrupt_id = item.get("id") or item.get("interrupt_id")
            if isinstance(interrupt_id, str):
                return interrupt_id
    return None


def api_resume(client: Any) -> Resume:
    """Resume runs through a LangGraph server's API (``langgraph_sdk`` async ``client``): a run is
    resumed (``Command(resume={interrupt_id: wakeup_value(status)})``, on the assistant that
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
                command={"resume": {interrupt_id: wakeup_value(status)}},
                multitask_strategy="reject",
                metadata={"mcp_task_wakeup": parked.tool_call_id or parked.tool_name},
            )
        except Exception as exc:
            if _status(exc) == 409:
                return "later"  # a run is on the thread now
            if _status(exc) == 404:
                return "gone"  # the thread or the assistant is gone
            raise
        return "resumed"

    return resume


class GraphResume:
    """Resumes runs of a compiled ``graph`` in this process (it has a checkpointer), each in a
    task of its own, one run per thread at a time, only while its thread shows that tool call's
    ``mcp_task`` interrupt. For a script or a notebook; a deployment resumes through its API
    (:func:`api_resume`). :meth:`aclose` waits a little for the runs it started, then cancels
    them (a cancelled run is resumed again from its checkpoint: the task is looked at anew)."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self._running: dict[str, asyncio.Task[Any] | None] = {}

    async def __call__(self, parked: ParkedTask, status: str) -> Resumed:
        from langgraph.types import Command

        if parked.thread_id in self._running:
            return "later"  # one run per thread: the next look comes after this one
        self._running[parked.thread_id] = None  # claimed before the first await
        started = False
        try:
            config: dict[str, Any] = {"configurable": {"thread_id": parked.thread_id}}
            snapshot = await self.graph.aget_state(config)
            interrupts = [{"id": i.id, "value": i.value} for i in snapshot.interrupts]
            interrupt_id = _interrupt_of({"interrupts": interrupts}, parked)
            if interrupt_id is None:
                return "later" if snapshot.next else "gone"
            command: Command[Any] = Command(resume={interrupt_id: wakeup_value(status)})
            run = asyncio.ensure_future(self.graph.ainvoke(command, config))
            self._running[parked.thread_id] = run
            run.add_done_callback(self._finished(parked))
            started = True
            return "resumed"
        finally:
            if not started:
                self._running.pop(parked.thread_id, None)

    def _finished(self, parked: ParkedTask) -> Callable[[asyncio.Task[Any]], None]:
        def done(task: asyncio.Task[Any]) -> None:
            self._running.pop(parked.thread_id, None)
            if not task.cancelled() and task.exception() is not None:
                logger.warning(
                    "a run resumed for a task of %r failed (%s)",
                    parked.server,
                    type(task.exception()).__name__,
                )

        return done

    async def aclose(self, wait: float = 10.0) -> None:
        runs = [run for run in self._running.values() if run is not None]
        if not runs:
            return
        _done, pending = await asyncio.wait(runs, timeout=wait)
        for run in pending:
            run.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
