"""Cost of the agent-level pieces, against a floor measured in the same run.

    uv run python benchmarks/bench_agent.py [--runs 200]

One agent turn = a scripted model call that asks for the demo server's ``add`` tool, the tool
call, and a second model call that answers (no network, no LLM: what is timed is the agent
loop and the MCP call). The demo server runs over stdio, one long-lived session for all.

* ``local``        ``create_agent`` with a hand-written local tool that calls ``add`` on that
                   session (floor: what a user would write by hand)
* ``middleware``   ``create_agent`` + ``MCPMiddleware`` (dynamic tools, options, routing)
* ``prebuilt``     ``create_mcp_agent`` with a hidden argument and a tool filter
* ``sync``         ``MCPMiddleware`` agent run with ``agent.invoke`` (calls on the background loop)
* ``node_async`` / ``node_sync``   ``MCPToolNode`` in a one-node graph, ``ainvoke`` / ``invoke``

Prints medians (ms per turn) and ratios against ``local`` (and ``node_async`` for the sync node).
Results: RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import tool

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph_mcp import FromContext, MCPMiddleware, MCPPool, MCPToolNode, ToolOptions, create_mcp_agent  # noqa: E402
from tests.chat import ScriptModel  # noqa: E402
from tests.conftest_servers import stdio_params  # noqa: E402
from tests.helpers import ai  # noqa: E402

TURN = [[("add", {"a": 2, "b": 3}, "c1")]]
INPUT = {"messages": [("user", "add 2 and 3")]}


def node_graph(node: MCPToolNode) -> Any:
    """``START -> tools`` over ``MessagesState``, no checkpointer."""
    from langgraph.graph import START, MessagesState, StateGraph

    builder = StateGraph(MessagesState)
    builder.add_node(node)
    builder.add_edge(START, "tools")
    return builder.compile()


def ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def atimed(fn: Callable[[], Any], runs: int) -> list[float]:
    for _ in range(10):
        await fn()
    gc.collect()
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        await fn()
        out.append(time.perf_counter() - start)
    return out


def timed(fn: Callable[[], Any], runs: int) -> list[float]:
    for _ in range(10):
        fn()
    gc.collect()
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


async def run_async(runs: int, pool: MCPPool) -> dict[str, float]:
    session = pool.connection("demo")

    @tool
    async def add(a: int, b: int) -> str:
        """Add two integers."""
        result = await session.call_tool("add", {"a": a, "b": b})
        return "".join(getattr(block, "text", "") for block in result.content)

    local = create_agent(ScriptModel(turns=TURN), tools=[add])
    middleware = create_agent(ScriptModel(turns=TURN), middleware=[MCPMiddleware(pool)])
    prebuilt = create_mcp_agent(
        ScriptModel(turns=TURN),
        pool,
        server_options={"demo": ToolOptions(hidden={"user": FromContext("user")})},
        tool_filter=lambda tool, context: True,
    )
    node = MCPToolNode(pool)
    graph = node_graph(node)
    calls = {"messages": [ai(("add", {"a": 2, "b": 3}, "c1"))]}

    results: dict[str, float] = {}
    results["local"] = ms(await atimed(lambda: local.ainvoke(INPUT), runs))
    results["middleware"] = ms(await atimed(lambda: middleware.ainvoke(INPUT), runs))
    results["prebuilt"] = ms(await atimed(lambda: prebuilt.ainvoke(INPUT, context={"user": "u"}), runs))
    results["node_async"] = ms(await atimed(lambda: graph.ainvoke(calls), runs))
    return results


def run_sync(runs: int) -> dict[str, float]:
    pool = MCPPool({"demo": {**stdio_params("demo"), "tools": ["add"]}})
    try:
        agent = create_agent(ScriptModel(turns=TURN), middleware=[MCPMiddleware(pool)])
        graph = node_graph(MCPToolNode(pool))
        calls = {"messages": [ai(("add", {"a": 2, "b": 3}, "c1"))]}
        return {
            "sync": ms(timed(lambda: agent.invoke(INPUT), runs)),
            "node_sync": ms(timed(lambda: graph.invoke(calls), runs)),
        }
    finally:
        pool.close()


async def main_async(runs: int) -> dict[str, float]:
    async with MCPPool({"demo": {**stdio_params("demo"), "tools": ["add"]}}) as pool:
        await pool.start()
        return await run_async(runs, pool)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    results = asyncio.run(main_async(args.runs))
    results.update(run_sync(args.runs))
    floor = results["local"]
    print(f"median ms per agent turn over stdio ({args.runs} runs each)")
    for name in ("local", "middleware", "prebuilt", "sync"):
        print(f"  {name:<11} {results[name]:7.2f} ms   {results[name] / floor:5.2f}x local")
    print(f"  {'node_async':<11} {results['node_async']:7.2f} ms")
    ratio = results["node_sync"] / results["node_async"]
    print(f"  {'node_sync':<11} {results['node_sync']:7.2f} ms   {ratio:5.2f}x node_async")


if __name__ == "__main__":
    main()
