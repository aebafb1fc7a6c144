"""Objects a call holds while it waits for its result: what the garbage collector walks, call by
call, under load.

    uv run python benchmarks/bench_inflight.py [--calls 100] [--transports stdio,http] [--top 25]

``--calls`` checkpointed graph threads each start one call of the demo server's ``quiet_sleep``
(4 s, no progress), through ``MCPToolNode`` (``node``) or a stock ``ToolNode`` whose
hand-written tool calls one bare-SDK session (``toolnode``), as in ``bench_load.py``. Two
seconds in, with every call still waiting on the server, the objects the collector tracks are
counted (after a full collection, so only live ones) against a count taken just before the calls
started. Printed: objects per call in flight for each path, and the types whose count per call
differs most between the two (a coroutine, generator or context manager is named by its
function). Each case runs in a fresh process. Results: RESULTS.md.
"""

# No ``from __future__ import annotations``: see bench_load.py (the hand-written tool).

import argparse
import asyncio
import collections
import gc
import json
import subprocess
import sys
from typing import Any

from _common import TRANSPORTS, one_node_graph, quiet, server

WAIT, SAMPLE_AT = 4.0, 2.0


def kind(obj: Any) -> str:
    """A tracked object's type, with the function behind coroutines, generators and context
    managers, and the variable behind a context variable's token."""
    name = type(obj).__qualname__
    inner = getattr(obj, "gen", None) if name.endswith("GeneratorContextManager") else obj
    if name in ("coroutine", "generator", "async_generator") or inner is not obj:
        return f"{name} {getattr(inner, '__qualname__', '?')}"
    if name == "method":
        return f"method {obj.__func__.__qualname__}"
    if name == "Token":
        return f"Token {obj.var.name}"
    return name


def census() -> collections.Counter[str]:
    gc.collect()
    return collections.Counter(kind(o) for o in gc.get_objects())


async def held(graph: Any, calls: int) -> dict[str, float]:
    from langchain_core.messages import AIMessage

    def ask(i: int) -> dict[str, Any]:
        call = {"name": "quiet_sleep", "args": {"seconds": WAIT}, "id": f"c{i}"}
        return {"messages": [AIMessage("", tool_calls=[call])]}

    await graph.ainvoke(ask(-1), {"configurable": {"thread_id": "warm-up"}})
    before = census()
    runs = [
        asyncio.create_task(graph.ainvoke(ask(i), {"configurable": {"thread_id": f"t{i}"}}))
        for i in range(calls)
    ]
    await asyncio.sleep(SAMPLE_AT)
    if any(run.done() for run in runs):
        raise RuntimeError(f"a call ended within {SAMPLE_AT} s: the count would miss it")
    during = census()
    await asyncio.gather(*runs)
    return {k: (during[k] - before[k]) / calls for k in during if during[k] != before[k]}


async def run_case(path: str, transport: str, calls: int) -> dict[str, float]:
    from langgraph.checkpoint.memory import InMemorySaver

    quiet()
    async with server(transport) as (config, target):
        if path == "node":
            from langgraph_mcp import MCPToolNode

            async with MCPToolNode({"demo": config}) as node:
                return await held(one_node_graph(node, InMemorySaver()), calls)
        from langchain_core.tools import tool
        from langgraph.prebuilt import ToolNode
        from mcp import Client

        async with Client(target) as client:  # type: ignore[arg-type]

            @tool
            async def quiet_sleep(seconds: float) -> str:
                """Sleep on the shared session, by hand."""
                result = await client.call_tool("quiet_sleep", {"seconds": seconds})
                return str(result.content[0].text)  # type: ignore[union-attr]

            return await held(one_node_graph(ToolNode([quiet_sleep]), InMemorySaver()), calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--transports", default="stdio,http")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--case", help=argparse.SUPPRESS)  # PATH:TRANSPORT, in a fresh process
    args = parser.parse_args()
    if args.case:
        path, transport = args.case.split(":")
        print(json.dumps(asyncio.run(run_case(path, transport, args.calls))))
        return
    for transport in args.transports.split(","):
        if transport not in TRANSPORTS:
            parser.error(f"unknown transport {transport!r}")
        counts = {}
        for path in ("toolnode", "node"):
            argv = [sys.executable, __file__, "--case", f"{path}:{transport}", "--calls", str(args.calls)]
            done = subprocess.run(argv, stdout=subprocess.PIPE, text=True, timeout=600, check=True)
            counts[path] = json.loads(done.stdout.strip().splitlines()[-1])
        base, ours = counts["toolnode"], counts["node"]
        print(
            f"{transport}: objects held per call in flight: toolnode {sum(base.values()):.0f}, "
            f"node {sum(ours.values()):.0f} ({args.calls} calls)"
        )
        print("| node - toolnode | toolnode | node | object |\n|---|---|---|---|")
        for name in sorted(set(base) | set(ours), key=lambda k: -abs(ours.get(k, 0) - base.get(k, 0)))[
            : args.top
        ]:
            a, b = base.get(name, 0.0), ours.get(name, 0.0)
            print(f"| {b - a:+.1f} | {a:.1f} | {b:.1f} | {name} |")


if __name__ == "__main__":
    main()
