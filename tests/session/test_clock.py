"""A call's clock: server time only, across requests, on the event loop's clock.

Run on a virtual-time loop (``tests/clock.py``): the waits are long in loop time, take no real
time, and land exactly where they were scheduled however loaded the machine is, so what the
clock counts is asserted to the millisecond.
"""

from __future__ import annotations

import asyncio

import pytest

from langgraph_mcp._session.clock import CallClock
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
