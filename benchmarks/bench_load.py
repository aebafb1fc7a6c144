"""Load: many calls from many concurrent graph threads, against the bare SDK in the same run.

    uv run python benchmarks/bench_load.py [--threads 100] [--invokes 10] [--repeats 3]
        [--transports stdio,http] [--protocols auto]

``--threads`` concurrent workers each make ``--invokes`` calls one after the other (1,000 calls
by default) to the demo server's ``echo`` tool, every call with text of its own, over one
server per case:

* ``node``  a ``StateGraph`` (``MessagesState``, ``START -> tools``) running ``MCPToolNode``
            with an ``InMemorySaver``; worker ``k`` is LangGraph thread ``t<k>`` and invokes the
            graph with an AIMessage asking for one call (id and text unique)
* ``sdk``   the bare SDK: ``mcp.Client.call_tool`` on one session, same concurrency (baseline)
* ``toolnode``  the same graph with a stock ``ToolNode`` whose hand-written ``echo`` tool calls
            one bare-SDK session (what LangGraph itself costs per run, without this package)
* ``toolnode_caps``  the same, its SDK client declaring what ``MCPToolNode``'s declares (sampling,
            elicitation, roots, the tasks extension, its ``clientInfo``): from 2026-07-28 on these
            go with every request, so the server parses the same request metadata as for ``node``

Every result is checked: a node run's last message must be the ToolMessage of its own call
(``tool_call_id`` and text), and at the end each thread's checkpointed history must hold its
calls and their results, in order, each once (the same for ``toolnode``); an SDK result must
carry its call's text.
``misrouted`` counts results with another call's text or id, ``lost`` calls with no result, an
error result or an exception. Each case runs in a fresh Python process (the server is a child
of that process), which reports its peak RSS (``ru_maxrss``) and its RSS just before the load.
Printed: throughput (calls/s), p50/p99 latency of one call (one graph run for the graphs), the
CPU time the client process spent per call during the load (steadier than wall time on a busy
machine; for stdio the server's CPU is not in it) and, of it, the garbage collector's (with its
runs during the load by generation: young/middle/old), memory, and each path's throughput over
the ``sdk`` throughput measured in the same repeat (target for ``node``: at least 0.8x); then
``node``'s CPU per call, throughput and p99 over each ``toolnode`` floor's (ratios of medians).
Server logs go to stderr. Results: RESULTS.md.
"""

# No ``from __future__ import annotations`` here: LangChain resolves a tool's string annotations
# again on every call, which would slow the hand-written ``toolnode`` floor down.

import argparse
import asyncio
import gc
import json
import resource
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from _common import (
    PROTOCOLS,
    TRANSPORTS,
    load_average,
    median,
    peak_rss_mib,
    percentile,
    quiet,
    rss_mib,
    server,
    settle,
    table,
)

TARGET = 0.8
PROFILE_TO = ""  # with --profile: where the profile of the load (warm-up excluded) goes
COUNTER: Any = None  # with --instructions: the library that turns callgrind's counting on and off
PATHS = ("sdk", "toolnode", "toolnode_caps", "node")


def text_of(content: Any) -> str:
    """A ToolMessage's or CallToolResult's text (a string, or text blocks joined)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            parts.append(str(block.get("text", "")))
        else:
            parts.append(str(getattr(block, "text", "")))
    return "".join(parts)


class Tally:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.misrouted = 0
        self.lost = 0
        self.examples: list[str] = []
        self.cpu = 0.0  # CPU seconds this process used during the load
        self.collections = [0, 0, 0]  # the garbage collector's runs during the load, by generation
        self.gc_seconds = 0.0  # CPU seconds they took
        self.threads: set[int] = set()  # threads with a problem seen by the per-call checks

    def note(self, problem: str, kind: str, thread: int | None = None) -> None:
        if thread is not None:
            self.threads.add(thread)
        if kind == "misrouted":
            self.misrouted += 1
        else:
            self.lost += 1
        if len(self.examples) < 5:
            self.examples.append(problem)


async def drive(
    threads: int, invokes: int, one_call: Callable[[int, int, Tally], Awaitable[None]], tally: Tally
) -> float:
    """Run ``threads`` workers of ``invokes`` sequential calls; return the wall time."""

    async def worker(k: int) -> None:
        for i in range(invokes):
            start = time.perf_counter()
            try:
                await one_call(k, i, tally)
            except Exception as exc:
                tally.note(f"t{k} call {i}: {type(exc).__name__}: {exc}"[:300], "lost", k)
            tally.latencies.append(time.perf_counter() - start)

    profile = None
    if PROFILE_TO:
        import cProfile

        profile = cProfile.Profile()
        profile.enable()
    started_gc = [0.0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started_gc[0] = time.process_time()
        else:
            tally.collections[info["generation"]] += 1
            tally.gc_seconds += time.process_time() - started_gc[0]

    if COUNTER is not None:
        COUNTER.count_start()
    gc.callbacks.append(on_gc)
    cpu = process_cpu()
    start = time.perf_counter()
    await asyncio.gather(*(worker(k) for k in range(threads)))
    elapsed = time.perf_counter() - start
    tally.cpu = process_cpu() - cpu
    gc.callbacks.remove(on_gc)
    if COUNTER is not None:
        COUNTER.count_stop()
    if profile is not None:
        profile.disable()
        profile.dump_stats(PROFILE_TO)
    return elapsed


def process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def unique_text(k: int, i: int, run: str) -> str:
    return f"{run}:t{k}:c{i}"


async def sdk_case(
    target: Any, protocol: str, threads: int, invokes: int, tally: Tally
) -> tuple[float, float]:
    from mcp import Client

    run = uuid.uuid4().hex[:8]
    async with Client(target, mode=protocol) as client:  # type: ignore[arg-type]
        await client.call_tool("echo", {"text": "warm-up"})

        async def one_call(k: int, i: int, tally: Tally) -> None:
            expected = unique_text(k, i, run)
            result = await client.call_tool("echo", {"text": expected})
            got = text_of(result.content)
            if result.is_error:
                tally.note(f"t{k} call {i}: error result {got!r}", "lost", k)
            elif got != expected:
                tally.note(f"t{k} call {i}: got {got!r}, expected {expected!r}", "misrouted", k)

        settle()
        before = rss_mib()
        return await drive(threads, invokes, one_call, tally), before


def ask(call_id: str, text: str) -> dict[str, Any]:
    from langchain_core.messages import AIMessage

    return {"messages": [AIMessage("", tool_calls=[{"name": "echo", "args": {"text": text}, "id": call_id}])]}


async def graph_load(graph: Any, threads: int, invokes: int, tally: Tally) -> tuple[float, float]:
    """The load through ``graph`` (``START -> tools`` with a checkpointer), every result checked."""
    from langchain_core.messages import ToolMessage

    run = uuid.uuid4().hex[:8]
    await graph.ainvoke(ask("warm-up", "warm-up"), {"configurable": {"thread_id": "warm-up"}})

    async def one_call(k: int, i: int, tally: Tally) -> None:
        call_id, expected = f"{run}-t{k}-c{i}", unique_text(k, i, run)
        out = await graph.ainvoke(ask(call_id, expected), {"configurable": {"thread_id": f"t{k}"}})
        last = out["messages"][-1]
        if not isinstance(last, ToolMessage):
            tally.note(f"t{k} call {i}: last message is {type(last).__name__}", "lost", k)
        elif last.status != "success":
            tally.note(f"t{k} call {i}: error result {last.content!r}"[:300], "lost", k)
        elif last.tool_call_id != call_id or (got := text_of(last.content)) != expected:
            tally.note(
                f"t{k} call {i}: got {last.tool_call_id!r} {got!r}, expected {call_id!r} {expected!r}",
                "misrouted",
                k,
            )

    settle()
    before = rss_mib()
    elapsed = await drive(threads, invokes, one_call, tally)
    # Each thread's checkpointed history: its calls and their results, in order, each once. A
    # wrong history in a thread the per-call checks found nothing wrong with counts as misrouted.
    for k in range(threads):
        state = await graph.aget_state({"configurable": {"thread_id": f"t{k}"}})
        messages = state.values["messages"]
        expected_pairs = [(f"{run}-t{k}-c{i}", unique_text(k, i, run)) for i in range(invokes)]
        got_pairs = [
            (m.tool_call_id, text_of(m.content))
            for m in messages
            if isinstance(m, ToolMessage) and m.status == "success"
        ]
        if (got_pairs != expected_pairs or len(messages) != 2 * invokes) and k not in tally.threads:
            tally.note(f"t{k} history: {got_pairs[:3]}... ({len(messages)} messages)", "misrouted", k)
    return elapsed, before


async def node_case(
    config: dict[str, Any], protocol: str, threads: int, invokes: int, tally: Tally
) -> tuple[float, float]:
    from _common import one_node_graph
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_mcp import MCPToolNode

    async with MCPToolNode({"demo": {**config, "protocol": protocol}}) as node:
        return await graph_load(one_node_graph(node, InMemorySaver()), threads, invokes, tally)


def declared_like_the_node() -> dict[str, Any]:
    """``mcp.Client`` arguments that make it declare what ``MCPToolNode``'s client declares (its
    callbacks only refuse: the demo server's ``echo`` never asks)."""
    from langgraph_mcp._session.connection import _TASKS
    from langgraph_mcp._session.era import client_info

    async def refuse(*_: Any) -> Any:
        raise RuntimeError("not answered in this benchmark")

    return {
        "client_info": client_info(),
        "elicitation_callback": refuse,
        "sampling_callback": refuse,
        "list_roots_callback": refuse,
        "extensions": [_TASKS],
    }


async def toolnode_case(
    target: Any, protocol: str, threads: int, invokes: int, tally: Tally, *, declared: bool = False
) -> tuple[float, float]:
    from _common import one_node_graph
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import ToolNode
    from mcp import Client

    extra = declared_like_the_node() if declared else {}
    async with Client(target, mode=protocol, **extra) as client:  # type: ignore[arg-type]

        @tool
        async def echo(text: str) -> str:
            """Echo on the shared session, by hand."""
            result = await client.call_tool("echo", {"text": text})
            if result.is_error:
                raise RuntimeError(text_of(result.content))
            return text_of(result.content)

        graph = one_node_graph(ToolNode([echo]), InMemorySaver())
        return await graph_load(graph, threads, invokes, tally)


async def run_case(path: str, transport: str, protocol: str, threads: int, invokes: int) -> dict[str, Any]:
    tally = Tally()
    async with server(transport) as (config, target):
        if path == "sdk":
            elapsed, before = await sdk_case(target, protocol, threads, invokes, tally)
        elif path in ("toolnode", "toolnode_caps"):
            declared = path == "toolnode_caps"
            elapsed, before = await toolnode_case(
                target, protocol, threads, invokes, tally, declared=declared
            )
        else:
            elapsed, before = await node_case(config, protocol, threads, invokes, tally)
    calls = threads * invokes
    return {
        "calls": calls,
        "seconds": elapsed,
        "throughput": calls / elapsed,
        "p50_ms": percentile(tally.latencies, 50) * 1000,
        "p99_ms": percentile(tally.latencies, 99) * 1000,
        "cpu_ms_per_call": tally.cpu / calls * 1000,
        "gc_collections": tally.collections,
        "gc_ms_per_call": tally.gc_seconds / calls * 1000,
        "rss_before_mib": before,
        "peak_rss_mib": peak_rss_mib(),
        "misrouted": tally.misrouted,
        "lost": tally.lost,
        "examples": tally.examples,
    }


def in_subprocess(path: str, transport: str, protocol: str, threads: int, invokes: int) -> dict[str, Any]:
    case = f"{path}:{transport}:{protocol}"
    argv = [sys.executable, __file__, "--case", case, "--threads", str(threads), "--invokes", str(invokes)]
    done = subprocess.run(argv, stdout=subprocess.PIPE, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"case {case} failed (exit {done.returncode}):\n{done.stdout}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=100)
    parser.add_argument("--invokes", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--transports", default=",".join(TRANSPORTS))
    parser.add_argument("--protocols", default="auto", help=f"comma-separated, of {PROTOCOLS}")
    parser.add_argument("--case", help="run one case (path:transport:protocol) here, print JSON")
    parser.add_argument(
        "--instructions",
        metavar="LIB",
        help="with --case under callgrind: count only the load, through LIB (see bench_instructions.py)",
    )
    parser.add_argument(
        "--profile", metavar="FILE", help="with --case: a cProfile of its load (warm-up excluded) to FILE"
    )
    ns = parser.parse_args()
    if ns.case:
        path, transport, protocol = ns.case.split(":")
        global PROFILE_TO, COUNTER
        PROFILE_TO = ns.profile or ""
        if ns.instructions:
            import ctypes

            COUNTER = ctypes.CDLL(ns.instructions)
        result = asyncio.run(run_case(path, transport, protocol, ns.threads, ns.invokes))
        print(json.dumps(result))
        return

    print(
        f"{ns.threads} concurrent threads x {ns.invokes} calls = {ns.threads * ns.invokes} calls per case; "
        f"{ns.repeats} repeats, each case in a fresh process; {load_average()}"
    )
    keys = [(t, p) for t in ns.transports.split(",") for p in ns.protocols.split(",")]
    results: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for repeat in range(ns.repeats):
        for transport, protocol in keys:
            order = PATHS if repeat % 2 == 0 else PATHS[::-1]
            for path in order:
                r = in_subprocess(path, transport, protocol, ns.threads, ns.invokes)
                results.setdefault((transport, protocol, path), []).append(r)
                print(
                    f"  repeat {repeat + 1} {transport} {protocol} {path}: {r['throughput']:.0f} calls/s, "
                    f"p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms, "
                    f"client CPU {r['cpu_ms_per_call']:.2f} ms/call "
                    f"(GC {r['gc_ms_per_call']:.2f}; collections {'/'.join(map(str, r['gc_collections']))}), "
                    f"peak RSS {r['peak_rss_mib']:.0f} MiB, misrouted {r['misrouted']}, lost {r['lost']}"
                )
                for example in r["examples"]:
                    print(f"    {example}")
    rows = []
    for transport, protocol in keys:
        sdk = results[(transport, protocol, "sdk")]
        for path in PATHS:
            runs = results[(transport, protocol, path)]
            ratios = [r["throughput"] / s["throughput"] for r, s in zip(runs, sdk, strict=True)]
            verdict = "" if path != "node" else ("met" if median(ratios) >= TARGET else "MISSED")
            rows.append(
                (
                    transport,
                    protocol,
                    path,
                    f"{median([r['throughput'] for r in runs]):.0f}",
                    f"{median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})",
                    verdict,
                    f"{median([r['p50_ms'] for r in runs]):.1f}",
                    f"{median([r['p99_ms'] for r in runs]):.1f}",
                    f"{median([r['cpu_ms_per_call'] for r in runs]):.2f}",
                    f"{median([r['rss_before_mib'] for r in runs]):.0f}",
                    f"{median([r['peak_rss_mib'] for r in runs]):.0f}",
                    sum(r["misrouted"] for r in runs),
                    sum(r["lost"] for r in runs),
                )
            )
    print()
    print(
        table(
            [
                "transport",
                "protocol",
                "path",
                "calls/s",
                "x sdk",
                f">= {TARGET}x",
                "p50 ms",
                "p99 ms",
                "client CPU ms/call",
                "RSS before (MiB)",
                "peak RSS (MiB)",
                "misrouted",
                "lost",
            ],
            rows,
        )
    )
    print(f"\n(medians over {ns.repeats} repeats; misrouted/lost summed over them) {load_average()}")
    print("\nnode over each ToolNode floor (ratios of the medians above):")
    for transport, protocol in keys:
        node = results[(transport, protocol, "node")]
        for floor in ("toolnode", "toolnode_caps"):
            base = results[(transport, protocol, floor)]
            ratio = {
                key: median([r[key] for r in node]) / median([r[key] for r in base])
                for key in ("cpu_ms_per_call", "throughput", "p99_ms")
            }
            print(
                f"  {transport} {protocol} over {floor}: CPU {ratio['cpu_ms_per_call']:.2f}x, "
                f"calls/s {ratio['throughput']:.2f}x, p99 {ratio['p99_ms']:.2f}x"
            )


if __name__ == "__main__":
    quiet()
    main()
