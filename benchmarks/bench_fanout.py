"""Parallel calls to a 2025-11-25 stdio server that never asks anything, default settings.

    uv run python benchmarks/bench_fanout.py [--repeats 5] [--runs 100]

Over stdio a 2025-11-25 server's questions cannot be tied to the call that asked, so calls that
may need a person take turns where that is needed. A server that never asks must not pay for it:

* ``fan-out``: one ``quiet_sleep(0.5)`` call, then four in parallel from one ``MCPToolNode`` run
  (median wall time of ``--repeats``); the ratio should stay near 1x (4x when serialised).
* ``throughput``: ``--runs`` concurrent graph runs, each calling ``quiet_sleep(0.05)`` once,
  against two floors on one session: the same calls made with the bare SDK ``Client``, and the
  same graph runs with a stock ``ToolNode`` whose hand-written tool calls that session.

Elicitation policy is the default (``interrupt``), the protocol is forced to 2025-11-25. Before
each timed section the garbage collector is run and what survives is frozen, so that a section
does not pay for the heap the sections before it left behind. Results: RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph_mcp import MCPToolNode  # noqa: E402
from tests.conftest_servers import stdio_params  # noqa: E402

SLOW, FAST = 0.5, 0.05


def calls(n: int, seconds: float) -> dict[str, Any]:
    tool_calls = [{"name": "quiet_sleep", "args": {"seconds": seconds}, "id": f"c{i}"} for i in range(n)]
    return {"messages": [AIMessage("", tool_calls=tool_calls)]}


def settle() -> None:
    """Start a timed section with a collected, frozen heap."""
    gc.collect()
    gc.freeze()


def graph_for(node: ToolNode) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    return builder.compile()


async def fan_out(repeats: int) -> tuple[float, float]:
    config = {**stdio_params("demo"), "protocol": "legacy"}
    async with MCPToolNode({"demo": config}) as node:
        graph = graph_for(node)
        await graph.ainvoke(calls(1, 0.0))  # connect
        one, four = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            await graph.ainvoke(calls(1, SLOW))
            one.append(time.perf_counter() - start)
            start = time.perf_counter()
            out = await graph.ainvoke(calls(4, SLOW))
            four.append(time.perf_counter() - start)
            assert all(m.status == "success" for m in out["messages"][1:]), out
    return statistics.median(one), statistics.median(four)


async def throughput(runs: int) -> tuple[float, float, float]:
    params = stdio_params("demo")
    target = StdioServerParameters(
        command=params["command"], args=params["args"], cwd=params["cwd"], env=params["env"]
    )
    async with Client(target, mode="legacy") as client:
        await client.call_tool("quiet_sleep", {"seconds": 0.0})
        settle()
        start = time.perf_counter()
        await asyncio.gather(*(client.call_tool("quiet_sleep", {"seconds": FAST}) for _ in range(runs)))
        sdk = runs / (time.perf_counter() - start)

        @tool
        async def quiet_sleep(seconds: float) -> str:
            """Sleep on the server, by hand over the shared session."""
            result = await client.call_tool("quiet_sleep", {"seconds": seconds})
            return str(result.content[0].text)  # type: ignore[union-attr]

        stock = graph_for(ToolNode([quiet_sleep]))
        await stock.ainvoke(calls(1, 0.0))
        settle()
        start = time.perf_counter()
        await asyncio.gather(*(stock.ainvoke(calls(1, FAST)) for _ in range(runs)))
        toolnode = runs / (time.perf_counter() - start)
    config = {**stdio_params("demo"), "protocol": "legacy"}
    async with MCPToolNode({"demo": config}) as node:
        graph = graph_for(node)
        await graph.ainvoke(calls(1, 0.0))
        settle()
        start = time.perf_counter()
        await asyncio.gather(*(graph.ainvoke(calls(1, FAST)) for _ in range(runs)))
        ours = runs / (time.perf_counter() - start)
    return sdk, toolnode, ours


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--runs", type=int, default=100)
    ns = parser.parse_args()
    one, four = await fan_out(ns.repeats)
    print(f"fan-out (median of {ns.repeats}): 1 call {one:.3f} s, 4 parallel calls {four:.3f} s")
    print(f"  4 parallel / 1 call = {four / one:.2f}x")
    sdk, toolnode, ours = await throughput(ns.runs)
    print(f"throughput, {ns.runs} concurrent runs of a {FAST * 1000:.0f} ms tool (calls/s):")
    print(f"  sdk {sdk:.0f}, toolnode {toolnode:.0f}, mcp_node {ours:.0f}")
    print(f"  mcp_node / sdk = {ours / sdk:.2f}x, mcp_node / toolnode = {ours / toolnode:.2f}x")


if __name__ == "__main__":
    import logging

    logging.getLogger("mcp").setLevel(logging.ERROR)
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    asyncio.run(main())
