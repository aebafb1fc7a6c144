"""Runs parked on a task, recorded in the graph's store so that something can wake them.

A call that parks its run on a task (``task_detach_after``, :mod:`langgraph_mcp._elicitation.tasks`)
records where the run waits: the server, the task's id, the thread, the assistant and the tool
call. A deployment's :class:`~langgraph_mcp._events.wakeups.TaskWakeups` reads these records,
listens for the tasks' status (or polls them, for a server that sends none) and resumes the run
once its task changed. The call deletes its record when it ends (a result, or a failure).

The task id may be a bearer token on its server, so nothing readable is stored: each record is
sealed with the deployment's key (``LANGGRAPH_MCP_TASKS_KEY``: Fernet keys, comma-separated, the
newest first) and kept under a keyed digest of server and task id. Without a key nothing is
recorded, and a parked run waits to be resumed by whoever resumes it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from dataclasses import asdict, dataclass
from typing import Any

from langgraph.store.base import BaseStore

from langgraph_mcp._oauth.records import Sealer

__all__ = [
    "PARKED_MAX",
    "PARKED_NAMESPACE",
    "TASKS_KEY_ENV",
    "Opened",
    "ParkedTask",
    "move_parked",
    "parked_tasks",
    "record_parked",
    "sealer_from_env",
    "unrecord_parked",
]

logger = logging.getLogger("langgraph_mcp.tasks")

TASKS_KEY_ENV = "LANGGRAPH_MCP_TASKS_KEY"
"""The environment variable holding the key parked-task records are sealed with (one or more
Fernet keys, comma-separated, the newest first). Without it nothing is recorded."""
PARKED_NAMESPACE = ("langgraph_mcp", "parked_tasks")
"""Where the records are kept in the store."""
PARKED_MAX = 10_000
"""The most records read in one scan (a store holding more is read in part, the oldest first)."""
_PAGE = 500


@dataclass(frozen=True)
class ParkedTask:
    """Where a run waits on a task: what a wake-up needs to watch the task and resume the run."""

    server: str
    task_id: str
    thread_id: str
    assistant_id: str | None
    tool_name: str
    tool_call_id: str | None
    status: str
    """The task's status when the run parked."""
    poll_interval_ms: int
    parked_at: float
    """When the run parked (``time.time()``): a run that parks again writes a newer record."""
    questions: tuple[str, ...] = ()
    """The keys of the questions the task had out when the run parked (``input_required``): a
    new question wakes the run, though the status stays the same."""

    def __repr__(self) -> str:  # the task id is a secret
        return (
            f"ParkedTask(server={self.server!r}, thread_id={self.thread_id!r}, tool_name={self.tool_name!r},"
            f" tool_call_id={self.tool_call_id!r}, status={self.status!r})"
        )


def sealer_from_env() -> Sealer | None:
    """The sealer of :data:`TASKS_KEY_ENV`; ``None`` when it is not set or holds no valid key
    (logged once per key, never the key). Made once per key: it is asked for at every end of a
    task call."""
    return _sealer(os.environ.get(TASKS_KEY_ENV, "").strip())


@functools.lru_cache(maxsize=4)
def _sealer(key: str) -> Sealer | None:
    if not key:
        return None
    try:
        return Sealer(key)
    except (ValueError, TypeError):
        logger.warning("%s does not hold Fernet keys: parked tasks are not recorded", TASKS_KEY_ENV)
        return None


async def record_parked(store: BaseStore, sealer: Sealer, parked: ParkedTask) -> None:
    """Keep ``parked`` (sealed) until :func:`unrecord_parked`; a newer park of the same task
    replaces it."""
    key = sealer.names(parked.server, parked.task_id)[0]
    await store.aput(PARKED_NAMESPACE, key, sealer.seal(asdict(parked)), index=False)


async def unrecord_parked(store: BaseStore, sealer: Sealer, server: str, task_id: str) -> None:
    """Forget the record of ``server``'s task ``task_id`` (under every key it may be kept under)."""
    for key in sealer.names(server, task_id):
        await store.adelete(PARKED_NAMESPACE, key)


Opened = dict[str, tuple[Any, ParkedTask | None]]
"""Records opened so far, by store key: when each was last written, and what it held (``None``:
it does not open with the key, or was moved under another name)."""


def _opened(sealer: Sealer, key: str, value: Any) -> ParkedTask | None:
    record = sealer.open(value)
    if record is None:
        return None
    try:
        parked = ParkedTask(**{**record, "questions": tuple(record.get("questions") or ())})
    except TypeError:
        return None
    if key not in sealer.names(parked.server, parked.task_id):
        return None  # sealed for another name: moved by someone, not ours to trust
    return parked


async def parked_tasks(
    store: BaseStore, sealer: Sealer, opened: Opened | None = None, *, limit: int = PARKED_MAX
) -> dict[str, ParkedTask]:
    """The parked tasks recorded now, by their store key (records that do not open with these
    keys, or were moved under another name, are left out). With ``opened`` (kept between calls),
    only records written since the last call are opened, in a worker thread: the other records
    cost nothing, and opening thousands never holds the event loop."""
    cache: Opened = opened if opened is not None else {}
    items: list[Any] = []
    offset = 0
    while offset < limit:
        page = await store.asearch(PARKED_NAMESPACE, limit=min(_PAGE, limit - offset), offset=offset)
        items.extend(page)
        if len(page) < _PAGE:
            break
        offset += len(page)
    new = [item for item in items if cache.get(item.key, (None, None))[0] != item.updated_at]
    if new:
        records = await asyncio.to_thread(lambda: [_opened(sealer, item.key, item.value) for item in new])
        for item, record in zip(new, records, strict=True):
            cache[item.key] = (item.updated_at, record)
    present = {item.key for item in items}
    for key in [key for key in cache if key not in present]:
        del cache[key]
    return {key: record for key, (_at, record) in cache.items() if record is not None}


async def move_parked(store: BaseStore, sealer: Sealer, key: str, parked: ParkedTask) -> bool:
    """Seal ``parked`` (kept under ``key``) again with the newest key, under its newest name, when
    it is not there already (the key was changed); whether it moved."""
    if key == sealer.names(parked.server, parked.task_id)[0]:
        return False
    await record_parked(store, sealer, parked)
    await store.adelete(PARKED_NAMESPACE, key)
    return True
