"""The pool's tools are built once per listing version, however many runs ask at once.

A graph's runs each ask for the pool's tools as they start. On a fresh pool, or after a listing
changed, a hundred runs starting together used to build the same tools a hundred times. Now the
runs that ask together share one build: its result, or its error.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from langgraph_mcp import MCPConnectionError, MCPPool, load_mcp_tools
from langgraph_mcp._catalog import build as _toolload
from tests.conftest_servers import stdio_params
from tests.helpers import until

RUNS = 50


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the tools built, one entry per tool built."""
    built: list[str] = []
    real = _toolload.build_tool

    def counted(entry: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(entry.name)
        return real(entry, *args, **kwargs)

    monkeypatch.setattr(_toolload, "build_tool", counted)
    return built


async def test_runs_that_ask_at_once_share_one_build(demo_config: dict[str, Any], builds: list[str]) -> None:
    async with MCPPool({"demo": demo_config}) as pool:
        answers = await asyncio.gather(*(load_mcp_tools(pool) for _ in range(RUNS)))
        first = answers[0]
        assert first and all(tools is first for tools in answers)
        assert len(builds) == len(set(builds)) == len(first)
        # The first listing connected the server (which moves the version): the next runs look
        # at the listings again, find the same ones, and keep the same tools.
        again = await asyncio.gather(*(load_mcp_tools(pool) for _ in range(RUNS)))
        assert all(tools is first for tools in again)
        assert await load_mcp_tools(pool) is first
        assert len(builds) == len(first)


async def test_a_change_of_listing_still_builds_again(demo_config: dict[str, Any], builds: list[str]) -> None:
    async with MCPPool({"demo": demo_config}) as pool:
        first = await load_mcp_tools(pool)
        count = len(builds)
        await pool.connection("demo").refresh_tools()  # what a list_changed notice does
        again = await asyncio.gather(*(load_mcp_tools(pool) for _ in range(RUNS)))
        assert all(tools is again[0] for tools in again) and again[0] is not first
        # The tools whose definition did not change keep their objects: nothing is rebuilt.
        assert len(builds) == count
        assert [t.name for t in again[0]] == [t.name for t in first]


async def test_a_run_cancelled_while_it_waits_leaves_the_build_to_the_others(
    demo_config: dict[str, Any], builds: list[str]
) -> None:
    async with MCPPool({"demo": demo_config}) as pool:
        waiting = [asyncio.create_task(load_mcp_tools(pool)) for _ in range(5)]
        await asyncio.sleep(0)  # each has asked
        waiting[0].cancel()
        results = await asyncio.gather(*waiting[1:])
        assert all(tools is results[0] for tools in results) and results[0]
        with pytest.raises(asyncio.CancelledError):
            await waiting[0]
        assert len(builds) == len(set(builds))


async def test_a_failed_build_is_every_waiting_runs_error_and_the_next_run_tries_again(
    tmp_path: Any,
) -> None:
    gone = {**stdio_params("demo"), "command": str(tmp_path / "no-such-server"), "connect_timeout": 5}
    async with MCPPool({"gone": gone}) as pool:
        outcomes = await asyncio.gather(*(load_mcp_tools(pool) for _ in range(RUNS)), return_exceptions=True)
        assert all(isinstance(o, MCPConnectionError) for o in outcomes)
        assert len({id(o) for o in outcomes}) == 1  # one attempt, its error given to each run
        await until(lambda: not _toolload.builds_of(pool)._building)
        with pytest.raises(MCPConnectionError):
            await load_mcp_tools(pool)
