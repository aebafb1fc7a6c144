"""What a call stores in the checkpoint, and how it finds it again.

A call's 2026-07-28 rounds are stored as LangGraph tasks (``mcp_round``), so a run resumed in
any process replays them instead of sending them again. LangGraph matches a task's stored result
by the order of the calls within the graph task, not by their input; each stored round therefore
carries its call's key and round number, and a stored round that belongs to another call (two
calls sharing one graph task and storing in a different order) is never used: the round runs
again instead. ``MCPToolNode`` runs each of several calls as a graph task of its own, so there
the order is fixed and every stored round is found.

In a synchronous run the call runs on a background event loop while its graph task's thread
waits, and LangGraph runs a stored round in a worker thread of its own. Waiting there for a free
worker could wait forever (every worker running a call that waits), so a synchronous run keeps
its journal only for a server that may answer with a task (where a second request would start
a second task), and never waits for the round to be stored: the round is handed its value in a
box (:class:`_Box`) and stored whenever a worker runs it. A round stored without a value (the
request was cancelled) is skipped on replay.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.func import task

from langgraph_mcp._compat.langgraph import (
    concurrency_limited,
    graph_configurable,
    is_checkpointed,
    is_resuming,
)
from langgraph_mcp._support.sync import bridged
from langgraph_mcp.errors import (
    MCPConnectionError,
    MCPProtocolError,
    MCPServerError,
    MCPTimeoutError,
    MCPToolCallError,
)

__all__ = ["STORED_ERRORS", "Journal", "decode_error", "encode_error"]

STORED_ERRORS = (MCPConnectionError, MCPProtocolError, MCPServerError, MCPTimeoutError, MCPToolCallError)
"""Errors a stored round may end with; stored as data (a checkpoint keeps only the repr of an
exception), so a replay raises the same error again."""
_BY_NAME: dict[str, type[BaseException]] = {cls.__name__: cls for cls in STORED_ERRORS}


def encode_error(exc: BaseException) -> dict[str, Any]:
    """A JSON form of one of :data:`STORED_ERRORS`."""
    reduced = exc.__reduce__()
    assert isinstance(reduced, tuple)
    return {"kind": "error", "error": type(exc).__name__, "args": list(reduced[1])}


def decode_error(stored: dict[str, Any]) -> BaseException:
    return _BY_NAME[stored["error"]](*stored["args"])


async def _run_round(stamp: dict[str, Any], thunk: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
    return {**stamp, "value": await thunk()}


_stored_round: Any = task(name="mcp_round")(_run_round)  # type: ignore[arg-type]

_VOID = {"kind": "void"}
"""Stored for a round whose value never came (its request was cancelled): skipped on replay."""
_HOLD_MAX = 3600.0
"""Seconds a stored round's worker waits for its value at most (the value always comes: it is
put in a ``finally``; this only bounds a bug)."""


class _Box:
    """A round's value, handed from the call to the worker thread that stores it."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._value: Any = _VOID

    def put(self, value: Any) -> None:
        self._value = value
        self._ready.set()

    def take(self) -> Any:
        self._ready.wait(_HOLD_MAX)
        return self._value


def _hold_round(stamp: dict[str, Any], box: _Box) -> dict[str, Any]:
    return {**stamp, "value": box.take()}


_held_round: Any = task(name="mcp_round")(_hold_round)  # type: ignore[arg-type]


class Journal:
    """The stored rounds of one call in a checkpointed graph task."""

    def __init__(self, key: str, *, resuming: bool, held: bool = False) -> None:
        self.key = key
        self.resuming = resuming
        """The task was resumed, so it may have stored rounds of this call to replay."""
        self.held = held
        """A synchronous run: rounds are stored without waiting (see the module docstring)."""
        self._next = 0

    @classmethod
    def open(cls, key: str, *, tasks: bool = False) -> Journal | None:
        """The journal of the call ``key``, or ``None`` outside a checkpointed graph task, and
        where a stored round would be a second task waiting for a slot that the call's own task
        may be holding, so that with more calls than slots none could finish: in a synchronous
        run (worker threads) unless ``tasks`` (the server may answer with a task: the journal is
        then kept without waiting), and in a run with ``max_concurrency``. A resumed call then
        sends its rounds again instead; the answers it was given are stored with its interrupts
        and reused."""
        conf = graph_configurable()
        if not is_checkpointed(conf) or concurrency_limited():
            return None
        if bridged():
            return cls(key, resuming=is_resuming(conf), held=True) if tasks else None
        return cls(key, resuming=is_resuming(conf))

    async def record(self, thunk: Callable[[], Awaitable[Any]]) -> Any:
        """The stored value of this call's next round, or ``thunk()``'s (JSON), stored now."""
        number = self._next
        self._next += 1
        stamp = {"call": self.key, "round": number}
        while True:
            if self.held:
                box = _Box()
                future = _held_round(stamp, box)
                if not future.done():  # nothing stored at this position: store ``thunk()``'s
                    value: Any = _VOID
                    try:
                        value = await thunk()
                    finally:
                        box.put(value)
                    return value
                stored = future.result()
            else:
                stored = await _stored_round(stamp, thunk)
            if stored.get("call") == self.key and stored.get("round") == number and stored["value"] != _VOID:
                return stored["value"]
            # Another call's round at this position (or one stored without a value): not ours.
            # The next position runs ``thunk``.
