"""A server with many tools: loading them, against the bare SDK's listing in the same run.

    uv run python benchmarks/bench_tools.py [--tools 1000] [--repeats 3] [--protocol auto]

The server is ``tests/servers/many.py`` over stdio (``--tools`` tools, each with a small input
schema of its own). Each repeat starts fresh sessions and, once connected, measures:

* ``sdk``   the bare SDK: ``await client.list_tools()`` (the first listing of the session)
            (baseline)
* ``node``  ``await node.get_tools()`` on a fresh ``MCPToolNode`` whose session is already
            open: the listing plus building a LangChain tool per MCP tool (names, schemas,
            argument checkers)

Time is the median wall time over ``--repeats``. Memory is measured in a separate pass under
``tracemalloc`` (which slows Python down): the peak of Python allocations during the call, and
what is still allocated once it returned, with its result kept (the tools a model would be bound
to). Also printed: a call to one of the tools through the node, as a check. Results: RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

from _common import load_average, median, one_node_graph, quiet, sdk_stdio, table
from langchain_core.messages import AIMessage
from mcp import Client

from langgraph_mcp import MCPToolNode
from tests.conftest_servers import stdio_params

Probe = Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]


async def timed(fn: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = await fn()
    return time.perf_counter() - start, result


async def traced(fn: Callable[[], Awaitable[Any]]) -> tuple[tuple[float, float], Any]:
    """``((peak MiB, retained MiB), result)`` of Python allocations made by ``fn()``."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = await fn()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return ((peak - base) / 2**20, (current - base) / 2**20), result


async def sdk_once(n: int, protocol: str, probe: Probe) -> Any:
    async with Client(sdk_stdio("many", "--tools", str(n)), mode=protocol) as client:  # type: ignore[arg-type]
        measure, result = await probe(lambda: client.list_tools(cache_mode="bypass"))
        assert len(result.tools) == n and result.next_cursor is None, (len(result.tools), result.next_cursor)
        return measure


async def node_once(n: int, protocol: str, probe: Probe) -> Any:
    config = {**stdio_params("many", "--tools", str(n)), "protocol": protocol}
    async with MCPToolNode({"many": config}) as node:
        await node.pool.connection("many").connect()
        measure, tools = await probe(node.get_tools)
        assert len(tools) == n, len(tools)
        last = f"tool_{n - 1}"
        call = {"name": last, "args": {f"n_{n - 1}": 7}, "id": "check"}
        if (n - 1) % 5 in (0, 3):  # label_* (str) and items_* (list) are required
            key = next(k for k in node.tools_by_name[last].args if not k.startswith("n_"))
            call["args"][key] = "x" if (n - 1) % 5 == 0 else [1]
        out = await one_node_graph(node).ainvoke({"messages": [AIMessage("", tool_calls=[call])]})
        reply = out["messages"][-1]
        assert reply.status == "success" and str(reply.content).startswith(f"{last}:"), reply
        return measure


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--protocol", default="auto", choices=["auto", "legacy"])
    ns = parser.parse_args()
    n = ns.tools
    print(f"{n} tools over stdio, protocol {ns.protocol}, {ns.repeats} repeats; {load_average()}")
    paths = {"sdk": sdk_once, "node": node_once}
    seconds: dict[str, list[float]] = {path: [] for path in paths}
    for repeat in range(ns.repeats):
        for path, once in paths.items():
            elapsed = await once(n, ns.protocol, timed)
            seconds[path].append(elapsed)
            print(f"  repeat {repeat + 1} {path}: {elapsed:.3f} s")
    memory = {path: await once(n, ns.protocol, traced) for path, once in paths.items()}
    base_time = median(seconds["sdk"])
    base_peak, base_kept = memory["sdk"]
    rows = []
    for path in paths:
        t = median(seconds[path])
        peak, kept = memory[path]
        rows.append(
            (
                path,
                f"{t * 1000:.0f}",
                f"{min(seconds[path]) * 1000:.0f}-{max(seconds[path]) * 1000:.0f}",
                f"{t / base_time:.2f}x",
                f"{peak:.1f}",
                f"{peak / base_peak:.2f}x",
                f"{kept:.1f}",
                f"{kept / base_kept:.2f}x",
            )
        )
    print()
    print(
        table(
            [
                "path",
                "median ms",
                "range ms",
                "x sdk",
                "peak MiB (tracemalloc)",
                "x sdk",
                "retained MiB",
                "x sdk",
            ],
            rows,
        )
    )
    print(f"\n{load_average()}")


if __name__ == "__main__":
    quiet()
    asyncio.run(main())
