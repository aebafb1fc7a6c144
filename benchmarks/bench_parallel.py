"""Parallel slow calls in one ``MCPToolNode`` run, against one such call, in the same run.

    uv run python benchmarks/bench_parallel.py [--calls 10] [--seconds 0.2] [--repeats 5]
        [--transports stdio,http] [--protocols legacy,auto]

For each transport (stdio child, streamable HTTP on loopback) and protocol era (``legacy`` =
2025-11-25 handshake, ``auto`` = 2026-07-28 with this SDK's servers), one AIMessage asking for
``--calls`` calls of the demo server's ``quiet_sleep(--seconds)`` goes through a one-node graph
running ``MCPToolNode``; the baseline is one such call through the same graph, measured in turns
with it. Rows:

* ``node``        the graph without a checkpointer (the calls run as ``ToolNode`` runs them)
* ``node+saver``  with ``InMemorySaver`` (each call then runs as its own LangGraph task)
* ``sdk``         bare ``mcp.Client.call_tool``, ``asyncio.gather`` on one session (floor)

Medians of ``--repeats`` wall times, and the difference (``extra``: what the parallel calls cost
on top of one, mostly CPU in the client and the server); target for the node rows: ``--calls``
parallel calls take at most 1.3x one call. Server logs go to stderr. Results: RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from _common import PROTOCOLS, TRANSPORTS, load_average, median, one_node_graph, quiet, server, table
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from mcp import Client

from langgraph_mcp import MCPToolNode

TARGET = 1.3


def request(n: int, seconds: float) -> dict[str, Any]:
    calls = [{"name": "quiet_sleep", "args": {"seconds": seconds}, "id": f"c{i}"} for i in range(n)]
    return {"messages": [AIMessage("", tool_calls=calls)]}


def check(out: dict[str, Any], n: int, seconds: float) -> None:
    replies = [m for m in out["messages"] if isinstance(m, ToolMessage)][-n:]
    assert len(replies) == n, out
    for i, reply in enumerate(replies):
        assert reply.status == "success" and reply.tool_call_id == f"c{i}", reply
        assert f"slept quietly {seconds}" in str(reply.content), reply


async def in_turns(
    one: Callable[[], Awaitable[Any]], many: Callable[[], Awaitable[Any]], repeats: int
) -> tuple[float, float]:
    """Median wall time of ``one()`` and of ``many()``, measured alternately."""
    ones, manys = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        await one()
        ones.append(time.perf_counter() - start)
        start = time.perf_counter()
        await many()
        manys.append(time.perf_counter() - start)
    return median(ones), median(manys)


async def node_case(
    config: dict[str, Any], protocol: str, saver: bool, n: int, seconds: float, repeats: int
) -> tuple[float, float]:
    async with MCPToolNode({"demo": {**config, "protocol": protocol}}) as node:
        graph = one_node_graph(node, InMemorySaver() if saver else None)

        async def run(k: int) -> None:
            cfg = {"configurable": {"thread_id": uuid.uuid4().hex}}
            check(await graph.ainvoke(request(k, seconds), cfg), k, seconds)

        await graph.ainvoke(request(1, 0.0), {"configurable": {"thread_id": "warm-up"}})  # connect
        return await in_turns(lambda: run(1), lambda: run(n), repeats)


async def sdk_case(target: Any, protocol: str, n: int, seconds: float, repeats: int) -> tuple[float, float]:
    async with Client(target, mode=protocol) as client:  # type: ignore[arg-type]

        async def call() -> None:
            result = await client.call_tool("quiet_sleep", {"seconds": seconds})
            assert not result.is_error, result

        async def many() -> None:
            await asyncio.gather(*(call() for _ in range(n)))

        await call()
        return await in_turns(call, many, repeats)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=0.2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--transports", default=",".join(TRANSPORTS))
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    ns = parser.parse_args()
    n, seconds, repeats = ns.calls, ns.seconds, ns.repeats
    print(f"{n} parallel quiet_sleep({seconds}) calls vs one; median of {repeats}; {load_average()}")
    rows = []
    for transport in ns.transports.split(","):
        async with server(transport) as (config, target):
            for protocol in ns.protocols.split(","):
                cases: list[tuple[str, tuple[float, float]]] = [
                    ("node", await node_case(config, protocol, False, n, seconds, repeats)),
                    ("node+saver", await node_case(config, protocol, True, n, seconds, repeats)),
                    ("sdk", await sdk_case(target, protocol, n, seconds, repeats)),
                ]
                for label, (one, many) in cases:
                    ratio = many / one
                    verdict = "" if label == "sdk" else ("met" if ratio <= TARGET else "MISSED")
                    extra = (many - one) * 1000
                    rows.append(
                        (
                            transport,
                            protocol,
                            label,
                            f"{one:.3f}",
                            f"{many:.3f}",
                            f"{extra:.0f}",
                            f"{ratio:.2f}x",
                            verdict,
                        )
                    )
                    print(f"  {transport} {protocol} {label}: 1 call {one:.3f} s, {n} calls {many:.3f} s")
    print()
    print(
        table(
            [
                "transport",
                "protocol",
                "path",
                "1 call (s)",
                f"{n} parallel (s)",
                "extra (ms)",
                "ratio",
                f"<= {TARGET}x",
            ],
            rows,
        )
    )
    print(f"\n{load_average()}")


if __name__ == "__main__":
    quiet()
    asyncio.run(main())
