"""Latency of one MCP tool call through each layer, against floors measured in the same run.

    uv run python benchmarks/bench_calls.py [--calls 300] [--spawn-calls 10]

For each transport (stdio child process, streamable HTTP on loopback, in-process) it times a
trivial ``add`` tool on the demo server:

* ``sdk``          bare ``mcp.Client.call_tool`` on one long-lived session (floor)
* ``toolnode``     stock ``ToolNode`` running a hand-written tool that calls that same session
* ``mcp_tool``     ``MCPTool.ainvoke`` (pooled session, schema validation, result conversion)
* ``mcp_node``     ``MCPToolNode.ainvoke`` with one tool call (the drop-in node)
* ``per_call``     a new session per call, as the incumbent adapter does by default
                   (stdio: a new server process per call)

and prints medians plus ratios against ``sdk`` and ``toolnode``. Results: RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.prebuilt import ToolNode
from langgraph.runtime import Runtime
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph_mcp import MCPToolNode  # noqa: E402
from tests.conftest_servers import spawn_http_server, stdio_params  # noqa: E402
from tests.servers import demo  # noqa: E402

CONFIG = {"configurable": {"__pregel_runtime": Runtime()}}


async def timed(fn: Callable[[], Awaitable[Any]], n: int, warmup: int = 10) -> list[float]:
    for _ in range(warmup):
        await fn()
    out = []
    for _ in range(n):
        start = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def sdk_target(kind: str, where: Any) -> Any:
    if kind == "stdio":
        params = stdio_params("demo")
        return StdioServerParameters(
            command=params["command"], args=params["args"], cwd=params["cwd"], env=params["env"]
        )
    if kind == "http":
        return where
    return demo.build_server(counters=demo.Counters())


async def bench_transport(kind: str, where: Any, n: int, spawn_n: int) -> dict[str, float]:
    medians: dict[str, float] = {}
    config: dict[str, Any]
    if kind == "stdio":
        config = stdio_params("demo")
    elif kind == "http":
        config = {"url": where}
    else:
        config = {"server": demo.build_server(counters=demo.Counters())}

    async with Client(sdk_target(kind, where)) as client:

        async def sdk() -> Any:
            return await client.call_tool("add", {"a": 1, "b": 2})

        medians["sdk"] = statistics.median(await timed(sdk, n))

        @tool
        async def add(a: int, b: int) -> str:
            """Add on the shared session, by hand."""
            result = await client.call_tool("add", {"a": a, "b": b})
            return str(result.structured_content["result"])  # type: ignore[index]

        stock = ToolNode([add])
        message = {
            "messages": [AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c"}])]
        }

        async def toolnode() -> Any:
            return await stock.ainvoke(message, CONFIG)

        medians["toolnode"] = statistics.median(await timed(toolnode, n))

    async with MCPToolNode({"demo": config}) as node:
        mcp_add = node.tools_by_name.get("add") or {t.name: t for t in await node.get_tools()}["add"]
        call = {"name": "add", "args": {"a": 1, "b": 2}, "id": "c", "type": "tool_call"}

        async def mcp_tool() -> Any:
            return await mcp_add.ainvoke(call)

        medians["mcp_tool"] = statistics.median(await timed(mcp_tool, n))

        async def mcp_node() -> Any:
            return await node.ainvoke(message, CONFIG)

        medians["mcp_node"] = statistics.median(await timed(mcp_node, n))

    async def per_call() -> Any:
        async with Client(sdk_target(kind, where)) as fresh:
            return await fresh.call_tool("add", {"a": 1, "b": 2})

    medians["per_call"] = statistics.median(await timed(per_call, spawn_n, warmup=1))
    return medians


def report(kind: str, m: dict[str, float]) -> None:
    print(f"\n{kind}")
    print(f"  {'path':<10} {'median ms':>10} {'x sdk':>7} {'x toolnode':>11}")
    for path, value in m.items():
        print(f"  {path:<10} {value:>10.3f} {value / m['sdk']:>7.2f} {value / m['toolnode']:>11.2f}")
    print(f"  per_call / mcp_node = {m['per_call'] / m['mcp_node']:.1f}x")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--spawn-calls", type=int, default=10)
    ns = parser.parse_args()
    print(f"{ns.calls} timed calls per path ({ns.spawn_calls} for per_call), medians in ms")
    report("in-process", await bench_transport("in_process", None, ns.calls, ns.spawn_calls * 5))
    report("stdio", await bench_transport("stdio", None, ns.calls, ns.spawn_calls))
    async with spawn_http_server("demo") as url:
        report("streamable HTTP (loopback)", await bench_transport("http", url, ns.calls, ns.spawn_calls * 5))


if __name__ == "__main__":
    import logging

    logging.getLogger("mcp").setLevel(logging.ERROR)
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    asyncio.run(main())
