"""Cold start: ``--servers`` stdio servers connected concurrently, against each one alone.

    uv run python benchmarks/bench_cold.py [--servers 10] [--repeats 3] [--protocol auto]
        [--server demo|tiny]

Each measurement starts fresh server processes (``--server demo``: ``python -m
tests.servers.demo``, an MCP SDK server; ``--server tiny``: ``benchmarks/tiny_stdio_server.py``,
standard library only): the time until every session is open and its tools are listed.

* ``pool``  ``MCPPool({...}).start()``: each server alone in a pool of its own, one after the
            other, then all of them in one pool (connected concurrently by ``start()``)
* ``sdk``   the bare SDK: ``mcp.Client`` entered and ``list_tools()`` called, each alone, then
            all at once (one task per client) (floor)

Baseline = the slowest of the servers connected alone (max over ``--servers``), measured in the
same repeat; target for ``pool``: all together take at most 2x that. Also printed, for the
servers started together: the CPU time the server processes used (``RUSAGE_CHILDREN``, startup
and shutdown) and what it implies on this machine's cores (starting N servers at once cannot
take less than N x CPU per server / cores), and the CPU time this client process used.
Results: RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _common import ROOT, load_average, median, quiet, table
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from langgraph_mcp import MCPPool
from tests.conftest_servers import stdio_params

SERVERS = {
    "demo": stdio_params("demo"),
    "tiny": {"command": sys.executable, "args": [str(ROOT / "benchmarks" / "tiny_stdio_server.py")]},
}

TARGET = 2.0


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def pool_start(n: int, server: dict[str, Any], protocol: str) -> float:
    """Seconds for ``MCPPool.start()`` on ``n`` fresh servers; the pool is closed afterwards."""
    pool = MCPPool({f"s{i}": {**server, "protocol": protocol} for i in range(n)})
    try:
        start = time.perf_counter()
        await pool.start()
        elapsed = time.perf_counter() - start
        assert not pool.unreachable(), pool.unreachable()
        return elapsed
    finally:
        await pool.aclose()


async def sdk_start(n: int, server: dict[str, Any], protocol: str) -> float:
    """Seconds until ``n`` fresh bare-SDK clients are connected and have listed their tools."""
    connected = 0
    all_in, stop = asyncio.Event(), asyncio.Event()

    async def one() -> None:
        nonlocal connected
        params = StdioServerParameters(**server)
        async with Client(params, mode=protocol) as client:  # type: ignore[arg-type]
            assert (await client.list_tools()).tools
            connected += 1
            if connected == n:
                all_in.set()
            await stop.wait()

    start = time.perf_counter()
    tasks = [asyncio.ensure_future(one()) for _ in range(n)]
    waiting = asyncio.ensure_future(all_in.wait())
    await asyncio.wait([waiting, *tasks], return_when=asyncio.FIRST_COMPLETED)
    elapsed = time.perf_counter() - start
    stop.set()
    await asyncio.gather(*tasks)  # raises if a client failed
    waiting.cancel()
    return elapsed


async def measure(
    start_n: Callable[[int], Awaitable[float]], n: int
) -> tuple[list[float], float, float, float]:
    """``(each alone, all together, server CPU per server together, client CPU together)``;
    CPU times include closing."""
    alone = [await start_n(1) for _ in range(n)]
    cpu, mine = children_cpu(), own_cpu()
    together = await start_n(n)
    return alone, together, (children_cpu() - cpu) / n, own_cpu() - mine


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--protocol", default="auto", choices=["auto", "legacy"])
    parser.add_argument(
        "--server",
        default="demo",
        choices=list(SERVERS),
        help="demo: tests/servers/demo.py (MCP SDK); tiny: benchmarks/tiny_stdio_server.py (stdlib)",
    )
    ns = parser.parse_args()
    n, cores, server = ns.servers, os.cpu_count() or 1, SERVERS[ns.server]
    print(f"{n} stdio {ns.server} servers, protocol {ns.protocol}, {ns.repeats} repeats; {load_average()}")
    await pool_start(1, server, ns.protocol)  # warm the file cache and this process's imports
    paths: dict[str, Callable[[int], Awaitable[float]]] = {
        "pool": lambda k: pool_start(k, server, ns.protocol),
        "sdk": lambda k: sdk_start(k, server, ns.protocol),
    }
    results: dict[str, list[Any]] = {path: [] for path in paths}
    for repeat in range(ns.repeats):
        for path, start_n in paths.items():
            alone, together, server_cpu, client_cpu = await measure(start_n, n)
            results[path].append((alone, together, server_cpu, client_cpu))
            print(
                f"  repeat {repeat + 1} {path}: alone median {median(alone):.3f} s, max {max(alone):.3f} s;"
                f" {n} together {together:.3f} s ({together / max(alone):.2f}x);"
                f" together: server CPU {server_cpu:.3f} s each, client CPU {client_cpu:.3f} s"
            )
    rows = []
    for path, runs in results.items():
        ratios = [together / max(alone) for alone, together, _, _ in runs]
        cpu_each = median([c for _, _, c, _ in runs])
        client_cpu = median([c for _, _, _, c in runs])
        worst = median([max(alone) for alone, _, _, _ in runs])
        together = median([t for _, t, _, _ in runs])
        verdict = "" if path == "sdk" else ("met" if median(ratios) <= TARGET else "MISSED")
        rows.append(
            (
                path,
                f"{median([median(a) for a, _, _, _ in runs]):.3f}",
                f"{worst:.3f}",
                f"{together:.3f}",
                f"{median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})",
                verdict,
                f"{cpu_each:.3f}",
                f"{n * cpu_each / cores:.2f}",
                f"{client_cpu:.3f}",
            )
        )
    print()
    print(
        table(
            [
                "path",
                "one alone, median (s)",
                "slowest alone (s)",
                f"{n} together (s)",
                "together / slowest alone",
                f"<= {TARGET}x",
                "server CPU each, together (s)",
                f"CPU floor on {cores} cores (s)",
                "client CPU, together (s)",
            ],
            rows,
        )
    )
    print(f"\n(medians over {ns.repeats} repeats; ratio range in brackets) {load_average()}")


if __name__ == "__main__":
    quiet()
    asyncio.run(main())
