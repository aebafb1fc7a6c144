"""A call's clock: server time only, across requests, on the event loop's clock.

Run on a virtual-time loop (``tests/clock.py``): the waits are long in loop time, take no real
time, and land exactly where they were scheduled however loaded the machine is, so what the
clock counts is asserted to the millisecond.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref

import pytest

from langgraph_mcp._session.clock import _LOOPS, CallClock, _Deadlines
from langgraph_mcp.errors import MCPTimeoutError
from tests.clock import run_virtual


def test_the_limit_fires_and_says_what_and_how_long() -> None:
    async def main() -> None:
        clock = CallClock(10.0, server="demo", what="tool 'hang'")
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(MCPTimeoutError) as info:
            async with clock.running():
                await asyncio.sleep(60)
        assert loop.time() - started == pytest.approx(10.0, abs=1e-3)
        assert (info.value.server, info.value.what, info.value.seconds) == ("demo", "tool 'hang'", 10.0)
        assert str(info.value) == "MCP server 'demo': tool 'hang' timed out after 10s"

    run_virtual(main)


def test_time_spent_answering_does_not_count() -> None:
    async def main() -> None:
        clock = CallClock(10.0, server="demo", what="tool 'ask'")
        async with clock.running():
            await asyncio.sleep(6)  # the server works
            clock.pause()  # ... asks a person, who takes far longer than the limit
            await asyncio.sleep(30)
            clock.resume()
            await asyncio.sleep(3)  # the server finishes: 9 s of its time in all
        assert clock.remaining == pytest.approx(1.0, abs=1e-3)
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(MCPTimeoutError):  # the next request has 1 s left
            async with clock.running():
                await asyncio.sleep(5)
        assert loop.time() - started == pytest.approx(1.0, abs=1e-3)

    run_virtual(main)


def test_time_between_requests_does_not_count_but_polling_does() -> None:
    async def main() -> None:
        clock = CallClock(10.0, server="demo", what="tool 'poll'")
        async with clock.running():
            await asyncio.sleep(4)
        await asyncio.sleep(30)  # answering a round between two requests
        await clock.sleep(4)  # a poll interval is the server's time
        with pytest.raises(MCPTimeoutError):
            await clock.sleep(4)

    run_virtual(main)


def test_no_limit_means_none() -> None:
    async def main() -> None:
        clock = CallClock(None, server="demo", what="tool 'slow'")
        async with clock.running():
            await asyncio.sleep(500)
        assert clock.remaining is None

    run_virtual(main)


async def test_an_outer_cancellation_is_not_a_timeout() -> None:
    clock = CallClock(30.0, server="demo", what="tool 'x'")

    async def run() -> None:
        async with clock.running():
            await asyncio.sleep(10)

    task = asyncio.ensure_future(run())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# -- the loop's shared timer -------------------------------------------------------------------
# Every running clock of a loop shares one timer (``_Deadlines``): a call no longer arms and
# cancels a timer of its own, which left the loop a cancelled handle per call to sweep.


def _clock_timers(loop: asyncio.AbstractEventLoop) -> tuple[int, int]:
    """The clocks' timers the loop holds now: (armed, cancelled)."""
    handles = [h for h in loop._scheduled if getattr(h._callback, "__self__", None).__class__ is _Deadlines]  # type: ignore[attr-defined]
    return sum(not h.cancelled() for h in handles), sum(h.cancelled() for h in handles)


def test_many_clocks_at_once_each_fire_at_their_own_limit_on_one_timer() -> None:
    limits = [7.0, 3.0, 11.0, 3.0, 1.0, 5.0, 2.5, 9.0, 4.0, 6.0]
    finish_early = {2: 0.5, 5: 4.0, 7: 8.5}  # these requests end before their limits

    async def main() -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        ended: dict[int, tuple[str, float]] = {}
        most = [0]

        async def one(i: int) -> None:
            clock = CallClock(limits[i], server="demo", what=f"tool {i}")
            try:
                async with clock.running():
                    await asyncio.sleep(finish_early.get(i, 60.0))
                ended[i] = ("done", loop.time() - started)
            except MCPTimeoutError:
                ended[i] = ("timeout", loop.time() - started)

        async def watch() -> None:
            while len(ended) < len(limits):
                armed, cancelled = _clock_timers(loop)
                most[0] = max(most[0], armed)
                assert cancelled <= 1, "cancelled clock timers pile up"
                await asyncio.sleep(0.25)

        await asyncio.gather(watch(), *(one(i) for i in range(len(limits))))
        for i, limit in enumerate(limits):
            kind, at = ended[i]
            expected = ("done", finish_early[i]) if i in finish_early else ("timeout", limit)
            assert (kind, round(at, 3)) == expected, i
        assert most[0] == 1  # ten calls in flight, one timer
        assert id(loop) not in _LOOPS  # an idle loop keeps nothing
        assert _clock_timers(loop)[0] == 0

    run_virtual(main)


def test_a_shorter_limit_started_later_fires_first() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        order: list[tuple[str, float]] = []

        async def one(name: str, limit: float, delay: float) -> None:
            await asyncio.sleep(delay)
            with pytest.raises(MCPTimeoutError):
                async with CallClock(limit, server="demo", what=name).running():
                    await asyncio.sleep(600)
            order.append((name, round(loop.time() - started, 3)))

        await asyncio.gather(one("long", 100.0, 0.0), one("short", 2.0, 1.0))
        assert order == [("short", 3.0), ("long", 100.0)]

    run_virtual(main)


def test_pausing_one_clock_moves_only_its_own_deadline() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        ended: dict[str, float] = {}
        a = CallClock(10.0, server="demo", what="a")
        b = CallClock(10.0, server="demo", what="b")

        async def run(name: str, clock: CallClock) -> None:
            with pytest.raises(MCPTimeoutError):
                async with clock.running():
                    await asyncio.sleep(600)
            ended[name] = round(loop.time() - started, 3)

        async def answer_for_a() -> None:
            await asyncio.sleep(2)
            with a.answering():  # a person takes 30 s: not a's time
                await asyncio.sleep(30)

        await asyncio.gather(run("a", a), run("b", b), answer_for_a())
        assert ended == {"b": 10.0, "a": 40.0}
        assert a.stats.rounds == 1 and a.stats.client_seconds == pytest.approx(30.0)

    run_virtual(main)


def test_a_refund_moves_a_running_deadline_later() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        clock = CallClock(5.0, server="demo", what="x")
        started = loop.time()
        with pytest.raises(MCPTimeoutError):
            async with clock.running():
                await asyncio.sleep(1)
                clock.refund(3.0)
                await asyncio.sleep(600)
        assert loop.time() - started == pytest.approx(8.0, abs=1e-3)

    run_virtual(main)


def test_clocks_on_two_loops_in_two_threads_do_not_meet() -> None:
    results: dict[str, str] = {}

    def in_thread(name: str, limit: float, work: float) -> None:
        async def main() -> None:
            try:
                async with CallClock(limit, server="demo", what=name).running():
                    await asyncio.sleep(work)
                results[name] = "done"
            except MCPTimeoutError:
                results[name] = "timeout"

        asyncio.run(main())

    threads = [
        threading.Thread(target=in_thread, args=("slow", 0.05, 5.0)),
        threading.Thread(target=in_thread, args=("quick", 5.0, 0.1)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == {"slow": "timeout", "quick": "done"}
    assert not _LOOPS


def test_a_loop_closed_with_a_call_running_keeps_nothing_alive() -> None:
    loop = asyncio.new_event_loop()

    async def stuck() -> None:
        async with CallClock(60.0, server="demo", what="stuck").running():
            await asyncio.sleep(3600)

    started: list[asyncio.Task[None]] = []

    async def main() -> None:
        started.append(asyncio.ensure_future(stuck()))
        await asyncio.sleep(0.01)

    loop.run_until_complete(main())
    assert id(loop) in _LOOPS
    loop.close()
    started.clear()
    gone = weakref.ref(loop)
    del loop
    gc.collect()
    assert gone() is None
    assert not _LOOPS


def test_an_expired_clock_is_off_the_books_at_once() -> None:
    """A clock whose limit fired is no longer counted as running, even while its block is still
    cleaning up (so the next clocks' bookkeeping is not thrown off)."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        a = CallClock(1.0, server="demo", what="a")
        cleaning = asyncio.Event()
        finish = asyncio.Event()

        async def slow_cleanup() -> None:
            with pytest.raises(MCPTimeoutError):
                async with a.running():
                    try:
                        await asyncio.sleep(600)
                    except asyncio.CancelledError:
                        cleaning.set()
                        await finish.wait()  # e.g. telling the server the request is cancelled
                        raise

        task = asyncio.ensure_future(slow_cleanup())
        await cleaning.wait()
        assert id(loop) not in _LOOPS or _LOOPS[id(loop)].live == 0
        b = CallClock(5.0, server="demo", what="b")
        async with b.running():  # comes and goes while a cleans up
            await asyncio.sleep(1)
        c = CallClock(5.0, server="demo", what="c")
        async with c.running():
            finish.set()
            await task
            assert _LOOPS[id(loop)].live == 1  # c, and only c
        assert id(loop) not in _LOOPS

    run_virtual(main)
