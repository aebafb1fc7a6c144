"""How long a server's tool definitions can stall the event loop: a catastrophic regular
expression in an ``inputSchema``, and a listing of very many tools.

    uv run python benchmarks/bench_loop_stall.py [--length 30] [--tools 100000] [--sections ...]

Fixture: ``tests/servers/costly.py`` over stdio. While each section runs, a ticker task on the
same event loop sleeps 5 ms at a time and records how late it wakes: the *max lag* is the longest
the loop was held by anything else (every other user's call waits that long).

Sections (each in a fresh Python process, so its memory figures are its own):

* ``pattern``   the ``redos`` tool's argument (``pattern: "^(a+)+$"``) checked on a
                ``--length``-character ``"aaa…a!"``: ``MCPTool.ainvoke`` with a tool call, while
                another user calls ``slow_echo`` on the same server over and over (its slowest
                call is shown)
* ``keys``      the same pattern as ``patternProperties`` of an object with
                ``additionalProperties: false``, the argument's one key being that string
* ``listing``   ``MCPToolNode.get_tools()`` for a server listing ``--tools`` generated tools
                (with ``--max-tools``, that server option; code before it had none)
                (plus its six own) in one ``tools/list`` page, on an open session; memory is the
                process's resident memory: its peak during the call and what is still held after
                it (with the tools kept), both less what it held just before. Also shown: how long
                one full garbage collection of the process takes right after (a yardstick: the
                collector runs one now and then during any work, and it holds the loop meanwhile)
* ``compiles``  ``get_tools()`` for a server listing ``--heavy`` tools whose patterns are each
                slow to compile (~100 ms, half of them) or refused (half), then, the compiled
                patterns dropped from the cache, a call to each of two of them (compiled again)

Lag and memory are printed per section; ``--json`` prints the raw figures too. Results:
RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _common import load_average, proc_status, quiet, reset_peak, table

from langgraph_mcp import MCPToolNode
from tests.conftest_servers import stdio_params

SECTIONS = ("pattern", "keys", "listing", "compiles")
TICK = 0.005
CHILD_TIMEOUT = 900.0


class Ticker:
    """Sleeps ``TICK`` at a time on the running loop; ``worst`` is the latest it woke. On exit
    it waits for one more wake-up, so a stall that ends with the measured work counts too."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.late = 0  # wake-ups more than 100 ms late
        self._task: asyncio.Task[None] | None = None
        self._ticked = asyncio.Event()

    async def _run(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(TICK)
            lag = time.perf_counter() - start - TICK
            self.worst = max(self.worst, lag)
            self.late += lag > 0.1
            self._ticked.set()

    async def __aenter__(self) -> Ticker:
        self._task = asyncio.create_task(self._run())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._ticked.clear()
        await self._ticked.wait()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def _with_other_user(node: MCPToolNode, work: Callable[[], Awaitable[Any]]) -> tuple[Any, float, int]:
    """``work()``'s result, and the slowest of another user's ``slow_echo`` calls (0.05 s each)
    made one after another while it ran, and how many there were."""
    echo = node.tools_by_name["slow_echo"]
    done = asyncio.Event()
    slowest = 0.0
    calls = 0

    async def other() -> None:
        nonlocal slowest, calls
        while not done.is_set():
            start = time.perf_counter()
            with contextlib.suppress(Exception):  # a call the stall made time out counts too
                await echo.ainvoke({"text": "hi", "seconds": 0.05})
            slowest = max(slowest, time.perf_counter() - start)
            calls += 1

    task = asyncio.create_task(other())
    await asyncio.sleep(0.3)  # the other user's calls are under way
    try:
        result = await work()
    finally:
        done.set()
        await task
    return result, slowest, calls


async def pattern_section(length: int, keys: bool) -> dict[str, Any]:
    text = "a" * length + "!"
    name, args = ("redos_keys", {"bag": {text: "x"}}) if keys else ("redos", {"text": text})
    async with MCPToolNode({"costly": stdio_params("costly")}) as node:
        await node.get_tools()
        tool = node.tools_by_name.get(name)
        if tool is None:
            return {"outcome": f"{name} is not offered"}
        call = {"name": name, "args": args, "id": "probe", "type": "tool_call"}

        async def probe() -> Any:
            try:
                return await tool.ainvoke(call)
            except Exception as exc:  # bad arguments are raised, as for a local tool
                return exc

        async with Ticker() as ticker:
            start = time.perf_counter()
            reply, slowest, calls = await _with_other_user(node, probe)
            elapsed = time.perf_counter() - start
    content = str(getattr(reply, "content", reply)).replace("\n", " ")
    return {
        "max_lag_ms": ticker.worst * 1000,
        "late_ticks": ticker.late,
        "seconds": elapsed,
        "other_slowest_ms": slowest * 1000,
        "other_calls": calls,
        "status": getattr(reply, "status", type(reply).__name__),
        "outcome": content[:300],
    }


async def listing_section(tools: int, max_tools: int | None) -> dict[str, Any]:
    config: dict[str, Any] = stdio_params("costly", "--tools", str(tools))
    if max_tools is not None:
        config["max_tools"] = max_tools
    async with MCPToolNode({"costly": config}) as node:
        await node.pool.connection("costly").connect()
        gc.collect()
        before = proc_status("VmRSS")
        reset_peak()
        async with Ticker() as ticker:
            start = time.perf_counter()
            offered = await node.get_tools()
            elapsed = time.perf_counter() - start
        peak = proc_status("VmHWM")
        start = time.perf_counter()
        gc.collect()  # also a yardstick: one full collection of this process's heap
        full_gc = time.perf_counter() - start
        held = proc_status("VmRSS")
        count = len(offered)
    return {
        "max_lag_ms": ticker.worst * 1000,
        "late_ticks": ticker.late,
        "seconds": elapsed,
        "tools": count,
        "full_gc_ms": full_gc * 1000,
        "peak_mib": (peak - before) / 2**20,
        "held_mib": (held - before) / 2**20,
    }


async def compiles_section(heavy: int) -> dict[str, Any]:
    from langgraph_mcp._support import patterns as _patterns

    config: dict[str, Any] = stdio_params("costly", "--heavy", str(heavy))
    async with MCPToolNode({"costly": config}) as node:
        await node.pool.connection("costly").connect()
        async with Ticker() as listing:
            start = time.perf_counter()
            offered = {t.name: t for t in await node.get_tools()}
            elapsed = time.perf_counter() - start
        _patterns._cache.clear()  # as if 128 other patterns had been used since (RE2's own
        _patterns.re2.purge()  # cache of 128 too)
        async with Ticker() as calls:
            for name in ("heavy_0", "heavy_2"):
                call = {"type": "tool_call", "name": name, "args": {"t": "a"}, "id": f"c-{name}"}
                with contextlib.suppress(Exception):  # "a" does not match: a refusal is expected
                    await offered[name].ainvoke(call)
    return {
        "max_lag_ms": listing.worst * 1000,
        "calls_max_lag_ms": calls.worst * 1000,
        "seconds": elapsed,
        "tools": len(offered),
    }


def child(section: str, ns: argparse.Namespace) -> None:
    quiet()
    if section == "compiles":
        result = asyncio.run(compiles_section(ns.heavy))
    elif section == "listing":
        result = asyncio.run(listing_section(ns.tools, ns.max_tools))
    else:
        result = asyncio.run(pattern_section(ns.length, keys=section == "keys"))
    print(json.dumps(result))


def run_child(section: str, ns: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", section]
    cmd += ["--length", str(ns.length), "--tools", str(ns.tools), "--heavy", str(ns.heavy)]
    if ns.max_tools is not None:
        cmd += ["--max-tools", str(ns.max_tools)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    if done.returncode != 0:
        raise RuntimeError(f"{section} failed:\n{done.stderr[-4000:]}")
    if ns.stderr and done.stderr.strip():
        print(f"--- stderr of {section} ---\n{done.stderr.strip()[-4000:]}\n---")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=30, help="a's before the '!' (pattern, keys)")
    parser.add_argument("--tools", type=int, default=100_000, help="generated tools (listing)")
    parser.add_argument(
        "--max-tools", type=int, help="the server's max_tools option (listing; default: the package's)"
    )
    parser.add_argument("--heavy", type=int, default=20, help="tools with costly patterns (compiles)")
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--json", action="store_true", help="print the raw figures too")
    parser.add_argument("--stderr", action="store_true", help="show what each child logged")
    parser.add_argument("--child", choices=SECTIONS, help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.child:
        child(ns.child, ns)
        return
    print(f"{load_average()}")
    results = {section: run_child(section, ns) for section in ns.sections}
    if ns.json:
        print(json.dumps(results, indent=2))
    rows = []
    for section in ("pattern", "keys"):
        if (r := results.get(section)) is not None and "max_lag_ms" in r:
            rows.append(
                (
                    f"{section} ({ns.length} a's + '!')",
                    f"{r['max_lag_ms']:.1f}",
                    f"{r['seconds']:.3f}",
                    f"{r['other_slowest_ms']:.0f} ({r['other_calls']} calls)",
                    f"{r['status']}: {r['outcome'][:120]!r}",
                )
            )
        elif r is not None:
            rows.append((section, "-", "-", "-", r["outcome"]))
    if rows:
        print()
        print(table(["check", "max loop lag ms", "call s", "other user's slowest call ms", "outcome"], rows))
    if (r := results.get("listing")) is not None:
        print()
        print(
            table(
                [
                    "listing",
                    "max loop lag ms",
                    "one full gc ms",
                    "get_tools s",
                    "tools offered",
                    "peak MiB",
                    "held MiB",
                ],
                [
                    (
                        f"{ns.tools} generated tools",
                        f"{r['max_lag_ms']:.1f}",
                        f"{r['full_gc_ms']:.0f}",
                        f"{r['seconds']:.2f}",
                        r["tools"],
                        f"{r['peak_mib']:.0f}",
                        f"{r['held_mib']:.0f}",
                    )
                ],
            )
        )
    if (r := results.get("compiles")) is not None:
        print()
        print(
            table(
                [
                    "costly patterns",
                    "listing: max loop lag ms",
                    "get_tools s",
                    "tools offered",
                    "two calls, compiled again: max loop lag ms",
                ],
                [
                    (
                        f"{ns.heavy} tools (half slow to compile, half refused)",
                        f"{r['max_lag_ms']:.1f}",
                        f"{r['seconds']:.2f}",
                        r["tools"],
                        f"{r['calls_max_lag_ms']:.1f}",
                    )
                ],
            )
        )
    print(f"\n{load_average()}")


if __name__ == "__main__":
    main()
