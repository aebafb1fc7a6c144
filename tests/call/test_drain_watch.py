"""The drain watch: a call whose run is asked to drain is cancelled and ends as ``GraphDrained``.

``RunControl`` has no signal, so one thread polls every watched call of the process. These pin
what that thread may and may not do: reach the right call on the right loop, leave alone a call
that has ended, put no timer on any loop, and hold nothing once a call has ended. The whole
path through a graph (and the resume) is in ``tests/stream/test_progress.py``.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import sys
import threading
import time
import weakref
from types import SimpleNamespace
from typing import Any

import pytest
from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl

from langgraph_mcp._call import runner as _call
from langgraph_mcp._call.runner import _cancel_on_drain


def _runtime(control: RunControl) -> Any:
    return SimpleNamespace(control=control)


async def _until(predicate: Any, limit: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not predicate():
        assert loop.time() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


async def _hanging_call(control: Any) -> asyncio.Future[Any]:
    """A watched call that would wait an hour, once it is waiting."""
    started = asyncio.Event()

    async def work() -> None:
        started.set()
        await asyncio.sleep(3600)

    run = asyncio.ensure_future(_cancel_on_drain(work(), _runtime(control)))
    await started.wait()
    return run


async def test_a_drain_cancels_the_call_and_says_why_without_a_timer_on_the_loop() -> None:
    control = RunControl()
    run = await _hanging_call(control)
    loop = asyncio.get_running_loop()
    timers = [h for h in loop._scheduled if not h.cancelled()]  # type: ignore[attr-defined]
    assert len(timers) == 1  # the call's own sleep: the watch put none there
    control.request_drain("deploy")
    with pytest.raises(GraphDrained, match="deploy"):
        await asyncio.wait_for(run, 10)


async def test_a_drain_after_the_call_ended_leaves_its_task_alone() -> None:
    control = RunControl()

    async def run() -> str:
        result = await _cancel_on_drain(asyncio.sleep(0, "done"), _runtime(control))
        control.request_drain("deploy")  # the run goes on to its next step: not cancelled
        await asyncio.sleep(4 * _call._DRAIN_POLL)
        return result

    assert await run() == "done"


async def test_the_caller_cancelling_too_wins_over_the_drain() -> None:
    control = RunControl()
    run = await _hanging_call(control)
    control.request_drain("deploy")
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run


def test_calls_on_two_loops_in_two_threads_are_drained_each_on_its_own() -> None:
    controls = {"a": RunControl(), "b": RunControl()}
    outcome: dict[str, str] = {}
    running = threading.Barrier(3)
    release_b = threading.Event()

    def in_thread(name: str) -> None:
        async def work() -> str:
            running.wait(10)
            if name == "b":
                await asyncio.to_thread(release_b.wait, 10)
            if name == "a":
                await asyncio.sleep(30)  # bounded: a watch that never drains fails, not hangs
            return "finished"

        async def main() -> None:
            try:
                outcome[name] = await _cancel_on_drain(work(), _runtime(controls[name]))
            except GraphDrained as exc:
                outcome[name] = f"drained: {exc}"

        asyncio.run(main())

    threads = [threading.Thread(target=in_thread, args=(name,), daemon=True) for name in controls]
    for thread in threads:
        thread.start()
    running.wait(10)
    controls["a"].request_drain("a's deploy")
    threads[0].join(10)
    release_b.set()
    threads[1].join(10)
    assert outcome["a"].startswith("drained: ") and "a's deploy" in outcome["a"]
    assert outcome["b"] == "finished"


async def test_an_ended_call_is_not_held_by_the_watch() -> None:
    """Nothing the poller looked at is held while it sleeps: a call's task is freed when the call
    ends, not at the next poll (then, with every other call that ended meanwhile, at once)."""
    control = RunControl()

    async def one_call() -> None:  # long enough for polls to see it
        await _cancel_on_drain(asyncio.sleep(4 * _call._DRAIN_POLL), _runtime(control))

    keep = RunControl()
    other = asyncio.Event()
    # Another call stays watched, so the poller keeps polling while the first one ends.
    lingering = asyncio.ensure_future(_cancel_on_drain(other.wait(), _runtime(keep)))
    task = asyncio.ensure_future(one_call())
    await task
    assert _call._POLLER.thread is not None
    poller = sys._current_frames()[_call._POLLER.thread.ident]  # asleep between two polls
    held = []
    while poller is not None:
        for value in poller.f_locals.values():
            held.extend(value if isinstance(value, list) else [value])
        poller = poller.f_back
    assert not [one for one in held if isinstance(one, _call._Watched) and one.task is task]
    gone = weakref.ref(task)
    del task
    await asyncio.sleep(0)  # the loop lets go of the handle that woke this test
    gc.collect()
    assert gone() is None
    other.set()
    await lingering
    await _until(lambda: not _call._POLLER.watched)


def _drain_in_a_child() -> None:
    async def main() -> None:
        control = RunControl()
        run = asyncio.ensure_future(_cancel_on_drain(asyncio.sleep(30), _runtime(control)))
        await asyncio.sleep(0.05)
        control.request_drain("child")
        try:
            await asyncio.wait_for(run, 10)
        except GraphDrained:
            return
        raise SystemExit(1)

    asyncio.run(main())


def test_a_forked_child_gets_a_watch_of_its_own() -> None:
    """Forked while the parent's poller holds its lock, the child still drains its calls."""

    async def parent() -> None:
        lingering = asyncio.ensure_future(_cancel_on_drain(asyncio.sleep(0.5), _runtime(RunControl())))
        await asyncio.sleep(0)
        with _call._POLLER.lock:  # copied held into the child
            child = multiprocessing.get_context("fork").Process(target=_drain_in_a_child, daemon=True)
            child.start()
        child.join(20)
        if child.is_alive():  # deadlocked: do not leave it behind
            child.kill()
            child.join(5)
        assert child.exitcode == 0
        await lingering

    asyncio.run(parent())


class _BrokenControl:
    @property
    def drain_requested(self) -> bool:
        raise ValueError("unreadable")

    drain_reason = None


async def test_a_control_that_cannot_be_read_does_not_stop_the_others_draining(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken = asyncio.ensure_future(_cancel_on_drain(asyncio.sleep(1.0, "done"), _runtime(_BrokenControl())))
    control = RunControl()
    other = asyncio.ensure_future(_cancel_on_drain(asyncio.sleep(3600), _runtime(control)))
    await asyncio.sleep(3 * _call._DRAIN_POLL)  # the poller has met the broken control
    control.request_drain("deploy")
    with pytest.raises(GraphDrained):
        await asyncio.wait_for(other, 10)
    assert await broken == "done"
    assert "cannot tell whether a run was asked to drain" in caplog.text


def test_a_call_whose_loop_was_closed_under_it_is_let_go() -> None:
    loop = asyncio.new_event_loop()

    started: list[asyncio.Future[Any]] = []

    async def main() -> None:
        started.append(asyncio.ensure_future(_cancel_on_drain(asyncio.sleep(3600), _runtime(RunControl()))))
        await asyncio.sleep(0.01)

    loop.run_until_complete(main())
    assert any(one.loop is loop for one in _call._POLLER.watched)
    loop.close()

    deadline = time.monotonic() + 10
    while any(one.loop is loop for one in _call._POLLER.watched):
        assert time.monotonic() < deadline, "the closed loop's call is still watched"
        time.sleep(0.02)
